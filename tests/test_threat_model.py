"""Threat models, attacker modes, recognizer names and mixed training sets."""

from __future__ import annotations

import numpy as np
import pytest
from panel_helpers import IdentityTransform
from sklearn.linear_model import RidgeClassifierCV
from sklearn.naive_bayes import GaussianNB

from bioanon import evaluate
from bioanon.attack import (
    MODES,
    RECOGNIZERS,
    ThreatModel,
    make_recognizer,
    parse_models,
    parse_modes,
)
from bioanon.attack.attackers import LinkageAttacker, mix_mask, training_set
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError


def test_threat_model_states_knowledge_and_training_data():
    naive = ThreatModel("naive", "knn", seed=4).to_dict()
    parrot = ThreatModel("parrot75", "forest", seed=4).to_dict()
    assert naive["train_data"] == "clear" and naive["knows"].startswith("nothing")
    assert parrot["train_data"] == "mix: 75% anonymized"
    assert "parameters" in parrot["knows"] and parrot["anonymized_fraction"] == 0.75
    assert ThreatModel("reverse", "knn").probes == "clear"
    assert naive["seed"] == 4
    with pytest.raises(BioanonError, match="unknown attacker mode 'parot'"):
        ThreatModel("parot", "knn")


def test_parse_modes_and_models():
    assert parse_modes("all") == list(MODES)
    assert parse_modes(["linkage", "naive", "naive"]) == ["naive", "linkage"]
    with pytest.raises(BioanonError, match="did you mean 'reverse'"):
        parse_modes("revers")
    assert parse_models("all") == list(RECOGNIZERS)
    assert len(RECOGNIZERS) >= 6
    nb = GaussianNB()
    assert parse_models(["knn", nb, "knn"]) == ["knn", nb]
    with pytest.raises(BioanonError, match="unknown recognizer 'svm'"):
        parse_models("knn,svm")
    with pytest.raises(BioanonError, match="not a classifier"):
        parse_models([object()])


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75])
def test_mix_anonymizes_the_share_of_each_identity(fraction):
    y = np.repeat(["a", "b", "c"], [8, 12, 20])
    mask = mix_mask(y, fraction, seed=1)
    for v, n in zip("abc", [8, 12, 20], strict=True):
        assert mask[y == v].sum() == round(fraction * n)
    X, A = np.zeros((40, 2)), np.ones((40, 2))
    mixed = training_set(X, A, y, fraction, seed=0)
    assert mixed[:, 0].sum() == mix_mask(y, fraction, seed=round(100 * fraction)).sum()
    assert training_set(X, A, y, 0.0, 0) is X and training_set(X, A, y, 1.0, 0) is A


def test_every_zoo_recognizer_and_an_object_run_in_the_panel():
    t = make_biometric(n_identities=4, records_per_identity=20, n_features=32, random_state=2)
    r = evaluate(t, "expression", "identity", models=[*RECOGNIZERS, RidgeClassifierCV()],
                 attackers="naive", random_state=0, anonymizer=IdentityTransform())
    names = [a["model"] for a in r["privacy"]["attacks"]]
    assert names == [*RECOGNIZERS, "RidgeClassifierCV"]
    # a classifier without predict_proba ranks by its decision values: top-k but no KL
    ridge = r["privacy"]["attacks"][-1]
    assert "ci" in ridge and ridge["top_k"][0] == pytest.approx(ridge["accuracy"])
    assert ridge["kl_uniform"] is None
    # boosting needs more than 60 training records to shine; every other one is > 0.9 here
    assert min(c["accuracy"] for c in r["privacy"]["clear"] if c["model"] != "hgb") > 0.9
    assert next(c for c in r["privacy"]["clear"] if c["model"] == "hgb")["accuracy"] > 0.8


def test_linkage_class_scores_rank_the_nearest_class_first():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 16)) * 5
    y = np.repeat(["a", "b", "c"], 10)
    X = centres[np.searchsorted(["a", "b", "c"], y)] + rng.normal(size=(30, 16))
    att = LinkageAttacker(k=3).fit(X, y)
    scores, classes = att.class_scores(X + 0.01)
    assert list(classes) == ["a", "b", "c"]
    assert (classes[scores.argmax(1)] == att.predict(X + 0.01)).all()
    assert (classes[scores.argmax(1)] == y).all()


def test_register_a_recognizer_by_name():
    from sklearn.tree import DecisionTreeClassifier

    from bioanon.attack import register_recognizer

    register_recognizer("tree", DecisionTreeClassifier(max_depth=3))
    try:
        assert make_recognizer("tree", 7).random_state == 7
        assert "tree" in parse_models("all")
        t = make_biometric(n_identities=4, records_per_identity=20, n_features=32,
                           random_state=2)
        r = evaluate(t, "expression", "identity", models="tree,knn", attackers="naive",
                     anonymizer=IdentityTransform(), random_state=0)
        assert [a["model"] for a in r["privacy"]["attacks"]] == ["tree", "knn"]
    finally:
        RECOGNIZERS.pop("tree", None)
    with pytest.raises(BioanonError, match="must be a non-empty word"):
        register_recognizer("all", DecisionTreeClassifier())
