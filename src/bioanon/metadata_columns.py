"""Numeric columns that look like metadata, not features: never released by accident.

A CSV, or a Parquet file written by another tool, does not say which of its columns are labels:
every numeric column it holds is read as a feature and, in a release, leaves as an "anonymized
feature". Some of them are not measurements of a person but facts about a record (a file
index, a recording's length in samples, a sample rate, a take number) — and a recording's length
alone can single a person out. :func:`metadata_like_columns` finds them by name and by values;
:func:`check_feature_columns` refuses a table that would release one, unless it is named as a
label column or explicitly kept as a feature.

A numeric column looks like metadata when

* its **name** reads like an identifier, a counter or a recording property: ``id``, ``*_id``,
  ``idx``, ``index``, ``n_*``, ``num_*``, ``*count*``, ``*rate*``, ``*length*``, ``*duration*``,
  ``*size*``, ``*samples*``, ``file``, ``take``, ``session``, ``subject``, ``speaker``, ``Unnamed:
  0``...;
* its **values** are one non-zero integer on every record (a sample rate, a channel count, a
  version: a property of the recording; a constant 0 is taken for a padded feature, such as a
  delta coefficient at the first time step);
* or its values are integers with few distinct values (a count, a category coded as a number)
  or integers that differ on every record (a counter or an id).

"Integers" are the columns stored with an integer type, and the float columns whose values are
all whole numbers below the float's last fractional step (2**24 for float32, 2**53 for float64):
past it every float is a whole number, so being whole says nothing there (a float32 feature at
±3e38 is a measurement, not a count).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Sequence

import numpy as np

from .errors import BioanonError

#: name tokens of identifiers, counters and recording properties
_TOKENS = frozenset({
    "id", "ids", "idx", "index", "uuid", "key", "file", "filename", "path", "name", "subject",
    "speaker", "user", "person", "patient", "participant", "session", "take", "record", "trial",
    "count", "counts", "rate", "sr", "length", "len", "duration", "size", "samples", "frames",
    "timestamp", "time", "date", "year", "offset", "seq", "serial", "samplerate",
    "framerate", "bitrate", "fps", "hz",
})
#: parts of a name that read like a count or a property even inside a longer word
_SUBSTRINGS = ("count", "length", "duration")
#: first tokens of counts (``n_samples``, ``num_frames``, ``nb_taps``)
_COUNT_PREFIXES = frozenset({"n", "num", "nb", "no", "number"})
#: at most this many distinct integer values make a column look like a count or a code
FEW_VALUES = 20


def _tokens(name: str) -> list[str]:
    """Lower-case words of a column name: split on punctuation, spaces, digits and camelCase.

    Examples
    --------
    >>> _tokens("sampleRate"), _tokens("n_samples"), _tokens("mfcc3_t2")
    (['sample', 'rate'], ['n', 'samples'], ['mfcc', 't'])
    """
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [t.lower() for t in re.split(r"[^A-Za-z]+", spaced) if t]


def _name_reason(name: str) -> str | None:
    words = _tokens(name)
    low = name.lower()
    if low.startswith("unnamed"):
        return "no name in the header: a saved row index, or a header cell left empty"
    if words and words[0] in _COUNT_PREFIXES and len(words) > 1:
        return "named like a count"
    if any(w in _TOKENS for w in words) or any(t in low for t in _SUBSTRINGS):
        return "named like an id, a count or a recording property"
    return None


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def metadata_like_columns(X: np.ndarray, names: Sequence[str],
                          integer_typed: Collection[str] = ()) -> dict[str, str]:
    """The feature columns of ``X`` that look like metadata, each with the reason.

    Parameters
    ----------
    X : array (n, d)
        The feature matrix (finite).
    names : sequence of str
        One name per column of ``X``.
    integer_typed : collection of str
        The columns the source stored with an integer type (integers whatever their size:
        ``X`` is float32, where values past 2**24 are whole numbers anyway).

    Returns
    -------
    dict
        Column name -> why it looks like metadata (in column order).

    Examples
    --------
    >>> X = np.c_[np.full(40, 8000.0), np.arange(40) % 4, np.linspace(0, 1, 40)]
    >>> found = metadata_like_columns(X, ["sample_rate", "take", "mfcc0_t0"])
    >>> list(found), found["sample_rate"].split(";")[0]
    (['sample_rate', 'take'], 'constant 8000')
    """
    n = X.shape[0]
    if X.size == 0:
        return {}
    lo, hi = X.min(axis=0), X.max(axis=0)
    constant = (lo == hi) & (n >= 2)
    integer = integer_columns(X)
    if integer_typed:
        typed = set(integer_typed)
        integer |= np.fromiter((str(c) in typed for c in names), dtype=bool, count=len(names))
    out: dict[str, str] = {}
    for j, name in enumerate(names):
        why = []
        if constant[j]:  # a constant 0 is a padded feature; a constant count is a property
            if integer[j] and lo[j] != 0:
                why.append(f"constant {_format(lo[j])}")
        elif integer[j] and n >= 10:
            distinct = np.unique(X[:, j]).size
            if distinct == n:
                why.append("a different integer on every record")
            elif distinct <= FEW_VALUES and n >= 2 * distinct:
                why.append(f"{distinct} distinct integers")
        reason = _name_reason(str(name))
        if reason:
            why.append(reason)
        if why:
            out[str(name)] = "; ".join(why)
    return out


#: bytes of ``X`` checked at a time by :func:`integer_columns`
_BLOCK_BYTES = 4 << 20


def integer_columns(X: np.ndarray) -> np.ndarray:
    """Which columns of ``X`` hold only whole numbers that the float type could have held
    as fractions: ``np.all((X == np.round(X)) & (np.abs(X) < 2**p), axis=0)`` with ``p`` the
    float's mantissa bits plus one (24 for float32, 53 for float64; past ``2**p`` every
    float is whole).

    A block of rows at a time, each block checking only the columns still whole on the rows
    before it: measured features fail on their first block, so a table of them costs one
    small block instead of a rounded copy of ``X``.

    Examples
    --------
    >>> integer_columns(np.array([[1.0, 0.5, 2.0], [3.0, 1.0, 2.5]])).tolist()
    [True, False, False]
    >>> integer_columns(np.array([[3e38, 8000.0], [-3e38, 8000.0]], dtype=np.float32)).tolist()
    [False, True]
    """
    n, d = X.shape
    whole = np.ones(d, dtype=bool)
    dtype = X.dtype if np.issubdtype(X.dtype, np.floating) else np.dtype(np.float64)
    limit = 2.0 ** (np.finfo(dtype).nmant + 1)  # every float past it is a whole number
    rows = max(1, _BLOCK_BYTES // (X.itemsize * max(d, 1)))
    with np.errstate(invalid="ignore"):
        for a in range(0, n, rows):
            left = np.flatnonzero(whole)
            if left.size == 0:
                break
            block = X[a:a + rows] if left.size == d else X[a:a + rows, left]
            whole[left] = np.all((block == np.round(block)) & (np.abs(block) < limit), axis=0)
    return whole


def kept_as_feature(name: str, keep_as_feature: Sequence[str]) -> bool:
    """True when ``name`` is listed (or matched by a shell pattern such as ``px_*``)."""
    return any(name == k or fnmatch.fnmatchcase(name, k) for k in keep_as_feature)


def refuse_unknown_kept(names: Sequence[str], keep_as_feature: Sequence[str],
                        source: str, labels: Collection[str] = ()) -> None:
    """Refuse a ``keep_as_feature`` entry that names no feature column of ``source`` (a label
    column, or no column at all): it would be left without effect, silently. An entry
    naming one of ``labels`` (the table's label columns) is said to be a label column.

    Examples
    --------
    >>> refuse_unknown_kept(["f0", "px_1"], ["px_*"], "t.csv")
    >>> try:
    ...     refuse_unknown_kept(["f0"], ["age"], "'t.parquet'")
    ... except BioanonError as exc:
    ...     print(str(exc).split(";")[0])
    keep_as_feature=age names no feature column of 't.parquet'
    """
    unknown = [k for k in keep_as_feature if not any(kept_as_feature(str(n), [k])
                                                     for n in names)]
    if unknown:
        fix = ("it is a label column there, not a feature; leave it out"
               if unknown[0] in set(map(str, labels))
               else "name feature columns (or patterns such as 'px_*')")
        raise BioanonError(f"keep_as_feature={unknown[0]} names no feature column of "
                           f"{source}; {fix}", parameter="keep_as_feature")


def check_feature_columns(X: np.ndarray, names: Sequence[str],
                          keep_as_feature: Sequence[str] = (), source: str = "the table",
                          integer_typed: Collection[str] = ()) -> dict[str, str]:
    """Refuse metadata-like feature columns that are not explicitly kept as features.

    Parameters
    ----------
    X, names
        The feature matrix and its column names.
    keep_as_feature : sequence of str
        Column names (or shell patterns) the user keeps as features knowingly.
    source : str
        How the error names the table.
    integer_typed : collection of str
        The columns the source stored with an integer type (see
        :func:`metadata_like_columns`).

    Returns
    -------
    dict
        The metadata-like columns, all kept as features knowingly, each with why it looks
        like metadata (for the caller to say in one line, and to record).

    Raises
    ------
    BioanonError
        One line naming each column, why it looks like metadata and the two ways forward.
    """
    keep = list(keep_as_feature)
    refuse_unknown_kept(names, keep, source)
    found = metadata_like_columns(X, names, integer_typed)
    refused = {c: why for c, why in found.items() if not kept_as_feature(c, keep)}
    if refused:
        raise BioanonError(f"{source} does not say which columns are labels, and "
                           f"{describe_refused(refused)}", parameter="keep_as_feature")
    return found


def refused_columns(X: np.ndarray, names: Sequence[str], keep_as_feature: Sequence[str] = (),
                    integer_typed: Collection[str] = ()) -> dict[str, str]:
    """The metadata-like columns of ``X`` not kept as features, each with its reason."""
    return {c: why for c, why in metadata_like_columns(X, names, integer_typed).items()
            if not kept_as_feature(c, list(keep_as_feature))}


def describe_refused(refused: dict[str, str]) -> str:
    """The clause of an error naming metadata-like columns, why, and the two ways forward."""
    shown = "; ".join(f"'{c}' ({why})" for c, why in list(refused.items())[:5])
    more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
    return (f"{len(refused)} numeric column(s) look like metadata, not features: {shown}{more}; "
            "each would be released as an anonymized feature: name it as a label column (its "
            "role: identifying drops it, keep releases it as it is) or keep it as a feature "
            "knowingly (keep_as_feature=COL)")


__all__ = ["FEW_VALUES", "check_feature_columns", "describe_refused", "integer_columns",
           "kept_as_feature", "metadata_like_columns", "refused_columns"]
