"""Nothing of the user's is lost: a read never deletes, the recovery of a killed switch acts
only on what it proves the writer staged, and every path a release unit may replace is
checked before any work.

Each case puts a file of the user's (or a symbolic link, or a folder) where a stale, damaged
or foreign journal, or a report's path, would have bioanon remove it, and checks its bytes
afterwards. A killed writer is a forked child that ends (``os._exit``) at a step of the
switch (:data:`bioanon.release_unit.STEPS`): its journal and what it staged stay behind, as
after a SIGKILL.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import bioanon.release_unit as ru
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.io import remove_stale_temporaries
from bioanon.release_journal import journal_path, previous_path, process_start, settle
from bioanon.release_unit import (
    check_release,
    check_unit_paths,
    refused_report_path,
    report_path,
    verify_release,
    write_unit,
)
from bioanon.table import FeatureTable

ROLES = ["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
         "--identifying", "environment"]
QUICK = ["--methods", "noise", "--models", "knn", "--attackers", "naive", "--jobs", "1",
         "--budget-minutes", "0.000001", "--seed", "1"]


def _write(out: Path, version: str, table: bool = True) -> None:
    def report(folder: Path) -> None:
        for name in ("report.json", "report.html", "search.png"):
            (folder / name).write_text(f"{version} {name}")

    write_unit(out, table=(lambda tmp: tmp.write_text(f"{version} table") and None)
               if table else None, manifest={"version": version} if table else None,
               report=report)


def _killed_at(out: Path, step: str, version: str = "v2") -> None:
    """A writer of ``version`` at ``out`` that dies at ``step`` (nothing cleaned up)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            ru._step_hook = lambda name: os._exit(0) if name == step else None
            _write(out, version)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the writer did not reach its step"
    assert journal_path(out).is_file() or step == "staged"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _journal(out: Path, **changes: Any) -> dict[str, Any]:
    """The journal at ``out``, with ``changes`` written into it."""
    doc = json.loads(journal_path(out).read_text())
    doc.update(changes)
    journal_path(out).write_text(json.dumps(doc))
    return doc


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones included) with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("input") / "in.parquet"
    make_biometric(n_identities=4, records_per_identity=16, n_features=32,
                   random_state=0).write(path)
    return path


# ---------------------------------------------------------------------- a read never deletes
@pytest.mark.parametrize("pid", ["dead", 99999999999, -5, "1234", True])
def test_a_stale_journal_beside_an_input_never_removes_it(src, tmp_path, pid):
    """The reported loss: a dead writer's journal ("table": false) beside a user's table;
    reading it and anonymizing it leave it byte-identical, and the command works."""
    table = tmp_path / "in.parquet"
    table.write_bytes(src.read_bytes())
    journal = journal_path(table)
    journal.write_text(json.dumps({"pid": _dead_pid() if pid == "dead" else pid,
                                   "manifest_sha256": "0" * 64, "table": False,
                                   "report": False}))
    before = table.read_bytes()
    assert FeatureTable.read(table).n_records == 64
    assert not verify_release(table)  # a read: nothing removed
    res = CliRunner().invoke(app, ["anonymize", str(table), "-o", str(tmp_path / "out.parquet"),
                                   *ROLES, "--method", "noise", "--param", "sigma=1"])
    assert res.exit_code == 0, res.output
    assert table.read_bytes() == before and journal.is_file()
    # writing at that path stops with one line naming the journal; the table stays
    res = CliRunner().invoke(app, ["anonymize", str(tmp_path / "out.parquet"), "-o",
                                   str(table), *ROLES, "--method", "noise", "--param",
                                   "sigma=1"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    line = " ".join(res.output.split())
    assert line.startswith("error:") and f"remove '{journal}'" in line
    assert table.read_bytes() == before


def test_a_killed_switch_is_put_back_by_a_read_when_it_proves_what_it_staged(tmp_path):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _killed_at(out, "report-replaced")
    assert out.read_text() == "v2 table"  # the new table beside the previous manifest
    assert settle(out) == "previous"
    assert out.read_text() == "v1 table" and verify_release(out)
    assert not journal_path(out).exists() and not previous_path(out).exists()
    _killed_at(out, "table-replaced")
    out.unlink()  # the staged table gone: nothing there to lose, the previous goes back
    assert settle(out) == "previous" and verify_release(out) and out.read_text() == "v1 table"


@pytest.mark.parametrize("how", ["replaced", "rewritten in place"])
def test_a_file_of_the_users_at_a_killed_switch_is_never_removed(tmp_path, how):
    """After the kill the user puts a file of their own at the output (a new file, or the
    staged one's bytes changed in place with its size and time kept): neither a read nor a
    write removes it; the previous stays at its hidden name; a write stops with one line
    naming the journal and the previous."""
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _killed_at(out, "table-replaced")
    if how == "replaced":
        out.unlink()
        out.write_text("my own table")
    elif how == "rewritten in place":
        st = out.stat()
        with open(out, "r+b") as fh:
            fh.write(b"MINE")
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert out.stat().st_ino == st.st_ino and out.stat().st_size == st.st_size
    before = _files(tmp_path)
    assert settle(out) == "unresolved"
    with pytest.raises(BioanonError) as err:
        check_release(out)
    with pytest.raises(BioanonError) as err_write:
        _write(out, "v3")
    for exc in (err.value, err_write.value):
        line = str(exc)
        assert "\n" not in line and f"remove '{journal_path(out)}'" in line
        assert f"'{previous_path(out)}'" in line
    assert _files(tmp_path) == before  # nothing removed, nothing replaced
    assert previous_path(out).read_text() == "v1 table"


def test_a_killed_first_release_never_removes_what_the_user_put_there(tmp_path):
    out = tmp_path / "rel.csv"
    _killed_at(out, "table-replaced")  # no previous release
    out.unlink()
    out.write_text("my own table")
    assert settle(out) == "unresolved" and out.read_text() == "my own table"
    with pytest.raises(BioanonError, match="is not what that write left there"):
        _write(out, "v3")
    assert out.read_text() == "my own table"


# ---------------------------------------------------------------------- the journal itself
@pytest.mark.parametrize("pid", [99999999999, -1, 0, "4321", None, 1.5])
def test_a_journal_whose_pid_is_no_process_is_a_dead_writers(tmp_path, pid):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _killed_at(out, "report-replaced")
    _journal(out, pid=pid)
    _write(out, "v3")  # the previous put back, then the new unit written
    assert verify_release(out) and out.read_text() == "v3 table"
    assert not journal_path(out).exists()


def test_a_live_process_that_is_not_the_writer_does_not_block_the_output(tmp_path):
    """pid 1 runs, but did not start when the journal says: a reused pid, not the writer."""
    assert process_start(1) is not None
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _killed_at(out, "report-replaced")
    _journal(out, pid=1, start=process_start(1) + 1)
    _write(out, "v3")
    assert verify_release(out) and out.read_text() == "v3 table"


def test_a_writer_that_still_runs_is_waited_for_and_its_journal_named(tmp_path):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    _killed_at(out, "report-replaced")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        _journal(out, pid=sleeper.pid, start=process_start(sleeper.pid))
        before = _files(tmp_path)
        for call in (lambda: _write(out, "v3"), lambda: check_release(out),
                     lambda: check_unit_paths(out)):
            with pytest.raises(BioanonError) as err:
                call()
            assert f"remove its journal '{journal_path(out)}'" in str(err.value)
        assert settle(out) == "running"
        assert _files(tmp_path) == before
    finally:
        sleeper.kill()
        sleeper.wait()
    _write(out, "v3")  # the writer gone: recovered, and written
    assert verify_release(out) and out.read_text() == "v3 table"


@pytest.mark.parametrize("what", ["folder", "symlink", "damaged", "not an object"])
def test_anything_but_a_journal_at_its_path_gets_one_line_naming_it(tmp_path, what):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    journal = journal_path(out)
    if what == "folder":
        journal.mkdir()
        (journal / "keep").write_text("mine")
    elif what == "symlink":
        (tmp_path / "target").write_text("mine")
        journal.symlink_to(tmp_path / "target")
    else:
        journal.write_text("{not json" if what == "damaged" else "[1, 2]")
    before = _files(tmp_path)
    for call in (lambda: _write(out, "v2"), lambda: check_unit_paths(out)):
        with pytest.raises(BioanonError) as err:
            call()
        line = str(err.value)
        assert "\n" not in line and f"'{journal}'" in line and ".tmp" not in line
    with pytest.raises(BioanonError, match=f"'{journal}'"):
        check_release(out)
    assert settle(out) == "unresolved" and not verify_release(out)
    assert _files(tmp_path) == before


def test_the_cli_names_a_folder_at_the_journals_path_before_any_work(src, tmp_path):
    out = tmp_path / "rel.parquet"
    journal_path(out).mkdir()
    res = CliRunner().invoke(app, ["release", str(src), "-o", str(out), *ROLES, *QUICK])
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert f"'{journal_path(out)}' is a folder" in line and ".tmp" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == [journal_path(out).name]


def test_a_previous_left_without_its_journal_is_named_not_replaced(tmp_path):
    out = tmp_path / "rel.csv"
    _write(out, "v1")
    previous_path(out).write_text("an older table")
    with pytest.raises(BioanonError, match="left by an interrupted write"):
        _write(out, "v2")
    assert previous_path(out).read_text() == "an older table" and out.read_text() == "v1 table"


# ---------------------------------------------------------------------- the reports' folders
def _put(where: Path, what: str, tmp_path: Path) -> None:
    if what == "file":
        where.write_text("my notes")
    elif what == "symlink":
        mine = tmp_path / "mine"
        mine.mkdir(exist_ok=True)
        (mine / "report.json").write_text('{"bioanon_version": "mine"}')
        where.symlink_to(mine)
    else:
        where.mkdir()
        (where / "notes.txt").write_text("my notes")


@pytest.mark.parametrize("what", ["file", "symlink", "folder"])
@pytest.mark.parametrize("unit", ["certified", "refused over a release", "refused alone"])
def test_a_users_thing_at_a_reports_path_is_refused_by_write_unit(tmp_path, what, unit):
    out = tmp_path / "rel.csv"
    if unit == "refused over a release":
        _write(out, "v1")
    for where in (refused_report_path(out), report_path(out)):
        if unit == "refused over a release" and where == report_path(out):
            continue  # the release's own report is there
        _put(where, what, tmp_path)
        before = _files(tmp_path)
        with pytest.raises(BioanonError) as err:
            _write(out, "v2", table=unit == "certified")
        line = str(err.value)
        assert line.startswith(f"'{where}' is ") and "remove it or choose another output" in line
        assert _files(tmp_path) == before and (where.is_symlink() == (what == "symlink"))
        assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
        if where.is_dir() and not where.is_symlink():
            shutil.rmtree(where)
        else:
            where.unlink()


@pytest.mark.parametrize("what", ["file", "symlink", "folder"])
@pytest.mark.parametrize("command", ["certified", "refused over a release", "refused alone",
                                     "anonymize"])
def test_a_users_thing_at_the_refused_report_is_refused_before_work(src, tmp_path, what,
                                                                   command):
    out = tmp_path / "rel.parquet"
    if command == "refused over a release":
        write_unit(out, table=lambda tmp: tmp.write_bytes(b"an older release") and None,
                   manifest={"certified": True}, report=None)
    _put(refused_report_path(out), what, tmp_path)
    before = _files(tmp_path)
    if command == "anonymize":
        argv = ["anonymize", str(src), "-o", str(out), *ROLES, "--method", "noise",
                "--param", "sigma=1"]
    else:  # refused: a target no release meets; certified: every risk accepted
        level = ["--level", "0.99", "--target-advantage", "0.99"] if command == "certified" \
            else ["--level", "0.7"]
        argv = ["release", str(src), "-o", str(out), *ROLES, *QUICK, *level]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert line.startswith(f"error: '{refused_report_path(out)}' is ")
    assert line.endswith("remove it or choose another output")
    assert "searching" not in line.lower() and "Traceback" not in res.output
    assert _files(tmp_path) == before


def test_a_users_folder_at_the_report_path_is_refused_before_work(src, tmp_path):
    out = tmp_path / "rel.parquet"
    _put(report_path(out), "folder", tmp_path)
    before = _files(tmp_path)
    res = CliRunner().invoke(app, ["release", str(src), "-o", str(out), *ROLES, *QUICK])
    assert res.exit_code == 2, res.output
    assert "a folder bioanon did not write" in " ".join(res.output.split())
    assert _files(tmp_path) == before


def test_reports_bioanon_wrote_are_replaced_an_empty_folder_too(tmp_path):
    out = tmp_path / "rel.csv"
    report_path(out).mkdir()  # empty: nothing to lose
    _write(out, "v1")
    _write(out, "refused", table=False)
    assert (refused_report_path(out) / ru.REPORT_MARKER).is_file()
    _write(out, "v2")  # replaces the report and removes the refusal's
    assert verify_release(out) and not refused_report_path(out).exists()
    # a report written before the marker existed: its report.json is bioanon's
    (report_path(out) / ru.REPORT_MARKER).unlink()
    (report_path(out) / "report.json").write_text(json.dumps({"bioanon_version": "0.9"}))
    _write(out, "v3")
    assert verify_release(out) and out.read_text() == "v3 table"


@pytest.mark.parametrize("name", ["refused-report", "report"])
def test_a_left_over_aside_of_a_dead_run_is_removed_read_only_or_not(tmp_path, name):
    out = tmp_path / "rel.csv"
    target = out.with_name(f"{out.name}.{name}")
    aside = tmp_path / f".{target.name}.{_dead_pid()}.0a1b2c3d.tmp-old"
    (aside / "inner").mkdir(parents=True)
    (aside / "inner" / "report.json").write_text("{}")
    os.chmod(aside / "inner", 0o555)
    os.chmod(aside, 0o555)
    odd = tmp_path / f".{out.name}.99999999999.0a1b2c3d.tmp"  # a pid out of range
    odd.write_text("x")
    assert remove_stale_temporaries(out) == [odd]
    _write(out, "v1")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "rel.csv", "rel.csv.manifest.json", "rel.csv.report"]


def test_a_read_only_aside_is_removed_by_its_owner_not_root(tmp_path):
    """The permissions that stop a plain user's removal (root ignores them): the next run of
    the aside's owner opens the read-only folders and removes it. As root, the run is a child
    that becomes ``nobody`` over a folder it owns."""
    import pwd
    import tempfile

    uid = os.geteuid()
    if uid == 0:
        try:
            uid = pwd.getpwnam("nobody").pw_uid
        except KeyError:
            pytest.skip("no unprivileged user to run as")
    base = Path(tempfile.mkdtemp(prefix="bioanon-ro-"))
    try:
        os.chmod(base, 0o777)
        out = base / "rel.csv"
        aside = base / f".{out.name}.refused-report.{_dead_pid()}.0a1b2c3d.tmp-old"
        (aside / "inner").mkdir(parents=True)
        (aside / "inner" / "report.json").write_text("{}")
        if os.geteuid() == 0:
            for p in (aside / "inner" / "report.json", aside / "inner", aside):
                os.chown(p, uid, -1)
        os.chmod(aside / "inner", 0o555)
        os.chmod(aside, 0o555)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                if os.geteuid() == 0:
                    os.setuid(uid)
                remove_stale_temporaries(refused_report_path(out))
                code = 0 if not aside.exists() else 3
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _write_folder(out: Path, version: str) -> None:
    """A unit whose table is a folder of parts (the dask path)."""
    def table(tmp: Path) -> None:
        (tmp / "part.0.parquet").write_text(f"{version} part")

    write_unit(out, table=table, manifest={"version": version},
               report=lambda d: (d / "report.json").write_text(version), table_is_dir=True)


def test_a_folder_table_is_put_back_only_over_the_folder_the_writer_staged(tmp_path):
    out = tmp_path / "rel"
    _write_folder(out, "v1")
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            ru._step_hook = lambda name: os._exit(0) if name == "table-replaced" else None
            _write_folder(out, "v2")
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    staged = out.stat().st_ino
    assert (out / "part.0.parquet").read_text() == "v2 part"
    # a folder of the user's in its place: nothing changed
    os.rename(out, tmp_path / "staged")
    out.mkdir()
    (out / "mine.txt").write_text("my own")
    before = _files(tmp_path)
    with pytest.raises(BioanonError, match="is not what that write left there"):
        _write_folder(out, "v3")
    assert _files(tmp_path) == before
    # the staged folder back: proven, the previous is put back
    (out / "mine.txt").unlink()
    out.rmdir()
    os.rename(tmp_path / "staged", out)
    assert out.stat().st_ino == staged
    assert settle(out) == "previous"
    assert (out / "part.0.parquet").read_text() == "v1 part" and verify_release(out)


def test_the_dask_front_door_checks_the_refused_report_before_work(src, tmp_path):
    pytest.importorskip("distributed")
    from bioanon.certification.parquet import certify_parquet
    from bioanon.release import Roles

    out = tmp_path / "rel"
    refused_report_path(out).write_text("my notes")
    with pytest.raises(BioanonError, match="remove it or choose another output"):
        certify_parquet(src, out, Roles(sensitive="identity", interest="expression",
                                        identifying=["gender", "environment"]))
    assert refused_report_path(out).read_text() == "my notes" and not out.exists()


# ------------------------------------------------- a file of the user's in an output folder
FOLDER_COMMANDS = {
    "evaluate": (["evaluate", "{src}", "-o", "{out}", "--sensitive", "identity", "--interest",
                  "expression", "--method", "noise", "--param", "sigma=1"], "report.json"),
    "tune": (["tune", "{src}", "-o", "{out}", "--sensitive", "identity", "--interest",
              "expression", "--method", "noise", "--grid", "sigma=1,2"], "tune.png"),
    "tune-k": (["tune-k", "{src}", "-o", "{out}", "--sensitive", "identity"], "tune-k.json"),
    "audit": (["audit", "{src}", "{src2}", "--control", "{src2}", "-o", "{out}",
               "--sensitive", "identity", "--interest", "expression"], "report.html"),
    "demo": (["demo", "--out", "{out}"], "release.parquet"),
}


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_a_users_file_at_an_output_name_in_the_out_folder_is_refused_before_work(
        src, tmp_path, command):
    argv, name = FOLDER_COMMANDS[command]
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("the user's own file")
    (out / "notes.txt").write_text("another file of the user's")
    src2 = tmp_path / "other.parquet"
    shutil.copy(src, src2)
    before = _files(tmp_path)
    res = CliRunner().invoke(app, [a.format(src=src, src2=src2, out=out) for a in argv])
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert line.startswith(f"error: '{out / name}' is a file bioanon did not write"), line
    assert line.endswith("choose another --out") and "Traceback" not in res.output
    assert _files(tmp_path) == before


def test_a_folder_bioanon_wrote_is_written_again_and_marked(src, tmp_path):
    out = tmp_path / "out"
    argv = [a.format(src=src, out=out) for a in FOLDER_COMMANDS["evaluate"][0]]
    assert CliRunner().invoke(app, argv).exit_code == 0
    assert (out / ru.REPORT_MARKER).is_file()
    (out / "report.json").write_text("stale")
    assert CliRunner().invoke(app, [*argv, "--seed", "3"]).exit_code == 0  # the marker: ours
    assert json.loads((out / "report.json").read_text())["bioanon_version"]
    (out / ru.REPORT_MARKER).unlink()  # a folder written before the marker: its report.json
    assert CliRunner().invoke(app, argv).exit_code == 0


@pytest.mark.parametrize("what", ["file", "json", "symlink", "folder"])
@pytest.mark.parametrize("command", ["anonymize", "release", "write_unit"])
def test_a_users_thing_at_the_manifest_path_is_refused_before_work(src, tmp_path, what,
                                                                   command):
    out = tmp_path / "rel.parquet"
    where = ru.manifest_path(out)
    if what == "json":  # JSON of the user's, not a bioanon manifest
        where.write_text('{"owner": "me", "notes": "mine"}')
    else:
        _put(where, what, tmp_path)
    before = _files(tmp_path)
    if command == "write_unit":
        with pytest.raises(BioanonError, match="where bioanon writes the manifest"):
            _write(out, "v1")
    else:
        argv = ([command, str(src), "-o", str(out), *ROLES, "--method", "noise", "--param",
                 "sigma=1"] if command == "anonymize" else
                ["release", str(src), "-o", str(out), *ROLES, *QUICK])
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 2, res.output
        line = " ".join(res.output.split())
        assert line.startswith("error: ") and f"{where}' is " in line, line
        if what in ("file", "json"):  # a folder (or a link to one) is refused as a folder
            assert line.endswith("move it away or choose another output")
    assert _files(tmp_path) == before and not out.exists()
    if what != "folder":
        where.unlink()
    else:
        shutil.rmtree(where)
    _write(out, "v1")  # the manifest bioanon wrote is replaced by the next release
    _write(out, "v2")
    assert verify_release(out)
