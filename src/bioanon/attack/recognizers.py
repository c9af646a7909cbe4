"""The recognizer zoo: conceptually different classifiers in standardizing pipelines.

Any attacker or utility judge is one of these, named, or any scikit-learn classifier object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sklearn.base import ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from ..errors import BioanonError, suggest


def _forest(seed: int | None) -> Any:
    return RandomForestClassifier(n_estimators=200, n_jobs=-1, random_state=seed)


def _linear_svm(seed: int | None) -> Any:
    svm = LinearSVC(C=0.1, dual="auto", max_iter=5000, random_state=seed)
    return make_pipeline(StandardScaler(), CalibratedClassifierCV(svm, cv=3))


def _rbf_svm(seed: int | None) -> Any:
    return make_pipeline(StandardScaler(), SVC(C=10.0, gamma="scale", probability=True,
                                               random_state=seed))


def _knn(seed: int | None) -> Any:
    return make_pipeline(StandardScaler(),
                         KNeighborsClassifier(n_neighbors=5, metric="cosine", weights="distance"))


def _mlp(seed: int | None) -> Any:
    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-3,
                                                         max_iter=300, early_stopping=True,
                                                         random_state=seed))


def _logreg(seed: int | None) -> Any:
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))


def _pca_svm(seed: int | None) -> Any:
    return make_pipeline(StandardScaler(), PCA(n_components=0.95, whiten=True, random_state=seed),
                         SVC(kernel="linear", C=1.0, probability=True, random_state=seed))


RECOGNIZERS: dict[str, Callable[[int | None], Any]] = {
    "forest": _forest,
    "linear_svm": _linear_svm,
    "rbf_svm": _rbf_svm,
    "knn": _knn,
    "mlp": _mlp,
    "logreg": _logreg,
    "pca_svm": _pca_svm,
}
DEFAULT_MODELS = ("forest", "linear_svm", "knn")


def make_recognizer(model: str | ClassifierMixin | Pipeline,
                    random_state: int | None = None) -> Any:
    """Return a fresh, unfitted recognizer.

    Parameters
    ----------
    model : str or estimator
        A name from :data:`RECOGNIZERS` or any scikit-learn classifier (cloned).
    random_state : int or None

    Examples
    --------
    >>> make_recognizer("knn").steps[-1][0]
    'kneighborsclassifier'
    """
    if isinstance(model, str):
        if model not in RECOGNIZERS:
            raise BioanonError(
                f"unknown recognizer '{model}'{suggest(model, RECOGNIZERS)}; choose from "
                f"{', '.join(RECOGNIZERS)}"
            )
        return RECOGNIZERS[model](random_state)
    return clone(model)


def model_name(model: Any) -> str:
    """Display name of a recognizer given by name or object."""
    return model if isinstance(model, str) else type(model).__name__
