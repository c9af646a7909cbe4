"""Splits of the evaluation: closed set per identity, whole groups, and unseen identities.

- :func:`split_table`: per value of the sensitive attribute, a share of its records test
  (every identity on both sides: the closed-set protocol of the evaluation-methodology paper).
- :func:`group_split`: whole groups (identities, sessions) on one side, stratified by a class.
- :func:`person_level_columns`: useful attributes constant within each identity; their utility
  is scored on identities that were not in training (a model that recognises the person would
  otherwise get them right for the wrong reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values.astype(str), sort=True)[0]


def repeats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each record's group of exact repeats, numbered by first appearance; the first record
    of each group): records whose features are equal byte for byte share a group.

    >>> repeats(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]))
    (array([0, 1, 0]), array([0, 1]))
    """
    rows = np.ascontiguousarray(X)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    codes, _uniques = pd.factorize(keys)
    first = np.full(int(codes.max()) + 1 if codes.size else 0, -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size)[::-1]  # the last write of each: its first
    return codes.astype(np.int64), first


def split_table(table: FeatureTable, interest: str, sensitive: str, test_size: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Closed-set split: per value of ``sensitive``, a share ``test_size`` of its records test.

    Every identity appears on both sides (at least one record each). Within an identity the
    records are shuffled, ordered by interest value and taken at even steps, so the interest
    classes are spread over both sides too. Records that repeat another exactly (the same
    features: a recording listed twice) go to the side of the first (:func:`repeats`): a
    member whose copy sat among the non-members could not be told from it, and every
    membership and inference figure would read low.

    Raises
    ------
    BioanonError
        When some identity has fewer than 2 distinct records.
    """
    if not 0.0 < test_size < 1.0:
        raise BioanonError(f"test_size={test_size} must lie strictly between 0 and 1")
    if table.n_records and table.n_features:
        group, first = repeats(table.X)
        if first.size < table.n_records:  # split the distinct records, copies follow
            tr, te = split_table(table.subset(first), interest, sensitive, test_size,
                                 random_state)
            test = np.zeros(first.size, dtype=bool)
            test[te] = True
            idx = np.arange(table.n_records)
            return idx[~test[group]], idx[test[group]]
    ident = _codes(table.labels[sensitive])
    counts = np.bincount(ident)
    if counts.min() < 2:
        rare = table.labels[sensitive].astype(str).to_numpy()[ident == np.argmin(counts)][0]
        raise BioanonError(
            f"'{sensitive}' value '{rare}' has only {counts.min()} distinct record (records "
            "repeating another exactly count once); the closed-set split needs at least 2 "
            "per identity (1 to train, 1 to test); drop such identities"
        )
    rng = np.random.default_rng(random_state)
    interest_codes = _codes(table.labels[interest])
    order = np.lexsort((rng.random(ident.size), interest_codes, ident))  # by identity, interest
    test = np.zeros(ident.size, dtype=bool)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for s, n in zip(starts, counts, strict=True):  # one loop per identity
        n_test = int(min(max(round(test_size * n), 1), n - 1))
        offset = rng.random()
        picks = np.floor((np.arange(n_test) + offset) * n / n_test).astype(int)
        test[order[s + np.minimum(picks, n - 1)]] = True
    idx = np.arange(ident.size)
    return idx[~test], idx[test]


def group_split(table: FeatureTable, group: str, sensitive: str, test_size: float,
                random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """Split by whole groups (identities): a share ``test_size`` of the groups of each value of
    ``sensitive`` go to test, so every sensitive class appears on both sides.

    Raises
    ------
    BioanonError
        When a group has several sensitive values or a sensitive class has fewer than 2 groups.
    """
    if not 0.0 < test_size < 1.0:
        raise BioanonError(f"test_size={test_size} must lie strictly between 0 and 1")
    labels = table.labels
    per_group = labels.groupby(group)[sensitive].nunique()
    if (per_group > 1).any():
        bad = per_group.index[per_group > 1][0]
        raise BioanonError(f"group '{bad}' of '{group}' has several '{sensitive}' values; the "
                           "group column must be an identity whose sensitive value is fixed")
    sens_of = labels.groupby(group)[sensitive].first()
    rng = np.random.default_rng(random_state)
    test_groups: list[Any] = []
    for value, groups in sens_of.groupby(sens_of, sort=True):  # one loop per sensitive class
        names = np.asarray(sorted(groups.index, key=str), dtype=object)
        if names.size < 2:
            raise BioanonError(f"'{sensitive}' value '{value}' has only {names.size} '{group}' "
                               "group; a grouped split needs at least 2 per class")
        n_test = int(min(max(round(test_size * names.size), 1), names.size - 1))
        test_groups.extend(rng.choice(names, size=n_test, replace=False))
    test = labels[group].isin(test_groups).to_numpy()
    idx = np.arange(table.n_records)
    return idx[~test], idx[test]


def judged_split(table: FeatureTable, interest: str, sensitive: str, test_size: float,
                 random_state: int, group: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The evaluation's split (:func:`split_table`, or :func:`group_split` by ``group``),
    refused when an identity keeps fewer than 2 training records: the attack panel's
    calibrated recognizers cross-validate within each identity (scikit-learn's "Requesting
    2-fold cross-validation but provided less than 2 examples", an internal error after
    the anonymization, on a table of 2 records per identity or at ``test_size`` 0.9).

    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=12, n_features=32,
    ...                    random_state=0)
    >>> tr, te = judged_split(t, "expression", "identity", 0.25, 0)
    >>> tr.size, te.size
    (36, 12)
    >>> judged_split(t, "expression", "identity", 0.9, 0)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: at test_size=0.9 'identity' value 'person00' keeps 1 of its \
12 records to train; the attacks need 2 or more per identity: lower it, e.g. test_size=0.25
    """
    if group is None:
        tr, te = split_table(table, interest, sensitive, test_size, random_state)
    else:
        tr, te = group_split(table, group, sensitive, test_size, random_state)
    ids = table.labels[sensitive].astype(str).to_numpy()
    values, total = np.unique(ids, return_counts=True)
    kept = np.bincount(np.searchsorted(values, ids[tr]), minlength=values.size)
    if kept.min() < 2:
        i = int(np.argmin(kept))
        if total[i] < 3:
            raise BioanonError(
                f"'{sensitive}' value '{values[i]}' has {total[i]} records; the attacks need 2 "
                "or more per identity to train beside 1 to test: drop the identities of fewer "
                "than 3 records, or give them more")
        n = int(total.min())  # the default share, else the largest of 5% steps that fits
        fit = next((k / 20 for k in (5, *range(19, 0, -1))
                    if n - min(max(round(k / 20 * n), 1), n - 1) >= 2), 0.05)
        raise BioanonError(
            f"at test_size={test_size} '{sensitive}' value '{values[i]}' keeps {kept[i]} of its "
            f"{total[i]} records to train; the attacks need 2 or more per identity: lower it, "
            f"e.g. test_size={fit:g}", parameter="test_size")
    return tr, te


def person_level_columns(labels: pd.DataFrame, identity: str,
                         columns: Sequence[str]) -> list[str]:
    """The columns of ``columns`` whose value is constant within every identity.

    Examples
    --------
    >>> lab = pd.DataFrame({"id": [1, 1, 2, 2], "sex": ["f", "f", "m", "m"],
    ...                     "digit": [0, 1, 0, 1]})
    >>> person_level_columns(lab, "id", ["sex", "digit"])
    ['sex']
    """
    if not columns:
        return []
    per = labels.groupby(identity, sort=False)[list(columns)].nunique(dropna=False)
    return [c for c in columns if (per[c] == 1).all() and labels[c].nunique() > 1]
