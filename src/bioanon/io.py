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
import json
import os
import queue
import re
import secrets
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import BioanonError


def resolved(path: str | os.PathLike, what: str = "output") -> Path:
    """``path`` made absolute with its links followed; a symbolic link that leads back to
    itself (a loop) refused in one line naming ``what``: it was an internal error (Python
    3.11's "Symlink loop from ...", a RuntimeError; later versions raise OSError).

    >>> resolved("/") == Path("/")
    True
    """
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError):
        raise BioanonError(f"{what} '{path}' is a symbolic link that leads back to itself (a "
                           "loop); remove the link or name another path") from None


def check_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse to write ``output`` if it is the same file as any of ``inputs``."""
    out = resolved(output)
    for src in inputs:
        where = resolved(src, "input")
        if where == out:
            raise BioanonError(
                f"output '{output}' is the input file; choose another output path "
                "(bioanon never overwrites its input)"
            )
        if _same_file(where, out):
            raise BioanonError(
                f"output '{output}' is the input file '{src}' under another name (a hard "
                "link); choose another output path (bioanon never overwrites its input)")
        if where.is_dir() and where in out.parents:
            raise BioanonError(
                f"output '{output}' is inside the input folder '{src}'; write it elsewhere "
                "(a file added there would become part of the input)")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two existing paths are one file under two names (a hard link)."""
    try:
        return a.is_file() and b.is_file() and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_folder_name(path: str | os.PathLike) -> None:
    """Refuse a file to write named as a folder is (``'rel.parquet/'``).

    A path drops the slash (``Path('rel.parquet/')`` is ``rel.parquet``): the file was
    written, or a file of that name replaced, where the caller meant a folder (``cp``
    refuses the same). Only a str keeps the slash to be seen.

    >>> refuse_folder_name("rel.parquet/")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: output 'rel.parquet/' ends with a slash, ... ('rel.parquet')
    """
    if isinstance(path, str) and path.endswith(("/", os.sep)):
        name = path.rstrip("/" + os.sep)
        raise BioanonError(f"output '{path}' ends with a slash, which names a folder; name "
                           "the file to write" + (f" ('{name}')" if name else ""))


def check_output_file(path: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()
                      ) -> Path:
    """Check, before any work, that a file can be written at ``path``.

    Refuses an output that is an input, a folder, a named pipe, a device or a socket (the
    written file would be renamed over it, removing it), inside a missing or read-only
    folder, or a name typed as a folder's (:func:`refuse_folder_name`).
    """
    refuse_folder_name(path)
    p = Path(path)
    check_not_input(p, inputs)
    if p.is_dir():
        raise BioanonError(f"output '{p}' is a folder; name a file to write")
    if p.exists() and not p.is_file():
        raise BioanonError(f"output '{p}' is not a regular file (a pipe, a device or a "
                           "socket), which writing the output would replace; name a file "
                           "to write")
    parent = p.parent if str(p.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise BioanonError(f"output folder '{parent}' is a file; name a file inside a folder")
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
                     files: Iterable[str] = (), parameter: str = "out",
                     what: str = "the report") -> Path:
    """Check, before any work, that ``path`` is (or can become) a folder for ``files``.

    ``parameter`` and ``what`` name the option and its content in the error, which writes
    ``NAME='PATH'`` (the command line turns it into its flag).

    >>> check_output_dir(__file__)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: out='...io.py' is an existing file; name a folder for the report
    """
    p = Path(path)
    inputs, files = list(inputs), list(files)  # each read more than once
    given = f"{parameter}='{p}'"

    def fault(text: str) -> BioanonError:
        return BioanonError(text, parameter=parameter)

    if p.exists() and not p.is_dir():
        raise fault(f"{given} is an existing file; name a folder for {what}")
    for src in inputs:
        if resolved(src, "input") == resolved(p, "output folder"):
            raise fault(f"{given} is the input; name a folder for {what}")
        if Path(src).is_dir() and resolved(src, "input") in resolved(p, "output folder").parents:
            raise fault(f"{given} is inside the input folder '{src}'; name a folder "
                        f"elsewhere for {what}")
    for name in files:
        check_not_input(p / name, inputs)
        if (p / name).is_dir():
            raise fault(f"'{p / name}' is a folder; remove it or choose another {parameter}=")
    clash = [name for name in files if os.path.lexists(p / name)]
    if clash and not written_by_bioanon(p, files):
        raise fault(f"'{p / clash[0]}' is a file bioanon did not write (the folder holds no "
                    f"bioanon output); move it away or choose another {parameter}=")
    existing = p
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise fault(f"{given} lies inside '{existing}', which is a file; name a folder for "
                    f"{what}")
    _probe(existing)
    return p


#: the hidden file in every output folder bioanon writes (a report, a sweep): a file at one of
#: its outputs' names is replaced only in a folder bioanon wrote
REPORT_MARKER = ".bioanon-report"


def mark_output(folder: str | os.PathLike) -> None:
    """Mark ``folder`` as one bioanon wrote (:data:`REPORT_MARKER`)."""
    marker = Path(folder) / REPORT_MARKER
    marker.write_text("written by bioanon: the next run writing here replaces the files of "
                      "its own names\n", encoding="utf-8")
    os.chmod(marker, file_mode())


def _bioanon_json(path: Path) -> bool:
    """Whether ``path`` is a JSON document bioanon wrote: a report (``bioanon_version``), or
    a sweep's (its ``input`` and ``summary``), written before folders were marked."""
    if path.is_symlink() or not path.is_file() or path.suffix != ".json":
        return False
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        return isinstance(data, dict) and ("bioanon_version" in data
                                           or {"input", "summary"} <= data.keys())
    return False


def written_by_bioanon(folder: str | os.PathLike, files: Iterable[str] = ("report.json",)
                       ) -> bool:
    """Whether bioanon wrote ``folder``: it holds :data:`REPORT_MARKER`, or one of the JSON
    documents among ``files`` is bioanon's (a folder written before the marker).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "report.json").write_text("{}")
    >>> written_by_bioanon(d), (mark_output(d), written_by_bioanon(d))[1]
    (False, True)
    """
    f = Path(folder)
    marker = f / REPORT_MARKER
    if marker.is_file() and not marker.is_symlink():
        return True
    return any(_bioanon_json(f / name) for name in files)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions a new file gets under the current umask (usually 0644)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """The permissions a new folder gets under the current umask (usually 0755)."""
    return 0o777 & ~_umask()


def make_temp_dir(folder: str | os.PathLike, prefix: str) -> Path:
    """Create a temporary folder in ``folder`` with the umask's permissions (to be renamed
    into place as an output: ``tempfile.mkdtemp`` alone gives 0700, which would then be the
    output's mode)."""
    made = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
    os.chmod(made, dir_mode())
    return made


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OverflowError, ValueError, OSError):  # no such process; a pid out of range
        return False
    return True


def temp_pattern(target: Path) -> re.Pattern[str]:
    """Pattern of the temporary files this module creates for ``target``."""
    return re.compile(rf"^\.{re.escape(target.name)}\.(\d+)\.[^.]+\.tmp")


def remove_stale_temporaries(target: str | os.PathLike, own: bool = False) -> list[Path]:
    """Remove temporaries of ``target`` (files and folders) left by processes that no longer
    run; return them.

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
                if entry.is_dir() and not entry.is_symlink():
                    remove_tree(entry)
                else:
                    entry.unlink()
                removed.append(entry)
    return removed


def remove_tree(path: str | os.PathLike) -> None:
    """Remove a folder bioanon wrote or moved aside, read-only folders in it included (their
    modes are opened to their owner first); a folder that cannot be removed raises OSError.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "old"
    >>> (d / "inner").mkdir(parents=True); _ = (d / "inner" / "f").write_text("x")
    >>> os.chmod(d / "inner", 0o555); os.chmod(d, 0o555)
    >>> remove_tree(d); d.exists()
    False
    """
    p = Path(path)
    try:
        shutil.rmtree(p)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    def opened(where: str) -> None:
        with contextlib.suppress(OSError):
            if not os.path.islink(where):
                os.chmod(where, stat.S_IMODE(os.lstat(where).st_mode) | stat.S_IRWXU)

    opened(str(p))
    for root, dirs, _ in os.walk(p):  # each folder's mode opened before it is listed
        for name in dirs:
            opened(os.path.join(root, name))
    shutil.rmtree(p)


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


def new_temp_dir(path: str | os.PathLike, suffix: str = "") -> Path:
    """Create an empty temporary folder beside ``path`` (umask permissions, named like
    :func:`new_temp_path`'s files so that :func:`remove_stale_temporaries` finds it)."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        raise BioanonError(f"output folder '{folder}' does not exist; create it first")
    made = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}.",
                                 suffix=f".tmp{suffix}", dir=folder))
    os.chmod(made, dir_mode())
    return made


def aside_name(path: str | os.PathLike) -> Path:
    """A fresh name beside ``path`` to move it aside to (removed later, or by the next run as
    a stale temporary of ``path``)."""
    target = Path(path)
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp-old")


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
    """Hold SIGINT and SIGTERM for the duration (the renames that publish a release).

    In the main thread the handlers are swapped for one that only records the signal; each
    recorded signal is handed to the previous handler once the block is over. (Blocking the
    signals in this thread alone would not do: a signal sent to the process is delivered to
    another thread — a hashing or I/O thread — and Python then runs its handler in the main
    thread anyway.) Elsewhere the signals are blocked in the calling thread.
    """
    import threading

    sigs = (signal.SIGINT, signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread():
        try:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(sigs))
        except (AttributeError, ValueError, OSError):  # not on this platform
            yield
            return
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return
    pending: list[int] = []
    old = {s: signal.getsignal(s) for s in sigs}
    for s in sigs:
        signal.signal(s, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for s in sigs:
            signal.signal(s, old[s])
        for signum in dict.fromkeys(pending):  # handled now, by the handler it replaced
            handler = old[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def not_found(path: str | os.PathLike, what: str = "input file",
              fix: str = "check the path") -> str:
    """The refusal of an input that does not exist; a URL (``https://``, ``s3://``: pathlib
    folds its '//' into '/') is named as one, since bioanon reads local files only.

    >>> not_found("https:/example.org/t.csv")
    "input file 'https://example.org/t.csv' is a URL; bioanon reads local files: download it \
first and pass the file"
    >>> not_found("t.csv")
    "input file 't.csv' does not exist; check the path"
    """
    text = os.fspath(path)
    url = re.match(r"([A-Za-z][A-Za-z0-9+.-]+):/+(.*)", text)
    if url and url.group(1).lower() == "file":
        return f"{what} '{text}' is a file: URL; pass the path itself ('/{url.group(2)}')"
    if url:
        return (f"{what} '{url.group(1)}://{url.group(2)}' is a URL; bioanon reads local "
                "files: download it first and pass the file")
    if text == "-":  # the shell's name for standard input: a table is read more than once
        return (f"{what} '-' stands for standard input, which bioanon does not read (it reads a "
                "table more than once); write it to a file first and pass that file")
    if os.path.islink(text):  # listed by ls, so "does not exist" read as a wrong message
        return (f"{what} '{text}' is a symbolic link to '{os.readlink(text)}', which leads "
                f"nowhere (a missing file, or back to itself); {fix}")
    return f"{what} '{text}' does not exist; {fix}"


def not_a_regular_file(path: str | os.PathLike) -> str:
    """The refusal of an input that is no regular file (a named pipe, a device, a socket):
    a table is read more than once (hashed, then read), and a pipe would block the second
    read forever, or hand it nothing."""
    return (f"input '{path}' is not a regular file (a pipe, a device or a socket); write the "
            "table to a file first and pass that file")


def file_sha256(path: str | os.PathLike) -> str:
    """Return the SHA-256 hex digest of a file's bytes; of a folder (a Parquet dataset of
    part files), the digest of its files' relative names and digests in name order."""
    h = hashlib.sha256()
    if Path(path).is_dir():
        root = Path(path)
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            h.update(f.relative_to(root).as_posix().encode() + file_sha256(f).encode())
        return h.hexdigest()
    if os.path.exists(path) and not os.path.isfile(path):
        raise BioanonError(not_a_regular_file(path))
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class HashingWriter:
    """A binary file that computes the SHA-256 of what is written while it is written.

    The hashing runs in a thread of its own (``hashlib`` releases the GIL on large updates),
    so a writer that encodes on one core is hashed on the other instead of reading the file
    back afterwards. Writes must be sequential (no seeking); the digest is ready once closed.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     w = HashingWriter(Path(d) / "f")
    ...     _ = w.write(b"abc")
    ...     w.close()
    ...     w.hexdigest() == hashlib.sha256(b"abc").hexdigest() == file_sha256(Path(d) / "f")
    True
    """

    #: bytes gathered before they are handed to the hashing thread
    BATCH = 1 << 20

    def __init__(self, path: str | os.PathLike) -> None:
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._hash = hashlib.sha256()
        self._queue: queue.Queue[list[bytes] | None] = queue.Queue(maxsize=64)
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._position = 0
        self._digest: str | None = None
        self._thread = threading.Thread(target=self._run, name="bioanon-sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (chunks := self._queue.get()) is not None:
            for chunk in chunks:
                self._hash.update(chunk)

    def _hand_over(self) -> None:
        if self._pending:
            self._queue.put(self._pending)
            self._pending, self._pending_bytes = [], 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` and queue it for hashing (copied unless immutable bytes)."""
        chunk = data if isinstance(data, bytes) else bytes(data)
        self._file.write(chunk)
        self._pending.append(chunk)
        self._pending_bytes += len(chunk)
        self._position += len(chunk)
        if self._pending_bytes >= self.BATCH:
            self._hand_over()
        return len(chunk)

    def tell(self) -> int:
        """Bytes written so far."""
        return self._position

    def flush(self) -> None:
        """Flush the file (hashing goes on in its thread)."""
        self._file.flush()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        """Close the file and wait for the hash."""
        if self._file.closed:
            return
        self._hand_over()
        self._queue.put(None)
        self._thread.join()
        self._file.close()
        self._digest = self._hash.hexdigest()

    def hexdigest(self) -> str:
        """The SHA-256 of everything written (after :meth:`close`)."""
        if self._digest is None:
            raise RuntimeError("HashingWriter.hexdigest() before close()")
        return self._digest


@contextlib.contextmanager
def sha256_in_background(path: str | os.PathLike) -> Iterator[Any]:
    """Hash a file in a thread while the caller works; yield a function returning the digest.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     _ = f.write(b"abc"); f.flush()
    ...     with sha256_in_background(f.name) as digest:
    ...         pass  # read and transform here
    ...     digest() == hashlib.sha256(b"abc").hexdigest()
    True
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="bioanon-sha256") as pool:
        future = pool.submit(file_sha256, path)
        yield future.result
