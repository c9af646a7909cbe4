"""Membership disclosure: which records (and which people) contributed to a release?

The attacker holds clear records of members and of non-members (control records, or whole
control identities, that never entered the release) and the release itself. Each attacker
scores every clear candidate; the AUC of members against non-members measures disclosure
(0.5: none; 1: every member told apart). Attackers:

- ``nearest_released``: cosine similarity of the candidate to its nearest released record;
- ``calibrated``: that similarity minus the candidate's similarity to its nearest other clear
  candidate (a record close to the release *and* unusual for the population stands out; the
  candidates are standardized by themselves for it, so it does not depend on the release and
  is computed once per candidates: :func:`peer_similarity`);
- ``euclidean``: minus the Euclidean distance to the nearest released record.

Identity-level scores take, per identity, the mean score of its clear records.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..metrics.intervals import auc_interval, rank_auc
from ..metrics.results import MembershipResult
from .kept import Kept, content_key
from .tracing import cosine_precision


def _standardize(ref: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    with np.errstate(over="ignore"):
        mean = ref.mean(axis=0)
        scale = ref.std(axis=0)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(scale))):
        # float32 features of 1e18 or more: their squares overflowed (NumPy's warning, a
        # scale of inf: every standardized value 0, this attacker reading records alike)
        ref64 = np.asarray(ref, np.float64)
        mean, scale = ref64.mean(axis=0), ref64.std(axis=0)
    scale = np.where(scale == 0, 1.0, scale)
    return [(np.asarray(a, dtype=np.float64) - mean) / scale for a in arrays]


def _unit(X: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n == 0, 1.0, n)


def _max_sim(P: np.ndarray, G: np.ndarray, exclude_self: bool = False,
             block: int = 2048) -> np.ndarray:
    out = np.empty(P.shape[0])
    for s in range(0, P.shape[0], block):  # blocks bound the memory
        sim = P[s:s + block] @ G.T
        if exclude_self:
            idx = np.arange(s, min(s + block, P.shape[0]))
            sim[idx - s, idx] = -np.inf
        out[s:s + block] = sim.max(axis=1)
    return out


def _nearest_both(C: np.ndarray, R: np.ndarray, block: int = 2048
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Each row of ``C``'s largest cosine similarity to a row of ``R`` and its smallest
    Euclidean distance to one, from one matrix product per block: ``c · r / |r|`` gives the
    cosine (its row maximum over ``|c|``) and, times ``−2 |r|`` plus ``|r|²``, the squared
    distance less the row's constant ``|c|²``. In float32 above
    :data:`~bioanon.attack.tracing.COSINE_FLOAT32_PAIRS` pairs (the norms in float64).

    Examples
    --------
    >>> C = np.array([[3.0, 4.0], [0.0, 0.0]]); R = np.array([[3.0, 0.0], [0.0, 2.0]])
    >>> cos, dist = _nearest_both(C, R)
    >>> cos.round(6).tolist(), dist.round(6).tolist()
    ([0.8, 0.0], [3.605551, 2.0])
    """
    from .tracing import COSINE_FLOAT32_PAIRS

    nc = np.linalg.norm(C, axis=1)
    nr = np.linalg.norm(R, axis=1)
    Ru = R / np.where(nr == 0, 1.0, nr)[:, None]
    dtype = np.float32 if C.shape[0] * R.shape[0] > COSINE_FLOAT32_PAIRS else np.float64
    Cw, Ru = C.astype(dtype, copy=False), Ru.astype(dtype, copy=False)
    scale, rsq = (-2.0 * nr).astype(dtype), (nr * nr).astype(dtype)
    cos, dist = np.empty(C.shape[0]), np.empty(C.shape[0])
    for s in range(0, C.shape[0], block):  # blocks bound the memory
        g = Cw[s:s + block] @ Ru.T  # c · r / |r|
        top = g.max(axis=1).astype(np.float64)
        n = nc[s:s + block]
        cos[s:s + block] = np.where(n == 0, 0.0, top / np.where(n == 0, 1.0, n))
        g *= scale[None, :]  # −2 c · r
        g += rsq[None, :]
        dist[s:s + block] = np.sqrt(np.maximum(g.min(axis=1) + n * n, 0.0))
    return cos, dist


#: peer similarities kept in this process, by a digest of the candidates
#: (:func:`peer_similarity`)
PEER_CACHE_SIZE = 32
_PEERS = Kept(PEER_CACHE_SIZE)


def peer_similarity(candidates: np.ndarray) -> np.ndarray:
    """Each candidate's cosine similarity to its nearest other candidate, the candidates
    standardized by themselves: the population side of the calibrated score. It does not
    depend on the release, nor on the candidates' order: every setting a search judges on
    one split, and each of its record games (the same records in another order), shares it.
    It is computed on the candidates in a canonical order (their bytes sorted) and kept in
    this process by a digest of them, so a repeated call, in any order, returns the very
    numbers the first computed.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> C = rng.normal(size=(6, 4))
    >>> peer_similarity(np.vstack([C, C[:1]])).round(6)[[0, -1]].tolist()  # a twin: 1
    [1.0, 1.0]
    """
    C = np.asarray(candidates, dtype=np.float64)
    if len(C) < 2:
        return np.zeros(len(C))
    C = np.ascontiguousarray(C)
    rows = C.view(np.dtype((np.void, C.dtype.itemsize * C.shape[1]))).ravel()
    order = np.argsort(rows, kind="stable")  # a canonical order: the rows' bytes sorted
    C = C[order]
    key = content_key(C)
    got = _PEERS.get(key)
    if got is None:
        Cu = _unit(_standardize(C, C)[0])
        Cu, _ = cosine_precision(Cu, Cu)
        got = _max_sim(Cu, Cu, exclude_self=True)
        _PEERS.put(key, got)
    out = np.empty_like(got)
    out[order] = got
    return out


def membership_scores(candidates: np.ndarray, released: np.ndarray) -> dict[str, np.ndarray]:
    """Every membership attacker's score for each clear candidate (higher: member)."""
    C, R = _standardize(np.vstack([candidates, released]), candidates, released)
    # one product for both scores; float32 loses nothing that ranks from
    # tracing.COSINE_FLOAT32_PAIRS pairs on (tests/test_density_precision.py)
    near, dist = _nearest_both(C, R)
    return {"nearest_released": near, "calibrated": near - peer_similarity(candidates),
            "euclidean": -dist}


def membership_auc(scores: dict[str, np.ndarray], member: np.ndarray, level: str,
                   groups: np.ndarray | None = None) -> MembershipResult:
    """AUC (members above non-members) of every attacker; the strongest is reported.

    ``groups`` (one per candidate) aggregates record scores into one score per group (the
    identity) by their mean; ``member`` must then be constant within a group.

    Examples
    --------
    >>> s = {"a": np.array([0.9, 0.8, 0.4, 0.5, 0.3, 0.1])}
    >>> r = membership_auc(s, np.array([1, 1, 1, 0, 0, 0], bool), "record")
    >>> round(r.auc, 4), r.attacker
    (0.8889, 'a')
    """
    member = np.asarray(member, dtype=bool)
    agg: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    if groups is not None:
        uniq, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
        counts = np.bincount(codes, minlength=uniq.size)
        gm = np.bincount(codes, weights=member, minlength=uniq.size) / counts > 0.5

        def agg(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.bincount(codes, weights=s, minlength=uniq.size) / counts, gm
    else:
        def agg(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return s, member
    per = {}
    for name, s in scores.items():
        v, m = agg(np.asarray(s, dtype=np.float64))
        per[name] = rank_auc(v[m], v[~m])
    best = max(per, key=lambda k: (per[k], k))
    v, m = agg(np.asarray(scores[best], dtype=np.float64))
    n_pos, n_neg = int(m.sum()), int((~m).sum())
    return MembershipResult(level, per[best], auc_interval(per[best], n_pos, n_neg), best,
                            n_pos, n_neg, per)
