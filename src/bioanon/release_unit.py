"""A release is one unit: its table, manifest and report are replaced together or not at all.

A release ``OUTPUT`` is three things beside each other, at the paths the user named:

* ``OUTPUT`` — the table (a file, or a folder of Parquet parts on the dask path);
* ``OUTPUT.manifest.json`` — what was released, naming the SHA-256 of the table and of every
  file of the report;
* ``OUTPUT.report/`` — the report (``report.json``, ``report.html``, ``search.png``, and the
  hidden :data:`REPORT_MARKER` that says bioanon wrote the folder).

Every path a unit may replace or remove is checked before any work
(:func:`check_unit_paths`, called by the commands before they read the input, by the dask
paths' front doors, and by :func:`write_unit` itself): a file, a symbolic link or a folder
bioanon did not write at ``OUTPUT.report`` or ``OUTPUT.refused-report`` is refused with one
line, never removed; so is anything but a file at the journal's path, a journal that proves
nothing, and a previous version left without its journal.

Three paths cannot be switched by one rename, so :func:`write_unit` keeps a journal and lets
the manifest's rename be the one moment the new unit takes over (its *commit*):

1. everything new is written beside the output first, as temporaries (``.NAME.PID.X.tmp...``);
   a kill here leaves the previous unit untouched, and the next run removes the temporaries;
2. then, with SIGINT and SIGTERM held (a SIGTERM is handled after the switch, never half-way):
   a journal ``.NAME.switch.json`` is written, recording the writer (pid, start time, boot)
   and the identity of what it staged and of what was there (:mod:`bioanon.release_journal`);
   the previous table and report are kept beside under fixed names (``.NAME.previous``, the
   table as a second hard link where the file system allows, so that ``OUTPUT`` never
   disappears), and the new table and report are renamed into place;
3. the new manifest is renamed over the old one **last**: the commit. The previous table and
   report, then the journal, are removed.

The old manifest is never removed, only replaced. A writer killed between the journal and the
commit leaves the new table beside the old manifest for a moment: the next bioanon call that
touches the release (:func:`write_unit`, :func:`check_release`, :func:`verify_release`,
:meth:`bioanon.table.FeatureTable.read`) finds the journal of a writer that no longer runs and
puts the previous table and report back (:func:`recover`); one killed after the commit leaves
the new unit whole, and the recovery only removes what the writer had left to remove. So after
any kill the release is the previous unit or the new one, whole — never a table without its
manifest. The recovery removes or replaces only what it proves, by identity, to be what the
writer staged or kept: a file of the user's at the output is never removed (a writer stops
with one line naming the journal and the previous version to inspect; a reader reads what is
there). Folders and files get the modes the umask gives.

A refused release (nothing certified) has no table and no manifest; it never touches a
previous release: the report of the setting that came closest goes to ``OUTPUT.report/`` when
no release is at ``OUTPUT`` (no manifest there), else to ``OUTPUT.refused-report/``, beside the
previous release, which stays until a new one replaces it. A certified unit written later
removes a ``OUTPUT.refused-report/`` left by an earlier refusal (a report bioanon wrote only).

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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BioanonError
from .io import (
    REPORT_MARKER,
    aside_name,
    file_mode,
    file_sha256,
    mark_output,
    new_temp_dir,
    new_temp_path,
    remove_stale_temporaries,
    remove_tree,
    signals_deferred,
    written_by_bioanon,
)
from .release_journal import (
    VERSION,
    exists,
    identity,
    journal_path,
    manifest_path,
    previous_path,
    recover,
    remove_path,
    report_path,
    running_line,
    writer,
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

def refused_report_path(path: str | os.PathLike) -> Path:
    """Where a refused run's report goes when a release is already at ``path`` (which stays):
    ``PATH.refused-report/``."""
    p = Path(path)
    return p.with_name(p.name + ".refused-report")


@dataclass(frozen=True)
class UnitPaths:
    """The paths of a written unit (None for a part it does not have)."""

    table: Path | None
    manifest: Path | None
    report: Path | None


def _step(name: str) -> None:
    if _step_hook is not None:
        _step_hook(name)


def _report_digests(folder: Path) -> dict[str, str]:
    return {f.relative_to(folder).as_posix(): file_sha256(f)
            for f in sorted(folder.rglob("*")) if f.is_file() and f.name != REPORT_MARKER}


def _mark(folder: Path) -> None:
    """Mark ``folder`` as a report bioanon wrote (:data:`REPORT_MARKER`)."""
    mark_output(folder)


def is_bioanon_report(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a report folder bioanon may replace: a real folder (no symbolic
    link) that is empty, holds :data:`REPORT_MARKER`, or whose ``report.json`` is a bioanon
    report (one written before the marker)."""
    f = Path(folder)
    if f.is_symlink() or not f.is_dir():
        return False
    if written_by_bioanon(f):
        return True
    with contextlib.suppress(OSError):
        return not any(f.iterdir())
    return False


def _check_report_folder(folder: Path, out: Path, what: str) -> None:
    """Refuse anything at ``folder`` a unit at ``out`` could not replace without loss."""
    if not exists(folder):
        return
    kind = ("a symbolic link" if folder.is_symlink() else
            None if folder.is_dir() else "a file")
    if kind is None:
        if is_bioanon_report(folder):
            return
        kind = "a folder bioanon did not write (no bioanon report in it)"
    raise BioanonError(f"'{folder}' is {kind}, where bioanon writes {what} of '{out}'; remove "
                       "it or choose another output")


def _check_manifest(path: Path, out: Path) -> None:
    """Refuse anything at ``OUTPUT.manifest.json`` but a manifest bioanon wrote (a JSON
    document naming ``out`` under ``output``, as every unit's manifest does, or one with
    ``bioanon_version``): a release replaces it."""
    if not exists(path):
        return
    ours = False
    if path.is_file() and not path.is_symlink():
        with contextlib.suppress(OSError, ValueError):
            doc = json.loads(path.read_text(encoding="utf-8"))
            named = doc.get("output") if isinstance(doc, dict) else None
            ours = isinstance(doc, dict) and ("bioanon_version" in doc or (
                isinstance(named, dict) and named.get("name") == out.name))
    if not ours:
        kind = ("a symbolic link" if path.is_symlink() else "a folder" if path.is_dir()
                else "a file bioanon did not write (not a bioanon manifest)")
        raise BioanonError(f"'{path}' is {kind}, where bioanon writes the manifest of '{out}'; "
                           "move it away or choose another output")


def check_unit_paths(path: str | os.PathLike) -> None:
    """Check, before any work, that a release unit can be written at ``path`` without loss.

    Refuses (one line each, naming the path and the fix) a file, a symbolic link or a folder
    bioanon did not write at ``PATH.report``, ``PATH.refused-report`` or
    ``PATH.manifest.json``; anything but a file
    at the journal's path, a damaged journal, one whose writer still runs and one whose
    recovery could not prove what it would change (:func:`recover`); a previous version
    (``.PATH.previous``) left without its journal.
    """
    out = Path(path)
    if recover(out, act=False) == "running":
        raise BioanonError(running_line(out, "run again"))
    if not exists(journal_path(out)):
        for target in (out, report_path(out)):
            prev = previous_path(target)
            if exists(prev):
                raise BioanonError(f"'{prev}' is a previous version of '{target}' left by an "
                                   "interrupted write (no journal names it); inspect it, keep "
                                   "what you need, then remove it")
        _check_manifest(manifest_path(out), out)
    _check_report_folder(report_path(out), out, "the report")
    _check_report_folder(refused_report_path(out), out, "a refused run's report")


def _keep_previous(path: Path) -> None:
    """Keep what is at ``path`` as :func:`previous_path` until the commit: a file (or link) as
    a second hard link (``path`` stays in place), a folder (or a file on a file system
    without hard links) renamed."""
    prev = previous_path(path)
    if not path.is_dir() or path.is_symlink():
        try:
            os.link(path, prev, follow_symlinks=False)
            return
        except OSError:
            pass
    os.replace(path, prev)


def _drop_previous(path: Path) -> bool:
    """Remove the previous of ``path`` once the new unit is committed; False when it could
    not be removed (a later run removes it: the commit stands)."""
    prev = previous_path(path)
    try:
        if exists(prev):
            remove_path(prev)
    except OSError:
        return False
    return True


def _remove_refused_report(out: Path) -> None:
    """Remove an earlier refusal's report at ``out``, superseded (a report bioanon wrote
    only; one that cannot be removed stays)."""
    refused = refused_report_path(out)
    if is_bioanon_report(refused):
        with contextlib.suppress(OSError):
            remove_path(refused)


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
        raise BioanonError(running_line(out, "write it again"))
    check_unit_paths(out)
    for target in (out, man, rep, refused_report_path(out), journal_path(out),
                   previous_path(out), previous_path(rep)):
        remove_stale_temporaries(target)
    if table is None:
        assert report is not None
        if exists(man):  # a release is there: it stays, the refusal's report goes beside
            return UnitPaths(None, None, _write_report_alone(refused_report_path(out), out,
                                                             report))
        written = _write_report_alone(rep, out, report)
        _remove_refused_report(out)  # an earlier refusal's report: superseded
        return UnitPaths(None, None, written)
    assert manifest is not None  # filled by the table's writer on the streamed path: not copied
    try:
        staged = _stage(out, table, manifest, report, table_is_dir)
        _step("staged")
        check_unit_paths(out)  # again: nothing at the output changed while staging
        _switch(out, staged)
    finally:  # an interrupt while staging: this run's temporaries go, the old unit stays
        for target in (out, man, rep, journal_path(out)):
            remove_stale_temporaries(target, own=True)
    return UnitPaths(out, man, rep if report is not None else None)


@dataclass(frozen=True)
class _Staged:
    """What :func:`write_unit` staged beside the output: temporaries and their identities."""

    table: Path
    report: Path | None
    manifest: Path
    journal: Path
    #: the SHA-256 of the table file (None for a folder), recorded with its identity
    digest: str | None


def _stage(out: Path, table: TableWriter, manifest: Mapping[str, Any],
           report: ReportWriter | None, table_is_dir: bool) -> _Staged:
    """Write the table, the report and the manifest as temporaries beside the output."""
    rep = report_path(out)
    table_tmp = new_temp_dir(out) if table_is_dir else new_temp_path(out)
    digest = table(table_tmp) or file_sha256(table_tmp)
    if not table_is_dir:
        os.chmod(table_tmp, file_mode())  # a writer may have replaced the file
    rep_tmp = None
    if report is not None:
        rep_tmp = new_temp_dir(rep)
        report(rep_tmp)
        _mark(rep_tmp)
    doc = json.loads(json.dumps(manifest, default=str))
    doc["output"] = {**doc.get("output", {}), "name": out.name, "sha256": digest}
    doc["report"] = None if rep_tmp is None else {
        "name": rep.name, "sha256": _report_digests(rep_tmp)}
    man_tmp = new_temp_path(manifest_path(out))
    man_tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return _Staged(table_tmp, rep_tmp, man_tmp, new_temp_path(journal_path(out), ".json"),
                   None if table_is_dir else digest)


def _switch(out: Path, staged: _Staged) -> None:
    """Switch the staged unit into place under the journal; the manifest's rename commits.
    The journal names what is staged and what is there by their identities, taken now."""
    man, rep, journal = manifest_path(out), report_path(out), journal_path(out)
    with signals_deferred(), _rolled_back_on_error(out):
        staged.journal.write_text(json.dumps({
            "version": VERSION, **writer(), "manifest_sha256": file_sha256(staged.manifest),
            "staged": {"table": identity(staged.table, staged.digest),
                       "report": None if staged.report is None else identity(staged.report)},
            "previous": {"table": identity(out), "report": identity(rep)}}), encoding="utf-8")
        os.replace(staged.journal, journal)
        _step("journal-written")
        if exists(out):
            _keep_previous(out)
        _step("table-kept")
        os.replace(staged.table, out)
        _step("table-replaced")
        if exists(rep):
            _keep_previous(rep)
        _step("report-moved-aside")
        if staged.report is not None:
            os.replace(staged.report, rep)
        _step("report-replaced")
        os.replace(staged.manifest, man)  # 3. the commit: the new manifest over the old one
        COMMITTED.append(out)
        _step("manifest-written")
        dropped = [_drop_previous(target) for target in (out, rep)]
        _step("previous-removed")
        if all(dropped):  # else the journal stays: the next run removes what is left
            journal.unlink()
        _remove_refused_report(out)  # an earlier refusal's report: superseded


@contextlib.contextmanager
def _rolled_back_on_error(out: Path) -> Iterator[None]:
    """A switch that fails half-way in this process (a rename refused by the file system) is
    rolled back at once, as the next run would (:func:`recover`)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError, BioanonError):
            recover(out)
        raise


def _write_report_alone(where: Path, out: Path, report: ReportWriter) -> Path:
    """A refused run's report at ``where`` (a folder, replaced whole; no release touched)."""
    what = "the report" if where == report_path(out) else "a refused run's report"
    try:
        rep_tmp = new_temp_dir(where)
        report(rep_tmp)
        _mark(rep_tmp)
        _step("staged")
        _check_report_folder(where, out, what)  # again: nothing changed while staging
        with signals_deferred():
            aside = None
            if exists(where):
                aside = aside_name(where)
                os.replace(where, aside)
            _step("report-moved-aside")
            os.replace(rep_tmp, where)
            _step("report-replaced")
            if aside is not None:
                with contextlib.suppress(OSError):  # left: the next run removes it
                    remove_tree(aside)
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
    try:
        state = recover(p)  # what it proves only: the previous unit put back, or the new one
    except OSError:  # a folder bioanon cannot change: the unit is checked as it is
        state = None
    if state == "running":
        raise BioanonError(running_line(p, "check it"))
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


__all__ = ["REFUSED_STEPS", "REPORT_MARKER", "STEPS", "UnitPaths", "check_release",
           "check_unit_paths", "is_bioanon_report", "journal_path", "manifest_path",
           "previous_path", "recover", "refused_report_path", "report_path", "verify_release",
           "write_unit"]
