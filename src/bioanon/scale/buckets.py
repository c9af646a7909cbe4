"""Random buckets stratified by a label: every bucket holds every class in proportion.

The bucketed release draws each record's random set inside its bucket instead of its whole
class (see :mod:`bioanon.scale`). A bucket assignment is a secret (it narrows where a record's
donors came from): it is never written anywhere.
"""

from __future__ import annotations

import numpy as np

from ..errors import BioanonError


def n_buckets_for(n: int, bucket_size: int) -> int:
    """Number of buckets so that each holds at least ``bucket_size`` records (at least one)."""
    if int(bucket_size) != bucket_size or bucket_size < 1:
        raise BioanonError(f"bucket size {bucket_size} must be a positive integer; e.g. 50000")
    return max(1, int(n) // int(bucket_size))


def assign_buckets(codes: np.ndarray, n_buckets: int, rng: np.random.Generator) -> np.ndarray:
    """Assign each record to one of ``n_buckets`` random buckets, stratified by ``codes``.

    Records are shuffled, grouped by class, and dealt round-robin: each bucket receives
    ``floor`` or ``ceil`` of ``count(class) / n_buckets`` records of every class, and bucket
    sizes differ by at most one.

    Parameters
    ----------
    codes : array (n,)
        Class of each record (any sortable values).
    n_buckets : int
    rng : numpy Generator

    Returns
    -------
    int32 array (n,): the bucket of each record.

    Examples
    --------
    >>> b = assign_buckets(np.repeat([0, 1], [60, 40]), 4, np.random.default_rng(0))
    >>> np.bincount(b).tolist()
    [25, 25, 25, 25]
    """
    codes = np.asarray(codes)
    n = codes.shape[0]
    perm = rng.permutation(n)
    order = perm[np.argsort(codes[perm], kind="stable")]
    out = np.empty(n, dtype=np.int32)
    out[order] = np.arange(n, dtype=np.int64) % int(n_buckets)
    return out
