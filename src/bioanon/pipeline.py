"""scikit-learn pipelines that measure CAS: train on the release, score on clear data.

A bioanon anonymizer's ``transform`` always anonymizes, so a bare ``anon.transform(X)`` never
hands clear data back. In a pipeline that is not what a consumer of a release wants: the
classifier must be *trained* on released data and *scored* on clear data. :class:`TrainOnRelease`
gives that meaning, as imbalanced-learn's samplers do: during ``fit`` the training data are
released, at predict time data pass untouched. Then

>>> from sklearn.linear_model import LogisticRegression
>>> from sklearn.model_selection import cross_val_score
>>> from bioanon.anonymize import SelectiveMeanAnonymizer
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
>>> y = t.labels["expression"].to_numpy()
>>> pipe = make_cas_pipeline(SelectiveMeanAnonymizer("expression", g=4, random_state=0),
...                          LogisticRegression(max_iter=500))
>>> scores = cross_val_score(pipe, t.X, y, cv=3)
>>> bool((scores >= 0).all())
True

measures the classification accuracy score (CAS) of each fold. The passthrough exists only in
this wrapper, whose name says it; the wrapped anonymizer alone never passes data through.
The ``y`` of the pipeline is the classifier's target; it reaches the anonymizer as a bare
array standing for the one label column the method reads (its ``interest`` or ``sensitive``).
"""

from __future__ import annotations

from typing import Any

from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.validation import check_is_fitted

from .table import FeatureTable

__all__ = ["TrainOnRelease", "make_cas_pipeline"]


class TrainOnRelease(TransformerMixin, BaseEstimator):
    """Pipeline step: release the training data during ``fit``; pass predict-time data.

    Parameters
    ----------
    anonymizer : bioanon anonymizer
        Cloned and fitted on each training set.

    Attributes
    ----------
    anonymizer_ : the fitted clone.

    Notes
    -----
    ``fit_transform(X, y)`` returns the release of ``X``; ``transform(X)`` returns ``X``
    unchanged (as a float array) because at predict time a CAS consumer scores clear data.
    Do not use this step to release data: use the anonymizer itself.
    """

    def __init__(self, anonymizer: Any) -> None:
        self.anonymizer = anonymizer

    def fit(self, X: Any, y: Any = None) -> TrainOnRelease:
        """Fit a clone of the anonymizer on the training data."""
        self.anonymizer_ = clone(self.anonymizer).fit(X, y)
        self.n_features_in_ = self.anonymizer_.n_features_in_
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit and return the release of the training data (what the classifier trains on)."""
        self.anonymizer_ = clone(self.anonymizer)
        out = self.anonymizer_.fit_transform(X, y, **fit_params)
        self.n_features_in_ = self.anonymizer_.n_features_in_
        return out.X if isinstance(out, FeatureTable) else out

    def transform(self, X: Any) -> Any:
        """Predict time: the data pass untouched."""
        check_is_fitted(self, "anonymizer_")
        return X.X if isinstance(X, FeatureTable) else X

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = clone(self.anonymizer).__sklearn_tags__().target_tags.required
        return tags


def make_cas_pipeline(anonymizer: Any, *steps: Any) -> Pipeline:
    """``make_pipeline(TrainOnRelease(anonymizer), *steps)``: cross-validating it measures
    CAS (trained on the release, scored on clear data)."""
    return make_pipeline(TrainOnRelease(anonymizer), *steps)
