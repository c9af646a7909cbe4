"""``--json``: exactly one JSON document on stdout whatever happens — a result, a user error,
a usage error, and an internal error (a bug) included; the error line stays on stderr and
the exit status is the same as without ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric

ROLES = ["--interest", "expression", "--sensitive", "identity", "--label", "gender",
         "--label", "environment"]
#: the keys of ``release --json`` (docs/release-json.md), for every outcome
SCHEMA = {"certified", "outcome", "exit_code", "message", "setting", "short_of", "output",
          "plan", "verdict", "summary", "differential_privacy", "tradeoff", "refusal"}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("json") / "t.parquet"
    make_biometric(n_identities=4, records_per_identity=12, n_features=32,
                   random_state=0).write(p)
    return p


def _run(argv: list[str]) -> tuple[dict, object]:
    res = CliRunner().invoke(app, argv)
    assert "Traceback" not in res.output
    doc = json.loads(res.stdout)  # the whole of stdout is one document
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, res.stderr
    return doc, res


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("forced for the test")


def test_an_internal_error_of_evaluate_is_one_document_and_exit_1(
        table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bioanon.report.build as build

    monkeypatch.setattr(build, "evaluate", _boom)
    doc, res = _run(["evaluate", str(table), "-o", str(tmp_path / "r"), *ROLES, "--method",
                     "noise", "--param", "sigma=1", "--json"])
    assert res.exit_code == 1
    assert doc["kind"] == "internal" and doc["exit_code"] == 1
    assert "RuntimeError: forced for the test" in doc["error"]


def test_an_internal_error_of_release_is_a_document_of_its_schema(
        table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bioanon.cli.release as release

    monkeypatch.setattr(release, "_release_in_memory", _boom)
    doc, res = _run(["release", str(table), "-o", str(tmp_path / "o.parquet"), *ROLES,
                     "--json"])
    assert res.exit_code == 1
    assert set(doc) == SCHEMA
    assert doc["outcome"] == "internal error" and doc["exit_code"] == 1
    assert "forced for the test" in doc["message"]
    assert not (tmp_path / "o.parquet").exists()


def test_without_json_an_internal_error_prints_nothing_on_stdout(
        table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bioanon.report.build as build

    monkeypatch.setattr(build, "evaluate", _boom)
    res = CliRunner().invoke(app, ["evaluate", str(table), "-o", str(tmp_path / "r"), *ROLES,
                                   "--method", "noise", "--param", "sigma=1"])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.startswith("error: internal error")


def test_a_user_error_and_a_usage_error_are_one_document_too(table: Path,
                                                              tmp_path: Path) -> None:
    doc, res = _run(["evaluate", str(table), "-o", str(tmp_path / "r"), *ROLES, "--method",
                     "noise", "--param", "sigma=0", "--json"])
    assert res.exit_code == 2 and doc["kind"] == "input" and "sigma" in doc["error"]
    doc, res = _run(["tune", str(table), "--bogus-flag", "--json"])
    assert res.exit_code == 2 and doc["kind"] == "usage" and "--bogus-flag" in doc["error"]
    doc, res = _run(["release", str(table), "-o", str(tmp_path / "o.parquet"), *ROLES,
                     "--bogus-flag", "--json"])
    assert res.exit_code == 2 and set(doc) == SCHEMA and doc["outcome"] == "input error"
