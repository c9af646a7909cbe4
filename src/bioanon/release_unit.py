"""A release is one unit: its table, manifest and report are replaced together or not at all.

A release ``OUTPUT`` is three things beside each other, at the paths the user named:

* ``OUTPUT`` — the table (a file, or a folder of Parquet parts on the dask path);
* ``OUTPUT.manifest.json`` — what was released, naming the SHA-256 of the table and of every
  file of the report;
* ``OUTPUT.report/`` — the report (``report.json``, ``report.html``, ``search.png``).

Three paths cannot be switched by one rename, so :func:`write_unit` keeps a journal and lets
the manifest's rename be the one moment the new unit takes over (its *commit*):

1. everything new is written beside the output first, as temporaries (``.NAME.PID.X.tmp...``);
   a kill here leaves the previous unit untouched, and the next run removes the temporaries;
2. then, with SIGINT and SIGTERM held (a SIGTERM is handled after the switch, never half-way):
   a journal ``.NAME.switch.json`` is written, the previous table and report are kept beside
   under fixed names (``.NAME.previous``, the table as a second hard link where the file
   system allows, so that ``OUTPUT`` never disappears), and the new table and report are
   renamed into place;
3. the new manifest is renamed over the old one **last**: the commit. The previous table and
   report, then the journal, are removed.

The old manifest is never removed, only replaced. A writer killed between the journal and the
commit leaves the new table beside the old manifest for a moment: the next bioanon call that
touches the release (:func:`write_unit`, :func:`check_release`, :func:`verify_release`,
:meth:`bioanon.table.FeatureTable.read`) finds the journal of a writer that no longer runs and
puts the previous table and report back (:func:`recover`); one killed after the commit leaves
the new unit whole, and the recovery only removes what the writer had left to remove. So after
any kill the release is the previous unit or the new one, whole — never a table without its
manifest. Folders and files get the modes the umask gives.

A refused release (nothing certified) has no table and no manifest; it never touches a
previous release: the report of the setting that came closest goes to ``OUTPUT.report/`` when
no release is at ``OUTPUT`` (no manifest there), else to ``OUTPUT.refused-report/``, beside the
previous release, which stays until a new one replaces it. A certified unit written later
removes a ``OUTPUT.refused-report/`` left by an earlier refusal.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> unit = write_unit(d / "t.csv", table=lambda tmp: tmp.write_text("a\\n1\\n") and None,
...                   manifest={"certified": False},
...                   report=lambda folder: (folder / "report.json").write_text("{}"))
>>> sorted(p.name for p in d.iterdir()), verify_release(d / "t.csv")
(['t.csv', 't.csv.manifest.json', 't.csv.report'], True)
>>> _ = (d / "t.csv.report" / "report.json").write_text('{"edited": true}')
>>> verify_release(d / "t.csv")
False
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BioanonError
from .io import (
    aside_name,
    file_mode,
    file_sha256,
    new_temp_dir,
    new_temp_path,
    remove_stale_temporaries,
    signals_deferred,
)

#: writes the table at a temporary path (a file, or into an existing empty folder when the
#: table is a folder) and returns its SHA-256 when it computed it while writing, else None
TableWriter = Callable[[Path], "str | None"]
#: writes the report's files into an existing empty folder
ReportWriter = Callable[[Path], Any]

#: called with the name of each step of the switch (tests pause or kill a writer there)
_step_hook: Callable[[str], None] | None = None

#: the steps of the switch, in order (the points :data:`_step_hook` is called at)
STEPS = ("staged", "journal-written", "table-kept", "table-replaced", "report-moved-aside",
         "report-replaced", "manifest-written", "previous-removed")
#: the units this process has committed (a SIGTERM held during a switch is handled after
#: the commit: the command line then says the release was written)
COMMITTED: list[Path] = []

#: the steps of a refused unit's report (no table, no manifest)
REFUSED_STEPS = ("staged", "report-moved-aside", "report-replaced")


def manifest_path(path: str | os.PathLike) -> Path:
    """Where the manifest of the release ``path`` goes: ``PATH.manifest.json``."""
    p = Path(path)
    return p.with_name(p.name + ".manifest.json")


def report_path(path: str | os.PathLike) -> Path:
    """Where the report of the release ``path`` goes: ``PATH.report/``."""
    p = Path(path)
    return p.with_name(p.name + ".report")


def refused_report_path(path: str | os.PathLike) -> Path:
    """Where a refused run's report goes when a release is already at ``path`` (which stays):
    ``PATH.refused-report/``."""
    p = Path(path)
    return p.with_name(p.name + ".refused-report")


def journal_path(path: str | os.PathLike) -> Path:
    """The journal of a switch in progress at ``path``: ``.PATH.switch.json``."""
    p = Path(path)
    return p.with_name(f".{p.name}.switch.json")


def previous_path(path: str | os.PathLike) -> Path:
    """Where a switch keeps the previous table or report of ``path`` until its commit."""
    p = Path(path)
    return p.with_name(f".{p.name}.previous")


@dataclass(frozen=True)
class UnitPaths:
    """The paths of a written unit (None for a part it does not have)."""

    table: Path | None
    manifest: Path | None
    report: Path | None


def _step(name: str) -> None:
    if _step_hook is not None:
        _step_hook(name)


def _remove(path: Path) -> None:
    """Remove a file or a folder (a folder is moved aside first, so that it disappears from
    its name at once)."""
    if path.is_dir() and not path.is_symlink():
        aside = aside_name(path)
        os.replace(path, aside)
        shutil.rmtree(aside, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _report_digests(folder: Path) -> dict[str, str]:
    return {f.relative_to(folder).as_posix(): file_sha256(f)
            for f in sorted(folder.rglob("*")) if f.is_file()}


def _keep_previous(path: Path) -> None:
    """Keep what is at ``path`` as :func:`previous_path` until the commit: a file as a second
    hard link (``path`` stays in place), a folder (or a file on a file system without hard
    links) renamed."""
    prev = previous_path(path)
    if path.is_file() and not path.is_symlink():
        try:
            os.link(path, prev)
            return
        except OSError:
            pass
    os.replace(path, prev)


def _put_back(path: Path) -> None:
    """Put :func:`previous_path` back at ``path`` (whatever a killed switch left there)."""
    prev = previous_path(path)
    if not _exists(prev):
        return
    if path.is_dir() and not path.is_symlink():
        _remove(path)
    os.replace(prev, path)  # a file: replaces the new one (or is the same file already)
    if _exists(prev):  # rename() of two links to one file does nothing
        prev.unlink()


def _drop_previous(path: Path) -> None:
    prev = previous_path(path)
    if prev.is_dir() and not prev.is_symlink():
        shutil.rmtree(prev, ignore_errors=True)
    elif _exists(prev):
        prev.unlink()


def _writer_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return False  # this process is not switching this output now (it would not ask)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(path: str | os.PathLike) -> str | None:
    """Finish what a writer killed in the middle of a switch at ``path`` left.

    Without a journal (no switch was under way) nothing changes. With the journal of a writer
    that no longer runs: before its commit (the manifest on disk is not the one it was
    writing) the previous table and report are put back and what it renamed into place is
    removed, so the previous unit is whole again; after its commit only the previous table
    and report it kept are removed. A journal whose writer still runs is left alone.

    Returns
    -------
    str or None
        ``"previous"`` or ``"new"`` (which unit the interrupted switch leaves), ``"running"``
        (another process is switching), or None (no switch was under way).
    """
    out = Path(path)
    journal = journal_path(out)
    if not _exists(journal):
        return None
    try:
        doc = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # written atomically: unreadable only if damaged; nothing to act on
    if not isinstance(doc, dict):
        return None
    if _writer_alive(doc.get("pid")):
        return "running"
    man, rep = manifest_path(out), report_path(out)
    committed = (man.is_file() and file_sha256(man) == doc.get("manifest_sha256"))
    with signals_deferred():
        if not committed:
            for target, had in ((out, doc.get("table")), (rep, doc.get("report"))):
                if had:
                    _put_back(target)
                elif _exists(target):
                    _remove(target)  # nothing was there before this switch: its own
        for target in (out, rep):
            _drop_previous(target)
        journal.unlink()
    return "new" if committed else "previous"


def write_unit(path: str | os.PathLike, *, table: TableWriter | None,
               manifest: Mapping[str, Any] | None, report: ReportWriter | None = None,
               table_is_dir: bool = False) -> UnitPaths:
    """Write (or replace) the release unit at ``path``: table, manifest and report together.

    Parameters
    ----------
    path : path
        The table's path as the user named it (``-o``); the manifest and the report go beside.
    table : callable or None
        Writes the table at the temporary path it is given (see :data:`TableWriter`). None for
        a refused release: then ``manifest`` must be None too, and a previous release at
        ``path`` stays (the report goes to :func:`refused_report_path` then).
    manifest : mapping or None
        The manifest; its ``output`` gets the table's name and SHA-256 and its ``report`` the
        report's folder name and the SHA-256 of each of its files.
    report : callable, optional
        Writes the report's files into the folder it is given. None: no report (a previous
        unit's report is removed, since it describes another table).
    table_is_dir : bool
        The table is a folder of parts (the dask path).

    Returns
    -------
    UnitPaths
        The paths written (the report's is where it went).
    """
    out = Path(path)
    if (table is None) != (manifest is None):
        raise ValueError("a release unit has a table and a manifest, or neither (refused)")
    if table is None and report is None:
        raise ValueError("a refused release unit needs its report")
    man, rep = manifest_path(out), report_path(out)
    if recover(out) == "running":
        raise BioanonError(f"another bioanon process is writing the release '{out}'; wait "
                           "for it to end, or choose another output")
    for target in (out, man, rep, refused_report_path(out), journal_path(out)):
        remove_stale_temporaries(target)
    if table is None:
        assert report is not None
        if _exists(man):  # a release is there: it stays, the refusal's report goes beside
            return UnitPaths(None, None, _write_report_alone(refused_report_path(out), report))
        written = _write_report_alone(rep, report)
        _remove(refused_report_path(out))  # an earlier refusal's report: superseded
        return UnitPaths(None, None, written)
    journal = journal_path(out)
    try:
        # 1. stage everything beside the output
        table_tmp = new_temp_dir(out) if table_is_dir else new_temp_path(out)
        digest = table(table_tmp) or file_sha256(table_tmp)
        if not table_is_dir:
            os.chmod(table_tmp, file_mode())  # a writer may have replaced the file
        rep_tmp = None
        if report is not None:
            rep_tmp = new_temp_dir(rep)
            report(rep_tmp)
        doc = json.loads(json.dumps(manifest, default=str))
        doc["output"] = {**doc.get("output", {}), "name": out.name, "sha256": digest}
        doc["report"] = None if rep_tmp is None else {
            "name": rep.name, "sha256": _report_digests(rep_tmp)}
        man_tmp = new_temp_path(man)
        man_tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        journal_tmp = new_temp_path(journal, ".json")
        _step("staged")
        # 2. the switch: journal, previous kept, new table and report in place
        with signals_deferred(), _rolled_back_on_error(out):
            journal_tmp.write_text(json.dumps({
                "pid": os.getpid(), "manifest_sha256": file_sha256(man_tmp),
                "table": _exists(out), "report": _exists(rep)}), encoding="utf-8")
            os.replace(journal_tmp, journal)
            _step("journal-written")
            if _exists(out):
                _keep_previous(out)
            _step("table-kept")
            os.replace(table_tmp, out)
            _step("table-replaced")
            if _exists(rep):
                _keep_previous(rep)
            _step("report-moved-aside")
            if rep_tmp is not None:
                os.replace(rep_tmp, rep)
            _step("report-replaced")
            os.replace(man_tmp, man)  # 3. the commit: the new manifest over the old one
            COMMITTED.append(out)
            _step("manifest-written")
            for target in (out, rep):
                _drop_previous(target)
            _step("previous-removed")
            journal.unlink()
            _remove(refused_report_path(out))  # an earlier refusal's report: superseded
    finally:  # an interrupt while staging: this run's temporaries go, the old unit stays
        for target in (out, man, rep, journal):
            remove_stale_temporaries(target, own=True)
    return UnitPaths(out, man, rep if report is not None else None)


@contextlib.contextmanager
def _rolled_back_on_error(out: Path) -> Iterator[None]:
    """A switch that fails half-way in this process (a rename refused by the file system) is
    rolled back at once, as the next run would (:func:`recover`)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            recover(out)
        raise


def _write_report_alone(where: Path, report: ReportWriter) -> Path:
    """A refused run's report at ``where`` (a folder, replaced whole; no release touched)."""
    try:
        rep_tmp = new_temp_dir(where)
        report(rep_tmp)
        _step("staged")
        with signals_deferred():
            aside = None
            if _exists(where):
                aside = aside_name(where)
                os.replace(where, aside)
            _step("report-moved-aside")
            os.replace(rep_tmp, where)
            _step("report-replaced")
            if aside is not None:
                shutil.rmtree(aside, ignore_errors=True)
    finally:
        remove_stale_temporaries(where, own=True)
    return where


def check_release(path: str | os.PathLike) -> dict[str, Any]:
    """The manifest of the release ``path``, checked to describe what is on disk.

    Raises
    ------
    BioanonError
        When there is no manifest (no release, or one whose writing was interrupted), or the
        table or a report file differs from what the manifest names.
    """
    p = Path(path)
    if recover(p) == "running":
        raise BioanonError(f"'{p}' is being written by another bioanon process; check it "
                           "once that process has ended")
    try:
        doc = json.loads(manifest_path(p).read_text(encoding="utf-8"))
        named = doc["output"]["sha256"]
    except FileNotFoundError:
        raise BioanonError(f"'{p}' has no manifest ('{manifest_path(p).name}'): it is not a "
                           "release (or its writing was interrupted); write it again") from None
    except (OSError, ValueError, KeyError, TypeError):
        raise BioanonError(f"the manifest of '{p}' cannot be read; write the release "
                           "again") from None
    if not p.exists() or named != file_sha256(p):
        raise BioanonError(f"'{p}' is not the table its manifest names (SHA-256 differs); "
                           "write the release again")
    rep = doc.get("report")
    if rep:
        folder = p.with_name(str(rep.get("name")))
        for name, sha in (rep.get("sha256") or {}).items():
            f = folder / name
            if not f.is_file() or file_sha256(f) != sha:
                raise BioanonError(f"'{folder.name}/{name}' is not the report file the manifest "
                                   f"of '{p}' names; write the release again")
    return dict(doc)


def verify_release(path: str | os.PathLike) -> bool:
    """True when ``PATH.manifest.json`` names the SHA-256 of the table at ``path`` and of every
    file of the report it lists (see :func:`check_release`)."""
    with contextlib.suppress(BioanonError):
        check_release(path)
        return True
    return False


__all__ = ["REFUSED_STEPS", "STEPS", "UnitPaths", "check_release", "manifest_path", "recover",
           "refused_report_path", "report_path", "verify_release", "write_unit"]
