"""The bad-input corpus (issue 11): one parametrized test over every generated case.

For a user error: exit status 2, exactly one ``error:`` line, no traceback, no output left
behind, inputs unchanged. For a valid input: exit 0 and exactly the expected outputs.
Run ``pytest tests/test_bad_inputs.py -q`` for the corpus summary line.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from bad_inputs.cases import CASES, Case, foreign_warning
from bad_inputs.coverage import missing
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.io import REPORT_MARKER


def _snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(folder))] = (hashlib.sha256(p.read_bytes()).hexdigest(),
                                               p.stat().st_mtime_ns)
    return out


def _params() -> list:
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=False, reason=c.xfail)]
                         if c.xfail else []) for c in CASES]


def test_the_corpus_is_large_and_covers_every_command() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    commands = {c.id.split("-")[0] for c in CASES}
    assert {"anonymize", "evaluate", "demo", "extract", "preview", "train", "tune"} <= commands


def test_every_option_in_help_has_a_case(tmp_path: Path) -> None:
    """A new option (or command) fails here until one ``add(...)`` line gives it a case."""
    lacking = missing(CASES, tmp_path)
    assert not lacking, f"options without a bad-input case: {lacking}"


@pytest.mark.parametrize("case", _params())
def test_bad_input(case: Case, tmp_path: Path) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    argv = case.build(folder)
    before = _snapshot(folder)
    res = CliRunner().invoke(app, argv)
    output = res.output
    assert "Traceback" not in output, output
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"uncaught {type(res.exception).__name__}: {res.exception}")
    after = _snapshot(folder)
    for name, state in before.items():  # inputs are never modified
        assert after.get(name) == state, f"input {name} changed or vanished"
    # the hidden marker of a folder bioanon wrote is bookkeeping (tests/test_data_loss.py)
    new = sorted(n for n in set(after) - set(before) if Path(n).name != REPORT_MARKER)
    if case.kind == "ok":
        assert res.exit_code == 0, output
        assert new == sorted(case.outputs), new
        assert case.says is None or case.says in " ".join(output.split()), output
        return
    assert res.exit_code == 2, output
    assert not foreign_warning(output), f"a library's warning before the refusal: {output}"
    errors = [ln for ln in output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, output
    assert new == [], f"output left behind: {new}"
    assert case.says is None or case.says in errors[0], errors[0]


def _audit_json_params() -> list:
    return [pytest.param(c, id=c.id) for c in CASES if c.id.startswith("audit-")
            and c.kind != "ok"]


@pytest.mark.parametrize("case", _audit_json_params())
def test_audit_bad_input_with_json_prints_one_document(case: Case, tmp_path: Path) -> None:
    """``--json``: exactly one JSON document on stdout, the refusal's, whatever refused it
    (an argument's callback included: a missing file is checked before the command runs)."""
    argv = [a for a in case.build(tmp_path) if a not in ("--json", "--no-json")]
    res = CliRunner().invoke(app, [*argv, "--json"])
    assert res.exit_code == 2, res.output
    doc = json.loads(res.stdout)
    assert doc["exit_code"] == 2 and doc["error"], doc
