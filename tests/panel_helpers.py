"""Constructed anonymizers whose effect on identity is known (shared by the panel tests)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from bioanon.anonymize.base import AnonymizerMixin, label_values, split_input


class _Constructed(AnonymizerMixin, TransformerMixin, BaseEstimator):
    def fit_transform(self, X: Any, labels: Any = None, **_: Any) -> np.ndarray:
        return self.fit(X, labels).transform(X, labels)


class IdentityTransform(_Constructed):
    """Releases the records unchanged: privacy must be as bad as on clear data."""

    def __init__(self, random_state: int | None = None) -> None:
        self.random_state = random_state

    def fit(self, X: Any, labels: Any = None) -> IdentityTransform:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, _ = split_input(X, labels)
        return X.copy()


class ShuffleWithinInterest(_Constructed):
    """Permutes records within each interest class: identity is destroyed, interest kept."""

    def __init__(self, interest: str = "interest", random_state: int | None = None) -> None:
        self.interest = interest
        self.random_state = random_state

    def fit(self, X: Any, labels: Any = None) -> ShuffleWithinInterest:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, labels = split_input(X, labels)
        y = label_values(labels, self.interest, X.shape[0])
        rng = np.random.default_rng(self.random_state)
        out = X.copy()
        for value in np.unique(y):
            rows = np.flatnonzero(y == value)
            out[rows] = X[rng.permutation(rows)]
        return out


class FeaturePermutation(_Constructed):
    """A fixed permutation of feature blocks (the paper's block-permutation example), moving
    every block."""

    def __init__(self, block: int = 4, key: int = 7, random_state: int | None = None) -> None:
        self.block = block
        self.key = key
        self.random_state = random_state

    def fit(self, X: Any, labels: Any = None) -> FeaturePermutation:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, _ = split_input(X, labels)
        d = X.shape[1]
        blocks = np.arange(d).reshape(-1, self.block)
        perm = np.random.default_rng(self.key).permutation(len(blocks))
        order = np.empty_like(perm)
        order[perm] = np.roll(perm, -1)  # one cycle through all blocks: none stays in place
        return X[:, blocks[order].ravel()]
