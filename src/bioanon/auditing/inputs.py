"""The audit's three tables, read and checked before any work.

INPUT holds the records given to the release process (the members), HOLDOUT records of the same
population that were not (the non-members, and the clear test set of utility), RELEASED the
file judged. Every table is read the same way (:meth:`bioanon.table.FeatureTable.read`, any
format bioanon reads); a label column the file stores as numbers is taken as a label when it
is named (the interest, the sensitive column, the kept labels), and label values are compared
as text (an integral number ``3.0`` reads as ``3``), so a release written by another tool matches
INPUT's labels. Features are matched by name.

Bad input is refused in one line (:class:`~bioanon.errors.BioanonError`): HOLDOUT rows that
are in INPUT (exact duplicates), no common feature, a label the release lacks, a HOLDOUT of
another population (other features, label values INPUT never has). A RELEASED row
byte-identical to an INPUT row is not an error: it is counted and reported
(:attr:`AuditTables.copied_rows`).

HOLDOUT is then split in two (:func:`split_holdout`): the attacker's **reference** records
(the clear population it holds to calibrate its attacks) and the **non-member candidates**.
By identity (whole people on one side) when most HOLDOUT records are of people absent from
INPUT (an open set), else by record within each value of the sensitive column (a closed set:
other records of the same people). The split reads only the labels, never feature values.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError, misnamed_column
from ..io import not_found
from ..table import FeatureTable, refuse_revealing_roles

#: where a table comes from: a FeatureTable or a path bioanon reads
Source = FeatureTable | pd.DataFrame | str | os.PathLike[str]


def _text(values: pd.Series) -> pd.Series:
    """Label values as text; integral numbers without their ``.0`` (``3.0`` → ``"3"``), and
    True and False as ``"1"`` and ``"0"`` (a CSV copy of a boolean label reads as numbers).

    >>> _text(pd.Series([True, False])).tolist(), _text(pd.Series([1.0, 0.0])).tolist()
    (['1', '0'], ['1', '0'])
    """
    if pd.api.types.is_bool_dtype(values):
        return pd.Series(np.where(values.to_numpy(bool), "1", "0"), index=values.index)
    if pd.api.types.is_numeric_dtype(values):
        v = values.to_numpy(np.float64)
        if np.all(np.isfinite(v)) and np.all(v == np.round(v)):
            return pd.Series(v.astype(np.int64).astype(str), index=values.index)
    return values.astype(str)


def _refuse_empty(what: str, column: str, values: pd.Series) -> None:
    """Refuse a judged label column with an empty value (none, NaN, blank text): as text it
    was the class ``'nan'``, and the audit ran on it (an interest empty in INPUT read as a
    utility of 0.000, a sensitive value empty as one more person)."""
    empty = values.isna()
    if values.dtype == object or isinstance(values.dtype, pd.StringDtype):
        empty |= values.astype(str).str.strip().eq("")
    if empty.any():
        raise BioanonError(f"{what}'s '{column}' has {int(empty.sum())} empty value(s) (first "
                           f"at record {int(np.argmax(empty.to_numpy()))}); every record "
                           "needs its label: fill or drop those records")


#: records of one Parquet table (file or folder of parts) the audit reads at most; a larger
#: one is judged on a seeded stratified sample of this size, said in the report
MAX_RECORDS = 50_000


@dataclass(frozen=True)
class Sampled:
    """What was sampled of one table: its name in the report, the sizes, the rule."""

    what: str
    n_records: int
    total_records: int
    n_identities: int
    total_identities: int

    def words(self) -> str:
        people = (f" of {self.n_identities} of its {self.total_identities} identities"
                  if self.total_identities else "")
        return (f"{self.what} judged on a seeded stratified sample of {self.n_records} of "
                f"its {self.total_records} records{people} (identities first, then records "
                "by the interest within each; the sample is drawn from the label columns "
                "before any feature is read)")


def _parquet_rows(path: str) -> int | None:
    """Records of a Parquet file or folder (from its metadata), None for another format."""
    from pathlib import Path

    from ..table import PARQUET_SUFFIXES

    p = Path(path)
    if not (p.is_dir() or p.suffix.lower() in PARQUET_SUFFIXES):
        return None
    import pyarrow.dataset as ds

    try:
        return int(ds.dataset(path, format="parquet").count_rows())
    except Exception:  # noqa: BLE001 - unreadable: FeatureTable.read says why, in one line
        return None


def _labels_digest(labels: pd.DataFrame) -> int:
    """A seed from a table's label columns alone (a keyed digest: the same sample every
    run, before any feature is read)."""
    import hashlib

    h = hashlib.blake2b(b"bioanon/audit/sample", digest_size=8)
    h.update(repr([str(c) for c in labels.columns]).encode())
    h.update(pd.util.hash_pandas_object(labels.astype(str), index=False)
             .to_numpy(np.uint64).tobytes())
    return int.from_bytes(h.digest(), "big") % (2**31)


def sample_parquet(path: str, wanted: Sequence[str], strata: Sequence[str], cap: int,
                   seed: int | None, what: str) -> tuple[FeatureTable, Sampled]:
    """A seeded stratified sample of ``cap`` records of a Parquet file or folder, read in one
    streaming pass (the release path's :func:`~bioanon.scale.parquet_io.read_rows`).

    ``strata``: (interest, sensitive); the sample takes identities first (those present),
    then records by the interest within each (:func:`~bioanon.sampling.panel_sample`).
    ``seed`` None: a keyed digest of the table's label columns (the same sample every run).
    """
    from pathlib import Path

    from ..evaluation.seeds import derive_seed
    from ..sampling import panel_sample
    from ..scale.parquet_io import read_labels, read_rows
    from ..scale.run import parquet_schema

    names, numeric, known = parquet_schema(Path(path))
    named = set(wanted) | set(known)
    labels_cols = [c for c in names if c in named or c not in set(numeric)]
    features = [c for c in names if c not in set(labels_cols)]
    interest, sensitive = strata
    keys = [c for c in (interest, sensitive) if c in labels_cols]
    lab = read_labels(Path(path), keys)
    root = _labels_digest(lab) if seed is None else int(seed)
    ps = panel_sample(lab, sensitive=sensitive if sensitive in keys else None,
                      stratify=interest if interest in keys else None, max_records=int(cap),
                      max_identities=None,
                      random_state=derive_seed(root, f"audit/sample/{what}") % (2**31))
    table = read_rows(Path(path), np.sort(ps.index), labels_cols, features)
    table.meta["source"] = os.path.basename(path.rstrip("/" + os.sep))
    return table, Sampled(what, ps.n_records, ps.total_records, ps.n_identities,
                          ps.total_identities)


def column_names(source: Source) -> tuple[list[str], list[str]] | None:
    """The columns of a CSV file, a Parquet file or folder, or a DataFrame, and those it
    records as labels (a bioanon Parquet file's), read from its header or schema alone;
    None for another source (a FeatureTable, an NPZ file) or one that cannot be read (its
    full read then says why, in one line).

    >>> column_names(pd.DataFrame({"f0": [1.0], "take": [2]}))
    (['f0', 'take'], [])
    """
    if isinstance(source, pd.DataFrame):
        return [str(c) for c in source.columns], []
    if not isinstance(source, str | os.PathLike):
        return None
    from pathlib import Path

    from ..table import PARQUET_SUFFIXES

    p = Path(source)
    try:
        if p.is_dir() or p.suffix.lower() in PARQUET_SUFFIXES:
            from ..scale.run import parquet_schema

            names, _, known = parquet_schema(p)
            return names, known
        if p.suffix.lower() == ".csv" and p.is_file():
            return [str(c) for c in pd.read_csv(p, nrows=0).columns], []
    except Exception:  # noqa: BLE001 - unreadable: FeatureTable.read says why, in one line
        return None
    return None


def _load(source: Source, wanted: Sequence[str], what: str, max_records: int | None,
          strata: Sequence[str], seed: int | None, as_labels: Sequence[str] | None
          ) -> tuple[FeatureTable, Sampled | None]:
    """``source`` read as a table (``as_labels``: the columns read as labels, None: those
    the file records or, without a record, its text columns), and what was sampled of it."""
    if isinstance(source, FeatureTable):
        return source, None
    if isinstance(source, pd.DataFrame):  # as a CSV file is read: text columns are labels
        frame = source
        if as_labels is not None:  # the names as read_table compares them
            frame = source.set_axis([str(c) for c in source.columns], axis=1)
        return FeatureTable.from_frame(frame, as_labels, {"source": "a DataFrame"}), None
    if not isinstance(source, str | os.PathLike):
        raise BioanonError(f"{what} must be a bioanon FeatureTable, a pandas DataFrame or a "
                           f"path, not {type(source).__name__}", parameter="table")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise BioanonError(not_found(path, what))
    try:
        n = _parquet_rows(path) if max_records is not None else None
        if n is not None and max_records is not None and n > max_records:
            return sample_parquet(path, [*wanted, *(as_labels or [])], strata, max_records,
                                  seed, what)
        return FeatureTable.read(path, as_labels), None
    except BioanonError as exc:  # which of the tables, when the message does not say
        if path in str(exc):
            raise
        raise BioanonError(f"{what} '{path}': {exc}", parameter=exc.parameter) from None


def read_table(source: Source, wanted: Sequence[str], what: str,
               max_records: int | None = None, strata: Sequence[str] = ("", ""),
               seed: int | None = None, features: Sequence[str] | None = None
               ) -> FeatureTable:
    """``source`` as a table whose ``wanted`` columns (those present) are labels, as text.

    A file is read with the label columns it records (a bioanon Parquet file, an NPZ's
    arrays, a CSV's text columns); a numeric column named in ``wanted`` is moved from the
    features to the labels. A Parquet file or folder of more than ``max_records`` records
    is read as a seeded stratified sample (:func:`sample_parquet`; the table's
    ``meta["sampled"]`` says so).

    ``features`` (RELEASED: INPUT's feature names): every other column of the file is read
    as a label, so that a numeric column INPUT does not hold — a quality score, a row id,
    with or without empty values — is read as a link between released records, as the
    audit judges it, and never refused as a feature with missing values. Such numeric
    columns are kept as text (their float32 values, as a feature column would give them)
    and named in ``meta["numeric_links"]``.
    """
    found = column_names(source) if features is not None else None
    as_labels = (None if found is None or features is None
                 else [c for c in found[0] if c not in set(features)])
    recorded = set(found[1]) if found is not None else set()
    table: FeatureTable | None = None
    if as_labels:  # a file this read cannot take (text in a feature INPUT holds, no shared
        try:  # feature) is read as any table is, and refused there or by check_tables
            table, sampled = _load(source, wanted, what, max_records, strata, seed,
                                   as_labels)
        except BioanonError:
            as_labels = None
    if table is None:
        table, sampled = _load(source, wanted, what, max_records, strata, seed, None)
    names = list(table.feature_names or [])
    move = [c for c in dict.fromkeys(wanted) if c in names and c not in table.labels.columns]
    X, labels = table.X, table.labels.copy()
    if move:
        idx = [names.index(c) for c in move]
        for c, j in zip(move, idx, strict=True):
            _refuse_fractions(what, c, X[:, j])
            labels[c] = pd.Series(X[:, j]).to_numpy()
        keep = [j for j in range(len(names)) if j not in set(idx)]
        X = np.ascontiguousarray(X[:, keep])
        names = [names[j] for j in keep]
    numeric_links = []
    for c in as_labels or []:  # the file's own label columns stay as they are
        if c not in labels.columns or c in recorded or not _numbers(labels[c]):
            continue
        if c in wanted:  # a role's numbers, as if read as a feature and moved
            _refuse_fractions(what, c, labels[c].to_numpy(np.float32, na_value=np.nan))
        else:
            labels[c] = pd.Series(labels[c].to_numpy(np.float32, na_value=np.nan),
                                  index=labels.index).astype(str)
            numeric_links.append(c)
    for c in wanted:
        if c in labels.columns:
            _refuse_empty(what, c, labels[c])
            labels[c] = _text(labels[c])
    if X.shape[1] == 0:
        raise BioanonError(f"{what} has no feature column; pass a table of numeric features "
                           "with its label columns")
    meta = dict(table.meta)
    if numeric_links:
        meta["numeric_links"] = numeric_links
    if sampled is not None:  # plain values: sizes and the sentence
        meta["sampled"] = {**dataclasses.asdict(sampled), "words": sampled.words()}
    return FeatureTable._of_checked(np.asarray(X, np.float32), labels.reset_index(drop=True),
                                    names, meta)


def _numbers(values: pd.Series) -> bool:
    """Whether a column read as a label holds numbers, True and False among them (as a
    feature column would read them: 1 and 0), not text."""
    return bool(pd.api.types.is_numeric_dtype(values))


def _refuse_fractions(what: str, column: str, v: np.ndarray) -> None:
    """Refuse a role's column of numbers that are not whole: a feature, not a label."""
    odd = v[np.isfinite(v) & (v != np.round(v))]
    if odd.size:
        raise BioanonError(f"{what}'s column '{column}' holds numbers that are not whole "
                           f"(e.g. {odd[0]:g}): it is a feature, not a label; name "
                           "a label column (classes or ids) for the interest, the "
                           "sensitive column and the kept labels")


def row_hashes(X: np.ndarray) -> np.ndarray:
    """One 64-bit hash per row of its bytes (whole-array, no loop per record)."""
    frame = pd.DataFrame(np.ascontiguousarray(X, np.float32).view(np.uint32))
    return pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)


def _same_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Whether each row of ``A`` is byte-identical to some row of ``B`` (hashes, then the
    candidates compared exactly)."""
    ha, hb = row_hashes(A), row_hashes(B)
    hit = np.flatnonzero(np.isin(ha, hb))
    out = np.zeros(len(A), bool)
    if hit.size:
        order = np.argsort(hb, kind="stable")
        pos = order[np.searchsorted(hb[order], ha[hit])]
        out[hit] = np.all(A[hit] == B[pos], axis=1)
    return out


@dataclass
class AuditTables:
    """The three tables, checked, on the features they share (INPUT's order).

    ``members`` is INPUT, ``holdout`` HOLDOUT and ``released`` RELEASED, each restricted to
    :attr:`features`; ``kept`` the label columns the release carries and the audit judges
    (the interest first); ``copied_rows`` how many RELEASED rows are byte-identical to an
    INPUT row (on the shared features); ``notes`` what was matched or left out, in words.
    """

    members: FeatureTable
    holdout: FeatureTable
    released: FeatureTable
    interest: str
    sensitive: str
    kept: list[str]
    features: list[str]
    copied_rows: int
    released_has_sensitive: bool
    notes: list[str] = field(default_factory=list)
    #: RELEASED's columns that no role names (label columns, and feature columns INPUT does
    #: not hold, as text), carried in ``released.labels``: each may link a person's released
    #: records (a pseudonym, a subject or session code), and the pooled attacker reads them
    #: (:mod:`bioanon.attack.pooled`)
    linking: list[str] = field(default_factory=list)


def _restrict(table: FeatureTable, names: list[str], labels: list[str]) -> FeatureTable:
    pos = {n: j for j, n in enumerate(table.feature_names or [])}
    idx = [pos[n] for n in names]
    X = table.X if idx == list(range(table.n_features)) else np.ascontiguousarray(
        table.X[:, idx])
    cols = [c for c in dict.fromkeys(labels) if c in table.labels.columns]
    return FeatureTable._of_checked(X, table.labels[cols].reset_index(drop=True), list(names),
                                    dict(table.meta))


def _check_types(members: FeatureTable, released: FeatureTable,
                 holdout: FeatureTable) -> None:
    """Refuse a column that is a numeric feature in one table and text in another (a text
    value among numbers makes the whole column a label: it would be silently left out)."""
    f_in, f_rel = set(members.feature_names or []), set(released.feature_names or [])
    for what, t, feats, other in (("RELEASED", released, f_in, "INPUT"),
                                  ("HOLDOUT", holdout, f_in, "INPUT"),
                                  ("INPUT", members, f_rel, "RELEASED")):
        text = [c for c in t.labels.columns if c in feats]
        if text:
            c = text[0]
            col = t.labels[c].astype(str)
            odd = col[pd.to_numeric(col, errors="coerce").isna()]
            eg = f" (e.g. '{odd.iloc[0]}')" if len(odd) else ""
            raise BioanonError(f"{what}'s column '{c}' holds text{eg} where {other}'s '{c}' "
                               "is a numeric feature; write numbers in every feature column "
                               "(or drop the column from both tables)")


def _unjudged_labels(released: FeatureTable, members: FeatureTable,
                    judged: Sequence[str]) -> list[str]:
    """The note naming RELEASED's label columns that no role names (none: no note). The
    audit judges the interest, the sensitive column and the kept labels as labels; a column
    such as a file name or a record id may name people, and is released all the same. Such a
    column is read only as a link between released records (the pooled attacker)."""
    left = [str(c) for c in released.labels.columns if c not in judged]
    if not left:
        return []
    named = [c for c in left if c in members.labels.columns]
    fix = (f"name {named[:3]} as kept labels to judge them, or drop them from the release"
           if named else "drop them from the release")
    return [f"RELEASED carries {len(left)} label column(s) no role names ({left[:5]}): "
            f"the pooled attacker reads each as a link between a person's released records "
            f"(pseudonyms, a subject or session code), no attacker reads their values as "
            f"labels, and a column of file names or ids may name the people; {fix}"]


def _unjudged_features(extra: Sequence[str], members: FeatureTable) -> list[str]:
    """The note naming RELEASED's feature columns that INPUT lacks (none: no note). They are
    compared with no clear record, so the attackers read them only as links between released
    records (the pooled attacker: a record or person id, a session code); a numeric column
    named as one of INPUT's label columns is most likely that label, released as numbers.

    >>> m = FeatureTable(np.zeros((2, 1)), pd.DataFrame({"take": ["1", "2"]}), ["f0"])
    >>> print(_unjudged_features(["take"], m)[0])  # doctest: +NORMALIZE_WHITESPACE
    RELEASED carries 1 feature column(s) INPUT does not hold (['take']): the pooled attacker
    reads each as a link between a person's released records, no attacker compares their
    values with a clear record, and a column of ids or counts may name the people; ['take']
    is named as INPUT's label column(s): most likely those labels, released as numbers; drop
    them from the release, or name them as INPUT's features
    """
    if not extra:
        return []
    labels = [c for c in extra if c in members.labels.columns]
    named = (f"; {labels[:3]} is named as INPUT's label column(s): most likely those labels, "
             "released as numbers") if labels else ""
    return [f"RELEASED carries {len(extra)} feature column(s) INPUT does not hold "
            f"({list(extra[:5])}): the pooled attacker reads each as a link between a "
            f"person's released records, no attacker compares their values with a clear "
            f"record, and a column of ids or counts may name the people{named}; drop them "
            "from the release, or name them as INPUT's features"]


def _with_links(released: FeatureTable, common: list[str], wanted: list[str],
                extra: list[str]) -> tuple[FeatureTable, list[str]]:
    """RELEASED on the shared features, its label frame holding the roles' columns, then
    every label column no role names and every feature column INPUT lacks (as text): the
    columns that may link a person's released records (returned in that order)."""
    r = _restrict(released, common, [*wanted, *map(str, released.labels.columns)])
    links = [str(c) for c in r.labels.columns if c not in wanted and c not in extra]
    links += [c for c in extra if c in r.labels.columns]  # read as links (numeric_links)
    if extra:
        pos = {n: j for j, n in enumerate(released.feature_names or [])}
        values = {c: pd.Series(released.X[:, pos[c]]).astype(str).to_numpy()
                  for c in extra if c not in r.labels.columns}
        if values:
            r = FeatureTable._of_checked(r.X, pd.concat(
                [r.labels, pd.DataFrame(values)], axis=1), list(r.feature_names or []),
                dict(r.meta))
            links += list(values)
    return r, links


def check_tables(members: FeatureTable, released: FeatureTable, holdout: FeatureTable,
                 interest: str, sensitive: str, labels: Sequence[str] = ()) -> AuditTables:
    """Refuse (one line) tables the audit cannot judge; return them on shared features.

    Raises
    ------
    BioanonError
        A missing column, HOLDOUT rows that are in INPUT, no common feature, a label the
        release lacks, a HOLDOUT of another population.
    """
    if interest == sensitive:
        raise BioanonError(f"'{sensitive}' cannot be both the interest and the sensitive "
                           "column; pick one role")
    kept = list(dict.fromkeys([interest, *labels]))
    if sensitive in kept:
        raise BioanonError(f"the sensitive column '{sensitive}' cannot be a kept label; "
                           "drop it from the kept labels")
    for what, t in (("INPUT", members), ("HOLDOUT", holdout)):
        for c in [interest, sensitive, *kept]:
            if c not in t.labels.columns:  # a name padded or written with other characters
                raise (misnamed_column(c, t.labels.columns, f"{what}'s label column")  # named
                       or BioanonError(f"{what} has no column '{c}'; name a label column it "
                                       f"holds (it has {sorted(map(str, t.labels.columns))})"))
    refuse_revealing_roles(members.labels, [interest], sensitive)
    for c in kept:
        if c not in released.labels.columns:
            if c == interest:  # the utility's column: it cannot be dropped from the audit
                has = sorted(map(str, released.labels.columns))
                raise BioanonError(
                    f"RELEASED lacks the interest column '{c}' (the utility is measured on "
                    "it); pass the release with that column, or name as the interest a "
                    f"label the release carries (it has {has})")
            raise BioanonError(f"RELEASED lacks the label '{c}'; judge only the labels the "
                               "release carries (drop it from the kept labels), or pass the "
                               "release with that column")
    f_in, f_ho = list(members.feature_names or []), list(holdout.feature_names or [])
    _check_types(members, released, holdout)
    if set(f_in) != set(f_ho):
        only = sorted(set(f_in) ^ set(f_ho))[:3]
        raise BioanonError(f"HOLDOUT is not of INPUT's population: its features differ "
                           f"(e.g. {only}); pass held-out records of the same table")
    for c in kept:
        extra = sorted(set(holdout.labels[c]) - set(members.labels[c]))
        if extra:
            raise BioanonError(f"HOLDOUT is not of INPUT's population: its '{c}' has values "
                               f"INPUT never has ({extra[:3]}); pass held-out records of "
                               "the same table")
    values = members.labels[interest].nunique()
    if values < 2:
        raise BioanonError(f"INPUT's interest '{interest}' has {values} value; utility needs "
                           "two or more classes: name another label column, interest=COLUMN",
                           parameter="interest")
    rel_names = set(released.feature_names or [])
    common = [f for f in f_in if f in rel_names]
    if not common:
        raise BioanonError("RELEASED shares no feature column with INPUT; features are "
                           "matched by name: release the same feature columns")
    wanted = [interest, sensitive, *kept]
    m = _restrict(members, common, wanted)
    h = _restrict(holdout, common, wanted)
    numeric_links = list(released.meta.get("numeric_links") or [])
    extra_features = sorted((rel_names - set(f_in)) | set(numeric_links))
    r, linking = _with_links(released, common, wanted, extra_features)
    for c in kept:
        extra = sorted(set(r.labels[c]) - set(m.labels[c]))
        if extra:
            raise BioanonError(f"RELEASED's '{c}' has values INPUT never has ({extra[:3]}); "
                               "pass the release of this INPUT")
    dup = int(_same_rows(h.X, m.X).sum())
    if dup:
        raise BioanonError(f"{dup} HOLDOUT rows are also in INPUT (identical features); "
                           "HOLDOUT must hold records that were not given to the release")
    seen = int(_same_rows(r.X, h.X).sum())
    if seen:
        raise BioanonError(f"{seen} RELEASED rows are HOLDOUT's records (identical features): "
                           "HOLDOUT must hold records the release process never saw; pass "
                           "records kept apart from it")
    notes = []
    if len(common) < len(f_in):
        notes.append(f"RELEASED carries {len(common)} of INPUT's {len(f_in)} features; "
                     "the audit judges those")
    notes.extend(_unjudged_features(extra_features, members))
    notes.extend(_unjudged_labels(released, members, [*wanted, *numeric_links]))
    copied = int(_same_rows(r.X, m.X).sum())
    return AuditTables(m, h, r, interest, sensitive, kept, common, copied,
                       sensitive in released.labels.columns, notes, linking)


@dataclass(frozen=True)
class HoldoutSplit:
    """HOLDOUT's rows held by the attacker as reference and those scored as non-members."""

    reference: np.ndarray
    candidates: np.ndarray
    by: str  # "identity" or "record"

    def words(self, sensitive: str) -> str:
        unit = (f"whole '{sensitive}' values (people) on one side" if self.by == "identity"
                else f"half the records of each '{sensitive}' value on each side")
        return (f"HOLDOUT split in two, {unit}: {self.reference.size} records are the "
                f"attacker's reference population (clear records it holds), "
                f"{self.candidates.size} are the non-member candidates")


def split_holdout(members_ids: np.ndarray, holdout_ids: np.ndarray,
                  rng: np.random.Generator) -> HoldoutSplit:
    """Split HOLDOUT's rows in two from the identities alone (see the module's text).

    Examples
    --------
    >>> ids = np.repeat(list("abcd"), 4)
    >>> s = split_holdout(np.array(["x"]), ids, np.random.default_rng(0))
    >>> s.by, s.reference.size, s.candidates.size
    ('identity', 8, 8)
    >>> split_holdout(ids, ids, np.random.default_rng(0)).by
    'record'
    """
    ids = np.asarray(holdout_ids).astype(str)
    new = ~np.isin(ids, np.asarray(members_ids).astype(str))
    people, codes = np.unique(ids, return_inverse=True)
    if new.mean() >= 0.5 and people.size >= 4:
        ref_people = rng.permutation(people.size) < people.size // 2
        ref = ref_people[codes]
        return HoldoutSplit(np.flatnonzero(ref), np.flatnonzero(~ref), "identity")
    order = rng.permutation(ids.size)
    order = order[np.argsort(codes[order], kind="stable")]
    sc = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sc)) + 1]
    counts = np.diff(np.r_[starts, sc.size])
    rank = np.arange(sc.size) - np.repeat(starts, counts)
    ref = np.zeros(ids.size, bool)
    ref[order] = rank < np.repeat(counts // 2, counts)
    return HoldoutSplit(np.flatnonzero(ref), np.flatnonzero(~ref), "record")


def table_of(source: Any) -> str:
    """A table's name for the report: a file name (never a folder path), or "a table"."""
    if isinstance(source, FeatureTable | pd.DataFrame):
        return "a table"
    return os.path.basename(os.fspath(source).rstrip("/" + os.sep)) or "a table"




def _per_person(ids: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted rows keeping at most ``k`` records of each person (drawn at random)."""
    _, codes = np.unique(ids, return_inverse=True)
    order = rng.permutation(ids.size)
    order = order[np.argsort(codes[order], kind="stable")]
    sc = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sc)) + 1]
    counts = np.diff(np.r_[starts, sc.size])
    rank = np.arange(sc.size) - np.repeat(starts, counts)
    return np.sort(order[rank < k])


def candidate_rows(tables: AuditTables, split: HoldoutSplit, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Rows of INPUT (members) and of HOLDOUT (non-members) the attackers score, before the
    ``max_candidates`` cap, from the labels alone.

    Split by record (a closed set), every INPUT record against HOLDOUT's candidate half:
    each person's records sit on both sides alike. Split by identity (an open set), INPUT's
    records against the candidate half's records of people absent from INPUT, with as many
    records per person on both sides (the median of either side, the smaller): a person's
    other records among the candidates change what a nearest-neighbour attacker reads
    (the calibrated score compares a candidate with its nearest other candidate), so the two
    sides must hold people alike.
    """
    s = tables.sensitive
    m_ids = tables.members.labels[s].to_numpy(str)
    n_ids = tables.holdout.labels[s].to_numpy(str)[split.candidates]
    if split.by != "identity":
        return np.arange(m_ids.size), split.candidates
    new = ~np.isin(n_ids, m_ids)
    if new.sum() < 2:
        return np.arange(m_ids.size), split.candidates
    n_ids = n_ids[new]
    k = int(min(np.median(np.unique(m_ids, return_counts=True)[1]),
                np.median(np.unique(n_ids, return_counts=True)[1])))
    mem = _per_person(m_ids, max(k, 1), rng)
    non = split.candidates[new][_per_person(n_ids, max(k, 1), rng)]
    return mem, non


__all__ = ["MAX_RECORDS", "AuditTables", "HoldoutSplit", "Sampled", "candidate_rows",
           "check_tables", "read_table", "row_hashes", "sample_parquet", "split_holdout",
           "table_of"]
