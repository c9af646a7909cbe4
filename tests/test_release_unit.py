"""A release is one unit: table, manifest and report replaced together or not at all.

A writer replacing release v1 by v2 is killed (SIGKILL, SIGTERM) at every step of the switch
(:data:`bioanon.release_unit.STEPS`). After each kill the manifest is still there, and the
release is either v1 or v2, whole (the reader puts the previous unit back when the writer was
killed before its commit); the next write removes what the killed one left. The writers are
forked from one process that imported bioanon once (fast), and pause at their step through
the module's step hook until the test has sent the signal.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bioanon.errors import BioanonError
from bioanon.release_unit import (
    STEPS,
    check_release,
    manifest_path,
    refused_report_path,
    report_path,
    verify_release,
    write_unit,
)

SRC = Path(__file__).resolve().parents[1] / "src"
REPORT_FILES = ("report.json", "report.html", "search.png")

# forks one writer per case (folder, step); each prints "PAUSED <index> <pid>" at its step
ZYGOTE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    import bioanon.release_unit as ru

    def write(out, version):
        def table(tmp):
            tmp.write_text(f"{version} table")
        def report(folder):
            for name in ("report.json", "report.html", "search.png"):
                (folder / name).write_text(f"{version} {name}")
        ru.write_unit(out, table=table, manifest={"version": version}, report=report)

    children = []
    for i, (folder, step) in enumerate(a.split("=", 1) for a in sys.argv[1:]):
        pid = os.fork()
        if pid == 0:
            def hook(name, i=i, step=step, go=Path(folder) / "GO"):
                if name == step:  # paused until the test has sent its signal
                    os.write(1, f"PAUSED {i} {os.getpid()}\\n".encode())  # one atomic write
                    deadline = time.monotonic() + 60
                    while not go.exists() and time.monotonic() < deadline:
                        time.sleep(0.01)
            ru._step_hook = hook
            write(Path(folder) / "rel.csv", "v2")
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
""")


def _kill_at_every_step(tmp_path: Path, cases: list[tuple[signal.Signals, str]],
                        setup: Any) -> list[Path]:
    """One folder per case, prepared by ``setup(folder)``; a writer of v2 into each, killed
    by the case's signal at the case's step. Returns the folders."""
    folders = []
    for k, _ in enumerate(cases):
        folder = tmp_path / f"case{k}"
        folder.mkdir()
        setup(folder)
        folders.append(folder)
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    args = [f"{f}={step}" for f, (_, step) in zip(folders, cases, strict=True)]
    zygote = subprocess.Popen(
        [sys.executable, "-c", ZYGOTE, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        for _ in cases:
            line = zygote.stdout.readline()
            assert line.startswith("PAUSED"), zygote.stderr.read()
            k, pid = map(int, line.split()[1:])
            os.kill(pid, cases[k][0])
            (folders[k] / "GO").touch()  # a writer holding SIGTERM goes on, then handles it
        zygote.wait(timeout=60)
    finally:
        if zygote.poll() is None:
            zygote.kill()
            zygote.wait()
        zygote.stdout.close()
        zygote.stderr.close()
    for folder in folders:
        (folder / "GO").unlink()
    return folders


def _write(out: Path, version: str, table: bool = True) -> None:
    def report(folder: Path) -> None:
        for name in REPORT_FILES:
            (folder / name).write_text(f"{version} {name}")

    write_unit(out, table=(lambda tmp: tmp.write_text(f"{version} table") and None)
               if table else None, manifest={"version": version} if table else None,
               report=report)


def _state(out: Path) -> str:
    """'v1' or 'v2' for a whole unit the reader trusts, 'none' when there is no manifest."""
    if not manifest_path(out).exists():
        assert not verify_release(out)
        return "none"
    assert verify_release(out), "a manifest beside a table or report it does not name"
    version = json.loads(manifest_path(out).read_text())["version"]
    assert out.read_text() == f"{version} table"
    for name in REPORT_FILES:
        assert (report_path(out) / name).read_text() == f"{version} {name}"
    return str(version)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _shown(folder: Path) -> list[str]:
    """The names a listing shows (temporaries are hidden: removed by the next write)."""
    return [n for n in _names(folder) if not n.startswith(".")]


def test_a_killed_writer_leaves_the_previous_release_or_the_new_one_whole(tmp_path):
    cases = [(sig, step) for step in STEPS for sig in (signal.SIGKILL, signal.SIGTERM)]
    folders = _kill_at_every_step(tmp_path, cases,
                                  lambda folder: _write(folder / "rel.csv", "v1"))
    seen = {}
    committed = STEPS.index("manifest-written")
    for folder, (sig, step) in zip(folders, cases, strict=True):
        out = folder / "rel.csv"
        assert manifest_path(out).exists(), "a table without its manifest"
        state = _state(out)  # the reader puts the previous unit back before its commit
        seen[(sig, step)] = state
        if step == "staged":  # nothing switched yet (SIGTERM: the staging unwinds)
            assert state == "v1"
        elif sig == signal.SIGTERM:  # held during the switch: handled once it is complete
            assert state == "v2", step
        else:  # SIGKILL: the commit is the manifest's rename
            assert state == ("v2" if STEPS.index(step) >= committed else "v1"), step
        assert _shown(folder) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]
        # the next write writes a whole unit
        _write(out, "v3")
        assert _state(out) == "v3"
        assert _names(folder) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]
    assert set(seen.values()) == {"v1", "v2"}


def test_a_first_release_killed_before_its_commit_leaves_nothing(tmp_path):
    """No previous release: a writer killed before the manifest's rename leaves nothing once
    read (its table and report are removed), after it the whole new unit."""
    cases = [(signal.SIGKILL, step) for step in STEPS]
    folders = _kill_at_every_step(tmp_path, cases, lambda folder: None)
    committed = STEPS.index("manifest-written")
    for folder, (_, step) in zip(folders, cases, strict=True):
        out = folder / "rel.csv"
        if STEPS.index(step) >= committed:
            assert _state(out) == "v2"
            assert _names(folder) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]
        else:
            assert not verify_release(out)
            assert _shown(folder) == [], step
            _write(out, "v3")  # the next write removes the temporaries a dead writer left
            assert _names(folder) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]


def test_the_reader_of_the_table_puts_the_previous_release_back(tmp_path):
    """FeatureTable.read of a release whose writer was killed mid-switch reads the previous
    table, whole, and leaves the unit whole."""
    import pandas as pd

    from bioanon.table import FeatureTable

    def setup(folder: Path) -> None:
        frame = pd.DataFrame({"who": ["a", "b"], "f0": [1.5, 2.5]})
        write_unit(folder / "rel.csv",
                   table=lambda tmp: frame.to_csv(tmp, index=False) and None,
                   manifest={"version": "v1"},
                   report=lambda d: (d / "report.json").write_text("{}"))

    (folder,) = _kill_at_every_step(tmp_path, [(signal.SIGKILL, "report-replaced")], setup)
    out = folder / "rel.csv"
    assert out.read_text() == "v2 table"  # on disk: the new table beside the old manifest
    t = FeatureTable.read(out, ["who"])
    assert t.X.ravel().tolist() == [1.5, 2.5] and verify_release(out)


def test_a_refused_unit_leaves_the_previous_release_and_reports_beside(tmp_path):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _write(out, "refused", table=False)  # a previous release stays until a new one replaces it
    assert _names(tmp_path) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.refused-report",
                                "rel.csv.report"]
    assert _state(out) == "v1"
    assert (refused_report_path(out) / "report.json").read_text() == "refused report.json"
    _write(out, "v2")  # a new release supersedes the refusal's report
    assert _names(tmp_path) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]
    # no release there: the refusal's report is the output's report
    fresh = tmp_path / "new.csv"
    _write(fresh, "refused", table=False)
    assert (report_path(fresh) / "report.json").read_text() == "refused report.json"
    assert not verify_release(fresh)
    # a file at the output that no manifest named is not a release: a refusal leaves it
    other = tmp_path / "mine.csv"
    other.write_text("not a release")
    _write(other, "refused", table=False)
    assert other.read_text() == "not a release" and report_path(other).is_dir()


def test_a_switch_failing_half_way_is_rolled_back_at_once(tmp_path, monkeypatch):
    """A rename the file system refuses in the middle of the switch: the previous unit is
    put back before the error reaches the caller."""
    import bioanon.release_unit as ru

    out = tmp_path / "rel.csv"
    _write(out, "v1")

    def refuse(name: str) -> None:
        if name == "report-moved-aside":
            raise PermissionError(13, "Permission denied", str(out))

    monkeypatch.setattr(ru, "_step_hook", refuse)
    with pytest.raises(PermissionError):
        _write(out, "v2")
    monkeypatch.setattr(ru, "_step_hook", None)
    assert _state(out) == "v1"
    assert _names(tmp_path) == ["rel.csv", "rel.csv.manifest.json", "rel.csv.report"]


def test_a_changed_report_or_table_is_not_trusted(tmp_path):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    check_release(out)
    (report_path(out) / "report.html").write_text("edited")
    with pytest.raises(BioanonError, match="report.html' is not the report file"):
        check_release(out)
    _write(out, "v2")
    out.write_text("edited")
    with pytest.raises(BioanonError, match="SHA-256 differs"):
        check_release(out)


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_the_unit_gets_the_umask_modes(tmp_path, mask):
    old = os.umask(mask)
    try:
        _write(tmp_path / "rel.csv", "v1")
    finally:
        os.umask(old)
    files = [tmp_path / "rel.csv", tmp_path / "rel.csv.manifest.json",
             *(tmp_path / "rel.csv.report" / n for n in REPORT_FILES)]
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o666 & ~mask}
    assert stat.S_IMODE((tmp_path / "rel.csv.report").stat().st_mode) == 0o777 & ~mask
