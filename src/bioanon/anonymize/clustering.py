"""Fixed-size clustering for k-anonymity: every cluster holds between k and 2k−1 records.

Four algorithms share one interface (:func:`fixed_size_clusters` and
:class:`FixedSizeClusterer`):

- ``"mdav"``: Maximum Distance to Average Vector microaggregation, the statistical disclosure
  control standard (Domingo-Ferrer & Mateo-Sanz 2002).
- ``"kmember"``: greedy k-member clustering (Byun et al. 2007) with the sum of squared errors
  as the information loss: each cluster starts at the record furthest from the previous seed
  and grows by the record nearest to its current centroid (the smallest SSE increase).
- ``"knn"``: k-Same's grouping (Newton et al. 2005, Alg. 4.1 of Gross et al.): the first
  remaining record and its k−1 nearest remaining neighbours form a cluster.
- ``"hierarchical"``: size-constrained partitioning of one SciPy linkage tree (AnonFACES
  Alg. 1; linkage ``average``, ``complete``, ``ward`` or ``single``). It needs the pairwise
  distances, ``8·n(n−1)/2`` bytes, so it refuses more than :data:`HIERARCHICAL_MAX_RECORDS`
  records unless given a larger memory budget.

Records left over at the end (fewer than k) join the clusters whose centroid is nearest,
which keeps every size in [k, 2k−1]. Cluster assignments are secrets: they let anyone undo a
release, so nothing here writes them anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.cluster.hierarchy import linkage as scipy_linkage
from sklearn.base import BaseEstimator, ClusterMixin

from ..errors import BioanonError, suggest

Progress = Callable[[int, int, str], None]
CLUSTERERS = ("mdav", "kmember", "knn", "hierarchical")
LINKAGES = ("average", "complete", "ward", "single")
#: Memory budget of hierarchical partitioning (condensed float64 distance matrix).
HIERARCHICAL_MEMORY_BYTES = 1 << 30
#: Largest n whose condensed distance matrix fits in :data:`HIERARCHICAL_MEMORY_BYTES`.
HIERARCHICAL_MAX_RECORDS = int(np.sqrt(2 * HIERARCHICAL_MEMORY_BYTES / 8))


def check_k(n: int | None, k: Any) -> int:
    """Validate k (and, when ``n`` is given, against n records); return it as an int."""
    if k is None or isinstance(k, bool) or int(k) != k:
        raise BioanonError(f"k={k!r} must be an integer of at least 2; e.g. k=5")
    k = int(k)
    if k < 2:
        raise BioanonError(f"k={k} gives no anonymity; use k >= 2 (k=5 is a common choice)")
    if n is not None and n < k:
        raise BioanonError(f"only {n} records for k={k} ({n} sample(s)); use k <= {n} or add "
                           "records")
    return k


def _power_of_two(X: np.ndarray) -> float:
    """1, or the power of two that brings the largest magnitude of ``X`` near 1 when it lies
    outside [2**-50, 2**50] (distances keep their order: every one is scaled alike).

    >>> _power_of_two(np.array([[3.0]])), _power_of_two(np.array([[2.0 ** 100]]))
    (1.0, 7.888609052210118e-31)
    """
    peak = float(np.max(np.abs(X))) if X.size else 0.0
    if peak == 0.0 or 2.0 ** -50 <= peak <= 2.0 ** 50:
        return 1.0
    return float(2.0 ** -math.floor(math.log2(peak)))


class _Pool:
    """The records not yet clustered, with fast distances to any point.

    Distances use ``|x|² − 2 x·c + |c|²`` on a copy of the remaining rows; removed rows are
    masked, and :meth:`compact` drops them once a quarter of the copy is dead.
    """

    def __init__(self, X: np.ndarray) -> None:
        X64 = np.asarray(X, dtype=np.float64)
        self.shift = X64.mean(axis=0)  # centring keeps float32 distances accurate
        centred = X64 - self.shift
        #: a power of two bringing values far outside the usual range near 1 (features of
        #: 1e30 overflowed the float32 products: NaN distances, an internal error); 1 else
        self.scale = _power_of_two(centred)
        self.X = np.ascontiguousarray(centred * self.scale, dtype=np.float32)
        self.idx = np.arange(X.shape[0])
        self.sq = np.einsum("ij,ij->i", self.X, self.X, dtype=np.float64)
        self.alive = np.ones(X.shape[0], dtype=bool)
        self.n_alive = X.shape[0]
        self.total = self.X.sum(axis=0, dtype=np.float64)

    def compact(self) -> None:
        """Drop removed rows (positions change: call only between steps)."""
        if self.n_alive < 0.85 * self.alive.size:
            keep = self.alive
            self.X, self.idx, self.sq = self.X[keep], self.idx[keep], self.sq[keep]
            self.alive = np.ones(self.n_alive, dtype=bool)

    def centroid(self) -> np.ndarray:
        return self.total / self.n_alive

    def sqdist(self, c: np.ndarray) -> np.ndarray:
        """Squared distances from point ``c`` to the pool rows (removed rows included)."""
        c32 = np.asarray(c, dtype=np.float32)
        return self.sq - 2.0 * (self.X @ c32) + float(c32 @ c32)

    def nearest(self, d: np.ndarray, m: int) -> np.ndarray:
        """Pool positions of the m alive rows with the smallest ``d``."""
        if m >= self.n_alive:
            return np.flatnonzero(self.alive)
        d = np.where(self.alive, d, np.inf)
        return np.argpartition(d, m - 1)[:m]

    def furthest(self, d: np.ndarray) -> int:
        """Pool position of the alive row with the largest ``d``."""
        return int(np.argmax(np.where(self.alive, d, -np.inf)))

    def remove(self, pos: np.ndarray) -> np.ndarray:
        """Remove pool positions; return their record indices."""
        self.total -= self.X[pos].sum(axis=0, dtype=np.float64)
        self.alive[pos] = False
        self.n_alive -= len(pos)
        return self.idx[pos]

    def rest(self) -> np.ndarray:
        return self.idx[self.alive]


def _start(X: np.ndarray, k: int) -> tuple[np.ndarray, int, np.ndarray, _Pool]:
    """Checked float64 records, k, unassigned labels and the pool of a greedy grouping."""
    X = np.asarray(X, dtype=np.float64)
    k = check_k(X.shape[0], k)
    return X, k, np.full(X.shape[0], -1, dtype=np.int64), _Pool(X)


def _attach_leftovers(X: np.ndarray, labels: np.ndarray, left: np.ndarray) -> None:
    """Give each leftover record the label of the cluster with the nearest centroid."""
    if left.size == 0:
        return
    done = labels >= 0
    n_clusters = int(labels.max()) + 1
    counts = np.bincount(labels[done], minlength=n_clusters).astype(np.float64)
    sums = np.zeros((n_clusters, X.shape[1]))
    np.add.at(sums, labels[done], X[done])
    cent = sums / counts[:, None]
    Xl = X[left]
    d = (np.einsum("ij,ij->i", Xl, Xl)[:, None] - 2.0 * Xl @ cent.T
         + np.einsum("ij,ij->i", cent, cent)[None, :])
    labels[left] = np.argmin(d, axis=1)


def mdav(X: np.ndarray, k: int, progress: Progress | None = None) -> np.ndarray:
    """MDAV microaggregation; returns a cluster label per record (sizes in [k, 2k−1]).

    While at least 3k records remain: r is the record furthest from their centroid and s the
    remaining record furthest from r; r and s each form a cluster with their k−1 nearest
    remaining records. With 2k..3k−1 left, one more cluster around the record furthest from
    the centroid; the rest form the last cluster.

    Examples
    --------
    >>> X = np.array([[0.], [1.], [2.], [10.], [11.], [13.]])
    >>> mdav(X, 3).tolist()
    [1, 1, 1, 0, 0, 0]
    """
    X, k, labels, pool = _start(X, k)
    n, c = X.shape[0], 0
    step = 0
    while pool.n_alive >= 3 * k:
        pool.compact()
        r = pool.furthest(pool.sqdist(pool.centroid()))
        dr = pool.sqdist(pool.X[r])
        labels[pool.remove(pool.nearest(dr, k))] = c
        s = pool.furthest(dr)
        labels[pool.remove(pool.nearest(pool.sqdist(pool.X[s]), k))] = c + 1
        c += 2
        step += 1
        if progress is not None and step % 64 == 0:
            progress(n - pool.n_alive, n, "MDAV")
    if pool.n_alive >= 2 * k:
        r = pool.furthest(pool.sqdist(pool.centroid()))
        labels[pool.remove(pool.nearest(pool.sqdist(pool.X[r]), k))] = c
        c += 1
    labels[pool.rest()] = c
    return labels


def k_member(X: np.ndarray, k: int, random_state: Any = None,
             progress: Progress | None = None) -> np.ndarray:
    """Greedy k-member clustering with the sum of squared errors as information loss.

    The first seed is a random record; each later seed is the remaining record furthest from
    the previous seed. A cluster grows one record at a time by the remaining record nearest
    to its current centroid (the smallest SSE increase, ``m/(m+1)·|x − c|²``). Fewer than k
    records left over join the cluster with the nearest centroid.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = check_k(n, k)
    rng = np.random.default_rng(random_state)
    labels = np.full(n, -1, dtype=np.int64)
    pool = _Pool(X)
    seed_point = (X[int(rng.integers(n))] - pool.shift) * pool.scale
    first = True
    c = 0
    while pool.n_alive >= k:
        pool.compact()
        d = pool.sqdist(seed_point)
        r = int(np.argmin(np.where(pool.alive, d, np.inf))) if first else pool.furthest(d)
        first = False
        seed_point = pool.X[r].astype(np.float64)
        members = [r]
        total = seed_point.copy()
        pool.alive[r] = False
        for m in range(1, k):  # k−1 additions, each one whole-array distance pass
            j = pool.nearest(pool.sqdist(total / m), 1)[0]
            members.append(int(j))
            total += pool.X[j]
            pool.alive[j] = False
        pool.alive[members] = True
        labels[pool.remove(np.asarray(members))] = c
        c += 1
        if progress is not None and c % 64 == 0:
            progress(n - pool.n_alive, n, "k-member")
    _attach_leftovers(X, labels, pool.rest())
    return labels


def knn_grouping(X: np.ndarray, k: int, progress: Progress | None = None) -> np.ndarray:
    """k-Same's grouping: the first remaining record with its k−1 nearest remaining records.

    Algorithm 4.1 of Gross et al. shrinks k for the last group; here the last fewer-than-k
    records join the clusters with the nearest centroids instead, so every cluster keeps at
    least k members.
    """
    X, k, labels, pool = _start(X, k)
    n, c = X.shape[0], 0
    while pool.n_alive >= k:
        pool.compact()
        first = int(np.argmax(pool.alive))
        labels[pool.remove(pool.nearest(pool.sqdist(pool.X[first]), k))] = c
        c += 1
        if progress is not None and c % 64 == 0:
            progress(n - pool.n_alive, n, "k-Same grouping")
    _attach_leftovers(X, labels, pool.rest())
    return labels


def distinct_grouping(X: np.ndarray, k: int, groups: np.ndarray,
                      progress: Progress | None = None) -> np.ndarray:
    """Groups of k records with k different ``groups`` values (e.g. k different people).

    k-anonymity bounds record linkage by 1/k, but when a person has several records, a
    cluster of one person's records still releases that person. Here every cluster holds k
    distinct values, so any recognizer's guess for a shared released vector is right for at
    most one member: identity recognition ≤ 1/k as well.

    Each step seeds with a record of the value that has the most records left (so values
    deplete evenly, as in Anatomy bucketization), the first such record in order, then adds
    the nearest remaining record of each of the k−1 nearest other values. Records left when
    fewer than k values remain join the nearest cluster that lacks their value (that cluster
    may then exceed 2k−1); if every cluster has it, the call is refused.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = check_k(n, k)
    _, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = np.asarray(codes).ravel()
    n_values = int(codes.max()) + 1
    if n_values < k:
        raise BioanonError(f"only {n_values} distinct values for k={k}: clusters of k "
                           f"different values are impossible; use k <= {n_values}")
    labels = np.full(n, -1, dtype=np.int64)
    pool = _Pool(X)
    left = np.bincount(codes, minlength=n_values)
    c = 0
    while np.count_nonzero(left) >= k:
        pool.compact()
        pc = codes[pool.idx]
        big = int(np.argmax(left))
        seed = int(np.flatnonzero(pool.alive & (pc == big))[0])
        d = np.where(pool.alive, pool.sqdist(pool.X[seed]), np.inf)
        d[pc == big] = np.inf
        order = np.lexsort((d, pc))  # by value, then distance: first of each value = nearest
        first = order[np.r_[True, pc[order][1:] != pc[order][:-1]]]
        first = first[np.isfinite(d[first])]
        pick = first[np.argsort(d[first], kind="stable")[:k - 1]]
        members = np.concatenate([[seed], pick])
        rec = pool.remove(members)
        labels[rec] = c
        left -= np.bincount(codes[rec], minlength=n_values)
        c += 1
        if progress is not None and c % 64 == 0:
            progress(n - pool.n_alive, n, "distinct grouping")
    rest = pool.rest()
    if rest.size:
        done = labels >= 0
        has = np.zeros((c, n_values), dtype=bool)
        has[labels[done], codes[done]] = True
        counts = np.bincount(labels[done], minlength=c).astype(np.float64)
        sums = np.zeros((c, X.shape[1]))
        np.add.at(sums, labels[done], X[done])
        cent = sums / counts[:, None]
        for i in rest:  # fewer than k values remain: a short loop over the leftovers
            d = ((cent - X[i]) ** 2).sum(axis=1)
            d[has[:, codes[i]]] = np.inf
            j = int(np.argmin(d))
            if not np.isfinite(d[j]):
                raise BioanonError(
                    "one value holds too many records for clusters of distinct values (more "
                    "than n/k); drop some of its records or lower k")
            labels[i] = j
            has[j, codes[i]] = True
    return labels


def hierarchical_partition(X: np.ndarray, k: int, linkage: str = "ward",
                           max_memory: int = HIERARCHICAL_MEMORY_BYTES,
                           progress: Progress | None = None) -> np.ndarray:
    """Size-constrained partitioning of a hierarchical tree (after AnonFACES Alg. 1).

    One linkage tree is built (SciPy). Walking its merges from the lowest, each node pools
    the still unassigned records of its two children; as soon as a pool holds k records, a
    cluster of exactly k is cut from it: the lowest members (the larger child's pool, merged
    below this height) completed by the other child's members nearest to their centroid.
    The rest move up. The fewer-than-k records left at the root join the clusters with the
    nearest centroids. Sizes therefore lie in [k, 2k−1] (AnonFACES: k or k+1).

    Memory: the pairwise distances take ``8·n(n−1)/2`` bytes; beyond ``max_memory``
    (1 GiB by default, about 16,000 records) the call is refused.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = check_k(n, k)
    if linkage not in LINKAGES:
        raise BioanonError(f"linkage '{linkage}'{suggest(linkage, LINKAGES)} is unknown; "
                           f"choose from {', '.join(LINKAGES)}")
    need = 8 * n * (n - 1) // 2
    if need > max_memory:
        n_max = int(np.sqrt(2 * max_memory / 8))
        raise BioanonError(
            f"hierarchical partitioning of {n} records needs {need / 2**30:.1f} GiB of "
            f"pairwise distances (limit {max_memory / 2**30:.1f} GiB, about {n_max} records); "
            "use clusterer='mdav' or 'kmember', or cluster a sample")
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    Z = scipy_linkage(X, method=linkage)
    labels = np.full(n, -1, dtype=np.int64)
    pools: dict[int, list[int]] = {i: [i] for i in range(n)}
    c = 0
    for step, (a, b) in enumerate(Z[:, :2].astype(np.int64)):  # one Python step per merge
        pa, pb = pools.pop(int(a)), pools.pop(int(b))
        if len(pa) < len(pb):
            pa, pb = pb, pa
        pool = pa + pb
        if len(pool) >= k:
            need_more = k - len(pa)
            if need_more > 0:
                other = np.asarray(pb)
                cent = X[pa].mean(axis=0)
                order = np.argsort(((X[other] - cent) ** 2).sum(axis=1), kind="stable")
                take = other[order[:need_more]]
                members = np.concatenate([np.asarray(pa), take])
                pool = other[order[need_more:]].tolist()
            else:  # cannot happen (a child pool never holds k), kept for safety
                members = np.asarray(pa[:k])
                pool = pa[k:] + pb
            labels[members] = c
            c += 1
        pools[n + step] = pool
        if progress is not None and step % 1024 == 0:
            progress(step, n - 1, "hierarchical partitioning")
    left = np.flatnonzero(labels < 0)
    _attach_leftovers(X, labels, left)
    return labels


def fixed_size_clusters(X: np.ndarray, k: int, method: str = "mdav", linkage: str = "ward",
                        random_state: Any = None, progress: Progress | None = None,
                        max_memory: int = HIERARCHICAL_MEMORY_BYTES) -> np.ndarray:
    """Cluster ``X`` into groups of k to 2k−1 records with the named algorithm.

    Parameters
    ----------
    X : array (n, d)
    k : int
        Minimum cluster size (at least 2, at most n).
    method : {"mdav", "kmember", "knn", "hierarchical"}
    linkage : {"average", "complete", "ward", "single"}
        Only for ``"hierarchical"``.
    random_state : int, Generator or None
        Only ``"kmember"`` draws (its first seed record).

    Returns
    -------
    labels : int array (n,)
        Cluster of each record, 0..n_clusters−1. A secret: never write it out.
    """
    if method == "mdav":
        return mdav(X, k, progress)
    if method == "kmember":
        return k_member(X, k, random_state, progress)
    if method == "knn":
        return knn_grouping(X, k, progress)
    if method == "hierarchical":
        return hierarchical_partition(X, k, linkage, max_memory, progress)
    raise BioanonError(f"clusterer '{method}'{suggest(method, CLUSTERERS)} is unknown; choose "
                       f"from {', '.join(CLUSTERERS)}")


def cluster_sizes(labels: np.ndarray) -> np.ndarray:
    """Number of records in each cluster."""
    return np.bincount(np.asarray(labels))


def cluster_quality(X: np.ndarray, labels: np.ndarray, silhouette_sample: int | None = 5000,
                    random_state: Any = 0) -> dict[str, float]:
    """Within-cluster pairwise distances and the mean silhouette (AnonFACES 4.2).

    Returns the mean over clusters of each cluster's minimum, mean and maximum pairwise
    Euclidean distance, the number of clusters, and the mean silhouette score (on a sample of
    ``silhouette_sample`` records when there are more).
    """
    from sklearn.metrics import silhouette_score

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    mins, means, maxs = [], [], []
    for members in np.split(order, bounds):  # one step per cluster
        if members.size < 2:
            continue
        Y = X[members]
        sq = np.einsum("ij,ij->i", Y, Y)
        D = np.sqrt(np.maximum(sq[:, None] - 2.0 * Y @ Y.T + sq[None, :], 0.0))
        iu = np.triu_indices(members.size, 1)
        mins.append(D[iu].min())
        means.append(D[iu].mean())
        maxs.append(D[iu].max())
    n_clusters = int(np.unique(labels).size)
    sil = float("nan")
    if 2 <= n_clusters < X.shape[0]:
        size = None if silhouette_sample is None or X.shape[0] <= silhouette_sample \
            else silhouette_sample
        sil = float(silhouette_score(X, labels, sample_size=size, random_state=random_state))
    return {"n_clusters": n_clusters,
            "pairwise_min": float(np.mean(mins)) if mins else float("nan"),
            "pairwise_mean": float(np.mean(means)) if means else float("nan"),
            "pairwise_max": float(np.mean(maxs)) if maxs else float("nan"),
            "silhouette": sil}


class FixedSizeClusterer(ClusterMixin, BaseEstimator):
    """Scikit-learn wrapper around :func:`fixed_size_clusters`.

    Parameters
    ----------
    k : int, default 5
    method : {"mdav", "kmember", "knn", "hierarchical"}, default "mdav"
    linkage : {"average", "complete", "ward", "single"}, default "ward"
    random_state : int or None

    Attributes
    ----------
    labels_ : int array (n,)
        Cluster of each record (a secret: keep it in memory only).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> sizes = np.bincount(FixedSizeClusterer(k=4).fit_predict(X))
    >>> bool(sizes.min() >= 4 and sizes.max() <= 7)
    True
    """

    def __init__(self, k: int = 5, method: str = "mdav", linkage: str = "ward",
                 random_state: int | None = None) -> None:
        self.k = k
        self.method = method
        self.linkage = linkage
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> FixedSizeClusterer:
        """Cluster ``X``."""
        from ..table import as_feature_matrix

        X = as_feature_matrix(X)
        self.labels_ = fixed_size_clusters(X, self.k, self.method, self.linkage,
                                           self.random_state)
        return self
