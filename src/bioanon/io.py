"""Safe file writing: temporary file in the same folder, then an atomic rename.

A crash or a user error never leaves a partly written output, and an output path that is one
of the inputs is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
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
    if target.parent and not target.parent.exists():
        raise BioanonError(f"output folder '{target.parent}' does not exist; create it first")
    suffix = suffix if suffix is not None else "".join(target.suffixes)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{suffix}",
                                    dir=target.parent or ".")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


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
