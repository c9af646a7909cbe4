"""What the data home holds: each dataset folder, its records, label columns and licence.

A dataset folder under the data home (``$BIOANON_DATA``) has a ``README.md`` and a
``labels.csv`` (one row per record). The licence comes from the data home's own README table
when it has a ``licence`` column, else from the first line of the dataset's README that
mentions a licence.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import BioanonError
from .home import data_home, missing_home

__all__ = ["list_datasets"]

#: the library's loader of each known dataset
LOADERS = {"fsdd": "bioanon.datasets.load_fsdd", "sp_sw_har": "bioanon.datasets.load_sp_sw_har",
           "yale_faces": "bioanon.datasets.load_yale_faces"}
#: label columns that name files, not attributes
FILE_COLUMNS = {"file", "original_file", "identical_to"}
#: per-segment label files beside labels.csv (one row per window of a record: a motion
#: stream's activities), and their columns that place a segment rather than label it
SEGMENT_FILES = ("segments.csv",)
POSITION_COLUMNS = {"start_row", "end_row", "segment_index", "start", "end"}


def _plain(text: str) -> str:
    return re.sub(r"[*`]", "", text).strip(" -:.|")


def _home_table(home: Path) -> dict[str, dict[str, str]]:
    """Rows of the data home README's markdown table, keyed by folder name."""
    readme = home / "README.md"
    if not readme.is_file():
        return {}
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in readme.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("|"):
            header = None if not rows else header
            continue
        cells = [_plain(c) for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
        elif not set("".join(cells)) <= set("-: "):
            row = dict(zip(header, cells, strict=False))
            name = row.get("folder", cells[0]).strip("/ ")
            rows[name] = row
    return rows


def _readme_facts(readme: Path) -> tuple[str | None, str | None]:
    """The README's title and its licence line (the bold part of it, when there is one)."""
    if not readme.is_file():
        return None, None
    title = licence = None
    for line in readme.read_text(encoding="utf-8", errors="replace").splitlines():
        if title is None and line.startswith("# "):
            title = line[2:].strip()
        if licence is None and re.search(r"licen[cs]e", line, re.I):
            bold = re.search(r"\*\*(.+?)\*\*", line)
            licence = _plain(bold.group(1) if bold else line)
    return title, licence


def _read(path: Path, folder: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, low_memory=False)
    except (ValueError, pd.errors.ParserError) as exc:  # undecodable or ragged rows
        raise BioanonError(
            f"'{folder.name}/{path.name}' in the data home cannot be read as CSV "
            f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); fix "
            "or remove that folder") from None


def _segment_labels(folder: Path, labels: dict[str, int]) -> tuple[int | None, dict[str, int]]:
    """The segments of a dataset whose labels are given per window of a record (e.g. a
    motion stream's activities in ``segments.csv``): how many, and the label columns
    labels.csv does not hold already, each with its number of distinct values."""
    for name in SEGMENT_FILES:
        path = folder / name
        if path.is_file():
            df = _read(path, folder)
            return len(df), {str(c): int(df[c].nunique()) for c in df.columns
                             if c not in FILE_COLUMNS and c not in POSITION_COLUMNS
                             and str(c) not in labels}
    return None, {}


def list_datasets(root: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """Describe every dataset folder of the data home.

    Parameters
    ----------
    root : path, optional
        The data home (default ``$BIOANON_DATA``, else ``~/bioanon_data``).

    Returns
    -------
    list of dict
        One per folder holding a ``labels.csv`` or a ``README.md``: ``name``, ``title``,
        ``records`` (rows of labels.csv, None without one), ``labels`` ({column: number of
        distinct values}, file-name columns left out), ``segments`` and ``segment_labels``
        (the rows of a per-window label file such as ``segments.csv`` and the labels only
        it holds, e.g. a motion stream's ``activity``; None and {} without one),
        ``licence`` and ``loader`` (the library function that reads it, None for a folder
        the library has no loader for). No absolute paths.

    Examples
    --------
    >>> [d["name"] for d in list_datasets()]  # doctest: +SKIP
    ['fsdd', 'sp_sw_har', 'yale_faces']
    """
    home = data_home(root)
    if not home.is_dir():
        found = "is a file, not a folder" if home.exists() else "not found"
        raise missing_home(home) if root is None else BioanonError(
            f"data home '{home}' {found}; pass the folder holding the datasets (e.g. fsdd/, "
            "yale_faces/)")
    table = _home_table(home)
    out = []
    for folder in sorted(p for p in home.iterdir() if p.is_dir()):
        labels_csv, readme = folder / "labels.csv", folder / "README.md"
        if not labels_csv.is_file() and not readme.is_file():
            continue
        title, licence = _readme_facts(readme)
        row = table.get(folder.name, {})
        licence = next((v for k, v in row.items() if k.startswith("licen")), None) or licence
        records, labels = None, {}
        if labels_csv.is_file():
            df = _read(labels_csv, folder)
            records = len(df)
            labels = {str(c): int(df[c].nunique()) for c in df.columns
                      if c not in FILE_COLUMNS}
        segments, segment_labels = _segment_labels(folder, labels)
        out.append({"name": folder.name, "title": title, "records": records,
                    "labels": labels, "segments": segments, "segment_labels": segment_labels,
                    "licence": licence, "loader": LOADERS.get(folder.name)})
    return out
