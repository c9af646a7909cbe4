"""What a table file holds, from its first bytes, when its name says another format.

A file named ``.csv`` that is a Parquet file, an Excel workbook, a gzip archive, JSON or a web
page saved by a failed download was refused with a reader's words for another problem ("not UTF-8
text: save it as UTF-8", "the table has no records"); a CSV file named ``.npz`` as "an array of
Python objects". :func:`refuse_other_kind` names what the file is and the fix, before any
reader runs; a file whose first bytes say nothing (a broken file of its own format, text in
another encoding) is left to the reader, which says why it cannot read it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from .errors import BioanonError

#: how an error names each format bioanon reads
_NAMES = {"parquet": "a Parquet file", "npz": "an NPZ file", "csv": "CSV text"}


def file_kind(path: Path) -> str | None:
    """The kind of file ``path`` is, from its first bytes: ``parquet``, ``npz``, ``xlsx``,
    ``zip``, ``xls``, ``gzip``, ``utf16`` (without a byte order mark), ``html``, ``json`` (an
    array of records, or JSON lines), ``csv`` (text with a comma in its first line), or None
    (nothing recognised).

    >>> import tempfile, os
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"PAR1" + bytes(20))
    >>> file_kind(p)
    'parquet'
    >>> _ = p.write_text("<!DOCTYPE html><html><body>Not Found</body></html>")
    >>> file_kind(p)
    'html'
    """
    with open(path, "rb") as fh:
        head = fh.read(512)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path)
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "xls"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if _utf16(head):
        return "utf16"
    text = head.lstrip(b"\xef\xbb\xbf").lstrip().lower()
    if text.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "html"
    if text.startswith(b"{") or (text.startswith(b"[") and text[1:].lstrip()[:1] in (
            b"{", b"[", b'"')):
        return "json"
    first = head.split(b"\n", 1)[0]
    if b"\x00" not in head and b"," in first:
        try:
            first.decode("utf-8")
        except UnicodeDecodeError:  # cut in a character, or another encoding: say nothing
            return None
        return "csv"
    return None


def _utf16(head: bytes) -> bool:
    """Text in UTF-16 without a byte order mark: every other byte a zero (ASCII text)."""
    if len(head) < 8 or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return False  # with its mark, the reader names the encoding
    even, odd = head[0::2], head[1::2]
    return any(a.count(0) >= 0.9 * len(a) and b.count(0) <= 0.1 * len(b)
               for a, b in ((even, odd), (odd, even)))


def _zip_kind(path: Path) -> str:
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError):
        return "zip"
    if names and all(n.endswith(".npy") for n in names):
        return "npz"
    return "xlsx" if "[Content_Types].xml" in names else "zip"


def refuse_other_kind(path: Path, fmt: str) -> None:
    """Refuse ``path``, named as a ``fmt`` table, when its first bytes say it is another kind
    of file: what it is and the fix, in one line."""
    kind = file_kind(path)
    if kind is None or kind == fmt:
        return
    name = f"'{path.name}' is"
    if kind in _NAMES:
        raise BioanonError(f"{name} {_NAMES[kind]}, not {_NAMES[fmt]} as its name says; "
                           f"rename it to end in .{kind}")
    if kind in ("xlsx", "xls"):
        raise BioanonError(f"{name} an Excel workbook (.{kind}), not {_NAMES[fmt]}; save its "
                           "sheet as CSV (in a spreadsheet: CSV UTF-8) and pass that file")
    if kind == "utf16":
        raise BioanonError(f"{name} UTF-16 text (without a byte order mark): it is not UTF-8 "
                           "text; save it as UTF-8 (in a spreadsheet: CSV UTF-8)")
    if kind == "gzip":
        raise BioanonError(f"{name} gzip-compressed, not {_NAMES[fmt]}; decompress it first "
                           "(gunzip), or use Parquet (compressed by itself)")
    if kind == "json":
        raise BioanonError(f"{name} JSON, not {_NAMES[fmt]}; convert it to Parquet, e.g. "
                           "pandas.read_json(path).to_parquet('table.parquet') (lines=True for "
                           "one record per line)")
    if kind == "zip":
        raise BioanonError(f"{name} a zip archive, not {_NAMES[fmt]}; unzip it and pass the "
                           "table inside")
    raise BioanonError(f"{name} a web page (HTML), not {_NAMES[fmt]}: a download that saved "
                       "the site's page (an error or a login page, perhaps); download the "
                       "table itself")
