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

#: above this many candidate pairs the Euclidean distances are computed in float32 (the
#: cosine scores above :data:`~bioanon.attack.tracing.COSINE_FLOAT32_PAIRS`)
FLOAT32_PAIRS = 100_000_000


def _standardize(ref: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    mean = ref.mean(axis=0)
    scale = ref.std(axis=0)
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


def _min_dist(P: np.ndarray, G: np.ndarray, block: int = 2048) -> np.ndarray:
    if P.shape[0] * G.shape[0] > FLOAT32_PAIRS:  # float32 when large
        P, G = P.astype(np.float32, copy=False), G.astype(np.float32, copy=False)
    gsq = np.einsum("ij,ij->i", G, G)
    out = np.empty(P.shape[0])
    for s in range(0, P.shape[0], block):
        psq = np.einsum("ij,ij->i", P[s:s + block], P[s:s + block])
        d = P[s:s + block] @ G.T  # |p|² − 2 p·g + |g|², in place (the same bits)
        d *= -2
        d += psq[:, None]
        d += gsq[None, :]
        out[s:s + block] = np.sqrt(np.maximum(d.min(axis=1), 0.0))
    return out


#: peer similarities kept in this process, by a digest of the candidates
#: (:func:`peer_similarity`)
PEER_CACHE_SIZE = 32
_PEERS = Kept(PEER_CACHE_SIZE)


def peer_similarity(candidates: np.ndarray) -> np.ndarray:
    """Each candidate's cosine similarity to its nearest other candidate, the candidates
    standardized by themselves: the population side of the calibrated score. It does not
    depend on the release, so every setting a search judges on one split (and each game
    with the same candidates) shares it: kept in this process by a digest of the candidates,
    a repeated call returns the very numbers the first computed.

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
    key = content_key(C)
    got = _PEERS.get(key)
    if got is None:
        Cu = _unit(_standardize(C, C)[0])
        Cu, _ = cosine_precision(Cu, Cu)
        got = _max_sim(Cu, Cu, exclude_self=True)
        _PEERS.put(key, got)
    return got.copy()


def membership_scores(candidates: np.ndarray, released: np.ndarray) -> dict[str, np.ndarray]:
    """Every membership attacker's score for each clear candidate (higher: member)."""
    C, R = _standardize(np.vstack([candidates, released]), candidates, released)
    Cu, Ru = _unit(C), _unit(R)
    # cosine similarities lose nothing that ranks in float32 (tracing.COSINE_FLOAT32_PAIRS)
    Cu, Ru = cosine_precision(Cu, Ru)
    near = _max_sim(Cu, Ru)
    return {"nearest_released": near, "calibrated": near - peer_similarity(candidates),
            "euclidean": -_min_dist(C, R)}


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
