"""Density-ratio membership attacker (in the spirit of DOMIAS, van Breugel et al. 2023).

A generative or mixing release over-represents the neighbourhoods of its members. The
attacker holds a reference population (clear records of people it knows; for a candidate
that is also in the reference, that record is left out) and scores each candidate by how
much denser the release is at the candidate than the reference is: the log ratio of the
k-th nearest-neighbour distances (reference over release). Whole-array, in blocks; above
:data:`FLOAT32_PAIRS` candidate pairs the distances are computed in float32 (half the memory
traffic of the block matrices and of their partition, twice the matrix-product speed).
"""

from __future__ import annotations

import numpy as np

from .kept import Kept, content_key

#: above this many (candidate, record) pairs the squared distances are computed in float32
#: (as :data:`bioanon.attack.tracing.COSINE_FLOAT32_PAIRS` does for the cosine attackers):
#: with standardized features a k-th neighbour distance keeps 6 significant digits, far below
#: the spread that separates members from non-members, and the block products and their
#: partition take about half the time from a few thousand rows on (a search's games);
#: smaller tables keep float64 to the bit
FLOAT32_PAIRS = 1_000_000
#: reference-side k-th distances kept in this process, by a digest of the candidates, the
#: reference, the rows left out and the k's (:func:`_reference_distances`)
REFERENCE_CACHE_SIZE = 64
_REFERENCE = Kept(REFERENCE_CACHE_SIZE)


def _kth_dists(P: np.ndarray, G: np.ndarray, ks: tuple[int, ...],
               skip: np.ndarray | None = None, block: int = 1024) -> dict[int, np.ndarray]:
    """Distance of each row of P to its k-th nearest row of G, for every k in ``ks`` from one
    pass (``skip[i]``: G's row to leave out for P's row i, or -1).

    One selection of the ``max(ks)`` smallest per block (:func:`smallest`), sorted: the
    same order statistics as a partition at every k (NumPy's multi-k partition costs several
    times one). The block's matrix product gives ``−2 p·g`` (``G`` scaled once), ``|g|²`` is
    added in place, and the row's constant ``|p|²`` only to the few values selected: one
    pass over the block's matrix besides the product and the selection.
    """
    if P.shape[0] * G.shape[0] > FLOAT32_PAIRS:
        P, G = P.astype(np.float32, copy=False), G.astype(np.float32, copy=False)
    top = G.shape[0] - (0 if skip is None else 1)
    kk = {k: max(1, min(int(k), top)) for k in ks}
    k_max = max(kk.values())
    gsq = np.einsum("ij,ij->i", G, G)
    G2 = G * G.dtype.type(-2)  # exact: a power of two
    out = {k: np.empty(P.shape[0]) for k in ks}
    for s in range(0, P.shape[0], block):
        Pb = P[s:s + block]
        d = Pb @ G2.T  # −2 p·g
        d += gsq[None, :]
        if skip is not None:
            sk = skip[s:s + block]
            rows = np.flatnonzero(sk >= 0)
            d[rows, sk[rows]] = np.inf
        head = d.min(axis=1)[:, None] if k_max == 1 else smallest(d, k_max)
        head = head + np.einsum("ij,ij->i", Pb, Pb)[:, None]  # |p|², the row's constant
        for k, kv in kk.items():
            out[k][s:s + block] = np.sqrt(np.maximum(head[:, kv - 1], 0.0))
    return out


#: :func:`smallest` bounds each row's ``k``-th smallest by a partition of every
#: ``SAMPLE_STRIDE``-th column
SAMPLE_STRIDE = 8


def smallest(d: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest values of each row of ``d``, sorted: the values of a partition at
    ``k − 1`` followed by a sort, bit for bit, in about half its time on wide rows.

    Each row's ``k``-th smallest among every :data:`SAMPLE_STRIDE`-th column bounds its
    ``k``-th smallest from above, so the ``k`` smallest all lie at or below it: only those
    few values per row are gathered and sorted.

    Examples
    --------
    >>> d = np.random.default_rng(0).normal(size=(3, 500))
    >>> bool((smallest(d, 5) == np.sort(d, axis=1)[:, :5]).all())
    True
    """
    n, m = d.shape
    if k < 1 or m // SAMPLE_STRIDE < 4 * k:  # narrow rows: the partition itself
        head = np.partition(d, k - 1, axis=1)[:, :k]
        head.sort(axis=1)
        return head
    bound = np.partition(d[:, ::SAMPLE_STRIDE], k - 1, axis=1)[:, k - 1]
    keep = d <= bound[:, None]
    counts = keep.sum(axis=1)
    vals = d[keep]  # row by row
    first = np.repeat(np.cumsum(counts) - counts, counts)
    buf = np.full((n, int(counts.max())), np.inf, dtype=d.dtype)
    buf[np.repeat(np.arange(n), counts), np.arange(vals.size) - first] = vals
    buf.sort(axis=1)
    return buf[:, :k]


def _kth_dist(P: np.ndarray, G: np.ndarray, k: int, skip: np.ndarray | None = None,
              block: int = 1024) -> np.ndarray:
    """Distance of each row of P to its k-th nearest row of G (``skip[i]``: G's row to leave
    out for P's row i, or -1)."""
    return _kth_dists(P, G, (k,), skip, block)[k]


def density_scores_multi(candidates_clear: np.ndarray, released_X: np.ndarray,
                         reference_X: np.ndarray, *, ks: tuple[int, ...] = (1, 5),
                         candidate_in_reference: np.ndarray | None = None,
                         reference_cache: dict[int, np.ndarray] | None = None
                         ) -> dict[int, np.ndarray]:
    """:func:`density_scores` for several k from one pass over the release and one over the
    reference. ``reference_cache`` (a dict, filled on first use) keeps the reference's k-th
    distances for a caller that scores the same candidates against several releases with the
    same reference (they do not depend on the release).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> members, others, ref = rng.normal(size=(3, 40, 8))
    >>> cand = np.vstack([members, others])
    >>> both = density_scores_multi(cand, members, ref, ks=(1, 5))
    >>> bool(np.allclose(both[5], density_scores(cand, members, ref, k=5)))
    True
    """
    ref = np.asarray(reference_X, dtype=np.float64)
    mu, sd = ref.mean(axis=0), ref.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    C = (np.asarray(candidates_clear, dtype=np.float64) - mu) / sd
    R = (np.asarray(released_X, dtype=np.float64) - mu) / sd
    skip = None if candidate_in_reference is None else np.asarray(candidate_in_reference, int)
    d_rel = _kth_dists(C, R, ks)
    if reference_cache is not None and all(k in reference_cache for k in ks):
        d_ref = reference_cache
    else:
        d_ref = _reference_distances(C, ref, mu, sd, ks, skip,
                                     (np.asarray(candidates_clear), np.asarray(reference_X)))
        if reference_cache is not None:
            reference_cache.update(d_ref)
    tiny = 1e-9 * float(np.sqrt(C.shape[1]))
    return {k: np.log(d_ref[k] + tiny) - np.log(d_rel[k] + tiny) for k in ks}


def _reference_distances(C: np.ndarray, ref: np.ndarray, mu: np.ndarray, sd: np.ndarray,
                         ks: tuple[int, ...], skip: np.ndarray | None,
                         given: tuple[np.ndarray, np.ndarray] | None = None
                         ) -> dict[int, np.ndarray]:
    """The candidates' k-th distances to the reference (standardized by it), kept in this
    process by a digest of what they depend on: they do not depend on the release, so every
    setting a search judges on one split (and each of its shadow games) shares them, and a
    repeated call returns the very numbers the first computed (the same work, done once).
    ``given``: the candidates and reference as the caller got them, ``C`` and ``ref``
    following from them; the digest reads those (half the bytes of float32 tables)."""
    C_key, ref_key = (C, ref) if given is None else given
    key = content_key(C_key, ref_key, np.asarray(ks, np.int64),
                      *(() if skip is None else (skip,)),
                      tags=("skip" if skip is not None else "all",
                            "f32" if C.shape[0] * ref.shape[0] > FLOAT32_PAIRS else "f64"))
    got = _REFERENCE.get(key)
    if got is None:
        got = _kth_dists(C, (ref - mu) / sd, ks, skip)
        _REFERENCE.put(key, got)
    return {k: v.copy() for k, v in got.items()}


def density_scores(candidates_clear: np.ndarray, released_X: np.ndarray,
                   reference_X: np.ndarray, *, k: int = 5,
                   candidate_in_reference: np.ndarray | None = None) -> np.ndarray:
    """Log density ratio (release over reference) at each candidate; higher: member.

    Features are standardized by the reference. ``candidate_in_reference[i]`` is the row of
    ``reference_X`` that is candidate i itself (left out of its reference), or -1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> members, others, ref = rng.normal(size=(3, 50, 8))
    >>> s = density_scores(np.vstack([members, others]), members, ref, k=1)
    >>> bool(s[:50].min() > s[50:].max())   # a copy: members sit on released records
    True
    """
    return density_scores_multi(candidates_clear, released_X, reference_X, ks=(k,),
                                candidate_in_reference=candidate_in_reference)[k]
