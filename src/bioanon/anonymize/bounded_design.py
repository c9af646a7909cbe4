"""Donor designs with bounded donor use: every record donates to exactly ``g`` released records.

With donors drawn independently per record (:func:`bioanon.anonymize.vp_mix.donor_sets`), a
record's number of uses is random (about Poisson(g)): a few records donate to many released
records, and no bound on any one record's influence holds. The *circulant* design fixes it:
within each stratum the records are put in a secret random order, ``g`` distinct secret
offsets ``o_1 … o_g`` in ``[1, n_s − 1]`` are drawn, and the record at position ``p`` takes
the donors at positions ``p + o_k (mod n_s)``. Then

- no record is its own donor and a set holds ``g`` distinct records;
- every record donates to exactly ``g`` released records (positions ``q − o_k``), so the
  donor-use bound is ``c = g``, the least possible when every record is released with ``g``
  donors (the average use is ``g``);
- each donor is marginally uniform over the other records of the stratum, and any two donors
  of a set are a uniform pair: the spread restoration of vp-mix holds unchanged.

Whole-array NumPy: a loop over strata, never over records.
"""

from __future__ import annotations

import numpy as np

from ..errors import BioanonError
from .random_sets import floyd


def circulant_sets(strat: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    """Donor sets ``(n, g)`` of the circulant design within each stratum of ``strat``.

    Raises :class:`BioanonError` when a stratum has ``g`` records or fewer.

    Examples
    --------
    >>> sets = circulant_sets(np.repeat([0, 1], 6), 3, np.random.default_rng(0))
    >>> np.bincount(sets.ravel(), minlength=12).tolist()  # every record donates 3 times
    [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
    >>> bool((sets != np.arange(12)[:, None]).all())  # never to itself
    True
    """
    strat = np.asarray(strat)
    n = strat.shape[0]
    _, dense, counts = np.unique(strat, return_inverse=True, return_counts=True)
    if (counts <= g).any():
        raise BioanonError(
            f"a class has {int(counts.min())} records but the bounded design needs more than "
            f"g={g} (g donors besides the record); lower g or merge small classes")
    order = np.argsort(dense, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)])
    sets = np.empty((n, g), dtype=np.int64)
    for c, n_c in enumerate(counts.tolist()):
        members = order[starts[c]:starts[c + 1]][rng.permutation(n_c)]  # secret order
        offsets = 1 + floyd(rng.random((1, g)), n_c - 1)[0]  # g distinct in [1, n_c - 1]
        pos = (np.arange(n_c)[:, None] + offsets[None, :]) % n_c
        sets[members] = members[pos]
    return sets


def donor_uses(sets: np.ndarray, n: int) -> np.ndarray:
    """How many released records each of ``n`` records donates to (a set's duplicates count).

    Examples
    --------
    >>> donor_uses(np.array([[1, 2], [0, 2], [0, 1]]), 3).tolist()
    [2, 2, 2]
    """
    return np.bincount(np.asarray(sets).ravel(), minlength=n)
