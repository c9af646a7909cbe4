"""Density-ratio membership attacker (in the spirit of DOMIAS, van Breugel et al. 2023).

A generative or mixing release over-represents the neighbourhoods of its members. The
attacker holds a reference population (clear records of people it knows; for a candidate
that is also in the reference, that record is left out) and scores each candidate by how
much denser the release is at the candidate than the reference is: the log ratio of the
k-th nearest-neighbour distances (reference over release). Whole-array, in blocks.
"""

from __future__ import annotations

import numpy as np


def _kth_dist(P: np.ndarray, G: np.ndarray, k: int, skip: np.ndarray | None = None,
              block: int = 1024) -> np.ndarray:
    """Distance of each row of P to its k-th nearest row of G (``skip[i]``: G's row to leave
    out for P's row i, or -1)."""
    k = max(1, min(int(k), G.shape[0] - (0 if skip is None else 1)))
    gsq = np.einsum("ij,ij->i", G, G)
    out = np.empty(P.shape[0])
    for s in range(0, P.shape[0], block):
        Pb = P[s:s + block]
        d = np.einsum("ij,ij->i", Pb, Pb)[:, None] - 2 * Pb @ G.T + gsq[None, :]
        if skip is not None:
            sk = skip[s:s + block]
            rows = np.flatnonzero(sk >= 0)
            d[rows, sk[rows]] = np.inf
        out[s:s + block] = np.sqrt(np.maximum(np.partition(d, k - 1, axis=1)[:, k - 1], 0.0))
    return out


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
    ref = np.asarray(reference_X, dtype=np.float64)
    mu, sd = ref.mean(axis=0), ref.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    C = (np.asarray(candidates_clear, dtype=np.float64) - mu) / sd
    R = (np.asarray(released_X, dtype=np.float64) - mu) / sd
    G = (ref - mu) / sd
    skip = None if candidate_in_reference is None else np.asarray(candidate_in_reference, int)
    d_rel = _kth_dist(C, R, k)
    d_ref = _kth_dist(C, G, k, skip)
    tiny = 1e-9 * float(np.sqrt(C.shape[1]))
    return np.log(d_ref + tiny) - np.log(d_rel + tiny)
