"""Safe file writing: temporary file in the same folder, then an atomic rename.

A crash or a user error never leaves a partly written output, and an output path that is one
of the inputs is refused before anything is written. Temporary files are named
``.NAME.PID.RANDOM.tmp...`` so that the next run writing ``NAME`` can remove those left by a
killed process (whose PID no longer runs). Outputs get the permissions the umask gives
(usually 0644), like any file the user creates.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import BioanonError


def check_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse to write ``output`` if it is the same file as any of ``inputs``."""
    out = Path(output).resolve()
    for src in inputs:
        if Path(src).resolve() == out:
            raise BioanonError(
                f"output '{output}' is the input file; choose another output path "
                "(bioanon never overwrites its input)"
            )


def check_output_file(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()
                      ) -> Path:
    """Check, before any work, that a file can be written at ``path``.

    Refuses an output that is an input, a folder, inside a missing or read-only folder.
    """
    p = Path(path)
    check_not_input(p, inputs)
    if p.is_dir():
        raise BioanonError(f"output '{p}' is a folder; name a file to write")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise BioanonError(f"output folder '{parent}' does not exist; create it first")
    _probe(parent)
    return p


def _probe(folder: Path) -> None:
    """Create and remove a file in ``folder``: modes alone miss root, read-only mounts, /proc."""
    try:
        fd, name = tempfile.mkstemp(prefix=".bioanon-probe.", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError:
        raise BioanonError(f"output folder '{folder}' is not writable; choose another "
                           "folder") from None


def check_output_dir(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = (),
                     files: Iterable[str] = ()) -> Path:
    """Check, before any work, that ``path`` is (or can become) a folder for ``files``."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise BioanonError(f"--out '{p}' is an existing file; name a folder for the report")
    for src in inputs:
        if Path(src).resolve() == p.resolve():
            raise BioanonError(f"--out '{p}' is the input; name a folder for the report")
    for name in files:
        check_not_input(p / name, inputs)
        if (p / name).is_dir():
            raise BioanonError(f"'{p / name}' is a folder; remove it or choose another --out")
    existing = p
    while not existing.exists():
        existing = existing.parent
    _probe(existing)
    return p


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions a new file gets under the current umask (usually 0644)."""
    return 0o666 & ~_umask()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def temp_pattern(target: Path) -> re.Pattern[str]:
    """Pattern of the temporary files this module creates for ``target``."""
    return re.compile(rf"^\.{re.escape(target.name)}\.(\d+)\.[^.]+\.tmp")


def remove_stale_temporaries(target: str | os.PathLike, own: bool = False) -> list[Path]:
    """Remove temporaries of ``target`` left by processes that no longer run; return them.

    With ``own=True``, remove this process's temporaries of ``target`` instead (cleanup after
    an interrupted write).
    """
    t = Path(target)
    folder = t.parent if str(t.parent) else Path(".")
    if not folder.is_dir():
        return []
    pat = temp_pattern(t)
    removed = []
    for entry in folder.iterdir():
        m = pat.match(entry.name)
        pid = int(m.group(1)) if m else -1
        if m and (pid == os.getpid() if own else not _pid_alive(pid)):
            with contextlib.suppress(OSError):
                entry.unlink()
                removed.append(entry)
    return removed


def new_temp_path(path: str | os.PathLike, suffix: str | None = None) -> Path:
    """Create an empty temporary file beside ``path`` (umask permissions) and return it."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        raise BioanonError(f"output folder '{folder}' does not exist; create it first")
    remove_stale_temporaries(target)
    suffix = suffix if suffix is not None else target.suffix
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.",
                                    suffix=f".tmp{suffix}", dir=folder)
    os.fchmod(fd, file_mode())
    os.close(fd)
    return Path(tmp_name)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "out.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> (d / "out.txt").read_text()
    'done'
    """
    target = Path(path)
    tmp = new_temp_path(target, suffix)
    try:
        yield tmp
        os.chmod(tmp, file_mode())  # a writer may have replaced the file: reset its mode
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the duration (the renames that publish a release)."""
    sigs = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    except (AttributeError, ValueError, OSError):  # not on this platform / thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def file_sha256(path: str | os.PathLike) -> str:
    """Return the SHA-256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
