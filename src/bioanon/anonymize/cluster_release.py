"""The shared machinery of the k-Same family (``cluster-mix``, ``k-same``,
``k-same-select``): the constraints of its parameters, the clustering into groups of k to
2k−1 records (optionally within each interest class) and the release of group means.

A leaf the family's method modules share (no method module imports another). Cluster
assignments, weights and the seed are secrets and are never written anywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import BioanonError
from ..table import FeatureTable
from .base import Anonymizer, Release, label_values
from .clustering import (
    CLUSTERERS,
    LINKAGES,
    Progress,
    check_k,
    distinct_grouping,
    fixed_size_clusters,
)
from .params import Param

#: constraints shared by the k-anonymity family
CLUSTER_PARAMS: dict[str, Param] = {
    "k": Param("int", low=2, help="group size k..2k-1; k=1 releases the input"),
    "clusterer": Param("str", options=tuple(CLUSTERERS), help="how groups are formed"),
    "linkage": Param("str", options=tuple(LINKAGES), help="linkage of hierarchical"),
    "n_components": Param("int", low=1, none=True, help="group on principal components"),
    "distinct": Param("column", none=True,
                      help="label column whose values must differ within a group"),
    "random_state": Param("int", low=0, none=True,
                          help="secret seed; None draws fresh OS entropy"),
}


def cluster_means(X: np.ndarray, labels: np.ndarray,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted mean of each cluster's rows, ``(n_clusters, d)``, as one sparse product."""
    labels = np.asarray(labels)
    n = labels.size
    n_clusters = int(labels.max()) + 1
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    S = sp.csr_matrix((w, (labels, np.arange(n))), shape=(n_clusters, n))
    wsum = np.bincount(labels, weights=w, minlength=n_clusters)
    return np.asarray(S @ np.asarray(X, dtype=np.float64)) / wsum[:, None]


def pairwise_percentile(X: np.ndarray, groups: np.ndarray | None, q: float,
                        rng: np.random.Generator, per_group: int = 200,
                        sample: int = 2000) -> float:
    """The q-th percentile of same-group pairwise distances (or of nearest-neighbour distances).

    With ``groups`` (e.g. identities): distances between records of the same group, on at
    most ``per_group`` records per group. Without: each of at most ``sample`` records'
    distance to its nearest other record.
    """
    X = np.asarray(X, dtype=np.float64)
    values = []
    if groups is not None:
        _, codes = np.unique(groups, return_inverse=True)
        order = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[order])) + 1
        for members in np.split(order, bounds):  # one step per group
            if members.size < 2:
                continue
            if members.size > per_group:
                members = rng.choice(members, per_group, replace=False)
            Y = X[members]
            sq = np.einsum("ij,ij->i", Y, Y)
            D = np.sqrt(np.maximum(sq[:, None] - 2 * Y @ Y.T + sq[None, :], 0.0))
            values.append(D[np.triu_indices(members.size, 1)])
    if not values:
        pick = rng.choice(X.shape[0], min(sample, X.shape[0]), replace=False)
        sq = np.einsum("ij,ij->i", X, X)
        nn = np.empty(pick.size)
        for s in range(0, pick.size, 256):  # blocks bound the memory
            rows = pick[s:s + 256]
            D = sq[rows, None] - 2 * X[rows] @ X.T + sq[None, :]
            D[np.arange(rows.size), rows] = np.inf
            nn[s:s + 256] = np.sqrt(np.maximum(D.min(axis=1), 0.0))
        values = [nn]
    return float(np.percentile(np.concatenate(values), q))


class ClusterReleaseBase(Anonymizer):
    """Cluster into groups of k..2k−1 (optionally within each interest class), release means.

    Subclasses set the defaults; see :class:`ClusterMixAnonymizer` for the parameters. A
    release's diagnostics (no secrets) come back from :meth:`release_result` in
    ``Release.info``: ``information_loss``, ``n_clusters``, ``threshold``, ``n_rounds``,
    ``reid_rate_initial``, ``reid_rate``, ``cluster_reid_rates_initial``,
    ``cluster_reid_rates`` (sorted, so they say nothing about which cluster is which).
    """

    interest: str | None = None
    sensitive: str | None = None
    distinct: str | None = None

    def _check_relations(self) -> None:
        check_k(None, self.k)

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the input (nothing is learned: each release is clustered on its own
        records)."""
        self._check_input(X, labels)

    def _distinct_values(self, labels: Any, n: int) -> np.ndarray | None:
        if self.distinct is None:
            return None
        return label_values(labels, self.distinct, n)

    def _check_input(self, X: np.ndarray, labels: Any) -> np.ndarray | None:
        n = X.shape[0]
        check_k(n, self.k)
        self._distinct_values(labels, n)
        if self.interest is None:
            return None
        y = label_values(labels, self.interest, n)
        classes, counts = np.unique(y, return_counts=True)
        small = counts < self.k
        if small.any():
            bad = ", ".join(f"'{c}' ({m})" for c, m in list(zip(classes[small], counts[small],
                                                                strict=True))[:5])
            fix = (f"lower k to {int(counts.min())} or drop those classes"
                   if counts.min() >= 2 else "drop or merge those classes")
            raise BioanonError(
                f"interest class(es) {bad} have fewer than k={self.k} records, so k-Same-Select "
                f"cannot k-anonymize them; {fix}")
        return y

    # ------------------------------------------------------------------ the release
    def _space(self, X: np.ndarray, seed: int) -> np.ndarray:
        if self.n_components is None:
            return X
        from sklearn.decomposition import PCA

        m = int(min(self.n_components, X.shape[0], X.shape[1]))
        return PCA(n_components=m, random_state=seed % (2**32)).fit_transform(X)

    def _clusters(self, X: np.ndarray, y: np.ndarray | None, seed: int,
                  progress: Progress | None, groups: np.ndarray | None = None) -> np.ndarray:
        Z = self._space(X, seed)

        def cluster(rows: np.ndarray | None, prog: Progress | None) -> np.ndarray:
            Zr = Z if rows is None else Z[rows]
            if groups is not None:
                return distinct_grouping(Zr, self.k, groups if rows is None else groups[rows],
                                         prog)
            return fixed_size_clusters(Zr, self.k, self.clusterer, self.linkage, seed, prog)

        if y is None:
            return cluster(None, progress)
        labels = np.empty(X.shape[0], dtype=np.int64)
        offset = 0
        for cls in np.unique(y):  # one step per interest class (k-Same-Select, Alg. 4.2)
            idx = np.flatnonzero(y == cls)
            part = cluster(idx, None)
            labels[idx] = part + offset
            offset += int(part.max()) + 1
        return labels

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """Every record becomes its cluster's (weighted) mean."""
        return self.release_with_progress(X, labels, seed)

    def release_with_progress(self, X: np.ndarray, labels: Any, seed: int,
                              progress: Progress | None = None) -> Release:
        """The release of checked records, reporting clustering progress."""
        y = self._check_input(X, labels)
        ss = np.random.SeedSequence(seed)
        s_cluster, s_weights, s_thr = (int(s.generate_state(1)[0]) for s in ss.spawn(3))
        X64 = np.asarray(X, dtype=np.float64)
        groups = self._distinct_values(labels, X.shape[0])
        clusters = self._clusters(X64, y, s_cluster, progress, groups)
        out, info = self._mix(X64, clusters, labels, np.random.default_rng(s_weights),
                              np.random.default_rng(s_thr))
        out32 = out.astype(np.float32)
        info["information_loss"] = float(np.linalg.norm(X64 - out32, axis=1).mean())
        info["n_clusters"] = int(clusters.max()) + 1
        n = clusters.size
        P = sp.csr_matrix((np.ones(n), (np.arange(n), clusters)),
                          shape=(n, int(clusters.max()) + 1))
        return Release(out32, info, mixing=(P @ P.T).tocsr())

    def _mix(self, X: np.ndarray, clusters: np.ndarray, labels: Any,
             rng_w: np.random.Generator, rng_t: np.random.Generator
             ) -> tuple[np.ndarray, dict[str, Any]]:
        k = int(self.k)
        w: np.ndarray = np.full(X.shape[0], 1.0 / k)
        delta = float(getattr(self, "delta", 0.0) or 0.0)
        if delta:
            w = np.asarray(rng_w.uniform(1.0 / k - delta, 1.0 / k + delta, size=X.shape[0]))
        thr = self._threshold(X, labels, rng_t)
        sizes = np.bincount(clusters).astype(np.float64)
        rounds = 0
        beta = float(getattr(self, "beta", 0.0) or 0.0)
        max_rounds = int(getattr(self, "max_rounds", 0) or 0)
        mixed = cluster_means(X, clusters, w)
        info: dict[str, Any] = {"threshold": thr, "n_rounds": 0}
        if thr is None:
            info.update(reid_rate_initial=float("nan"), reid_rate=float("nan"),
                        cluster_reid_rates_initial=np.empty(0),
                        cluster_reid_rates=np.empty(0))
            return mixed[clusters], info
        best = None
        while True:
            at_risk = np.linalg.norm(X - mixed[clusters], axis=1) < thr
            per_cluster = np.bincount(clusters, weights=at_risk, minlength=sizes.size) / sizes
            if rounds == 0:
                info["reid_rate_initial"] = float(at_risk.mean())
                # sorted, so the array says nothing about which cluster is which
                info["cluster_reid_rates_initial"] = np.sort(per_cluster)[::-1]
            if best is None or at_risk.sum() < best[0]:
                best = (int(at_risk.sum()), mixed, per_cluster, rounds)
            if not at_risk.any() or rounds >= max_rounds:
                break
            w = np.where(at_risk, w * (1.0 - beta), w)
            mixed = cluster_means(X, clusters, w)
            rounds += 1
        # the round with the fewest members at risk is released (never worse than the start)
        n_risk, mixed, per_cluster, info["n_rounds"] = best
        info["reid_rate"] = n_risk / X.shape[0]
        info["cluster_reid_rates"] = np.sort(per_cluster)[::-1]
        return mixed[clusters], info

    def _threshold(self, X: np.ndarray, labels: Any, rng: np.random.Generator) -> float | None:
        thr = getattr(self, "risk_threshold", None)
        if thr is None:
            return None
        if isinstance(thr, str):
            groups = None
            if self.sensitive is not None:
                groups = label_values(labels, self.sensitive, X.shape[0])
            return pairwise_percentile(X, groups, float(self.threshold_percentile), rng)
        return float(thr)


__all__ = ["CLUSTER_PARAMS", "ClusterReleaseBase", "cluster_means", "pairwise_percentile"]
