"""The command line as a user meets it: outputs, manifests, and one clear line per mistake."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

runner = CliRunner()


@pytest.fixture()
def csv_input(tmp_path):
    t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=4)
    path = tmp_path / "in.csv"
    t.write(path)
    return path


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _assert_user_error(res, text):
    assert res.exit_code == 2, res.output
    assert text in res.output
    assert "Traceback" not in res.output


BASE = ["--interest", "expression", "--sensitive", "identity", "--label", "gender",
        "--label", "environment", "--g", "8"]


def test_anonymize_writes_release_and_manifest_without_secrets(csv_input, tmp_path):
    out = tmp_path / "rel.parquet"
    before = csv_input.read_bytes()
    res = _run("anonymize", csv_input, "-o", out, *BASE, "--seed", "1234567")
    assert res.exit_code == 0, res.output
    rel = FeatureTable.read(out)
    assert list(rel.labels.columns) == ["expression"]  # sensitive and extra labels dropped
    assert rel.n_records == 180
    manifest_text = (tmp_path / "rel.parquet.manifest.json").read_text()
    manifest = json.loads(manifest_text)
    assert manifest["params"]["g"] == 8 and manifest["method"] == "selective-mean"
    assert "1234567" not in manifest_text and "random_state" not in manifest_text
    import pyarrow.parquet as pq

    file_meta = str(pq.read_schema(out).metadata)
    assert "1234567" not in file_meta and "seed" not in file_meta
    assert csv_input.read_bytes() == before  # the input is untouched
    original = FeatureTable.read(csv_input, ["identity", "gender", "expression", "environment"])
    assert not np.allclose(np.sort(rel.X[:, 0]), np.sort(original.X[:, 0]))


def test_keep_sensitive_keeps_the_column(csv_input, tmp_path):
    out = tmp_path / "rel.csv"
    res = _run("anonymize", csv_input, "-o", out, *BASE, "--keep-sensitive", "--keep-order")
    assert res.exit_code == 0, res.output
    assert "identity" in FeatureTable.read(out, ["expression", "identity"]).labels


def test_misspelled_column(csv_input, tmp_path):
    out = tmp_path / "rel.csv"
    res = _run("anonymize", csv_input, "-o", out, "--interest", "expresion",
               "--sensitive", "identity", "--label", "gender", "--label", "environment")
    _assert_user_error(res, "did you mean 'expression'")
    assert not out.exists()


def test_nan_values(tmp_path):
    p = tmp_path / "nan.csv"
    p.write_text("who,digit,f0,f1\na,1,0.5,\nb,2,0.1,0.2\n")
    res = _run("anonymize", p, "-o", tmp_path / "o.csv", "--interest", "digit",
               "--sensitive", "who")
    _assert_user_error(res, "NaN/inf")
    assert not (tmp_path / "o.csv").exists()


def test_missing_input_and_output_equal_to_input(csv_input, tmp_path):
    _assert_user_error(_run("anonymize", tmp_path / "nope.csv", "-o", tmp_path / "o.csv",
                            *BASE), "does not exist")
    before = csv_input.read_bytes()
    _assert_user_error(_run("anonymize", csv_input, "-o", csv_input, *BASE), "is the input")
    assert csv_input.read_bytes() == before


def test_class_too_small_leaves_existing_output_untouched(csv_input, tmp_path):
    out = tmp_path / "rel.csv"
    out.write_text("previous release\n")
    res = _run("anonymize", csv_input, "-o", out, *BASE[:-2], "--g", "150")
    _assert_user_error(res, "has ")
    assert "needs" in res.output
    assert out.read_text() == "previous release\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "rel.csv"]


def test_unknown_method_and_bad_option_values(csv_input, tmp_path):
    _assert_user_error(_run("anonymize", csv_input, "-o", tmp_path / "o.csv", *BASE,
                            "--method", "selective-man"), "did you mean 'selective-mean'")
    _assert_user_error(_run("anonymize", csv_input, "-o", tmp_path / "o.csv", *BASE,
                            "--additional", "environment=abc"), "non-numeric")


def test_evaluate_writes_reports(csv_input, tmp_path):
    out = tmp_path / "rep"
    res = _run("evaluate", csv_input, *BASE, "--models", "knn", "--out", out)
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert report["privacy"]["worst_case"]["accuracy"] >= report["privacy"]["chance"] - 0.2
    assert (out / "report.html").stat().st_size > 1000
    _assert_user_error(_run("evaluate", csv_input, *BASE, "--models", "forrest", "--out", out),
                       "did you mean 'forest'")


@pytest.mark.slow
def test_demo_writes_report(tmp_path):
    res = _run("demo", "--out", tmp_path / "demo")
    report = json.loads((tmp_path / "demo" / "report.json").read_text())
    assert res.exit_code == (0 if report["verdict"]["met"] else 1), res.output  # as release
    assert report["utility"]["cas"]["value"] > 0.9  # trained on the release, scored on clear
    assert "SYNTHETIC" in report["dataset"]["source"]
    # the demo walks the certified path and certifies only when every risk is met: the
    # verdict is consistent with the risks, and a release is written exactly when it is met
    v = report["verdict"]
    assert v["target_advantage"] == 0.05 and v["level"]["name"] == "standard"
    # the report opens with the plan (every risk showable at this size) and the setting
    assert list(report)[:2] == ["plan", "setting"] and report["plan"]["can_proceed"]
    risks = report["risks"]
    assert {r["risk"] for r in risks} == {"recognition", "membership", "inference"}
    assert v["met"] == (all(r["status"] in ("met", "accepted") for r in risks)
                        and not v.get("refused"))  # a refused report's verdict is never met
    assert v["failed"] == [r["name"] for r in risks if r["status"] not in ("met", "accepted")]
    assert (tmp_path / "demo" / "release.parquet").exists() == v["met"]
    assert (tmp_path / "demo" / "search.png").exists()
    out = " ".join(res.output.split())
    assert ("verdict: certified" in out) == v["met"]
    assert ("verdict: NOT certified" in out) != v["met"]
    # the demo certifies a setting that survives the model-aware attackers (issues 34, 35);
    # its search claims no epsilon, so no leak warning interrupts it
    assert v["met"], v["sentence"]
    assert "PrivacyLeakWarning" not in res.output


def test_sanitizer_release_requires_a_decoupler(csv_input, tmp_path):
    res = _run("anonymize", csv_input, "-o", tmp_path / "o.csv", *BASE[:-2],
               "--method", "sanitizer")
    _assert_user_error(res, "needs --decoupler")
    assert not (tmp_path / "o.csv").exists()


def test_release_keeps_public_meta_like_image_shape(tmp_path):
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=4)
    t.meta["image_shape"] = [4, 8]
    src = tmp_path / "img.parquet"
    t.write(src)
    out = tmp_path / "rel.parquet"
    res = _run("anonymize", src, "-o", out, "--sensitive", "identity", "--method", "pixelate",
               "--block", "2")
    assert res.exit_code == 0, res.output
    assert FeatureTable.read(out).meta["image_shape"] == [4, 8]


def test_an_option_of_one_value_given_twice_is_found_in_every_spelling():
    """``--seed=1 --seed 2`` and ``-o a -o b`` are refused; a value that looks like an option
    (``--reason --seed``), a repeatable option and one value given twice are not."""
    import typer

    from bioanon.cli.app import app as the_app
    from bioanon.cli.logs import _repeated

    group = typer.main.get_command(the_app)
    cmd = group.get_command(None, "anonymize")
    assert _repeated(cmd, ["t.csv", "--seed=1", "--seed", "2"]) == ("--seed", "1", "2")
    assert _repeated(cmd, ["t.csv", "-o", "a.csv", "--out", "b.csv"])[0] == "--out"
    assert _repeated(cmd, ["t.csv", "--label", "a", "--label", "b", "--g", "8", "--g=8"]) is None
    assert _repeated(cmd, ["t.csv", "--interest", "--seed", "--seed", "3"]) is None
    assert _repeated(cmd, ["t.csv", "--", "--seed", "1", "--seed", "2"]) is None
