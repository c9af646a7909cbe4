"""The library's certify says its progress as the command line does: silent by default (no
stage line, no leak warning of a search that claims no ε), a ``progress=`` callable gets
every step, and :func:`bioanon.progress.printer` prints the stage lines ``bioanon release``
prints."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from bioanon.certification import certify
from bioanon.datasets import make_biometric
from bioanon.privacy import PrivacyLeakWarning
from bioanon.progress import printer
from bioanon.release import Roles
from bioanon.table import FeatureTable

SRC = Path(__file__).resolve().parents[1] / "src"
WHY = "test of the progress of certify"
KW: dict[str, Any] = {"methods": ["noise", "dp-basis"], "models": ["knn"],
                      "attackers": "naive,parrot,reverse", "n_jobs": 1, "random_state": 7,
                      "target": 0.3, "level": 0.99, "accept_risks": {"identity-membership": WHY,
                                                      "identity-inference": WHY}}
CLI = ["--methods", "noise,dp-basis", "--models", "knn", "--attackers",
       "naive,parrot,reverse", "--jobs", "1", "--seed", "7", "--target-advantage", "0.3",
       "--level", "0.99",
       "--accept-risk", "identity-membership", "--reason", WHY,
       "--accept-risk", "identity-inference", "--reason", WHY]
ROLES = Roles(sensitive="identity", interest="expression")
#: a stage line: clock time, the name, the stage, [done/total, elapsed]
LINE = re.compile(r"^\d\d:\d\d:\d\d (certifying: .+?)(?: \[\d+/\d+, [^\]]+\]| in .+)?$")


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=0)


def _stages(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) for ln in text.splitlines() if (m := LINE.match(ln))))


def _certify(table: FeatureTable, **kw: Any) -> Any:
    from bioanon.certification import NotCertified

    try:
        return certify(table, ROLES, **KW, **kw)
    except NotCertified as exc:  # an outcome: the search ran all the same
        return exc


def test_certify_is_silent_by_default(table: FeatureTable,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    # a command line run earlier in this process leaves its handler on bioanon's logger: a
    # library user's process has none
    monkeypatch.setattr(logging.getLogger("bioanon"), "handlers", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _certify(table)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert not [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def test_certify_prints_the_command_line_s_stage_lines(table: FeatureTable,
                                                        tmp_path: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    plans: list[Any] = []
    buf = io.StringIO()
    hook = printer("certifying", buf)

    def both(done: int, total: int, text: str) -> None:
        calls.append((done, total, text))

    hook.forward = both
    _certify(table, progress=hook, report_closest=True,  # as the command line asks
             on_plan=plans.append)
    assert calls and calls[-1][2] == "done"
    # the plan says the search's expected time, from the table's shape and its settings
    assert len(plans) == 1 and plans[0].expected.startswith("expected time: about ")
    assert "settings judged on 600 records × 32 features" in plans[0].expected
    assert plans[0].render().splitlines()[-1] == plans[0].expected
    assert any(text.startswith("stage 1:") for _, _, text in calls)
    library = _stages(buf.getvalue())
    assert library and "certifying: done" in library[-1]

    src = tmp_path / "in.parquet"
    table.write(src)
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    res = subprocess.run([sys.executable, "-m", "bioanon", "release", str(src), "--sensitive",
                          "identity", "--interest", "expression", "-o",
                          str(tmp_path / "out.parquet"), *CLI],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode in (0, 1), res.stderr
    said = res.stdout + res.stderr
    # after the plan, as the library said it (the time in words is this machine's, measured
    # by each process: the counts behind it are the same)
    assert plans[0].expected.split(" (", 1)[1] in said
    assert said.index("plan (from the table's shape") < said.index("expected time: about")
    cli = _stages(res.stderr)
    # the same stages, in the same order (the elapsed times differ)
    assert [s.split(" in ")[0] for s in cli] == [s.split(" in ")[0] for s in library]
