"""The strata every class-conditional method models or mixes by: the interest class, or its
cross with the additional columns, as integer codes; per-code sums by row blocks.

A leaf of :mod:`bioanon.anonymize` that the method modules share (no method module imports
another).

Examples
--------
>>> c, s = strata({"p": [0, 1], "q": ["a", "a"]}, "p", ["q"], 2)
>>> c.tolist(), s.tolist()
([0, 1], [0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import BioanonError
from .base import label_values


def strata(labels: Any, interest: str, additional: Sequence[str], n: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Interest class codes and stratum codes (interest × additional values) of ``n`` records.

    Examples
    --------
    >>> c, s = strata({"p": [0, 0, 1, 1], "q": ["a", "b", "a", "a"]}, "p", ["q"], 4)
    >>> c.tolist(), s.tolist()
    ([0, 0, 1, 1], [0, 1, 2, 2])
    """
    y = label_values(labels, interest, n)
    _, codes = np.unique(y, return_inverse=True)
    if not additional:
        return codes, codes.copy()
    cols = [pd.Series(y).astype(str).to_numpy()] + [
        pd.Series(label_values(labels, c, n)).astype(str).to_numpy() for c in additional]
    joint = pd.MultiIndex.from_arrays(cols)
    return codes, pd.factorize(joint, sort=True)[0].astype(np.int64)


def stratum_names(labels: Any, interest: str, additional: Sequence[str], n: int
                  ) -> np.ndarray:
    """The name of each stratum code of :func:`strata`, for an error to name a stratum as the
    table has it: the interest value, or the values joined by ' / '.

    >>> stratum_names({"p": [0, 0, 1, 1], "q": ["a", "b", "a", "a"]}, "p", ["q"], 4).tolist()
    ['0 / a', '0 / b', '1 / a']
    """
    y = label_values(labels, interest, n)
    if not additional:
        return np.unique(y).astype(str)
    cols = [pd.Series(y).astype(str).to_numpy()] + [
        pd.Series(label_values(labels, c, n)).astype(str).to_numpy() for c in additional]
    uniques = pd.factorize(pd.MultiIndex.from_arrays(cols), sort=True)[1]
    return np.array([" / ".join(map(str, u)) for u in uniques])


def check_strata(labels: Any, interest: str, additional: Sequence[str], n: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`strata`, refusing an interest column of one class: every method that models or
    mixes by interest class says it the same way (its utility could not be measured).

    Examples
    --------
    >>> check_strata({"p": [0, 0, 0]}, "p", [], 3)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: interest column 'p' has one class; it needs at least two
    """
    classes, strat = strata(labels, interest, additional, n)
    if classes.size and classes.max() < 1:
        raise BioanonError(f"interest column '{interest}' has one class; it needs at least two")
    return classes, strat


def sums_by(X: np.ndarray, codes: np.ndarray, n_codes: int, block: int = 1 << 16
            ) -> tuple[np.ndarray, np.ndarray]:
    """Per-code row sums ``(n_codes, d)`` and sums of squared norms, in float64.

    Row blocks (never single records) are widened to float64 one at a time, so memory stays
    at one block beyond the input.
    """
    n, d = X.shape
    sums = np.zeros((n_codes, d))
    sq = np.zeros(n_codes)
    for start in range(0, n, block):
        part = np.asarray(X[start:start + block], dtype=np.float64)
        c = codes[start:start + block]
        S = sp.csr_matrix((np.ones(c.size), (c, np.arange(c.size))), shape=(n_codes, c.size))
        sums += S @ part
        sq += np.bincount(c, weights=np.einsum("ij,ij->i", part, part), minlength=n_codes)
    return sums, sq


__all__ = ["check_strata", "strata", "sums_by"]
