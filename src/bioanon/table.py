"""FeatureTable: the one data structure every part of bioanon reads and writes.

A table holds ``X`` (n records × d features, float32), ``labels`` (a pandas DataFrame with one
row per record: identity, attributes), ``feature_names`` and ``meta`` (provenance). It reads and
writes Parquet, CSV (label columns plus one column per feature) and NPZ (``X`` plus one array per
label).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import BioanonError, missing_column
from .file_kinds import refuse_other_kind
from .io import HashingWriter, atomic_path, not_a_regular_file, not_found, refuse_folder_name

FORMATS = {".parquet": "parquet", ".parq": "parquet", ".pq": "parquet", ".csv": "csv",
           ".npz": "npz"}
#: the extensions of a Parquet file (one list for every reader and writer)
PARQUET_SUFFIXES = tuple(ext for ext, fmt in FORMATS.items() if fmt == "parquet")
_NPZ_RESERVED = ("X", "feature_names")


def all_finite(X: np.ndarray) -> bool:
    """True when ``X`` holds no NaN or inf: NaN propagates through a minimum and a maximum, and
    ±inf is its own extreme, so two reductions suffice (no mask the size of ``X``).

    Examples
    --------
    >>> all_finite(np.zeros((2, 2))), all_finite(np.array([[0.0, np.nan]]))
    (True, False)
    """
    return bool(X.size == 0 or (np.isfinite(X.min()) and np.isfinite(X.max())))


def check_finite(X: np.ndarray, what: str = "features",
                 names: Sequence[str] | None = None,
                 before: Callable[[], Any] | None = None) -> None:
    """Raise a :class:`BioanonError` naming the columns (by ``names`` when given) that hold
    NaN or inf, and the first record holding one.

    ``before`` gives the values before their cast to float32 (called only for a table with a
    bad cell): a cell finite there overflowed the cast (beyond ±3.4e38), which the error says
    instead of calling it NaN or inf.

    :func:`all_finite` clears a finite table cheaply; only a table with a bad cell pays for
    locating it.

    Examples
    --------
    >>> try:
    ...     check_finite(np.array([[0.0, np.nan]]), names=["a", "b"])
    ... except BioanonError as exc:
    ...     print(str(exc).split(";")[0])
    features contain 1 NaN/inf value(s) in column 'b' (first at record 0)
    """
    if all_finite(X):
        return
    bad = ~np.isfinite(X)
    if before is not None and bad.any():
        _refuse_overflow(bad, np.asarray(before(), dtype=np.float64), what, names)
    _refuse_empty_columns(X, what, names)
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        cols = np.flatnonzero(bad.any(axis=0))
        labels = ([repr(str(names[j])) for j in cols[:5]]
                  if names is not None and len(names) == X.shape[1]
                  else [f"#{j}" for j in cols[:5]])
        more = f" and {cols.size - 5} more" if cols.size > 5 else ""
        which = ("column " if cols.size == 1 else "columns ") + ", ".join(labels) + more
        raise BioanonError(
            f"{what} contain {int(bad.sum())} NaN/inf value(s) in {which} (first at record "
            f"{row}); impute or drop those records first"
        )


def _refuse_empty_columns(X: np.ndarray, what: str, names: Sequence[str] | None) -> None:
    """Refuse a column of more than one record with no value at all (a CSV column of empty
    cells, an all-null Parquet column): imputing it or dropping its records, as a few
    missing values are fixed, would drop every record; the column is to be dropped or named
    a label.

    >>> try:
    ...     _refuse_empty_columns(np.array([[0.0, np.nan], [1.0, np.nan]]), "features", "ab")
    ... except BioanonError as exc:
    ...     print(str(exc)[:64])
    features: column 'b' is empty (no value in any of the 2 records)
    """
    if X.shape[0] < 2:
        return
    empty = np.flatnonzero(np.isnan(X).all(axis=0))
    if empty.size == 0:
        return
    shown = [repr(str(names[j])) if names is not None and len(names) == X.shape[1]
             else f"#{j}" for j in empty[:5]]
    more = f" and {empty.size - 5} more" if empty.size > 5 else ""
    which = ("column " if empty.size == 1 else "columns ") + ", ".join(shown) + more
    one = empty.size == 1
    fix = f"drop {'it' if one else 'them'} from the table"
    if names is not None:  # a column of a frame or a file (an array has no label columns)
        fix += (f", or name {'it as a label column' if one else 'them as label columns'} "
                "(label_columns=COL)")
    raise BioanonError(f"{what}: {which} {'is' if one else 'are'} empty (no value in any of "
                       f"the {X.shape[0]} records); {fix}", parameter="label_columns")


def _refuse_overflow(bad: np.ndarray, wide: np.ndarray, what: str,
                     names: Sequence[str] | None) -> None:
    """Refuse the cells ``bad`` after the float32 cast that were finite in ``wide`` (the
    values before it): numbers too large for 32-bit floats, not missing values."""
    with np.errstate(invalid="ignore"):
        over = bad & np.isfinite(wide) if wide.shape == bad.shape else np.zeros_like(bad)
    if not over.any():
        return
    row = int(np.argmax(over.any(axis=1)))
    j = int(np.argmax(over.any(axis=0)))
    col = (repr(str(names[j])) if names is not None and len(names) == bad.shape[1]
           else f"#{j}")
    raise BioanonError(
        f"{what} hold {int(over.sum())} number(s) too large for 32-bit floats (beyond "
        f"±3.4e38), first in column {col} at record {row}; rescale "
        "that column (e.g. to other units) or drop those records first")


def as_feature_matrix(X: Any, what: str = "X",
                      names: Sequence[str] | None = None) -> np.ndarray:
    """Validate and convert ``X`` to a 2-D float32 array without NaN or inf (``names`` name
    its columns in the error)."""
    if getattr(getattr(X, "dtype", None), "kind", None) == "c":
        raise BioanonError(f"{what} holds complex numbers; pass real features (for example "
                           "the real and imaginary parts as columns of their own)")
    refuse_masked(X, what)
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # NumPy: "an array element with a sequence"
        raise BioanonError(f"{what} is a SciPy sparse matrix; pass a dense array "
                           "(X.toarray())")
    refuse_dates(X, what)
    try:
        with np.errstate(over="ignore"):
            arr = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        refuse_ragged(X, what)
        raise BioanonError(f"{what} is not numeric ({exc}); pass numbers only") from None
    if arr.ndim != 2:
        raise BioanonError(
            f"{what} must be 2-D (records × features), got shape {arr.shape}; reshape it"
        )
    if arr.shape[0] == 0:
        raise BioanonError(f"{what} is empty (shape {arr.shape}); pass at least one record")
    if arr.shape[1] == 0:
        raise BioanonError(f"{what} has no feature columns (shape {arr.shape}: {arr.shape[0]} "
                           "records of nothing to anonymize); pass at least one numeric "
                           "feature column")
    check_finite(arr, what, names, before=lambda: X)
    return arr


def refuse_dates(X: Any, what: str = "X") -> None:
    """Refuse features of dates or durations: NumPy reads them as their count of seconds,
    microseconds or nanoseconds, rounded to float32, without a word.

    >>> refuse_dates(np.zeros((2, 2)))
    >>> refuse_dates(np.array([["2024-01-01"]], dtype="datetime64[D]"))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: X: dates or durations (datetime64[D]) are not measurements; \
convert them to numbers first (e.g. seconds since a reference time), or keep them as a label
    """
    dtypes = list(X.dtypes) if isinstance(X, pd.DataFrame) else [getattr(X, "dtype", None)]
    timed = [t for t in dtypes if getattr(t, "kind", None) in ("M", "m")]
    if timed:
        raise BioanonError(f"{what}: dates or durations ({timed[0]}) are not measurements; "
                           "convert them to numbers first (e.g. seconds since a reference "
                           "time), or keep them as a label")


def refuse_ragged(X: Any, what: str = "X") -> None:
    """Refuse a list of rows of different lengths in words (NumPy's "inhomogeneous shape")."""
    if not isinstance(X, list | tuple):
        return
    lengths = [len(row) if isinstance(row, list | tuple | np.ndarray) else 1 for row in X]
    odd = next((i for i, n in enumerate(lengths) if n != lengths[0]), None)
    if odd is not None:
        raise BioanonError(f"{what}: rows of different lengths (record 0 has "
                           f"{lengths[0]} values, record {odd} has {lengths[odd]}); give "
                           "every record the same features")


def refuse_masked(X: Any, what: str = "X") -> None:
    """Refuse a NumPy masked array holding a masked value: reading it as an array takes the
    values under the mask as features, without a word.

    Examples
    --------
    >>> refuse_masked(np.ma.masked_array([[1.0, 2.0]]))     # nothing masked: read as is
    >>> refuse_masked(np.ma.masked_array([[1.0, 2.0]], mask=[[0, 1]]))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: X is a masked array with 1 masked value(s): the values \
under the mask would be used as features; fill or drop them (numpy: X.filled(value), or keep \
the rows without a masked value)
    """
    if isinstance(X, np.ma.MaskedArray) and np.ma.count_masked(X):
        raise BioanonError(
            f"{what} is a masked array with {int(np.ma.count_masked(X))} masked value(s): "
            "the values under the mask would be used as features; fill or drop them "
            "(numpy: X.filled(value), or keep the rows without a masked value)")


def duplicates(names: Sequence[str]) -> list[str]:
    """The names given more than once, sorted: one pass (a table may have 100,000 columns).

    Examples
    --------
    >>> duplicates(["a", "b", "a", "c", "b"]), duplicates(["a"])
    (['a', 'b'], [])
    """
    from collections import Counter

    return sorted(n for n, k in Counter(names).items() if k > 1)


def refuse_revealing_roles(labels: pd.DataFrame, useful: Sequence[str],
                           sensitive: str) -> None:
    """Refuse roles where a useful column gives the sensitive one away: every value of the
    useful column belongs to one sensitive value (the sensitive column holds two or more).
    Then any model that predicts the useful column predicts the sensitive one through that
    map, which an attacker holding clear records learns: no release can keep the first
    useful and hide the second, and a search would only find that out after its work.

    Examples
    --------
    >>> df = pd.DataFrame({"who": list("aabb"), "task": list("xxyy"), "ok": list("xyxy")})
    >>> refuse_revealing_roles(df, ["ok"], "who")
    >>> try:
    ...     refuse_revealing_roles(df, ["task"], "who")
    ... except BioanonError as exc:
    ...     print(str(exc)[:66])
    useful column 'task' gives the sensitive column 'who' away: each o
    """
    secret = pd.factorize(labels[sensitive])[0]
    n_secret = int(secret.max()) + 1 if secret.size else 0
    if n_secret < 2:
        return
    for col in useful:
        codes = pd.factorize(labels[col])[0]
        n_useful = int(codes.max()) + 1
        pairs = np.unique(codes.astype(np.int64) * n_secret + secret).size
        if pairs == n_useful:
            raise BioanonError(
                f"useful column '{col}' gives the sensitive column '{sensitive}' away: each "
                f"of its {n_useful} values belongs to one '{sensitive}' value, so a model "
                f"that predicts '{col}' predicts '{sensitive}', and no release can keep one "
                f"and hide the other; choose a useful column that does not decide "
                f"'{sensitive}' (or another sensitive column)")


def check_column_name(column: Any, role: str, example: str) -> None:
    """Refuse a role's column that is no column name (a list, None, a number that is a bool)
    in one line: ``evaluate(t, ['expression'], ...)`` was pandas' "unhashable type: 'list'".

    >>> check_column_name("digit", "interest", "")
    >>> check_column_name(["digit"], "interest", "e.g. interest='digit'")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: the interest column ['digit'] is not a column name (a list); \
name one column by its name, e.g. interest='digit'
    """
    if not isinstance(column, str | int | np.integer) or isinstance(column, bool):
        raise BioanonError(f"the {role} column {column!r} is not a column name (a "
                           f"{type(column).__name__}); name one column by its name, {example}")


def refuse_group_role(group: str | None, sensitive: str, useful: Sequence[str]) -> None:
    """Refuse a group column that is also the sensitive or a useful one: the group keeps each
    of its values on one side of the split (a session, an execution), and the people are
    already kept whole by the identity level.

    >>> refuse_group_role("session", "who", ["task"])
    >>> try:
    ...     refuse_group_role("task", "who", ["task"])
    ... except BioanonError as exc:
    ...     print(str(exc)[:61])
    group 'task' must differ from the sensitive and useful column
    """
    if group is not None and group in (sensitive, *useful):
        raise BioanonError(f"group '{group}' must differ from the sensitive and useful columns: "
                           "it keeps each of its values on one side of the split (a session, "
                           "an execution); name such a column, or none", parameter="group")


def _long_row(p: Path, error: str) -> str | None:
    """The refusal of a CSV row of more fields than its header, from pandas' "Error tokenizing
    data. C error: Expected 36 fields in line 6, saw 38" (a parser's words, without the fix);
    None for any other error.

    >>> print(_long_row(Path("t.csv"), "C error: Expected 3 fields in line 6, saw 4"))
    line 6 of 't.csv' holds 4 fields where its header names 3: a value holding a comma without
    quotes around it (write "1,5" in quotes), or a stray separator; correct that line
    """
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", error)
    if m is None:
        return None
    want, line, saw = m.groups()
    return _row_width(p, line, saw, want, "a value holding a comma without quotes around it "
                      "(write \"1,5\" in quotes), or a stray separator; correct that line")


def _row_width(p: Path, line: Any, saw: Any, want: Any, why: str) -> str:
    """A CSV line of another number of fields than its header, in words, with ``why``."""
    return f"line {line} of '{p.name}' holds {saw} fields where its header names {want}: {why}"


def _refuse_short_rows(p: Path, header: Sequence[str], df: pd.DataFrame) -> None:
    """Refuse a CSV row of fewer fields than its header (a row cut short, a line broken in
    two): pandas reads the missing fields as NaN, and the row was refused as "features
    contain NaN/inf value(s) ... impute or drop those records", which sends the user to
    impute values the file never held. Only where a row's last field is empty is the file
    read again, line by line up to the first such row, to tell a short row from one whose
    last value is empty (a complete row: the reading stops there)."""
    if df.empty or not bool(df.iloc[:, -1].isna().any()):
        return
    import csv

    with p.open(newline="", encoding="utf-8") as fh:
        rows = csv.reader(fh)
        try:
            next(rows, None)  # the header
            short = _first_short_row(rows, len(header))
        except csv.Error:  # a cell past csv's field limit: pandas read it, leave it so
            return
    if short is not None:
        raise BioanonError(_row_width(
            p, *short, len(header), "a row cut short or a line broken in two; correct that "
            "line (an empty value is written as nothing between two commas)"))


def _first_short_row(rows: Any, width: int) -> tuple[int, int] | None:
    """(line number, fields) of the first row of ``rows`` (a :func:`csv.reader` past the
    header) holding fewer than ``width`` fields, read up to the first row whose last value
    is empty; None when that row is complete (its empty value is a NaN, said later).

    >>> import csv, io
    >>> _first_short_row(csv.reader(io.StringIO("1,2,3\\n4,5\\n")), 3)
    (2, 2)
    >>> _first_short_row(csv.reader(io.StringIO("1,2,\\n4,5\\n")), 3) is None
    True
    """
    for fields in rows:
        if fields and len(fields) < width:
            return rows.line_num, len(fields)
        if fields and fields[-1] == "":
            return None
    return None


def _without_empty_rows(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its rows of no value at all (``,,,,``: the rows a spreadsheet saves
    below its data once cells there were touched), as pandas skips blank lines: they were
    refused as "features contain 64 NaN/inf value(s) ... impute or drop those records".

    >>> _without_empty_rows(pd.DataFrame({"a": [1.0, None], "b": ["x", None]})).shape
    (1, 2)
    """
    empty = df.isna().all(axis=1).to_numpy()
    return df.loc[~empty].reset_index(drop=True) if empty.any() else df


def without_trailing_empty_rows(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the rows of no value after its last value (a spreadsheet's ``,,,,``
    below the data), where a row's position counts (a sensor stream's segments name rows):
    they were read as NaN sensor values, and the stream skipped.

    >>> without_trailing_empty_rows(pd.DataFrame({"a": [1.0, None, 2.0, None]})).shape
    (3, 1)
    """
    filled = df.notna().any(axis=1).to_numpy()
    end = len(filled) - int(np.argmax(filled[::-1])) if filled.any() else 0
    return df.iloc[:end] if end < len(df) else df


def _refuse_trailing_separators(p: Path, header: Sequence[str], df: pd.DataFrame) -> None:
    """Refuse a CSV whose rows end with a separator: its last column has no name and no
    value (pandas calls it ``Unnamed: N``), and would be read as a feature of empty cells."""
    if header and header[-1] == "" and df.shape[1] and df.iloc[:, -1].isna().all():
        raise BioanonError(
            f"'{p}' ends every row with a separator (a trailing comma): its last column has no "
            "name and no value; remove the trailing separators and read it again")


def _refuse_repeated_header(p: Path, header: Sequence[str], df: pd.DataFrame) -> None:
    """Refuse a CSV whose header comes again among its rows (files joined with their
    headers): every feature column then held text, refused as "not numeric"."""
    if df.empty or not header or len(header) != df.shape[1]:
        return
    first = df.iloc[:, 0]
    if not (pd.api.types.is_object_dtype(first) or pd.api.types.is_string_dtype(first)):
        return
    names = [str(h) for h in header]
    names[0] = names[0].lstrip("\ufeff")  # a byte order mark, which pandas drops
    for i in np.flatnonzero((first.astype(str) == names[0]).to_numpy()):
        if df.iloc[i].astype(str).tolist() == names:
            raise BioanonError(
                f"'{p.name}' repeats its header as record {i} (line {i + 2}): files joined "
                "with their headers, perhaps; keep the header once, at the top, and read it "
                "again")


def _refuse_comment_line(p: Path, header: Sequence[str]) -> None:
    """Refuse a CSV whose first line is a comment (``# exported by ...``): it was taken for
    a header of one column, and every column named was "not found"."""
    line = header[0].lstrip("\ufeff") if len(header) == 1 else ""
    if line.lstrip().startswith("#"):
        shown = line if len(line) <= 40 else line[:40] + "..."
        raise BioanonError(
            f"'{p.name}' starts with a comment line ('{shown}'), not its header; remove the "
            "lines above the header, e.g. pandas.read_csv(path, comment='#').to_csv("
            "new_path, index=False)")


def _refuse_title_line(p: Path, header: Sequence[str], second: Sequence[str] | None) -> None:
    """Refuse a CSV whose first line is not its header: Excel's ``sep=,`` line, or a title
    (``Experiment 12 export``) above rows of many more fields. It was taken for the header,
    and every column named was "not found" among 'sep=' and 'Unnamed: 1'.

    >>> _refuse_title_line(Path("t.csv"), ["who", "f0"], ["a", "0.5"])
    >>> _refuse_title_line(Path("t.csv"), ["Experiment 12"], ["who", "f0", "f1"])
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: 't.csv' starts with a line of 1 field(s) ('Experiment 12') ...
    """
    first = ",".join(header).lstrip("\ufeff")
    shown = first if len(first) <= 40 else first[:40] + "..."
    if re.fullmatch(r"sep=.?", first.strip()):
        raise BioanonError(
            f"'{p.name}' starts with Excel's separator line ('{shown}'), not its header; "
            "remove that line, e.g. pandas.read_csv(path, skiprows=1).to_csv(new_path, "
            "index=False)")
    if second is not None and len(header) * 2 < len(second):
        raise BioanonError(
            f"'{p.name}' starts with a line of {len(header)} field(s) ('{shown}') above rows "
            f"of {len(second)}, not its header: a title? remove the lines above the header, "
            "e.g. pandas.read_csv(path, skiprows=1).to_csv(new_path, index=False)")


def _keep_label_text(p: Path, df: pd.DataFrame, label_columns: Sequence[str] | None) -> None:
    """Give each label column of a CSV its text where pandas' reading of it would not write
    every value back as the file has it: as numbers or booleans (``00`` read as ``0``,
    ``1e3`` as ``1000.0``, ``2`` as ``2.0`` beside an empty cell, ``true`` as ``True``), or
    a value pandas takes for missing (``NA``, ``null``, ``N/A``, ``nan``: a country, a
    speaker's initials). A label is a class, and its release must carry the values the input
    holds; only an empty cell is missing. A column whose every value reads back the same
    (``0`` … ``9``) keeps pandas' type. ``label_columns`` None: the text columns (the labels
    of a CSV read without names).

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("code,digit,land,x\\n00,1,NA,0.5\\n01,2,,0.7\\n")
    >>> df = pd.read_csv(f)
    >>> _keep_label_text(f, df, ["code", "digit", "land"])
    >>> df["code"].tolist(), df["digit"].tolist(), df["land"].tolist()
    (['00', '01'], [1, 2], ['NA', nan])
    """
    def text_typed(c: Any) -> bool:
        return bool(pd.api.types.is_object_dtype(df[c]) or pd.api.types.is_string_dtype(df[c]))

    named = [c for c in df.columns if text_typed(c)] if label_columns is None else [
        c for c in label_columns if c in df.columns]
    odd = [c for c in named if not text_typed(c) or df[c].isna().any()]
    if not odd:
        return
    text = pd.read_csv(p, usecols=odd, dtype=str, keep_default_na=False, na_values=[""])
    for c in odd:
        kept = text[c].notna().to_numpy()
        read = df[c].to_numpy()[kept].astype(str)
        if not np.array_equal(read, text[c].to_numpy()[kept].astype(str)):
            df[c] = text[c]


def refuse_continuous(column: str, values: Any) -> None:
    """Refuse a label column of measurements rather than classes: floating-point values, some
    of them fractional, and more distinct values than half the records. Every role a label
    column takes (useful, sensitive, identifying, group) is a class that models predict and
    attackers guess; a column of measurements has a class per record, where no figure means
    anything. Integer-valued floats (identifiers read through a column that held an empty
    cell) and a few fractional levels (0.5, 1.5) are classes and pass.

    Examples
    --------
    >>> refuse_continuous("age", np.array([20.0, 30.0, 20.0, 40.0]))
    >>> try:
    ...     refuse_continuous("score", np.array([0.13, 0.57, 0.91, 0.42]))
    ... except BioanonError as exc:
    ...     print(str(exc)[:72])
    label column 'score' holds measurements, not classes: 4 distinct fractio
    """
    arr = np.asarray(values)
    if arr.dtype.kind != "f" or arr.size < 2:
        return
    finite = arr[np.isfinite(arr)]
    if np.all(finite == np.round(finite)):
        return
    n_distinct = np.unique(finite).size
    if n_distinct * 2 > arr.size:
        raise BioanonError(
            f"label column '{column}' holds measurements, not classes: {n_distinct} distinct "
            f"fractional numbers among {arr.size} records; bin it into classes first (for "
            f"example with pandas.cut), or choose a column of categories")


def refuse_mixed_types(column: str, values: Any) -> None:
    """Refuse a label column holding both numbers and text (``1`` and ``'p1'``, or ``1`` and
    ``'1'``): sorting its classes was Python's TypeError, writing it Arrow's, and a value
    written both ways counts as two classes (or people). Only object columns are looked at
    (a column read from a file holds one type).

    Examples
    --------
    >>> refuse_mixed_types("c", pd.Series(["a", None, "b"], dtype=object))
    >>> refuse_mixed_types("c", pd.Series([1, "p1", 2], dtype=object))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: label column 'c' holds both numbers and text (1 at record 0 \
and 'p1' at record 1); make it one type (pandas: df['c'].astype(str))
    """
    arr = np.asarray(values)
    if arr.dtype != object or pd.api.types.infer_dtype(arr, skipna=True) not in (
            "mixed", "mixed-integer"):
        return
    text = [i for i, v in enumerate(arr) if isinstance(v, str | bytes)]
    number = [i for i, v in enumerate(arr) if isinstance(v, int | float | np.number)
              and not pd.isna(v)]
    if not text or not number:
        return
    first, then = sorted((number[0], text[0]))
    raise BioanonError(
        f"label column '{column}' holds both numbers and text ({_plain_value(arr[first])!r} "
        f"at record {first} and {_plain_value(arr[then])!r} at record {then}); make it one "
        f"type (pandas: df[{column!r}].astype(str))")


def refuse_nested(column: str, values: Any) -> None:
    """Refuse a label column holding lists, arrays or mappings (a Parquet list, map or struct
    column): a label is one class or id per record; counting its classes was pandas'
    "unhashable type", and writing it to NPZ or back to Parquet failed. Only object columns
    are looked at, and only those whose values are not all of one plain type. A column of
    bytes (not UTF-8: the readers decode text) is refused too: its classes read ``b'p1'``,
    and scikit-learn's models take it for no kind of target.

    Examples
    --------
    >>> refuse_nested("c", pd.Series(["a", None, "b"], dtype=object))
    >>> refuse_nested("c", pd.Series([["a"], ["b"]], dtype=object))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: label column 'c' holds lists (['a'] at record 0), not one \
value per record; make it one class or id per record (pandas: df['c'].astype(str)), or give \
this role to another column
    """
    arr = np.asarray(values)
    kind = pd.api.types.infer_dtype(arr, skipna=True) if arr.dtype == object else None
    if arr.dtype.kind == "S" or kind == "bytes":
        i = int(np.flatnonzero(pd.notna(arr))[0]) if kind == "bytes" else 0
        raise BioanonError(
            f"label column '{column}' holds bytes ({arr[i]!r} at record {i}), not text; decode "
            f"them (pandas: df[{column!r}].str.decode('utf-8'), or 'latin-1'), or give this "
            "role to another column")
    if kind not in ("mixed", "mixed-integer", "unknown-array"):
        return
    for i, v in enumerate(arr):
        if isinstance(v, dict | np.ndarray) or (pd.api.types.is_list_like(v)
                                                 and not isinstance(v, str | bytes)):
            kind = ("mappings" if isinstance(v, dict)
                    else "lists" if isinstance(v, list | np.ndarray) else type(v).__name__ + "s")
            shown = v.tolist() if isinstance(v, np.ndarray) else v
            raise BioanonError(
                f"label column '{column}' holds {kind} ({shown!r} at record {i}), not one value "
                f"per record; make it one class or id per record (pandas: "
                f"df[{column!r}].astype(str)), or give this role to another column")


#: what pandas infers of a column of Python objects that scikit-learn's models take for no
#: kind of class ("Unknown label type"), with the words an error names them by
_UNTARGETABLE = {"date": "dates", "time": "times of day", "decimal": "decimal numbers",
                 "datetime": "timestamps", "datetime64": "timestamps with a time zone",
                 "period": "periods", "interval": "intervals"}


def untargetable_kind(values: Any) -> str | None:
    """What a column holds that scikit-learn's models take for no kind of class (the words
    of :data:`_UNTARGETABLE`), or None for text, numbers, booleans.

    >>> import decimal
    >>> untargetable_kind(np.array([decimal.Decimal(1)], dtype=object)), untargetable_kind([1])
    ('decimal numbers', None)
    """
    series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values))
    if series.dtype != object and not isinstance(series.dtype, pd.DatetimeTZDtype | pd.PeriodDtype
                                                  | pd.IntervalDtype):
        return None
    return _UNTARGETABLE.get(pd.api.types.infer_dtype(series, skipna=True))


def refuse_untargetable(column: str, values: Any) -> None:
    """Refuse a useful column (one models learn to predict) holding dates, times, decimals or
    zoned timestamps (Parquet ``date32``, ``time64``, ``decimal128``, ``timestamp[tz]``):
    pandas holds them as Python objects, which scikit-learn's models take for no kind of
    class, so the fit failed deep inside it. As the sensitive column, or kept, they pass.

    Examples
    --------
    >>> import datetime
    >>> refuse_untargetable("c", pd.Series(["a", "b"]))
    >>> try:
    ...     refuse_untargetable("c", pd.Series([datetime.date(2020, 1, 2)]))
    ... except BioanonError as exc:
    ...     print(str(exc)[:68])
    label column 'c' holds dates (datetime.date(2020, 1, 2) at record 0)
    """
    series = pd.Series(values)
    kind = untargetable_kind(series)
    if kind is None:
        return
    at = int(np.flatnonzero(series.notna().to_numpy())[0])
    raise BioanonError(
        f"label column '{column}' holds {kind} ({_plain_value(series.iloc[at])!r} at record "
        f"{at}), which the models that learn to predict it take for no kind of class; make "
        f"it text (pandas: df[{column!r}] = df[{column!r}].astype(str)) or integer codes, or "
        "give this role to another column")


def _refuse_odd_names_and_meta(table: Any) -> None:
    """Refuse ``feature_names`` given as one string (read letter by letter: 'xyz' named three
    features x, y, z) and a ``meta`` that is no mapping (a list, a string: the first copy of
    the table failed in Python's dict()); ``meta=None`` is no meta.

    >>> FeatureTable(np.zeros((1, 3)), pd.DataFrame({"a": [1]}), meta=None).meta
    {}
    >>> FeatureTable(np.zeros((1, 3)), pd.DataFrame({"a": [1]}), feature_names="xyz")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: feature_names must be a list of names, not the one string ...
    """
    from collections.abc import Mapping

    if isinstance(table.feature_names, str | bytes):
        raise BioanonError(f"feature_names must be a list of names, not the one string "
                           f"{table.feature_names!r}; e.g. feature_names=['f0', 'f1']")
    if table.meta is None:
        table.meta = {}
    elif not isinstance(table.meta, Mapping):
        raise BioanonError(f"meta must be a mapping of names to values (a dict), not "
                           f"{type(table.meta).__name__}; e.g. meta={{'source': 'lab'}}")


def _plain_value(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _refuse_padded_values(column: str, values: pd.Series) -> None:
    """Refuse a label column two of whose values differ only by surrounding spaces (' a'
    and 'a'): they would count as two classes — for the sensitive column, two people where
    there is one, and every figure of that person's risk would be measured on halves.

    Examples
    --------
    >>> _refuse_padded_values("c", pd.Series(["a", "b", "a"]))
    >>> _refuse_padded_values("c", pd.Series(["a", " a", "b"]))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: label column 'c' holds values that differ only by \
surrounding spaces (' a' and 'a'), which would count as different classes (or people); \
strip the spaces (pandas: df['c'].str.strip()) and run again
    """
    stripped = values.str.strip()
    if (stripped == values).all():
        return
    pairs = pd.DataFrame({"value": values, "key": stripped}).drop_duplicates("value")
    clash = pairs[pairs.duplicated("key", keep=False)]
    if clash.empty:
        return
    two = clash.loc[clash["key"] == clash["key"].iloc[0], "value"].tolist()
    value, other = sorted(two, key=lambda v: v == v.strip())[:2]  # the padded one first
    raise BioanonError(
        f"label column '{column}' holds values that differ only by surrounding spaces "
        f"({value!r} and {other!r}), which would count as different classes (or people); "
        f"strip the spaces (pandas: df[{column!r}].str.strip()) and run again")


def format_of(path: str | os.PathLike) -> str:
    """Return the table format ('parquet', 'csv' or 'npz') from a file name's extension."""
    ext = Path(path).suffix.lower()
    if os.fspath(path) == "-":
        raise BioanonError("'-' stands for standard input or output, which bioanon does not "
                           "use for tables; name a .parquet, .csv or .npz file")
    if ext in _COMPRESSED:
        raise BioanonError(
            f"'{Path(path).name}' names a compressed file ({ext}); bioanon reads and writes "
            ".parquet, .csv or .npz files: decompress it first, or use Parquet (compressed by "
            "itself)")
    if ext not in FORMATS:
        raise BioanonError(
            f"unknown table format '{ext or path}'; use a .parquet, .csv or .npz file"
        )
    return FORMATS[ext]


#: extensions of a compressed file, named as such by :func:`format_of`
_COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".zst", ".7z")


def path_of(path: Any, example: str) -> Path:
    """``path`` as a :class:`~pathlib.Path`; anything but a str or path-like is refused in one
    line (``os``'s TypeError named no fix). ``example``: the call, as the fix shows it.

    >>> path_of(3, "FeatureTable.read('table.parquet')")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: path must be a file name (a str or a pathlib.Path), not int; \
e.g. FeatureTable.read('table.parquet')
    """
    if not isinstance(path, str | os.PathLike):
        raise BioanonError(f"path must be a file name (a str or a pathlib.Path), not "
                           f"{type(path).__name__}; e.g. {example}")
    return Path(path)


def names_of(columns: str | Sequence[str] | None) -> list[str] | None:
    """Column names given as a sequence; a bare string is one name (not its letters).

    >>> names_of("speaker"), names_of(["a", "b"]), names_of(None)
    (['speaker'], ['a', 'b'], None)
    """
    if columns is None:
        return None
    if isinstance(columns, str) or not isinstance(columns, Iterable):
        return [columns]  # type: ignore[list-item]  # a column named by a number (3): one
    return list(columns)


def _record_index(index: Any, n: int) -> np.ndarray:
    """``index`` as an array NumPy indexes records with, checked with one vectorized bounds
    check: NumPy's IndexError named neither the parameter nor the fix.

    >>> _record_index([0, -1], 3).tolist()
    [0, -1]
    """
    idx = np.asarray(index)
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise BioanonError(f"index is a boolean mask of shape {idx.shape} for {n} records; "
                               "give one value per record", parameter="index")
        return idx
    if idx.size == 0 and idx.ndim == 1:
        return idx.astype(np.intp)
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
        got = (f"one value ({idx.item()!r}); wrap it in a list" if idx.ndim == 0
               else f"{idx.ndim}-D values of type {idx.dtype}")
        raise BioanonError("index must be a sequence of record positions (integers) or a "
                           f"boolean mask; got {got}", parameter="index")
    lo, hi = int(idx.min()), int(idx.max())  # the one vectorized bounds check
    if lo < -n or hi >= n:
        raise BioanonError(f"index holds positions from {lo} to {hi}, but the table has {n} "
                           f"records; give positions from 0 to {n - 1} (or -{n} to -1 "
                           "counting from the end)", parameter="index")
    return idx


@dataclass
class FeatureTable:
    """Feature vectors with their labels and provenance.

    Parameters
    ----------
    X : array of shape (n, d)
        Feature matrix; stored as float32. NaN and inf are refused.
    labels : DataFrame
        One row per record (identity, attributes). May have zero columns.
    feature_names : sequence of str, optional
        Defaults to ``f0, f1, ...``.
    meta : dict, optional
        Provenance (source, extractor, ...). Never put secrets here.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> t = FeatureTable(np.zeros((2, 3)), pd.DataFrame({"speaker": ["a", "b"]}))
    >>> t.n_records, t.n_features, t.feature_names
    (2, 3, ['f0', 'f1', 'f2'])
    """

    X: np.ndarray
    labels: pd.DataFrame
    feature_names: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._settle(checked=False)

    @classmethod
    def _of_checked(cls, X: np.ndarray, labels: pd.DataFrame,
                    feature_names: list[str] | None = None,
                    meta: dict[str, Any] | None = None) -> FeatureTable:
        """A table whose ``X`` has been checked finite already (read and checked, the rows of
        a checked table, permuted or selected): the full scan over ``X`` is not repeated.
        Shape and dtype are still checked; anything but a 2-D float32 array is checked in
        full."""
        table = cls.__new__(cls)
        table.X, table.labels = X, labels
        table.feature_names, table.meta = feature_names, dict(meta or {})
        table._settle(checked=True)
        return table

    def _settle(self, checked: bool) -> None:
        _refuse_odd_names_and_meta(self)
        X = self.X
        if not (checked and isinstance(X, np.ndarray) and X.dtype == np.float32
                and X.ndim == 2 and X.size):
            try:
                shape = np.shape(X)
            except ValueError:  # a list of rows of different lengths
                shape = ()
            names = self.feature_names if self.feature_names is not None else (
                [f"f{j}" for j in range(shape[1])] if len(shape) == 2 else None)
            X = as_feature_matrix(X, "features", names)
        self.X = X
        if not isinstance(self.labels, pd.DataFrame):
            self.labels = pd.DataFrame(self.labels)
        halves = [str(c) for c, t in self.labels.dtypes.items() if t == np.float16]
        if halves:  # held as float32 (see _plain_labels), written back as float16
            self.meta = {**self.meta, _HALF_LABELS: sorted({*self.meta.get(_HALF_LABELS, ()),
                                                            *halves})}
        self.labels = _plain_labels(self.labels.reset_index(drop=True))
        for column, dtype in self.labels.dtypes.items():
            if pd.api.types.is_object_dtype(dtype):
                refuse_mixed_types(str(column), self.labels[column])
        if len(self.labels) != self.X.shape[0]:
            raise BioanonError(
                f"labels have {len(self.labels)} rows but X has {self.X.shape[0]} records; "
                "pass one label row per record"
            )
        if self.feature_names is None:
            self.feature_names = [f"f{j}" for j in range(self.X.shape[1])]
        self.feature_names = [str(f) for f in self.feature_names]
        if len(self.feature_names) != self.X.shape[1]:
            raise BioanonError(
                f"{len(self.feature_names)} feature names for {self.X.shape[1]} features; "
                "pass one name per column of X"
            )
        names = list(map(str, self.labels.columns)) + self.feature_names
        dup = duplicates(names)
        if dup:
            raise BioanonError(
                f"duplicate column name(s) {dup}; rename them so every label and feature "
                "column is unique"
            )

    @property
    def n_records(self) -> int:
        """Number of records (rows)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of features (columns of X)."""
        return int(self.X.shape[1])

    def label(self, column: str, min_classes: int = 2, *, target: bool = False) -> pd.Series:
        """Return one label column, checked to exist and to have at least ``min_classes``;
        ``target``: a column models learn to predict (the interest, an additional attribute),
        whose values must be classes they take (:func:`refuse_untargetable`)."""
        if not isinstance(column, Hashable):  # a list: pandas' "unhashable type: 'list'"
            check_column_name(column, "label", "e.g. table.label('speaker')")
        if column not in self.labels.columns:
            raise missing_column(column, self.labels.columns)
        values = self.labels[column]
        refuse_nested(column, values)
        if target:
            refuse_untargetable(column, values)
        empty = values.isna()
        if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            empty |= values.astype(str).str.strip().eq("")  # "" is no label either
        if empty.any():
            raise BioanonError(
                f"label column '{column}' has {int(empty.sum())} empty value(s) (first at "
                f"record {int(np.argmax(empty.to_numpy()))}); fill or drop those records"
            )
        if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
            _refuse_padded_values(column, values.astype(str))
        refuse_continuous(column, values.to_numpy())
        n_classes = values.nunique()
        if n_classes < min_classes:
            first = values.iloc[0]
            first = first.item() if isinstance(first, np.generic) else first  # 1, not np.int64(1)
            raise BioanonError(
                f"label column '{column}' has a single class ({first!r}); "
                "choose a column with at least two values"
            )
        return values

    def subset(self, index: Sequence[int] | np.ndarray) -> FeatureTable:
        """Return the records at ``index`` (positions, or a boolean mask of one value per
        record) as a new table."""
        idx = _record_index(index, self.n_records)
        return FeatureTable._of_checked(self.X[idx],
                                        self.labels.iloc[idx].reset_index(drop=True),
                                        list(self.feature_names or []), dict(self.meta))

    def with_features(self, X: np.ndarray, **meta: Any) -> FeatureTable:
        """Return a copy with new feature values (same labels and names) and extra meta."""
        return FeatureTable(X, self.labels.copy(), list(self.feature_names),
                            {**self.meta, **meta})

    def drop_labels(self, columns: str | Sequence[str]) -> FeatureTable:
        """Return a copy without the given label columns (a bare string is one column)."""
        names = names_of(columns) or []
        for c in names:
            if c not in self.labels.columns:
                raise missing_column(c, self.labels.columns)
        return FeatureTable._of_checked(self.X, self.labels.drop(columns=names),
                                        list(self.feature_names or []), dict(self.meta))

    # ------------------------------------------------------------------ I/O
    def to_frame(self) -> pd.DataFrame:
        """Label columns followed by one column per feature."""
        feats = pd.DataFrame(self.X, columns=self.feature_names)
        return pd.concat([self.labels.reset_index(drop=True), feats], axis=1)

    def write(self, path: str | os.PathLike) -> Path:
        """Write the table atomically; the format follows the extension.

        The output appears only once complete (temporary file, then rename). A name typed
        as a folder's (``'t.parquet/'``) is refused.
        """
        refuse_folder_name(path)
        path = path_of(path, "table.write('table.parquet')")
        with atomic_path(path) as tmp:
            self.write_to(tmp, format_of(path))
        return path

    def write_to(self, tmp: str | os.PathLike, fmt: str | None = None) -> str | None:
        """Write the table to ``tmp`` directly (not atomic: callers rename it into place).

        Returns the file's SHA-256 when it was computed while writing (Parquet), else None.
        """
        fmt = fmt or format_of(tmp)
        if fmt == "parquet":
            sink = HashingWriter(tmp)
            try:
                write_parquet(self, sink)
            finally:
                sink.close()
            return sink.hexdigest()
        labels = written_labels(self)
        if fmt == "csv":  # pandas' default is one row per chunk past 100,000 columns
            cols = self.n_features + labels.shape[1]
            feats = pd.DataFrame(self.X, columns=self.feature_names)
            pd.concat([labels.reset_index(drop=True), feats], axis=1).to_csv(
                tmp, index=False, chunksize=max(1, _CSV_CHUNK_CELLS // max(cols, 1)))
        else:
            clash = [str(c) for c in labels.columns if str(c) in _NPZ_RESERVED]
            if clash:  # its array replaced the features (or their names) in the file
                raise BioanonError(
                    f"label column '{clash[0]}' cannot go into an NPZ file, whose array "
                    f"'{clash[0]}' holds the {'features' if clash[0] == 'X' else 'feature names'}"
                    "; rename the column, or write Parquet or CSV")
            arrays = {"X": self.X, "feature_names": np.asarray(self.feature_names)}
            for col in labels.columns:
                values = labels[col].to_numpy()
                if values.dtype == object:  # strings: store as unicode, never pickles; an
                    missing = pd.isna(values)  # empty value as '' (as CSV has it), not the
                    values = values.astype(str)  # class 'nan', 'None' or '<NA>'
                    values[missing] = ""
                arrays[str(col)] = values
            _write_npz(Path(tmp), arrays)
        return None

    @classmethod
    def read(cls, path: str | os.PathLike, label_columns: Sequence[str] | None = None, *,
             keep_as_feature: Sequence[str] | None = None) -> FeatureTable:
        """Read a table; ``label_columns`` names the labels, every other column is a feature.

        When ``label_columns`` is None, Parquet files written by bioanon remember their label
        columns, NPZ files treat every array but ``X`` as a label, and CSV files treat the
        non-numeric columns as labels.

        Parameters
        ----------
        path : path
            A ``.parquet``, ``.csv`` or ``.npz`` file, or a folder of Parquet parts.
        label_columns : sequence of str, optional
            The label columns (added to those a bioanon Parquet file remembers).
        keep_as_feature : sequence of str, optional
            Given (even empty), a table that does not record its label columns (a CSV, a
            Parquet file written by another tool) is checked for numeric columns that look
            like metadata (:mod:`bioanon.metadata_columns`): each must be a label column or
            listed here (names or shell patterns such as ``px_*``), else the read is refused.
            The columns kept knowingly are listed in ``meta["kept_as_feature"]``. None (the
            default) checks nothing: for tables that are not released.
        """
        p = path_of(path, "FeatureTable.read('table.parquet')")
        label_columns = names_of(label_columns)
        keep_as_feature = names_of(keep_as_feature)  # 'f0' is one name, not 'f' and '0'
        from .release_journal import journal_path, settle

        named = p if p.name else p.resolve()  # '.' has no name: its journal is its folder's
        if named.name and os.path.lexists(journal_path(named)):  # a release whose writer was
            settle(named)  # killed mid-switch: what it proves it staged is replaced by what it
            # kept; nothing else
        if p.is_dir():
            return cls._read_parquet_folder(p, label_columns, keep_as_feature)
        fmt = format_of(p)
        if not p.exists():
            raise BioanonError(not_found(p))
        if not p.is_file():
            raise BioanonError(not_a_regular_file(p))
        if p.stat().st_size == 0:
            raise BioanonError(f"input file '{p}' is empty; pass a table with records")
        refuse_other_kind(p, fmt)
        if fmt == "npz":
            return _declared(cls._read_npz(p, label_columns), keep_as_feature,
                             f"'{p.name}' (an NPZ file: its X array holds the features)")
        try:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                pf = pq.ParquetFile(p, memory_map=True)
                raw = pf.schema_arrow.metadata or {}
                md = json.loads(raw.get(b"bioanon", b"{}"))
                names = pf.schema_arrow.names
                origin = None if b"bioanon" in raw else _foreign_parquet(p, raw)
                known = [c for c in md.get("label_columns") or [] if c in names]
                if label_columns is None:
                    label_columns = known or None
                else:  # columns bioanon wrote as labels are never features
                    label_columns = list(dict.fromkeys([*label_columns, *known]))
                meta = {**md.get("meta", {}), "source": str(p)}
                table = cls._from_parquet(pf, label_columns, meta, origin,
                                          None if origin is None else keep_as_feature)
                return table if origin is not None else _declared(
                    table, keep_as_feature, f"'{p.name}' (written by bioanon, whose metadata "
                                            "says which columns are features)")
            else:
                import csv

                with open(p, newline="", encoding="utf-8") as fh:
                    rows = csv.reader(fh)
                    header = next((r for r in rows if r), [])  # blank lines: skipped,
                    try:  # as pandas skips them
                        second = next((r for r in rows if r), None)
                    except csv.Error:  # a cell past csv's field limit: pandas reads it
                        second = None
                    if len(header) == 1:  # another separator? its first row tells more
                        check_separator(p, header, ",".join(second or []))
                        _refuse_comment_line(p, header)
                    _refuse_title_line(p, header, second)
                dup = duplicates(header)
                if dup:
                    raise BioanonError(
                        f"duplicate column name(s) {dup} in '{p}'; make every column unique")
                # a wide table in one pass: by default pandas parses in row chunks of a fixed
                # byte size and joins them column by column, which for 100,000 columns costs
                # seconds per row
                df = _without_empty_rows(pd.read_csv(p, low_memory=len(header) <= _WIDE_COLUMNS))
                _refuse_trailing_separators(p, header, df)
                _refuse_short_rows(p, header, df)
                _refuse_repeated_header(p, header, df)
                _keep_label_text(p, df, label_columns)
                meta = {}
        except BioanonError:
            raise
        except UnicodeDecodeError as exc:
            raise BioanonError(
                f"cannot read '{p}' as csv: it is not UTF-8 text (byte {exc.start} is "
                f"{exc.object[exc.start:exc.start + 1]!r}); save it as UTF-8 (in a spreadsheet: "
                "CSV UTF-8)") from None
        except Exception as exc:  # a broken file is the user's problem: say so in one line
            raise BioanonError(_long_row(p, str(exc)) or f"cannot read '{p}' as {fmt}: "
                               f"{exc}".splitlines()[0]) from None
        return cls._from_frame(df, label_columns, {**meta, "source": str(p)},
                               f"'{p.name}' (a CSV file)", keep_as_feature)

    @classmethod
    def _read_parquet_folder(cls, p: Path, label_columns: Sequence[str] | None,
                             keep_as_feature: Sequence[str] | None = None) -> FeatureTable:
        """Read a folder of Parquet part files (as dask, Spark, pyarrow and the bucketed
        release write them) as one table, parts in name order (checked by
        :func:`parquet_parts`). A part without rows (Spark writes one for an empty
        partition) adds nothing; a folder of such parts only is a table without records."""
        import pyarrow.parquet as pq

        parts = parquet_parts(p)
        filled = [f for f in parts if pq.read_metadata(f).num_rows > 0] or parts[:1]
        tables, first = [], None
        for f in filled:
            try:
                t = cls.read(f, label_columns)
            except BioanonError as exc:
                raise BioanonError(f"part '{f.relative_to(p)}' of '{p}': {exc}") from None
            if first is None:
                first = t
                label_columns = list(t.labels.columns)
            elif (t.feature_names != first.feature_names
                  or list(t.labels.columns) != list(first.labels.columns)):
                raise BioanonError(
                    f"part '{f.relative_to(p)}' of '{p}' has other columns than "
                    f"'{filled[0].relative_to(p)}'; every part of a folder needs the same "
                    "columns and types")
            tables.append(t)
        assert first is not None
        X = np.concatenate([t.X for t in tables]) if len(tables) > 1 else first.X
        labels = pd.concat([t.labels for t in tables], ignore_index=True)
        meta = {**first.meta, "source": str(p)}
        schema = pq.read_schema(parts[0])
        if keep_as_feature is not None and b"bioanon" not in (schema.metadata or {}):
            meta.update(_audit(X, list(first.feature_names or []), keep_as_feature,
                               f"'{p.name}' (Parquet parts without bioanon metadata)",
                               parquet_integer_columns(schema)))
        elif keep_as_feature:
            from .metadata_columns import refuse_unknown_kept

            refuse_unknown_kept(list(first.feature_names or []), keep_as_feature,
                                f"'{p.name}' (written by bioanon, whose metadata says which "
                                "columns are features)")
        return cls(X, labels, list(first.feature_names), meta)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, label_columns: Sequence[str] | None,
                   meta: dict[str, Any] | None = None, *,
                   keep_as_feature: Sequence[str] | None = None) -> FeatureTable:
        """Build a table from a DataFrame of label columns and numeric feature columns.

        ``keep_as_feature`` given (even empty), numeric columns that look like metadata must
        be label columns or listed there (see :meth:`read`).
        """
        return cls._from_frame(df, label_columns, dict(meta or {}), "the DataFrame",
                               keep_as_feature)

    @classmethod
    def _from_frame(cls, df: pd.DataFrame, label_columns: Sequence[str] | None,
                    meta: dict[str, Any], source: str,
                    keep_as_feature: Sequence[str] | None) -> FeatureTable:
        numeric_cols = {c for c, t in df.dtypes.items() if pd.api.types.is_numeric_dtype(t)}
        typed = {str(c) for c, t in df.dtypes.items() if pd.api.types.is_integer_dtype(t)}
        labels, feat_cols, odd = _split_columns(list(df.columns), len(df), label_columns,
                                                numeric_cols.__contains__)
        odd_set = set(odd)
        numeric = [c for c in feat_cols if c not in odd_set]
        with np.errstate(over="ignore"):
            X = df[numeric].to_numpy(dtype=np.float32)
        names = [str(c) for c in numeric]
        check_finite(X, "features", names,
                     before=lambda: df[numeric].to_numpy(dtype=np.float64, na_value=np.nan))
        if odd:
            raise _not_numeric(odd, None, X, names, keep_as_feature, typed, df)
        if keep_as_feature is not None:
            meta = {**meta, **_audit(X, names, keep_as_feature, source, typed)}
        return cls._of_checked(X, df[labels].reset_index(drop=True), names, meta)

    @classmethod
    def _from_parquet(cls, pf: Any, label_columns: Sequence[str] | None,
                      meta: dict[str, Any], origin: str | None = None,
                      keep_as_feature: Sequence[str] | None = None) -> FeatureTable:
        """Build a table from a ``pyarrow.parquet.ParquetFile``.

        The feature columns go straight into one C-ordered float32 matrix, a row group at a
        time (the decoder's buffers are reused from one row group to the next; no DataFrame of
        features in between); only the label columns pass through pandas.
        """
        import pyarrow as pa

        schema = pf.schema_arrow

        def numeric(c: str) -> bool:
            t = schema.field(c).type
            return bool(arrow_numeric(t) or pa.types.is_boolean(t))

        n = pf.metadata.num_rows
        labels, feat_cols, odd = _split_columns(list(schema.names), n, label_columns, numeric)
        if odd:
            odd_set = set(odd)
            feat_cols = [c for c in feat_cols if c not in odd_set]
        X = np.empty((n, len(feat_cols)), dtype=np.float32)
        groups = pf.num_row_groups
        starts = np.cumsum([0] + [pf.metadata.row_group(k).num_rows for k in range(groups)])
        _pipelined(lambda k: pf.read_row_group(k, columns=feat_cols),
                   lambda k, part: _fill_rows(X, int(starts[k]), part), groups)
        names = [str(c) for c in feat_cols]
        check_finite(X, "features", names, before=lambda: np.column_stack(
            [column_values(pf.read(columns=[c]).column(0)).astype(np.float64)
             for c in feat_cols]))
        typed = parquet_integer_columns(schema)
        if odd:
            raise (_vector_column(schema, odd)
                   or _not_numeric(odd, origin, X, names, keep_as_feature, typed))
        if keep_as_feature is not None:
            meta = {**meta, **_audit(X, names, keep_as_feature, origin or "the table", typed)}
        frame = (arrow_labels(pf.read(columns=labels)) if labels
                 else pd.DataFrame(index=range(n)))
        if labels:  # written back in these types (see restore_label_types)
            meta = {**meta, LABEL_TYPES: arrow_types(schema, labels)}
        return cls._of_checked(X, frame, names, dict(meta))

    @classmethod
    def _read_npz(cls, p: Path, label_columns: Sequence[str] | None) -> FeatureTable:
        try:
            with np.load(p, allow_pickle=False) as z:
                arrays = {k: _native(z[k]) for k in z.files}
        except ValueError as exc:
            if "allow_pickle" not in str(exc):
                raise BioanonError(f"cannot read '{p}' as npz: {exc}".splitlines()[0]) from None
            # an array of Python objects (e.g. a pandas column of strings): loading it
            # would run pickled code from the file, which bioanon never does
            raise BioanonError(f"'{p}' holds an array of Python objects, which bioanon does "
                               "not load (it would unpickle code from the file); save each "
                               "label as numbers or fixed-width strings, e.g. "
                               "np.asarray(column, dtype=str)") from None
        except Exception as exc:
            raise BioanonError(f"cannot read '{p}' as npz: {exc}".splitlines()[0]) from None
        if "X" not in arrays:
            raise BioanonError(f"'{p}' has no array named 'X'; save features as X=...")
        available = [k for k in arrays if k not in _NPZ_RESERVED]
        if label_columns is None:
            label_columns = available
        for c in label_columns:
            if c not in arrays:
                raise missing_column(c, available)
        X = as_feature_matrix(arrays["X"], f"'{p}' X")
        for c in label_columns:
            arr = arrays[c]
            if arr.ndim != 1:
                raise BioanonError(f"label array '{c}' in '{p}' has shape {arr.shape}; save one "
                                   "1-D array per label column (one value per record)")
            if arr.shape[0] != X.shape[0]:
                raise BioanonError(f"label array '{c}' in '{p}' has {arr.shape[0]} values for "
                                   f"{X.shape[0]} records; save one value per record")
            if arr.dtype.kind not in "biufUSM":
                raise BioanonError(f"label array '{c}' in '{p}' has dtype {arr.dtype}; save "
                                   "numbers or strings")
        labels = pd.DataFrame({c: as_text(arrays[c]) for c in label_columns})
        names = arrays.get("feature_names")
        if names is not None:  # names saved as bytes (h5py, older writers): their text, not
            names = as_text(names)  # "b'f0'"
            if names.dtype.kind == "S":
                raise BioanonError(f"'feature_names' in '{p}' holds bytes that are not UTF-8 "
                                   f"text ({names.flat[0]!r}); save the names as text, e.g. "
                                   "np.asarray(names, dtype=str)")
        if names is not None and (names.ndim != 1 or names.shape[0] != X.shape[1]):
            raise BioanonError(f"'feature_names' in '{p}' has shape {names.shape} for "
                               f"{X.shape[1]} features; save one name per feature")
        return cls(X, labels, None if names is None else [str(n) for n in names],
                   {"source": str(p)})


def _native(a: np.ndarray) -> np.ndarray:
    """``a`` in this machine's byte order: an array saved big-endian (``>i8``, by another
    machine or MATLAB's exports) given a role was an internal error (pandas' "Big-endian
    buffer not supported on little-endian compiler").

    >>> _native(np.arange(3, dtype=">i8")).dtype.isnative
    True
    """
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


#: past this many columns a CSV is parsed in one pass (see :meth:`FeatureTable.read`)
_WIDE_COLUMNS = 1000
#: cells per chunk when a CSV is written
_CSV_CHUNK_CELLS = 2_000_000
#: rows per block when a matrix is turned into columns or back (a block stays in cache)
_BLOCK_ROWS = 4096
#: bytes of the column buffer :func:`fill_rows` transposes from (fits a core's cache)
_FILL_BYTES = 4 << 20


def _split_columns(columns: list[Any], n_rows: int, label_columns: Sequence[str] | None,
                   numeric: Any) -> tuple[list[Any], list[Any], list[Any]]:
    """Check a table's columns; return (label columns, feature columns, the feature columns
    that are not numeric: the caller refuses them, see :func:`_not_numeric`).

    Without ``label_columns``, the non-numeric columns are the labels.
    """
    cols = list(map(str, columns))
    dup = duplicates(cols)
    if dup:
        raise BioanonError(f"duplicate column name(s) {dup}; make every column unique")
    if n_rows == 0:
        raise BioanonError("the table has no records; pass a non-empty table")
    if label_columns is None:
        label_columns = [c for c in columns if not numeric(c)]
    labels = list(label_columns)
    present = set(columns)
    for c in labels:
        if c not in present:
            raise missing_column(c, columns, numeric=[x for x in columns if numeric(x)])
    is_label = set(labels)
    feat_cols = [c for c in columns if c not in is_label]
    if not feat_cols:
        raise BioanonError("the table has no feature columns; every column is a label")
    non_numeric = [c for c in feat_cols if not numeric(c)]
    return labels, feat_cols, non_numeric


def table_of(data: Any, named: Sequence[str] = (), source: str = "a DataFrame"
             ) -> FeatureTable:
    """``data`` as a :class:`FeatureTable`, for a front door that takes what a Python user
    holds: a table as is; a pandas DataFrame read as a CSV file is (its non-numeric columns
    and the ``named`` ones are labels, every other column a feature; ``meta["source"]`` is
    ``source``); anything else refused in one line.

    >>> df = pd.DataFrame({"f0": [0.1, 0.2], "take": [0, 1], "who": ["a", "b"]})
    >>> t = table_of(df, ["take"])
    >>> t.feature_names, list(t.labels.columns)
    (['f0'], ['take', 'who'])
    >>> table_of(np.zeros((2, 2)))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: table must be a bioanon FeatureTable or a pandas DataFrame, \
not ndarray; e.g. FeatureTable(X, labels) or FeatureTable.read(path)
    """
    if isinstance(data, FeatureTable):
        return data
    if isinstance(data, pd.DataFrame):
        names = set(map(str, named))
        labels = [c for c in data.columns
                  if str(c) in names or not pd.api.types.is_numeric_dtype(data[c])]
        return FeatureTable.from_frame(data, labels, {"source": source})
    raise BioanonError(f"table must be a bioanon FeatureTable or a pandas DataFrame, not "
                       f"{type(data).__name__}; e.g. FeatureTable(X, labels) or "
                       "FeatureTable.read(path)", parameter="table")


#: the ``meta`` entry naming the label columns the input stored as float16 (held as float32)
_HALF_LABELS = "float16_labels"


def written_labels(table: FeatureTable) -> pd.DataFrame:
    """The label columns as a table's writers write them: a column the input stored as
    float16 (held as float32 in memory, see :func:`_plain_labels`) as float16 again, so a
    kept label goes out in the type it came in.

    >>> t = FeatureTable(np.zeros((2, 1)), pd.DataFrame({"h": np.float16([0.1, 1.0])}))
    >>> str(t.labels["h"].dtype), str(written_labels(t)["h"].dtype)
    ('float32', 'float16')
    """
    labels = table.labels
    halves = [c for c in table.meta.get(_HALF_LABELS, ())
              if c in labels.columns and labels[c].dtype == np.float32]
    if not halves:
        return labels
    labels = labels.copy()
    for c in halves:
        labels[c] = labels[c].astype(np.float16)
    return labels


def _plain_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """``labels`` with every categorical column stored as its values' own type (a column of
    strings as strings): how a label is stored never changes a figure, a split or a seed
    (pandas orders a categorical's groups and codes by its categories, a plain column's by
    appearance). A float16 column (an NPZ or Parquet half-float label) is stored as float32,
    which holds each of its values exactly: pandas cannot group or index float16 ("float16
    indexes are not supported").

    >>> df = pd.DataFrame({"y": pd.Categorical(["b", "a"]), "n": pd.Categorical([2, 1])})
    >>> [str(t) for t in _plain_labels(df).dtypes], _plain_labels(df)["n"].tolist()
    (['str', 'int64'], [2, 1])
    >>> str(_plain_labels(pd.DataFrame({"h": np.float16([0.5, 1.0])}))["h"].dtype)
    'float32'
    """
    cats = [c for c, t in labels.dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    halves = [c for c, t in labels.dtypes.items() if t == np.float16]
    if not cats and not halves:
        return labels
    labels = labels.copy()
    for c in halves:
        labels[c] = labels[c].astype(np.float32)
    for c in cats:
        col = labels[c]
        try:
            labels[c] = col.astype(col.cat.categories.dtype)
        except (TypeError, ValueError):  # e.g. integer categories with a missing value
            labels[c] = col.astype(object)
    return labels


#: separators a CSV written with another convention uses (bioanon reads commas)
_OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def check_separator(path: Path, header: list[str], first_row: str = "") -> None:
    """Refuse a CSV whose header is one column holding another separator: it was written
    with semicolons, tabs or bars, and every row would be read as one text column. A first
    row with decimal commas (``0,5;1,25``) adds ``decimal=','`` to the fix.

    >>> check_separator(Path("t.csv"), ["f0", "f1"])
    >>> check_separator(Path("t.csv"), ["f0;f1;speaker"], "0,5;1,25;a")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: 't.csv' looks separated by semicolons (its header is one \
column, 'f0;f1;speaker'); bioanon reads comma-separated values: write it with commas, e.g. \
pandas.read_csv(path, sep=';', decimal=',').to_csv(new_path, index=False)
    """
    if len(header) != 1:
        return
    for sep, name in _OTHER_SEPARATORS.items():
        if sep in header[0]:
            shown = header[0] if len(header[0]) <= 40 else header[0][:40] + "..."
            decimal = ", decimal=','" if re.search(r"\d,\d", first_row) else ""
            raise BioanonError(
                f"'{path.name}' looks separated by {name} (its header is one column, "
                f"'{shown}'); bioanon reads comma-separated values: write it with commas, "
                f"e.g. pandas.read_csv(path, sep={sep!r}{decimal}).to_csv(new_path, "
                "index=False)")


def _foreign_parquet(path: Path, metadata: dict[bytes, bytes]) -> str:
    """How an error names a Parquet file without bioanon's record of its label columns."""
    tool = "pandas.to_parquet" if b"pandas" in metadata else "another tool"
    return (f"'{path.name}' holds no bioanon metadata (written by {tool}, which drops "
            "bioanon's record of its label columns)")


def _not_numeric(columns: list[Any], origin: str | None, X: np.ndarray, names: list[str],
                 keep_as_feature: Sequence[str] | None,
                 integer_typed: Collection[str] = (),
                 frame: pd.DataFrame | None = None) -> BioanonError:
    """The one error naming every non-numeric feature column (and, for a table to release,
    every numeric one that looks like metadata: all the columns to name, in one round);
    ``frame``'s values name a column of numbers spoilt by a few text cells or written with
    thousands separators or decimal commas (:func:`_numbers_as_text`)."""
    from .metadata_columns import describe_refused, refused_columns

    cols = [str(c) for c in columns]
    shown = cols if len(cols) <= 12 else [*cols[:12], f"... {len(cols) - 12} more"]
    head = f"{origin}, so only the columns named are labels: " if origin else ""
    fix = "name them as label columns (label_columns=COL) or convert them to numbers"
    if origin:
        fix += ("; or keep its label columns by writing it with bioanon "
                "(FeatureTable.write) instead of pandas")
    msg = f"{head}feature column(s) {shown} are not numeric; {fix}"
    if frame is not None:
        msg += _numbers_as_text(frame, list(columns))
    index = [c for c in cols if re.fullmatch(r"__index_level_\d+__", c)]
    if index:
        msg += (f"; {index[0]} is the DataFrame's index, which pandas wrote as a column: "
                "write the table with index=False, or name it as a label column")
    if keep_as_feature is not None:
        refused = refused_columns(X, names, keep_as_feature, integer_typed)
        if refused:
            msg += f"; also, {describe_refused(refused)}"
            return BioanonError(msg, parameter=("label_columns", "keep_as_feature"))
    return BioanonError(msg, parameter="label_columns")


#: numbers written with thousands separators (a group never starts with 0), with a decimal
#: comma or as percentages, and how to read them ({c}: the column)
_WRITTEN_NUMBERS = ((r"[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?", "thousands separators",
                     "read it with pandas.read_csv(path, thousands=',')"),
                    (r"[-+]?\d*,\d+", "decimal commas",
                     "read it with pandas.read_csv(path, decimal=',')"),
                    (r"[-+]?(\d+\.?\d*|\.\d+)\s?%", "percent signs",
                     "strip them, e.g. df[{c!r}] = df[{c!r}].str.rstrip('%').astype(float) / 100,"))


def _numbers_as_text(frame: pd.DataFrame, columns: list[Any]) -> str:
    """What the message adds about columns of numbers read as text: a few text cells among
    numbers (an export's ``#DIV/0!`` or ``-``), where they are; numbers written with
    thousands separators or decimal commas, how to read them. A column of text adds nothing
    (naming it a label is the fix).

    >>> df = pd.DataFrame({"a": ["1.5", "#DIV/0!", "2"], "b": ["1,234.5", "2,000", "3"],
    ...                    "c": ["0,5", "-1,25", "2"]})
    >>> for note in _numbers_as_text(df, ["a", "b", "c"]).split("; ")[1:]:
    ...     print(note)
    column 'a' holds numbers but for 1 cell(s) of text ('#DIV/0!' at record 1): correct or
    drop those records
    column 'b' holds numbers written with thousands separators ('1,234.5'): read it with
    pandas.read_csv(path, thousands=',') and write it back with to_csv(new_path, index=False)
    column 'c' holds numbers written with decimal commas ('0,5'): read it with
    pandas.read_csv(path, decimal=',') and write it back with to_csv(new_path, index=False)
    >>> print(_numbers_as_text(pd.DataFrame({"p": ["12.5%", "3%"]}), ["p"])[2:])
    column 'p' holds numbers written with percent signs ('12.5%'): strip them, e.g.
    df['p'] = df['p'].str.rstrip('%').astype(float) / 100, and write it back with
    to_csv(new_path, index=False)
    """
    notes = []
    for c in columns[:3]:
        text = frame[c].dropna().astype(str).str.strip()
        bad = pd.to_numeric(text, errors="coerce").isna().to_numpy()
        if text.empty:
            continue
        if 0 < bad.sum() * 2 <= len(text):
            at = int(np.argmax(bad))
            notes.append(f"column {str(c)!r} holds numbers but for {int(bad.sum())} cell(s) "
                         f"of text ({text.iloc[at]!r} at record {int(text.index[at])}): "
                         "correct or drop those records")
            continue
        for pattern, words, fix in _WRITTEN_NUMBERS:
            plain = text[bad]
            if bad.any() and plain.str.fullmatch(pattern).all():
                notes.append(f"column {str(c)!r} holds numbers written with {words} "
                             f"({plain.iloc[0]!r}): {fix.format(c=str(c))} and write it back "
                             "with to_csv(new_path, index=False)")
                break
    return "".join(f"; {n}" for n in notes)


def _declared(table: FeatureTable, keep_as_feature: Sequence[str] | None,
              source: str) -> FeatureTable:
    """``table``, read from a file that declares its features (bioanon's Parquet, an NPZ),
    once every ``keep_as_feature`` entry names one of them: an entry naming a label column or
    nothing would be left without effect."""
    if keep_as_feature:
        from .metadata_columns import refuse_unknown_kept

        refuse_unknown_kept(list(table.feature_names or []), keep_as_feature, source,
                            [str(c) for c in table.labels.columns])
    return table


def _audit(X: np.ndarray, names: list[str], keep_as_feature: Sequence[str],
           source: str, integer_typed: Collection[str] = ()) -> dict[str, Any]:
    """Refuse metadata-like feature columns (see :func:`bioanon.metadata_columns.
    check_feature_columns`); the meta entry naming those kept knowingly."""
    from .metadata_columns import check_feature_columns

    kept = check_feature_columns(X, names, keep_as_feature, source, integer_typed)
    return {"kept_as_feature": kept} if kept else {}


def _vector_column(schema: Any, columns: Sequence[str]) -> BioanonError | None:
    """The refusal of the first of ``columns`` (features that are not numeric) holding a list
    of numbers per record, as Arrow, Spark and Hugging Face write an embedding: it was "not
    numeric; name them as label columns", advice that drops the features.

    >>> import pyarrow as pa
    >>> s = pa.schema([("emb", pa.list_(pa.float32(), 4))])
    >>> print(_vector_column(s, ["emb"]))  # doctest: +ELLIPSIS
    column 'emb' holds a list of 4 numbers per record (fixed_size_list<item: float>[4]: an \
embedding?), where bioanon reads one feature a column: expand it into columns first, ...
    """
    import pyarrow as pa

    for c in columns:
        t = schema.field(c).type
        if not (pa.types.is_list(t) or pa.types.is_large_list(t)
                or pa.types.is_fixed_size_list(t)) or not arrow_numeric(t.value_type):
            continue
        size = f"{t.list_size} " if pa.types.is_fixed_size_list(t) else ""
        return BioanonError(
            f"column '{c}' holds a list of {size}numbers per record ({t}: an embedding?), where "
            "bioanon reads one feature a column: expand it into columns first, e.g. with "
            f"pandas: df.join(pd.DataFrame(df.pop('{c}').tolist()).add_prefix('{c}_'))"
            ".to_parquet(new_path, index=False)")
    return None


def arrow_numeric(t: Any) -> bool:
    """Whether a ``pyarrow`` type holds numbers bioanon reads as features: integers,
    floating point, decimals (read as float64, then float32 as every feature)."""
    import pyarrow as pa

    return bool(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def column_values(column: Any) -> np.ndarray:
    """A numeric ``pyarrow`` column (or chunked column) as a NumPy array, a decimal one cast
    to float64 by Arrow (whole-array; ``to_numpy`` alone gives Python ``Decimal`` objects).

    >>> import decimal, pyarrow as pa
    >>> column_values(pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2)))
    array([1.25,  nan])
    """
    import pyarrow as pa

    if pa.types.is_decimal(column.type):
        column = column.cast(pa.float64())
    return np.asarray(column.to_numpy(zero_copy_only=False))


def as_text(values: np.ndarray) -> np.ndarray:
    """An NPZ label array of bytes (``S`` dtype) as text when it is UTF-8 (a class ``b'p1'``
    is ``'p1'``); any other array as it is.

    >>> as_text(np.array([b"p1", b"p2"])).tolist(), as_text(np.array([1, 2])).tolist()
    (['p1', 'p2'], [1, 2])
    """
    if values.dtype.kind != "S":
        return values
    try:
        return np.char.decode(values, "utf-8")
    except UnicodeDecodeError:
        return values


def arrow_labels(table: Any) -> pd.DataFrame:
    """A ``pyarrow`` table of label columns as a pandas frame: a binary column of UTF-8 text
    as text (older writers store strings so; pandas would give Python ``bytes``, a class
    ``b'p1'``), an integer column with missing values as pandas' nullable integer of its
    width (``Int64``, ``UInt8``, ...): the default conversion makes it float64, so a kept
    column would be written back as 31.0, NaN.

    >>> import pyarrow as pa
    >>> arrow_labels(pa.table({"age": [31, None], "n": [1, 2]})).dtypes.tolist()
    [Int64Dtype(), dtype('int64')]
    """
    import pyarrow as pa

    frame = table.to_pandas()
    for name, column in zip(table.column_names, table.columns, strict=True):
        t = column.type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            with contextlib.suppress(pa.ArrowInvalid):  # not UTF-8: bytes (refused as a role)
                frame[name] = column.cast(pa.large_string()).to_pandas()
        elif pa.types.is_integer(t) and column.null_count:
            kind = ("U" if pa.types.is_unsigned_integer(t) else "") + f"Int{t.bit_width}"
            frame[name] = column.to_pandas(types_mapper={t: pd.api.types.pandas_dtype(kind)}.get)
    return frame


#: the ``meta`` entry recording the Arrow types of a Parquet input's label columns
LABEL_TYPES = "arrow_label_types"


def arrow_types(schema: Any, columns: Sequence[str]) -> str:
    """The Arrow types of ``columns`` of ``schema``, as text a table's meta carries (an Arrow
    schema, serialized, in base64)."""
    import base64

    import pyarrow as pa

    fields = pa.schema([schema.field(c).remove_metadata() for c in columns])
    return base64.b64encode(fields.serialize().to_pybytes()).decode("ascii")


def restore_label_types(labels: Any, recorded: str | None) -> Any:
    """``labels`` (an Arrow table of label columns converted from pandas) with each column
    the input recorded (:func:`arrow_types`) cast back to its type where that is exact: the
    conversion through pandas made a dictionary column plain text, ``string`` large_string,
    ``decimal128(5, 2)`` the narrowest precision its values need, so a kept column came back
    in another type than it went in. A column the cast would change keeps its type.

    >>> import pyarrow as pa
    >>> t = pa.table({"d": pa.array(["a", "b"]).dictionary_encode(), "n": [1, 2]})
    >>> back = pa.Table.from_pandas(t.to_pandas().astype({"d": str}), preserve_index=False)
    >>> restore_label_types(back, arrow_types(t.schema, ["d"])).schema.field("d").type
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    """
    if not recorded:
        return labels
    import base64

    import pyarrow as pa

    try:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(recorded)))
    except (ValueError, TypeError, pa.ArrowException):  # not bioanon's record: left as it is
        return labels
    for want in schema:
        at = labels.schema.get_field_index(want.name)
        if at < 0 or labels.schema.field(at).type == want.type:
            continue
        with contextlib.suppress(pa.ArrowException, ValueError, TypeError):
            labels = labels.set_column(at, want.name, labels.column(at).cast(want.type))
    return labels


def parquet_integer_columns(schema: Any) -> set[str]:
    """The columns a ``pyarrow`` schema stores with an integer type."""
    import pyarrow as pa

    return {str(f.name) for f in schema if pa.types.is_integer(f.type)}


def visible_files(folder: Path) -> Iterator[Path]:
    """The files under ``folder``, each folder's in name order, lazily; hidden and
    ``_``-prefixed files and folders (``.git``, ``_SUCCESS``, ``_temporary``) are skipped."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            f = Path(root) / name
            if not name.startswith((".", "_")) and f.is_file():
                yield f


def parquet_parts(folder: Path) -> list[Path]:
    """The part files of a folder that stands for one Parquet table, each checked.

    Every part must be a readable Parquet file holding the same columns with the same types;
    hidden files and ``_SUCCESS``-style markers are skipped. Only footers are read.

    Raises :class:`BioanonError` naming the folder, the first bad part and the fix.
    """
    import pyarrow.parquet as pq

    parts = []
    for f in visible_files(folder):  # the first stray file ends the walk (a home folder
        if f.suffix.lower() not in PARQUET_SUFFIXES:  # or '/' was walked whole)
            raise BioanonError(f"input folder '{folder}' holds '{f.relative_to(folder)}', not "
                               "a Parquet part; a folder input holds only .parquet files")
        parts.append(f)
    parts.sort()
    if not parts:
        raise BioanonError(f"input folder '{folder}' holds no Parquet files; pass a table file "
                           "or a folder of Parquet parts")
    first = None
    for f in parts:
        name = f.relative_to(folder)
        if f.stat().st_size == 0:
            raise BioanonError(f"part '{name}' of '{folder}' is empty; remove it or rewrite the "
                               "folder")
        try:
            schema = pq.read_schema(f).remove_metadata()
        except Exception as exc:
            raise BioanonError(f"part '{name}' of '{folder}' is not a readable Parquet file "
                               f"({str(exc).splitlines()[0]}); remove it or rewrite the "
                               "folder") from None
        if first is None:
            first = (name, schema)
        elif not schema.equals(first[1]):
            raise BioanonError(f"part '{name}' of '{folder}' has other columns or types than "
                               f"'{first[0]}'; every part of a folder needs the same columns "
                               "and types")
    return parts


def fill_rows(X: np.ndarray, start: int, columns: Sequence[np.ndarray]) -> None:
    """Copy equal-length 1-D ``columns`` into rows ``start:`` of ``X`` (one column each).

    A block of rows at a time: the block's columns are first copied (and cast to float32)
    into a small buffer of contiguous columns, then the buffer is written into ``X``
    transposed in one NumPy copy, which walks ``X`` in its own order while the buffer's
    lines stay in cache. (Writing each column into ``X`` directly strides through the whole
    block once per column, several times slower.) Overflowing values become inf and nulls
    NaN, refused afterwards by the caller.

    Examples
    --------
    >>> X = np.zeros((3, 2), dtype=np.float32)
    >>> fill_rows(X, 1, [np.array([1.0, 2.0]), np.array([3, 4])])
    >>> X.tolist()
    [[0.0, 0.0], [1.0, 3.0], [2.0, 4.0]]
    """
    m = len(columns[0]) if columns else 0
    if m == 0:
        return
    d = len(columns)
    rows = max(1, min(m, _FILL_BYTES // (4 * d)))
    buffer = np.empty((d, rows), dtype=X.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, m, rows):
            b = min(m, a + rows)
            part = buffer[:, :b - a]
            for j, col in enumerate(columns):
                part[j] = col[a:b]
            X[start + a:start + b] = part.T


def _fill_rows(X: np.ndarray, start: int, tab: Any) -> None:
    """Copy a ``pyarrow.Table`` of numeric columns into rows ``start:`` of ``X``."""
    for batch in tab.to_batches():
        fill_rows(X, start, [column_values(c) for c in batch.columns])
        start += batch.num_rows


#: bytes of features per Parquet row group (the writer's buffers stay this small)
_ROW_GROUP_BYTES = 64 << 20


def write_parquet(table: FeatureTable, path: Any) -> None:
    """Write a table as Parquet: label columns (dictionary-encoded, compressed) then one
    float32 column per feature (plain, uncompressed: dense floats neither repeat nor
    compress, and trying costs more than the file saves).

    Row groups of about 64 MB of features are transposed, a block of rows at a time, into two
    reused buffers of columns (a plain transposed copy strides through memory and is several
    times slower on large tables), the next row group while the coder writes this one.
    Statistics are kept for the label columns only. The schema's ``bioanon`` metadata names
    the label columns and the table's meta.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [str(c) for c in table.labels.columns]  # Arrow's own name of a column named by
    # a tuple, ('a', 1), is "('a', '1')": the schema then lacked the name written here
    labels = restore_label_types(
        pa.Table.from_pandas(written_labels(table).reset_index(drop=True).set_axis(
            names, axis=1), preserve_index=False),
        table.meta.get(LABEL_TYPES))
    feats = list(table.feature_names or [])
    meta = {k: v for k, v in table.meta.items() if k != LABEL_TYPES}  # read from the schema
    md = {b"bioanon": json.dumps({"label_columns": names, "meta": meta},
                                 default=str).encode()}
    schema = pa.schema([*(labels.schema.field(c) for c in names),
                        *(pa.field(f, pa.float32()) for f in feats)], metadata=md)
    X = table.X
    n, d = X.shape
    rows = max(1, min(n, _ROW_GROUP_BYTES // (4 * d)))
    groups = -(-n // rows)
    buffers = [np.empty((d, rows), dtype=np.float32) for _ in range(min(2, groups))]
    step = max(1, _BLOCK_ROWS // 4)

    def transpose(k: int) -> int:  # row group k into buffer k % 2; returns its rows
        a, cols = k * rows, buffers[k % 2]
        m = min(n, a + rows) - a
        for s in range(0, m, step):
            e = min(m, s + step)
            cols[:, s:e] = X[a + s:a + e].T
        return m

    with pq.ParquetWriter(path, schema, use_dictionary=names or False,
                          write_statistics=names or False,
                          compression={**{c: "snappy" for c in names},
                                       **{f: "none" for f in feats}}) as writer:

        def write(k: int, m: int) -> None:
            cols = buffers[k % 2]
            arrays = [*(labels.column(c).slice(k * rows, m) for c in names),
                      *(pa.array(cols[j, :m]) for j in range(d))]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))

        _pipelined(transpose, write, groups)


def _pipelined(produce: Any, consume: Any, count: int) -> None:
    """``consume(k, produce(k))`` for ``k < count``, producing ``k + 1`` in a thread while
    ``k`` is consumed: a Parquet coder and a NumPy copy (both release the GIL) overlap.

    Examples
    --------
    >>> seen = []
    >>> _pipelined(lambda k: k * k, lambda k, v: seen.append((k, v)), 3)
    >>> seen
    [(0, 0), (1, 1), (2, 4)]
    """
    if count <= 1:
        for k in range(count):
            consume(k, produce(k))
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="bioanon-io") as pool:
        ahead = pool.submit(produce, 0)
        for k in range(count):
            item = ahead.result()
            if k + 1 < count:
                ahead = pool.submit(produce, k + 1)
            consume(k, item)


def _write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write arrays as a compressed ``.npz`` (readable by ``np.load``) under any names.

    ``np.savez_compressed(file, **arrays)`` cannot take an array named ``file``; writing the
    zip members directly has no such restriction.
    """
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, arr in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(arr), allow_pickle=False)
