"""A release is one unit: its table, manifest and report are replaced together or not at all.

A release ``OUTPUT`` is three things beside each other, at the paths the user named:

* ``OUTPUT`` — the table (a file, or a folder of Parquet parts on the dask path);
* ``OUTPUT.manifest.json`` — what was released, naming the SHA-256 of the table and of every
  file of the report;
* ``OUTPUT.report/`` — the report (``report.json``, ``report.html``, ``search.png``).

Three paths cannot be switched by one rename, so :func:`write_unit` relies on an order and on a
reader that trusts nothing without its manifest:

1. everything new is written beside the output first, as temporaries (``.NAME.PID.X.tmp...``);
   a kill here leaves the previous unit untouched, and the next run removes the temporaries;
2. then, with SIGINT and SIGTERM held (a SIGTERM is handled after the switch, never half-way):
   the old manifest is removed — from here on the old table and report are not a release —,
   the table is renamed into place, the old report moved aside and the new one renamed in;
3. the manifest is renamed into place **last**: it is the unit's seal.

So at any moment the table, manifest and report on disk are either a whole unit (the old or the
new one) or a state without a manifest, which :func:`verify_release` refuses. A kill between
steps leaves at most moved-aside folders and temporaries, removed by the next write to the same
output. Folders and files get the modes the umask gives.

A refused release (nothing certified) is written as a unit without table and manifest: its
report replaces the previous unit, whose table and manifest are removed — nothing that could pass
for a release stays beside a report that says "not certified" (a file at the output that no
manifest named is not a release, and is left as it is).

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
from collections.abc import Callable, Mapping
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
STEPS = ("staged", "manifest-removed", "table-replaced", "report-moved-aside",
         "report-replaced", "manifest-written")


def manifest_path(path: str | os.PathLike) -> Path:
    """Where the manifest of the release ``path`` goes: ``PATH.manifest.json``."""
    p = Path(path)
    return p.with_name(p.name + ".manifest.json")


def report_path(path: str | os.PathLike) -> Path:
    """Where the report of the release ``path`` goes: ``PATH.report/``."""
    p = Path(path)
    return p.with_name(p.name + ".report")


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


def _report_digests(folder: Path) -> dict[str, str]:
    return {f.relative_to(folder).as_posix(): file_sha256(f)
            for f in sorted(folder.rglob("*")) if f.is_file()}


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
        a refused release: then ``manifest`` must be None too, and the previous unit's table
        and manifest are removed.
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
    """
    out = Path(path)
    if (table is None) != (manifest is None):
        raise ValueError("a release unit has a table and a manifest, or neither (refused)")
    if table is None and report is None:
        raise ValueError("a refused release unit needs its report")
    man, rep = manifest_path(out), report_path(out)
    for target in (out, man, rep):
        remove_stale_temporaries(target)
    try:
        # 1. stage everything beside the output
        table_tmp = digest = None
        if table is not None:
            table_tmp = new_temp_dir(out) if table_is_dir else new_temp_path(out)
            digest = table(table_tmp) or file_sha256(table_tmp)
            if not table_is_dir:
                os.chmod(table_tmp, file_mode())  # a writer may have replaced the file
        rep_tmp = None
        if report is not None:
            rep_tmp = new_temp_dir(rep)
            report(rep_tmp)
        man_tmp = None
        if manifest is not None:
            doc = json.loads(json.dumps(manifest, default=str))
            doc["output"] = {**doc.get("output", {}), "name": out.name, "sha256": digest}
            doc["report"] = None if rep_tmp is None else {
                "name": rep.name, "sha256": _report_digests(rep_tmp)}
            man_tmp = new_temp_path(man)
            man_tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        _step("staged")
        # 2. the switch: the old manifest goes first, the new one comes last
        with signals_deferred():
            was_release = man.exists() or man.is_symlink()
            if was_release:
                man.unlink()
            _step("manifest-removed")
            if table_tmp is None:
                if was_release:  # a file there that no manifest named is no release: kept
                    _remove(out)
            elif table_is_dir and out.exists():
                old_table = aside_name(out)
                os.replace(out, old_table)
                os.replace(table_tmp, out)
                shutil.rmtree(old_table, ignore_errors=True)
            else:
                os.replace(table_tmp, out)
            _step("table-replaced")
            aside: Path | None = None
            if rep.exists():
                aside = aside_name(rep)
                os.replace(rep, aside)
            _step("report-moved-aside")
            if rep_tmp is not None:
                os.replace(rep_tmp, rep)
            _step("report-replaced")
            if man_tmp is not None:
                os.replace(man_tmp, man)  # 3. the seal
            _step("manifest-written")
            if aside is not None:
                shutil.rmtree(aside, ignore_errors=True)
    finally:  # an interrupt while staging: this run's temporaries go, the old unit stays
        for target in (out, man, rep):
            remove_stale_temporaries(target, own=True)
    return UnitPaths(out if table is not None else None, man if manifest is not None else None,
                     rep if report is not None else None)


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


__all__ = ["STEPS", "UnitPaths", "check_release", "manifest_path", "report_path",
           "verify_release", "write_unit"]
