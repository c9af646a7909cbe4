"""One-pass recognizers for many identities, and the panel's substitutions above a size."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from bioanon.attack import make_recognizer, run_panel
from bioanon.attack.scalable import (
    SCALE_CLASSES,
    SCALED_SUBSTITUTES,
    CosineKNN,
    ShrunkLDA,
    WithinClassWhitener,
    substitute,
)
from bioanon.datasets import make_biometric
from bioanon.evaluation import split_table


@parametrize_with_checks([ShrunkLDA(), ShrunkLDA(scoring="mahalanobis"),
                          WithinClassWhitener()])
def test_sklearn_compatible(estimator: Any, check: Any) -> None:
    check(estimator)


@pytest.fixture(scope="module")
def many():
    """150 identities × 8 records: more classes than the panel's substitution threshold."""
    t = make_biometric(n_identities=150, records_per_identity=8, n_features=48,
                       random_state=2)
    tr, te = split_table(t, "expression", "identity", 0.25, 0)
    y = t.labels["identity"].astype(str).to_numpy()
    return t.X[tr], y[tr], t.X[te], y[te]


@pytest.mark.parametrize("name", ["lda", "metric_knn", "cosine_knn"])
def test_one_pass_recognizers_recognize_many_identities(many, name):
    X_tr, y_tr, X_te, y_te = many
    acc = (make_recognizer(name, 0).fit(X_tr, y_tr).predict(X_te) == y_te).mean()
    assert acc > 0.9, (name, acc)


def test_cosine_scoring_survives_records_pulled_to_the_mean(many):
    # an averaged release shrinks records towards the population mean: cosine scores ignore
    # the shrinkage, the Gaussian discriminant's quadratic term does not
    X_tr, y_tr, X_te, y_te = many
    shrunk = X_tr.mean(axis=0) + 0.15 * (X_te - X_tr.mean(axis=0))
    cos = (ShrunkLDA().fit(X_tr, y_tr).predict(shrunk) == y_te).mean()
    maha = (ShrunkLDA(scoring="mahalanobis").fit(X_tr, y_tr).predict(shrunk) == y_te).mean()
    assert cos > maha + 0.05, (cos, maha)


def test_probabilities_rank_like_the_scores(many):
    X_tr, y_tr, X_te, _ = many
    clf = ShrunkLDA().fit(X_tr, y_tr)
    p = clf.predict_proba(X_te)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert (np.argmax(p, axis=1) == np.argmax(clf.decision_function(X_te), axis=1)).all()
    assert clf.temperature_ > 0


def test_whitener_makes_the_pooled_within_class_spread_white():
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(30), 20)
    A = rng.normal(size=(6, 6))
    X = rng.normal(size=(30, 6))[y] * 5 + rng.normal(size=(600, 6)) @ A
    Z = WithinClassWhitener().fit(X, y).transform(X).astype(np.float64)
    means = np.stack([Z[y == c].mean(axis=0) for c in range(30)])
    R = Z - means[y]
    vals = np.linalg.eigvalsh(R.T @ R / R.shape[0])
    before = np.linalg.eigvalsh(A.T @ A)
    assert before.max() / before.min() > 10  # the raw within-class spread is far from white
    assert vals.min() > 0.5 and vals.max() < 1.5, vals  # whitened, up to the shrinkage


def test_substitute_only_above_the_threshold():
    assert substitute("forest", SCALE_CLASSES) == "forest"
    assert substitute("forest", SCALE_CLASSES + 1) == SCALED_SUBSTITUTES["forest"]
    assert substitute("linear_svm", 10_000, scale_classes=None) == "linear_svm"
    assert substitute("knn", 10_000) == "cosine_knn"  # the same vote, in float32 blocks
    est = make_recognizer("knn")
    assert substitute(est, 10_000) is est  # estimators given as objects are the user's call


def _panel(many, scale_classes=100, **kw):
    """The panel with the substitution threshold at ``scale_classes`` (the module's
    SCALE_CLASSES, which run_panel reads when it runs; a huge one never substitutes)."""
    import bioanon.attack.scalable as scalable

    X_tr, y_tr, X_te, y_te = many
    saved = scalable.SCALE_CLASSES
    scalable.SCALE_CLASSES = 10**9 if scale_classes is None else scale_classes
    try:
        return _run(X_tr, y_tr, X_te, y_te, **kw)
    finally:
        scalable.SCALE_CLASSES = saved


def _run(X_tr, y_tr, X_te, y_te, **kw):
    rng = np.random.default_rng(0)
    A_tr = X_tr + rng.normal(size=X_tr.shape)
    A_te = X_te + rng.normal(size=X_te.shape)
    return run_panel(X_tr, A_tr, y_tr, X_te, A_te, y_te, 1 / 150,
                     modes="naive,parrot,reverse", n_jobs=1, **kw)


def test_panel_names_every_substitution(many):
    p = _panel(many, models=["forest", "linear_svm", "knn"], scale_classes=100)
    subs = {s["model"]: s["substitute"] for s in p["substitutions"]}
    assert subs == {"forest": "metric_knn", "linear_svm": "lda", "knn": "cosine_knn"}
    assert all(s["n_classes"] == 150 and s["reason"] for s in p["substitutions"])
    fitted = {a["model"] for a in p["attacks"]}
    assert fitted == {"metric_knn", "lda", "cosine_knn"}
    for a in p["attacks"] + p["clear"]:
        if a["model"] == "lda":
            assert a["replaces"] == ["linear_svm"]


def test_panel_fits_a_shared_substitute_once(many):
    p = _panel(many, models=["linear_svm", "logreg", "lda"], scale_classes=100)
    assert [c["model"] for c in p["clear"]] == ["lda"]
    assert p["clear"][0]["replaces"] == ["linear_svm", "logreg"]


def test_panel_keeps_every_recognizer_below_the_threshold(many):
    p = _panel(many, models=["knn", "logreg"], scale_classes=None)
    assert p["substitutions"] == []
    assert {a["model"] for a in p["attacks"]} == {"knn", "logreg"}
    p = _panel(many, models=["knn", "logreg"], scale_classes=150)  # 150 classes: not above
    assert p["substitutions"] == []


@parametrize_with_checks([CosineKNN()])
def test_cosine_knn_sklearn_compatible(estimator: Any, check: Any) -> None:
    check(estimator)


def test_cosine_knn_votes_like_scikit_learn(many):
    X_tr, y_tr, X_te, _ = many
    ours = CosineKNN(n_neighbors=5, block=7).fit(X_tr, y_tr).predict_proba(X_te)
    ref = KNeighborsClassifier(n_neighbors=5, metric="cosine", weights="distance",
                               algorithm="brute").fit(X_tr, y_tr).predict_proba(X_te)
    assert np.allclose(ours, ref, atol=1e-4)


def test_evaluation_report_names_the_substitutes(monkeypatch):
    from bioanon import evaluate
    from bioanon.anonymize import SelectiveMeanAnonymizer
    from bioanon.attack import scalable

    monkeypatch.setattr(scalable, "SCALE_CLASSES", 3)  # 8 identities count as many here
    t = make_biometric(n_identities=8, records_per_identity=24, n_features=32, random_state=1)
    r = evaluate(t, "expression", "identity", n_jobs=1, membership=False, verification=False,
                 anonymizer=SelectiveMeanAnonymizer("expression", g=4, r_p=0.1))
    attacks = r["privacy"]["attacks"]
    assert {a["model"] for a in attacks} == {"metric_knn", "lda", "cosine_knn", "cosine_nn"}
    assert all(a["replaces"] == ["linear_svm"] for a in attacks if a["model"] == "lda")
    assert all(a["replaces"] == ["forest"] for a in attacks if a["model"] == "metric_knn")
    assert r["privacy"]["worst_case"]["model"] in {"metric_knn", "lda", "cosine_knn",
                                                   "cosine_nn"}
