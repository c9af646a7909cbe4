"""The journal of a release's switch, and the recovery after a writer killed in the middle.

:func:`bioanon.release_unit.write_unit` switches a release's table and report into place
under a journal, ``.NAME.switch.json``, beside the output. The journal records who writes
(the process id, its start time and the boot it runs in, so that a reused process id is not
taken for the writer) and the *identity* of everything the switch touches:

* what the writer staged and renames into place — the table file (``st_dev``, ``st_ino``,
  size, modification time and its SHA-256), the table folder of the dask path and the report
  folder (``st_dev``, ``st_ino``);
* what was there before, kept under ``.NAME.previous`` until the commit (its identity the
  same way), or that nothing was there.

:func:`recover` acts only on what it can prove: it removes or replaces what is at a path only
when that is the thing the writer staged, and puts back only the previous it kept. Anything
else — a file of the user's at the output, a previous that is not the one kept, a journal it
cannot read or that records no identities — and it changes nothing: a writer stops with one
line naming the journal (and the previous, when there is one) to inspect and remove; a reader
(:func:`settle`, used by :meth:`bioanon.table.FeatureTable.read`) reads what is at the path.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "in.csv").write_text("a\\n1\\n")
>>> _ = journal_path(d / "in.csv").write_text('{"pid": 99999999999, "table": false}')
>>> settle(d / "in.csv"), (d / "in.csv").read_text()   # a journal that proves nothing
('unresolved', 'a\\n1\\n')
>>> try:
...     recover(d / "in.csv")
... except BioanonError as exc:
...     print(str(exc).split(" (")[0])  # doctest: +ELLIPSIS
'...in.csv.switch.json' records an interrupted write of '...in.csv' but not what that write staged
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .errors import BioanonError
from .io import aside_name, file_sha256, remove_tree, signals_deferred

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: recoveries are not serialized
    fcntl = None  # type: ignore[assignment]

#: the journal's format (a journal of another format records no identities: not acted on)
VERSION = 2


def manifest_path(path: str | os.PathLike) -> Path:
    """Where the manifest of the release ``path`` goes: ``PATH.manifest.json``."""
    p = Path(path)
    return p.with_name(p.name + ".manifest.json")


def report_path(path: str | os.PathLike) -> Path:
    """Where the report of the release ``path`` goes: ``PATH.report/``."""
    p = Path(path)
    return p.with_name(p.name + ".report")


def journal_path(path: str | os.PathLike) -> Path:
    """The journal of a switch in progress at ``path``: ``.PATH.switch.json``."""
    p = Path(path)
    return p.with_name(f".{p.name}.switch.json")


def previous_path(path: str | os.PathLike) -> Path:
    """Where a switch keeps the previous table or report of ``path`` until its commit."""
    p = Path(path)
    return p.with_name(f".{p.name}.previous")


def exists(path: Path) -> bool:
    """Something is at ``path`` (a dangling symbolic link included)."""
    return os.path.lexists(path)


# ---------------------------------------------------------------------- identities
def identity(path: str | os.PathLike, sha256: str | None = None) -> dict[str, Any] | None:
    """What is at ``path`` (not following a link), to be recognised later: its kind, device
    and inode, and for a file or link its size and modification time (and ``sha256`` when
    given). None when nothing is there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    kind = ("dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode)
            else "link" if stat.S_ISLNK(st.st_mode) else "other")
    doc: dict[str, Any] = {"kind": kind, "dev": st.st_dev, "ino": st.st_ino}
    if kind != "dir":
        doc.update(size=st.st_size, mtime_ns=st.st_mtime_ns)
    if sha256 is not None and kind == "file":
        doc["sha256"] = sha256
    return doc


def is_same(path: Path, recorded: Any) -> bool:
    """Whether what is at ``path`` now is the thing ``recorded`` (by :func:`identity`): every
    field equal, and the file's SHA-256 too when one was recorded."""
    now = identity(path)
    if now is None or not isinstance(recorded, Mapping):
        return False
    if any(recorded.get(k) != v for k, v in now.items()):
        return False
    sha = recorded.get("sha256")
    return sha is None or (now["kind"] == "file" and file_sha256(path) == sha)


# ---------------------------------------------------------------------- the writer
def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/PID/stat`` field 22);
    None where that cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return int(text.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def boot_id() -> str | None:
    """This boot's identifier (Linux), or None."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return None


def writer() -> dict[str, Any]:
    """This process as a journal names its writer."""
    return {"pid": os.getpid(), "start": process_start(os.getpid()), "boot": boot_id()}


def writer_alive(doc: Mapping[str, Any]) -> bool:
    """Whether the writer a journal names still runs: its pid is a process of this boot that
    started when the writer did. A pid that is no number, out of range, this process, or a
    process started at another time is no writer."""
    pid = doc.get("pid")
    if type(pid) is not int or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass  # a process of another user: it runs
    except (OverflowError, ValueError, OSError):  # no such process; a pid out of range
        return False
    boot = doc.get("boot")
    if boot is not None and boot_id() not in (None, boot):
        return False
    start = doc.get("start")
    return start is None or process_start(pid) in (None, start)


# ---------------------------------------------------------------------- recovery
Action = Callable[[], None]


class _Unresolved(Exception):
    """What is on disk is not what the journal records: nothing may be changed."""


def _restore(target: Path, prev: Path, staged: Any, kept: Any) -> list[Action]:
    """The actions putting the kept previous of ``target`` back (before the commit)."""
    if kept is None:  # nothing was there before this switch
        if exists(prev):
            raise _Unresolved(prev)
        if not exists(target):
            return []
        if is_same(target, staged):
            return [lambda: remove_path(target)]  # what the writer staged, proven
        raise _Unresolved(target)
    if not exists(prev):
        if is_same(target, kept):
            return []  # killed before the previous was kept: nothing switched
        raise _Unresolved(target)
    if not is_same(prev, kept):
        raise _Unresolved(prev)
    if not exists(target):
        return [lambda: os.replace(prev, target)]
    if is_same(target, kept):  # the previous kept as a second link: drop the link
        return [lambda: prev.unlink()]
    if not is_same(target, staged):
        raise _Unresolved(target)
    if os.path.isdir(target) and not os.path.islink(target):
        return [lambda: remove_path(target), lambda: os.replace(prev, target)]
    return [lambda: os.replace(prev, target)]  # a file: replaces the staged one at once


def _drop(prev: Path, kept: Any) -> list[Action]:
    """The actions removing the kept previous once the switch committed."""
    if kept is None or not exists(prev):
        if exists(prev):
            raise _Unresolved(prev)
        return []
    if not is_same(prev, kept):
        raise _Unresolved(prev)
    return [lambda: remove_path(prev)]


def remove_path(path: Path) -> None:
    """Remove a file or a folder (a folder is moved aside first, so that it disappears from
    its name at once; an aside that cannot be removed is left to the next run, as a
    temporary of a process that no longer runs)."""
    if os.path.isdir(path) and not os.path.islink(path):
        aside = aside_name(path)
        os.replace(path, aside)
        with contextlib.suppress(OSError):
            remove_tree(aside)
    elif exists(path):
        path.unlink()


def _plan(out: Path, doc: Mapping[str, Any]) -> tuple[str, list[Action]]:
    """Which unit the journal ``doc`` leaves at ``out`` and the actions that get there."""
    staged, kept = doc.get("staged"), doc.get("previous")
    if doc.get("version") != VERSION or not isinstance(staged, Mapping) \
            or not isinstance(kept, Mapping):
        raise _Unresolved(None)
    man = manifest_path(out)
    committed = man.is_file() and not man.is_symlink() \
        and file_sha256(man) == doc.get("manifest_sha256")
    actions: list[Action] = []
    for part, target in (("table", out), ("report", report_path(out))):
        prev = previous_path(target)
        if committed:
            actions += _drop(prev, kept.get(part))
        else:
            actions += _restore(target, prev, staged.get(part), kept.get(part))
    return ("new" if committed else "previous"), actions


def _unresolved_line(out: Path, where: Path | None) -> str:
    journal = journal_path(out)
    kept = [p for p in (previous_path(out), previous_path(report_path(out))) if exists(p)]
    what = ("but not what that write staged (the journal of another bioanon version, or not "
            "bioanon's)" if where is None else
            f"but '{where}' is not what that write left there")
    look = " and ".join(repr(str(p)) for p in [out, *kept])
    keep = " (the previous version kept aside)" if kept else ""
    return (f"'{journal}' records an interrupted write of '{out}' {what}, so bioanon changes "
            f"nothing; check {look}{keep}, keep what you need, then remove '{journal}'")


def _journal_doc(out: Path, fd: int) -> dict[str, Any]:
    journal = journal_path(out)
    with os.fdopen(os.dup(fd), "rb") as fh:
        raw = fh.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise BioanonError(f"the journal '{journal}' of an interrupted write of '{out}' is "
                           f"damaged; inspect '{out}' (and '{previous_path(out)}' if it is "
                           f"there), keep what you need, then remove '{journal}'")
    return doc


def _open_journal(out: Path) -> int | None:
    """The journal of ``out`` opened (None without one); anything else at its path refused."""
    journal = journal_path(out)
    try:
        st = os.lstat(journal)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st.st_mode):
        with contextlib.suppress(FileNotFoundError):
            return os.open(journal, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        return None
    what = ("a folder" if stat.S_ISDIR(st.st_mode) else
            "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a file")
    raise BioanonError(f"'{journal}' is {what}, where bioanon keeps the journal of a release "
                       f"written to '{out}'; move or remove it, or choose another output")


def recover(path: str | os.PathLike, *, act: bool = True) -> str | None:
    """Finish what a writer killed in the middle of a switch at ``path`` left.

    Without a journal (no switch was under way) nothing changes. With the journal of a writer
    that no longer runs: before its commit (the manifest on disk is not the one it was
    writing) the previous table and report it kept are put back and what it staged is
    removed, so the previous unit is whole again; after its commit only the previous table
    and report it kept are removed; then the journal. Each of these only when what is on
    disk is, by its identity, what the journal records. A journal whose writer still runs is
    left alone.

    Parameters
    ----------
    path : path
        The release's table (the output).
    act : bool
        False: change nothing, only say what the recovery would do (or raise as it would).

    Returns
    -------
    str or None
        ``"previous"`` or ``"new"`` (which unit the interrupted switch leaves), ``"running"``
        (another process is switching), or None (no switch was under way).

    Raises
    ------
    BioanonError
        When something other than a file is at the journal's path, the journal is damaged,
        or what is on disk is not what it records (one line naming the journal and the
        previous version kept, to inspect and remove): nothing is changed then.
    """
    out = Path(path)
    fd = _open_journal(out)
    if fd is None:
        return None
    try:
        if act and fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # one recovery at a time
            now = identity(journal_path(out))
            st = os.fstat(fd)
            if now is None or (now["dev"], now["ino"]) != (st.st_dev, st.st_ino):
                return None  # recovered meanwhile by another process
        doc = _journal_doc(out, fd)
        if writer_alive(doc):
            return "running"
        try:
            unit, actions = _plan(out, doc)
        except _Unresolved as exc:
            raise BioanonError(_unresolved_line(out, exc.args[0])) from None
        if act:
            with signals_deferred():
                for action in actions:
                    action()
                journal_path(out).unlink()
        return unit
    finally:
        os.close(fd)


def settle(path: str | os.PathLike) -> str | None:
    """A reader's recovery: :func:`recover`'s proven actions, or nothing.

    A journal that proves nothing (damaged, naming no identities, or another thing than the
    one it records at the path) is left as it is and ``"unresolved"`` returned: the reader
    reads what is at ``path``, which is never removed or replaced but by the thing the
    journal's writer kept of it.
    """
    try:
        return recover(path)
    except (BioanonError, OSError):
        return "unresolved"


def running_line(path: str | os.PathLike, doing: str) -> str:
    """The line of a run that must wait for a writer that still runs."""
    out = Path(path)
    return (f"another bioanon process is writing the release '{out}'; {doing} once it has "
            f"ended (if no bioanon process runs, remove its journal '{journal_path(out)}')")


__all__ = ["VERSION", "boot_id", "exists", "identity", "is_same", "journal_path",
           "manifest_path", "previous_path", "process_start", "recover", "remove_path",
           "report_path", "running_line", "settle", "writer", "writer_alive"]
