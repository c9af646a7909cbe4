"""Recognizers whose fit is one pass over the data for any number of identities.

A random forest, a one-vs-rest linear SVM or a one-vs-one RBF SVM grows with the number of
classes: with thousands of people the panel would wait hours. These recognizers cost the same
whatever the number of classes (a class mean each, one pooled covariance):

- :class:`ShrunkLDA` (``lda``): linear discriminant analysis with a pooled within-class
  covariance shrunk towards a scaled identity (Ledoit-Wolf): nearest class mean in the
  Mahalanobis metric the data teach; the classic strong linear recognizer when each person
  has few records.
- :class:`WithinClassWhitener` + cosine k nearest neighbours (``metric_knn``): neighbours in the
  space where the within-class spread is whitened (a metric learned from the identities): a
  local, non-linear recognizer.
- :class:`CosineKNN` on standardized features (``cosine_knn``): the vote of ``knn`` found by
  float32 matrix products in blocks (scikit-learn's search keeps a float64 distance matrix
  and clips it, several times slower with tens of thousands of records).

:data:`SCALED_SUBSTITUTES` says which of these stands in for which recognizer of the zoo
above :data:`SCALE_CLASSES` classes (the panel records every substitution it makes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse
from scipy.linalg import cholesky, solve_triangular
from scipy.optimize import minimize_scalar
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.covariance import ledoit_wolf
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .top_k import top_k_indices

#: above this many classes (identities in the training split) the panel replaces recognizers
#: whose cost grows with the number of classes by :data:`SCALED_SUBSTITUTES`
SCALE_CLASSES = 100

#: recognizer of the zoo → the recognizer that stands in for it above :data:`SCALE_CLASSES`
SCALED_SUBSTITUTES: dict[str, str] = {
    "forest": "metric_knn",  # non-linear, local → neighbours in a learned metric
    "ranking_forest": "metric_knn",
    "hgb": "metric_knn",
    "rbf_svm": "metric_knn",
    "pca_svm": "lda",  # whitened projection + margin → linear discriminant
    "linear_svm": "lda",
    "logreg": "lda",
    "mlp": "lda",
    "knn": "cosine_knn",  # the same vote, float32 blocks instead of a distance matrix
}


def _class_stats(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """Classes, integer codes, class means and class counts in one sparse product."""
    classes, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes, minlength=classes.size)
    onehot = sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))),
                               shape=(classes.size, codes.size))
    means = np.asarray(onehot @ X) / counts[:, None]
    return classes, codes, means, counts


def _pooled_covariance(X: np.ndarray, codes: np.ndarray, means: np.ndarray,
                       shrinkage: float | None = None) -> np.ndarray:
    """Within-class covariance pooled over classes, shrunk towards a scaled identity
    (Ledoit-Wolf's amount when ``shrinkage`` is None); always invertible."""
    R = X - means[codes]
    if shrinkage is None:
        cov, _ = ledoit_wolf(R, assume_centered=True)
        return np.asarray(cov)
    emp = R.T @ R / R.shape[0]
    mu = np.trace(emp) / emp.shape[0]
    return (1 - shrinkage) * emp + shrinkage * mu * np.eye(emp.shape[0])


def _inverse_root(cov: np.ndarray) -> np.ndarray:
    """``W`` with ``W @ W.T`` the inverse of ``cov`` (Cholesky: ``X @ W`` whitens rows)."""
    L = cholesky(cov, lower=True)
    return solve_triangular(L, np.eye(cov.shape[0]), lower=True).T


class ShrunkLDA(ClassifierMixin, BaseEstimator):
    """Nearest class mean in the metric of the pooled, shrunk within-class covariance.

    Every class is its mean. Records and means are mapped to the space where the pooled
    within-class covariance (Ledoit-Wolf shrinkage keeps it invertible with few records per
    class) is white; with ``scoring="cosine"`` (default) a record goes to the mean of highest
    cosine similarity there, with ``"mahalanobis"`` to the nearest mean plus the log prior
    (Gaussian linear discriminant analysis). Cosine scoring ignores a record's norm, so it
    also recognizes records pulled towards the population mean (averaged releases). The fit
    costs one pass over the data and one ``d × d`` eigendecomposition whatever the number of
    classes; probabilities are a softmax of the scores at a temperature fitted on the
    training records.

    Parameters
    ----------
    shrinkage : float in [0, 1] or None, default None
        Weight of the scaled identity in the covariance; None: the Ledoit-Wolf amount.
    scoring : {"cosine", "mahalanobis"}, default "cosine"
    standardize : bool, default True
        Standardize features (training mean and spread) first.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 1, (20, 3)), rng.normal(3, 1, (20, 3))]
    >>> y = np.repeat(["a", "b"], 20)
    >>> clf = ShrunkLDA().fit(X, y)
    >>> clf.predict([[3.0, 3.0, 3.0], [0.0, 0.0, 0.0]]).tolist()
    ['b', 'a']
    >>> clf.predict_proba(X[:1]).shape
    (1, 2)
    """

    def __init__(self, shrinkage: float | None = None, scoring: str = "cosine",
                 standardize: bool = True) -> None:
        self.shrinkage = shrinkage
        self.scoring = scoring
        self.standardize = standardize

    def fit(self, X: Any, y: Any) -> ShrunkLDA:
        """Learn the class means, the whitening map and the softmax temperature."""
        if self.scoring not in ("cosine", "mahalanobis"):
            raise ValueError(f"scoring={self.scoring!r}; use 'cosine' or 'mahalanobis'")
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.mean_ = X.mean(axis=0) if self.standardize else np.zeros(X.shape[1])
        scale = X.std(axis=0) if self.standardize else np.ones(X.shape[1])
        self.scale_ = np.where(scale > 0, scale, 1.0)
        Z = (X - self.mean_) / self.scale_
        self.classes_, codes, means, counts = _class_stats(Z, y)
        if self.classes_.size < 2:
            raise ValueError("ShrunkLDA needs at least two classes; got 1 class")
        self.whiten_ = _inverse_root(_pooled_covariance(Z, codes, means, self.shrinkage))
        M = means @ self.whiten_
        if self.scoring == "cosine":
            self.templates_ = _unit(M)
            self.intercept_ = np.zeros(M.shape[0])
        else:
            self.templates_ = M
            self.intercept_ = -0.5 * np.einsum("ij,ij->i", M, M) + np.log(counts / y.size)
        self.temperature_ = 1.0
        pick = np.random.default_rng(0).permutation(y.size)[:2000]
        S, target = self._scores(X[pick]), codes[pick]
        self.temperature_ = _fit_temperature(S, target)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Score of every class (higher: more likely), divided by the fitted temperature.

        With two classes, one column: the second class's score minus the first's.
        """
        s = self._scores(X)
        return s[:, 1] - s[:, 0] if s.shape[1] == 2 else s

    def _scores(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "templates_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        W = ((X - self.mean_) / self.scale_) @ self.whiten_
        if self.scoring == "cosine":
            W = _unit(W)
        return (W @ self.templates_.T + self.intercept_) / self.temperature_

    def predict_proba(self, X: Any) -> np.ndarray:
        """Softmax of the scores."""
        return _softmax(self._scores(X))

    def predict(self, X: Any) -> np.ndarray:
        """The class of highest score."""
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]


def _unit(X: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n == 0, 1.0, n)


def _softmax(s: np.ndarray) -> np.ndarray:
    s = s - s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s


def _fit_temperature(scores: np.ndarray, target: np.ndarray) -> float:
    """Temperature minimizing the log loss of ``softmax(scores / T)`` (a bounded 1-D search)."""
    rows = np.arange(target.size)

    def loss(log_t: float) -> float:
        s = scores / np.exp(log_t)
        s = s - s.max(axis=1, keepdims=True)
        return float(np.mean(np.log(np.exp(s).sum(axis=1)) - s[rows, target]))

    res = minimize_scalar(loss, bounds=(-8.0, 5.0), method="bounded")
    return float(np.exp(res.x))


class WithinClassWhitener(TransformerMixin, BaseEstimator):
    """Map features to the space where the pooled within-class spread is white.

    A metric learned from labelled records: directions along which one person's records vary
    are shrunk, directions that separate people are kept. ``fit`` needs ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(40, 4)), np.repeat([0, 1, 2, 3], 10)
    >>> WithinClassWhitener().fit(X, y).transform(X).shape
    (40, 4)
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags

    def fit(self, X: Any, y: Any) -> WithinClassWhitener:
        """Learn the whitening map from the pooled, shrunk within-class covariance."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"WithinClassWhitener needs at least 2 samples; got n_samples = "
                             f"{X.shape[0]}")
        _, codes, means, _ = _class_stats(X, y)
        self.components_ = _inverse_root(_pooled_covariance(X, codes, means))
        self.mean_ = X.mean(axis=0)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Whitened features (float32: the neighbour search is the costly part)."""
        check_is_fitted(self, "components_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return ((X - self.mean_) @ self.components_).astype(np.float32)


class CosineKNN(ClassifierMixin, BaseEstimator):
    """k nearest neighbours by cosine similarity, distance-weighted, in float32 row blocks.

    The same vote as scikit-learn's ``KNeighborsClassifier(metric="cosine",
    weights="distance")`` (weights 1 / cosine distance; an exact match takes the whole vote),
    the neighbours found by one float32 matrix product per block of probes (no distance
    matrix kept), their distances in float64.

    Parameters
    ----------
    n_neighbors : int, default 5
    block : int, default 512
        Probes per matrix product.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.1], [0.9, 0.0], [0.0, 1.0], [0.1, 0.9]])
    >>> CosineKNN(n_neighbors=2).fit(X, ["a", "a", "b", "b"]).predict([[1.0, 0.2]]).tolist()
    ['a']
    """

    def __init__(self, n_neighbors: int = 5, block: int = 512) -> None:
        self.n_neighbors = n_neighbors
        self.block = block

    def fit(self, X: Any, y: Any) -> CosineKNN:
        """Keep the unit-norm gallery and its class codes."""
        X, y = validate_data(self, X, y, dtype=[np.float32, np.float64])
        check_classification_targets(y)
        self.classes_, self.codes_ = np.unique(y, return_inverse=True)
        self.gallery_ = _unit(np.asarray(X, dtype=np.float64))
        self.gallery32_ = self.gallery_.astype(np.float32)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Share of the neighbours' distance-weighted vote per class."""
        check_is_fitted(self, "gallery_")
        X = validate_data(self, X, reset=False, dtype=[np.float32, np.float64])
        P = _unit(np.asarray(X, dtype=np.float64))
        P32, G, n_cls = P.astype(np.float32), self.gallery32_, self.classes_.size
        k = min(self.n_neighbors, G.shape[0])
        out = np.zeros((P.shape[0], n_cls))
        for s in range(0, P.shape[0], self.block):
            S = P32[s:s + self.block] @ G.T  # float32 to choose the neighbours ...
            idx = top_k_indices(S, k)
            # ... float64 for their distances (weights do not depend on the block)
            sims = np.einsum("ij,ikj->ik", P[s:s + self.block], self.gallery_[idx])
            dist = np.maximum(1.0 - sims, 0.0)
            exact = dist == 0
            with np.errstate(divide="ignore"):
                w = np.where(exact.any(axis=1, keepdims=True), exact, 1.0 / dist)
            rows = np.repeat(np.arange(S.shape[0]), k)
            cell = rows * n_cls + self.codes_[idx].ravel()
            votes = np.bincount(cell, weights=w.ravel(), minlength=S.shape[0] * n_cls)
            out[s:s + S.shape[0]] = votes.reshape(S.shape[0], n_cls)
        out /= out.sum(axis=1, keepdims=True)
        return out

    def predict(self, X: Any) -> np.ndarray:
        """The class of largest vote."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def resolve_scale_classes(scale_classes: int | str | None) -> int | None:
    """The threshold in force: ``"auto"`` reads :data:`SCALE_CLASSES` now; None: never."""
    if scale_classes == "auto":
        return SCALE_CLASSES
    if scale_classes is not None and (isinstance(scale_classes, str)
                                      or int(scale_classes) < 0):
        raise ValueError(f"scale_classes={scale_classes!r}; give a class count, 'auto' or None")
    return None if scale_classes is None else int(scale_classes)


def metric_knn(seed: int | None = None) -> Any:
    """Cosine 5 nearest neighbours in the within-class whitened space (``metric_knn``)."""
    return make_pipeline(StandardScaler(), WithinClassWhitener(), CosineKNN(n_neighbors=5))


def cosine_knn(seed: int | None = None) -> Any:
    """Cosine 5 nearest neighbours on standardized features (``knn``'s vote, in blocks)."""
    return make_pipeline(StandardScaler(), CosineKNN(n_neighbors=5))


def lda(seed: int | None = None) -> Any:
    """The shrunk linear discriminant (``lda``)."""
    return ShrunkLDA()


def substitute(model: Any, n_classes: int, scale_classes: int | str | None = "auto") -> Any:
    """The recognizer the panel fits for ``model`` with ``n_classes`` classes.

    Above ``scale_classes`` (``"auto"``: :data:`SCALE_CLASSES` at call time) a zoo recognizer
    whose cost grows with the classes is replaced by its entry in :data:`SCALED_SUBSTITUTES`;
    anything else (and everything when ``scale_classes`` is None) is kept.

    Examples
    --------
    >>> substitute("forest", 3000), substitute("forest", 24), substitute("knn", 3000)
    ('metric_knn', 'forest', 'cosine_knn')
    """
    limit = resolve_scale_classes(scale_classes)
    if limit is None or n_classes <= limit or not isinstance(model, str):
        return model
    return SCALED_SUBSTITUTES.get(model, model)
