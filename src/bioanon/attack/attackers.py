"""Attackers that need no training recognizer: nearest-neighbour linkage."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted


def _unit_rows(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms == 0, 1.0, norms)


class LinkageAttacker(BaseEstimator):
    """Link each released record to its nearest clear record by cosine distance.

    Parameters
    ----------
    k : int, default 5
        How many nearest gallery records :meth:`kneighbors` returns.
    standardize : bool, default True
        Standardize features with the gallery's mean and spread before the cosine distance.

    Examples
    --------
    >>> import numpy as np
    >>> att = LinkageAttacker(k=1).fit(np.eye(3), np.array(["a", "b", "c"]))
    >>> att.predict(np.array([[0.9, 0.1, 0.0]])).tolist()
    ['a']
    """

    def __init__(self, k: int = 5, standardize: bool = True) -> None:
        self.k = k
        self.standardize = standardize

    def fit(self, X_gallery: np.ndarray, y_gallery: np.ndarray | None = None) -> LinkageAttacker:
        """Store the clear gallery (and its labels, if any)."""
        X = np.asarray(X_gallery, dtype=np.float64)
        self.mean_ = X.mean(axis=0) if self.standardize else np.zeros(X.shape[1])
        scale = X.std(axis=0) if self.standardize else np.ones(X.shape[1])
        self.scale_ = np.where(scale == 0, 1.0, scale)
        self.gallery_ = _unit_rows((X - self.mean_) / self.scale_)
        self.labels_ = None if y_gallery is None else np.asarray(y_gallery)
        return self

    def kneighbors(self, X_probe: np.ndarray, k: int | None = None,
                   block: int = 2048) -> np.ndarray:
        """Indices of the ``k`` nearest gallery records per probe, nearest first."""
        check_is_fitted(self, "gallery_")
        k = min(k or self.k, self.gallery_.shape[0])
        P = _unit_rows((np.asarray(X_probe, dtype=np.float64) - self.mean_) / self.scale_)
        out = np.empty((P.shape[0], k), dtype=np.int64)
        for s in range(0, P.shape[0], block):  # blocks of probes bound the memory
            sim = P[s:s + block] @ self.gallery_.T
            part = np.argpartition(-sim, k - 1, axis=1)[:, :k]
            order = np.argsort(-np.take_along_axis(sim, part, axis=1), axis=1, kind="stable")
            out[s:s + block] = np.take_along_axis(part, order, axis=1)
        return out

    def predict(self, X_probe: np.ndarray) -> np.ndarray:
        """Label of the nearest gallery record."""
        if self.labels_ is None:
            raise ValueError("fit the linkage attacker with gallery labels to predict labels")
        return self.labels_[self.kneighbors(X_probe, k=1)[:, 0]]

    def record_hit_rates(self, X_probe: np.ndarray, true_index: np.ndarray,
                         k: int | None = None) -> list[float]:
        """Top-j re-identification rate of the exact record, j = 1..k."""
        nn = self.kneighbors(X_probe, k)
        hits = np.cumsum(nn == np.asarray(true_index)[:, None], axis=1) > 0
        return [float(v) for v in hits.mean(axis=0)]
