"""The recognizer zoo: conceptually different classifiers in standardizing pipelines.

Any attacker or utility judge is one of these, named, or any scikit-learn classifier object.
The defaults are tuned for speed on feature tables of a few thousand records × a few hundred
features (one core each; the panel runs several in parallel) while staying strong on clear
data: every recognizer reaches ≥ 0.96 speaker accuracy on the FSDD MFCC table.

Every recognizer exposes ``predict_proba``; the SVMs get theirs from 2-fold temperature
scaling (``CalibratedClassifierCV(..., method="temperature")``), the others natively.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import BioanonError, suggest

if TYPE_CHECKING:
    from sklearn.base import ClassifierMixin
    from sklearn.pipeline import Pipeline

# scikit-learn is imported inside each factory: naming or checking a recognizer (the options,
# the plan) does not bring it


def _forest(seed: int | None) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=100, n_jobs=-1, random_state=seed)


#: the trees of the forest a search's tuning split ranks its settings by where the linear
#: consumers alone fall short (``ranking_forest``; :mod:`bioanon.certification.search.ranking`)
RANKING_FOREST_TREES = 50


def _ranking_forest(seed: int | None) -> Any:
    """The consumer's forest with half its trees: a ranking proxy, never a headline."""
    return _forest(seed).set_params(n_estimators=RANKING_FOREST_TREES)


def _calibrated(svm: Any) -> Any:
    from sklearn.calibration import CalibratedClassifierCV

    return CalibratedClassifierCV(svm, method="temperature", cv=2, ensemble=False)


def _linear_svm(seed: int | None) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    svm = LinearSVC(C=0.01, dual=False, max_iter=2000, random_state=seed)
    return make_pipeline(StandardScaler(), _calibrated(svm))


def _rbf_svm(seed: int | None) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return make_pipeline(StandardScaler(),
                         _calibrated(SVC(C=10.0, gamma="scale", random_state=seed)))


def _knn(seed: int | None) -> Any:
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from .capped_knn import CappedKNeighbors  # fewer records than neighbours: all of them

    # the steps named as make_pipeline names scikit-learn's own k-NN
    return Pipeline([("standardscaler", StandardScaler()), ("kneighborsclassifier",
                     CappedKNeighbors(n_neighbors=5, metric="cosine", weights="distance"))])


def _mlp(seed: int | None) -> Any:
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(128,), alpha=1e-3,
                                                         max_iter=200, early_stopping=True,
                                                         random_state=seed))


def _logreg(seed: int | None) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))


def _pca_svm(seed: int | None) -> Any:
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    # eigen-style: whitened principal components keeping 95% of the variance, then an SVM
    return make_pipeline(StandardScaler(),
                         PCA(n_components=0.95, whiten=True, svd_solver="full"),
                         _calibrated(SVC(C=10.0, gamma="scale", random_state=seed)))


def _hgb(seed: int | None) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    # histogram gradient boosting: few bins and shallow trees keep it a few seconds per fit
    return HistGradientBoostingClassifier(max_iter=60, learning_rate=0.2, max_leaf_nodes=15,
                                          max_bins=32, early_stopping=False,
                                          random_state=seed)


def _dlib_embedding(seed: int | None) -> Any:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    from .pretrained import DlibEmbedding

    return make_pipeline(DlibEmbedding(), StandardScaler(),
                         _calibrated(LinearSVC(C=0.1, dual=False, random_state=seed)))


def _lda(seed: int | None) -> Any:
    from .scalable import lda

    return lda(seed)


def _metric_knn(seed: int | None) -> Any:
    from .scalable import metric_knn

    return metric_knn(seed)


def _cosine_knn(seed: int | None) -> Any:
    from .scalable import cosine_knn

    return cosine_knn(seed)


RECOGNIZERS: dict[str, Callable[[int | None], Any]] = {
    "forest": _forest,
    "linear_svm": _linear_svm,
    "rbf_svm": _rbf_svm,
    "knn": _knn,
    "mlp": _mlp,
    "logreg": _logreg,
    "pca_svm": _pca_svm,
    "hgb": _hgb,
}
#: recognizers that apply only to some tables (added to the panel when they apply)
OPTIONAL_RECOGNIZERS: dict[str, Callable[[int | None], Any]] = {
    "dlib_embedding": _dlib_embedding,
    # the forest a search's tuning split ranks by where the linear consumers fall short
    # (half the trees: SP-SW-HAR's search judges 25 releases with it)
    "ranking_forest": _ranking_forest,
    # one-pass recognizers for many identities (the panel substitutes them above
    # SCALE_CLASSES identities; see bioanon.attack.scalable)
    "lda": _lda,
    "metric_knn": _metric_knn,
    "cosine_knn": _cosine_knn,
}
DEFAULT_MODELS = ("forest", "linear_svm", "knn")


def register_recognizer(name: str, recognizer: Callable[[int | None], Any] | Any) -> None:
    """Add a recognizer to the zoo under ``name`` (then usable in ``models`` and ``--models``).

    ``recognizer`` is a factory taking a seed, or an estimator (cloned per use; its
    ``random_state``, if any, is set to the evaluation seed).

    Examples
    --------
    >>> from sklearn.naive_bayes import GaussianNB
    >>> register_recognizer("gnb", GaussianNB())
    >>> type(make_recognizer("gnb")).__name__
    'GaussianNB'
    >>> del RECOGNIZERS["gnb"]
    """
    if not isinstance(name, str) or not name or "," in name or name == "all":
        raise BioanonError(f"recognizer name {name!r} must be a non-empty word other than 'all'")
    if callable(recognizer) and not hasattr(recognizer, "fit"):
        RECOGNIZERS[name] = recognizer
        return
    if not hasattr(recognizer, "fit") or not hasattr(recognizer, "predict"):
        raise BioanonError(f"recognizer {recognizer!r} is not a classifier (no fit/predict)")

    def factory(seed: int | None) -> Any:
        from sklearn.base import clone

        est = clone(recognizer)
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=seed)
        return est

    RECOGNIZERS[name] = factory


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
    check_recognizer(model)
    if isinstance(model, str):
        if model in OPTIONAL_RECOGNIZERS:
            return OPTIONAL_RECOGNIZERS[model](random_state)
        return RECOGNIZERS[model](random_state)
    from sklearn.base import clone

    return clone(model)


def check_recognizer(model: Any) -> None:
    """Refuse an unknown recognizer name or an object that is no classifier (one line)."""
    if isinstance(model, str):
        if model not in RECOGNIZERS and model not in OPTIONAL_RECOGNIZERS:
            raise BioanonError(
                f"unknown recognizer '{model}'{suggest(model, RECOGNIZERS)}; choose from "
                f"{', '.join(RECOGNIZERS)} or all"
            )
    elif not hasattr(model, "fit") or not hasattr(model, "predict"):
        raise BioanonError(f"recognizer {model!r} is not a classifier (no fit/predict); pass a "
                           "scikit-learn classifier or one of " + ", ".join(RECOGNIZERS))


def single_threaded(est: Any) -> Any:
    """Set every ``n_jobs`` parameter of ``est`` (nested too) to 1, for use inside a worker."""
    params = {k: 1 for k, v in est.get_params(deep=True).items()
              if k.split("__")[-1] == "n_jobs" and v not in (None, 1)}
    return est.set_params(**params) if params else est


def model_name(model: Any) -> str:
    """Display name of a recognizer given by name or object."""
    return model if isinstance(model, str) else type(model).__name__


def parse_models(models: str | Any) -> list[Any]:
    """Recognizers from ``"all"``, ``"knn,forest"``, or a sequence of names/estimators.

    Unknown names raise a one-line :class:`BioanonError`; duplicates are dropped.

    Examples
    --------
    >>> parse_models("knn, forest")
    ['knn', 'forest']
    >>> len(parse_models("all"))
    8
    """
    if isinstance(models, str):
        items: list[Any] = [m.strip() for m in models.split(",") if m.strip()]
        if items == ["all"]:
            return list(RECOGNIZERS)
    else:
        try:
            items = list(models)
        except TypeError:
            raise BioanonError(f"models={models!r} names no recognizer; name them, e.g. "
                               "models=knn,forest", parameter="models") from None
    if not items:
        raise BioanonError("no recognizer given; name at least one, e.g. models=knn,forest",
                           parameter="models")
    out: list[Any] = []
    seen: set[str] = set()
    for m in items:
        if isinstance(m, str) and m == "all":
            for name in RECOGNIZERS:
                if name not in seen:
                    seen.add(name)
                    out.append(name)
            continue
        check_recognizer(m)  # validates names and objects (building none)
        key = model_name(m) if isinstance(m, str) else f"{model_name(m)}@{id(m)}"
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
