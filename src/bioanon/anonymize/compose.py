"""Composition: a method followed by a post-step, as one anonymizer (``--method vp-mix+leace``).

The post-step is fitted on the method's release of the same records (with their labels), so
e.g. LEACE erases what linear trace of the sensitive attribute the mix left. Nested parameters
follow scikit-learn's convention (``method__g``, ``post__sensitive``), so ``clone``,
``set_params`` and ``tune`` grids work unchanged.
"""

from __future__ import annotations

from typing import Any

from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from .base import AnonymizerMixin


def _public(est: Any) -> Any:
    if hasattr(est, "public_params"):
        return est.public_params()
    params = est.get_params(deep=False)
    params.pop("random_state", None)
    return {k: v if v is None or isinstance(v, str | int | float | bool) else type(v).__name__
            for k, v in params.items()}


class ComposedAnonymizer(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """``method`` then ``post``, as one estimator.

    Parameters
    ----------
    method : anonymizer
        The main method (cloned at fit).
    post : anonymizer
        The post-step, fitted on the method's output (cloned at fit).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> from bioanon.anonymize import LeaceAnonymizer, VarianceMixAnonymizer
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> est = ComposedAnonymizer(VarianceMixAnonymizer("expression", g=8, random_state=0),
    ...                          LeaceAnonymizer("identity"))
    >>> est.fit_transform(t.X, t.labels).shape
    (120, 32)
    """

    def __init__(self, method: Any = None, post: Any = None) -> None:
        self.method = method
        self.post = post

    @property
    def fit_on_auxiliary(self) -> bool:  # type: ignore[override]
        """As the main method: fitted once on auxiliary data, or per release."""
        return bool(getattr(self.method, "fit_on_auxiliary", False))

    def public_params(self) -> dict[str, Any]:
        """Both steps' publishable parameters (no random state)."""
        return {"method": type(self.method).__name__, "method_params": _public(self.method),
                "post": type(self.post).__name__, "post_params": _public(self.post)}

    def fit(self, X: Any, labels: Any = None) -> ComposedAnonymizer:
        """Fit the method (on auxiliary data when it is fitted so); the post-step is fitted on
        each release."""
        self.method_ = clone(self.method).fit(X, labels)
        self.n_features_in_ = self.method_.n_features_in_
        return self

    def transform(self, X: Any, labels: Any = None) -> Any:
        """Release with the method, then fit the post-step on that release and apply it."""
        check_is_fitted(self, "method_")
        released = self.method_.transform(X, labels)
        return clone(self.post).fit_transform(released, labels)

    def fit_transform(self, X: Any, labels: Any = None, **fit_params: Any) -> Any:
        """Fit and release ``X``."""
        return self.fit(X, labels).transform(X, labels)

    def release(self, X: Any, labels: Any = None) -> Any:
        """Alias of :meth:`transform` (foundation v2's name for releasing after ``fit``)."""
        return self.transform(X, labels)
