"""Every release path (in memory, ``--dask`` bucketed, ``--dask --epsilon --public-data``
streamed) runs the same checks before any work, in one place
(:func:`bioanon.certification.run.certify_source`): one test per check across the three.
And what the command tells the user works as typed: the plan refusal's suggestion pasted
back gets past the plan; ``--json`` is one schema for every outcome; one run, one verdict."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

FAST = ["--models", "knn", "--attackers", "naive", "--jobs", "1"]
ROLES = ["--interest", "expression", "--sensitive", "identity", "--label", "gender",
         "--label", "environment"]
PATHS = ["memory", "bucketed", "streamed"]
#: the keys of ``release --json`` (docs/release-json.md), for every outcome
SCHEMA = {"certified", "outcome", "exit_code", "message", "setting", "short_of", "output",
          "plan", "verdict", "summary", "differential_privacy", "tradeoff", "refusal"}
METADATA = ["n_samples", "sample_rate", "rec_id", "duration"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """12 people × 50 records (too few to show the default level) written by bioanon, by
    pandas with metadata-looking columns, as NPZ; one more person as public data."""
    t = make_biometric(n_identities=13, records_per_identity=50, n_features=32,
                       random_state=0)
    ids = t.labels["identity"].to_numpy()
    pub, private = (t.subset(np.flatnonzero(ids == ids[0])),
                    t.subset(np.flatnonzero(ids != ids[0])))
    d = tmp_path_factory.mktemp("checks")
    private.write(d / "bio.parquet")
    private.write(d / "bio.npz")
    pub.write(d / "pub.parquet")
    rng = np.random.default_rng(0)
    for name, table in (("meta.parquet", private), ("meta_pub.parquet", pub)):
        frame = table.to_frame()
        n = len(frame)
        frame["n_samples"] = rng.integers(4000, 9000, n)
        frame["sample_rate"] = 8000
        frame["rec_id"] = np.arange(n)
        frame["duration"] = frame["n_samples"] / 8000.0
        frame.to_parquet(d / name)  # pandas: no record of the label columns
    return {"dir": d, "bio": d / "bio.parquet", "npz": d / "bio.npz", "pub": d / "pub.parquet",
            "meta": d / "meta.parquet", "meta_pub": d / "meta_pub.parquet"}


def _args(path: str, src: Path, out: Path, pub: Path, *extra: str) -> list[str]:
    """``release`` on one of the three paths (in memory into ``OUT.parquet``, on dask into
    the folder ``OUT``)."""
    out = out.with_suffix(".parquet") if path == "memory" else out
    dask = {"memory": [], "bucketed": ["--dask"],
            "streamed": ["--dask", "--epsilon", "1", "--public-data", str(pub)]}[path]
    return ["release", str(src), "-o", str(out), *ROLES, *FAST, *dask, *extra]


def _refused(res: Any, out_dir: Path, before: set[str], *words: str) -> str:
    """One error line naming ``words``, exit 2, nothing written, no search."""
    assert res.exit_code == 2, res.output
    errors = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, res.output
    flat = " ".join(res.output.split())
    for w in words:
        assert w in flat, res.output
    assert "stage 1:" not in flat and "search, on the tuning split" not in flat
    assert {p.name for p in out_dir.iterdir()} == before  # nothing written
    return errors[0]


@pytest.mark.parametrize("path", PATHS)
def test_the_plan_refuses_a_level_the_table_cannot_show(data, tmp_path, path) -> None:
    """The streamed path certified such a table; the bucketed path never ran the plan."""
    res = CliRunner().invoke(app, _args(path, data["bio"], tmp_path / "rel", data["pub"]))
    line = _refused(res, tmp_path, set(), "cannot be shown on this table",
                    "identity-membership", "--accept-risk")
    assert "plan (from the table's shape" in res.output  # said before the refusal
    assert "accept_risks=" not in line  # in flags, not the library's parameters


@pytest.mark.parametrize("path", PATHS)
def test_metadata_looking_columns_without_a_role_are_refused(data, tmp_path, path) -> None:
    pub = data["meta_pub"]
    res = CliRunner().invoke(app, _args(path, data["meta"], tmp_path / "rel", pub))
    line = _refused(res, tmp_path, set(), "look like metadata", "sample_rate", "rec_id",
                    "--keep-as-feature")
    assert "constant 8000" in line


def test_anonymize_dask_refuses_metadata_looking_columns_too(data, tmp_path) -> None:
    res = CliRunner().invoke(app, [
        "anonymize", str(data["meta"]), "-o", str(tmp_path / "rel"), "--interest",
        "expression", "--sensitive", "identity", "--label", "gender", "--label",
        "environment", "--method", "selective-mean", "--g", "4", "--dask", "--workers", "1"])
    _refused(res, tmp_path, set(), "look like metadata", "sample_rate")
    kept = CliRunner().invoke(app, [
        "anonymize", str(data["meta"]), "-o", str(tmp_path / "rel"), "--interest",
        "expression", "--sensitive", "identity", "--label", "gender", "--label",
        "environment", "--method", "selective-mean", "--g", "4", "--dask", "--workers", "1",
        "--keep-as-feature", "nosuch"])
    _refused(kept, tmp_path, set(), "--keep-as-feature nosuch names no feature column")


@pytest.mark.parametrize("path, source", [("memory", "bio"), ("memory", "npz"),
                                          ("bucketed", "bio"), ("streamed", "bio")])
def test_keep_as_feature_naming_no_feature_is_refused(data, tmp_path, path, source) -> None:
    """It used to be ignored on a bioanon Parquet, an NPZ and the streamed path."""
    res = CliRunner().invoke(app, _args(path, data[source], tmp_path / "rel", data["pub"],
                                        "--keep-as-feature", "nosuch"))
    _refused(res, tmp_path, set(), "--keep-as-feature nosuch names no feature column")


@pytest.mark.parametrize("path", PATHS)
def test_an_unknown_method_is_named_before_the_plan(data, tmp_path, path) -> None:
    res = CliRunner().invoke(app, _args(path, data["bio"], tmp_path / "rel", data["pub"],
                                        "--methods", "bogus"))
    _refused(res, tmp_path, set(), "unknown method 'bogus'")
    assert "plan (from the table's shape" not in res.output


def test_the_plan_refusal_s_suggestion_works_as_typed(data, tmp_path) -> None:
    """The refusal ends "accept by name (--accept-risk A --accept-risk B --reason "...")":
    pasted back literally, the run gets past the plan."""
    base = _args("memory", data["bio"], tmp_path / "rel.parquet", data["pub"],
                 "--methods", "noise", "--budget-minutes", "0.000001")
    first = CliRunner().invoke(app, base)
    assert first.exit_code == 2
    flat = " ".join(first.output.split())
    typed = re.search(r"accept by name \((--accept-risk .*? --reason \"\.\.\.\")\)", flat)
    assert typed is not None, flat
    again = CliRunner().invoke(app, [*base, *shlex.split(typed.group(1))])
    assert again.exit_code in (0, 1), again.output  # certified or not: past the plan
    assert "cannot be shown on this table" not in again.output
    assert "stage 1:" in " ".join(again.output.split())


# ---------------------------------------------------------------------- one --json schema
def _doc(res: Any) -> dict[str, Any]:
    doc = json.loads(res.stdout)
    assert set(doc) == SCHEMA and set(doc["output"]) == {"table", "manifest", "report"}
    assert doc["exit_code"] == res.exit_code
    return doc


def test_json_of_an_input_error_and_a_plan_refusal(data, tmp_path) -> None:
    res = CliRunner().invoke(app, _args("memory", data["bio"], tmp_path / "rel.parquet",
                                        data["pub"], "--methods", "bogus", "--json"))
    doc = _doc(res)
    assert doc["outcome"] == "input error" and doc["certified"] is False
    assert "unknown method 'bogus'" in doc["message"] and doc["plan"] is None
    res = CliRunner().invoke(app, _args("memory", data["bio"], tmp_path / "rel.parquet",
                                        data["pub"], "--budget-minutes", "0", "--json"))
    doc = _doc(res)  # refused by the checks every command shares, before the command runs
    assert doc["outcome"] == "input error" and "--budget-minutes" in doc["message"]
    res = CliRunner().invoke(app, _args("bucketed", data["bio"], tmp_path / "rel",
                                        data["pub"], "--json"))
    doc = _doc(res)
    assert doc["outcome"] == "plan refused" and doc["exit_code"] == 2
    assert doc["plan"]["can_proceed"] is False and "--accept-risk" in doc["message"]
    assert doc["output"] == {"table": None, "manifest": None, "report": None}
    assert list(tmp_path.iterdir()) == []


LOOSE = ["--level", "0.99", "--accept-risk", "identity-membership", "--accept-risk",
         "identity-inference", "--reason", "a test of the release command"]


def test_json_of_a_refused_run_and_its_one_verdict(data, tmp_path) -> None:
    out = tmp_path / "rel.parquet"
    res = CliRunner().invoke(app, _args("memory", data["bio"], out, data["pub"], "--methods",
                                        "noise", "--target-advantage", "0.1", "--json",
                                        *LOOSE))
    doc = _doc(res)
    assert doc["outcome"] == "not certified" and res.exit_code == 1
    assert doc["setting"].startswith("noise(") and doc["short_of"]
    assert doc["output"]["report"].endswith("rel.parquet.report")
    assert doc["summary"] and doc["plan"]["can_proceed"] is True
    verdicts = [ln for ln in res.output.splitlines() if ln.startswith("verdict:")]
    assert len(verdicts) == 1 and verdicts[0].startswith("verdict: NOT certified")
    # the trade-off: the table in the terminal and the document, the refusal's line
    assert [e["level"] for e in doc["tradeoff"]][:3] == ["strict", "standard", "basic"]
    assert doc["refusal"]["line"] in doc["message"] and "trade-off: " in doc["message"]
    assert "trade-off on the tuning split" in res.output


def test_json_of_a_certified_run_and_a_not_strict_budget_s_final_line(data, tmp_path) -> None:
    out = tmp_path / "rel.parquet"
    res = CliRunner().invoke(app, _args("memory", data["bio"], out, data["pub"], "--epsilon",
                                        "4", "--methods", "dp-synthetic", "--budget-minutes",
                                        "0.000001", "--target-advantage", "0.5", "--json",
                                        "--min-utility", "0", *LOOSE))
    doc = _doc(res)  # (no floor: the JSON of a certified run is the subject here)
    assert doc["outcome"] == "certified" and doc["certified"] is True, res.output
    assert doc["output"] == {"table": str(out), "manifest": str(out) + ".manifest.json",
                             "report": str(out) + ".report"}
    assert all(Path(p).exists() for p in doc["output"].values())
    assert doc["verdict"]["met"] and doc["differential_privacy"]["strict"] is False
    assert doc["refusal"] is None and any(e["chosen"] for e in doc["tradeoff"])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    last = " ".join(lines[-1].split())
    assert last.startswith("certified: dp-synthetic(") and "epsilon 4" in last
    assert "NOT strict" in last


def test_the_json_schema_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "release-json.md").read_text()
    for key in SCHEMA | {"table", "manifest", "report"}:
        assert f"`{key}`" in doc, key
    for outcome in ("certified", "not certified", "plan refused", "input error"):
        assert f"`\"{outcome}\"`" in doc, outcome


def test_the_checks_run_in_one_place() -> None:
    """The three front doors are thin: each builds its source and calls the skeleton."""
    import inspect

    from bioanon.certification import memory, parquet, streamed

    for fn in (memory.certify, parquet.certify_parquet, streamed.certify_streamed):
        body = inspect.getsource(fn).split('"""')[-1]
        assert "front_door(" in body and len(body.strip().splitlines()) <= 6, fn


def test_pandas_parquet_as_read_in_memory_names_the_same_columns(data) -> None:
    """The in-memory reader and the dask paths' check refuse the same columns."""
    from bioanon.errors import BioanonError
    from bioanon.scale.run import check_parquet_columns

    with pytest.raises(BioanonError) as memory:
        FeatureTable.read(data["meta"], ["identity", "expression", "gender", "environment"],
                          keep_as_feature=[])
    names = [c for c in pd.read_parquet(data["meta"]).columns
             if c not in ("identity", "expression", "gender", "environment")]
    with pytest.raises(BioanonError) as dask:
        check_parquet_columns(data["meta"], names, [])
    for c in METADATA:
        assert (f"'{c}'" in str(memory.value)) == (f"'{c}'" in str(dask.value)), c
