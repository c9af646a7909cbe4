"""The first evaluation protocol: stable report keys and attacks that respond to the transform."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin

from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.anonymize.base import AnonymizerMixin, split_input
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError


class Identity(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """Releases the data unchanged: the worst possible anonymizer."""

    def fit(self, X, labels=None):
        return self

    def transform(self, X, labels=None):
        return split_input(X, labels)[0].copy()


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=10, records_per_identity=40, n_features=48,
                          random_state=2)


def test_report_has_the_stable_keys(table, tmp_path):
    r = evaluate(table, "expression", "identity", additional={"environment": 0.5},
                 anonymizer=SelectiveMeanAnonymizer("expression", g=16, r_p=0.05,
                                                    random_state=0),
                 models=["forest", "knn"])
    assert 0 <= r["utility"]["interest"]["clear"] <= 1
    assert 0 <= r["utility"]["interest"]["anonymized"] <= 1
    u = r["utility"]
    assert u["U"] == pytest.approx(u["interest"]["anonymized"]
                                   + 0.5 * u["additional"]["environment"]["anonymized"])
    assert r["privacy"]["chance"] == pytest.approx(0.1, abs=0.02)
    modes = {(a["mode"], a["model"]) for a in r["privacy"]["attacks"]}
    assert {("naive", "forest"), ("parrot", "forest"), ("naive", "knn"),
            ("linkage", "cosine_nn")} <= modes
    best = max(a["accuracy"] for a in r["privacy"]["attacks"])
    assert r["privacy"]["worst_case"]["accuracy"] == best
    assert "random_state" not in r["params"]["anonymizer"]
    paths = r.write(tmp_path)
    data = json.loads(paths["json"].read_text())
    assert data["privacy"]["worst_case"]["accuracy"] == pytest.approx(best)
    assert "<img" in paths["html"].read_text()


def test_identity_transform_is_caught_by_the_attackers(table):
    r = evaluate(table, "expression", "identity", anonymizer=Identity(), models=["knn"])
    clear = r["privacy"]["clear"][0]["accuracy"]
    assert clear > 0.8
    assert r["privacy"]["worst_case"]["accuracy"] >= clear - 0.02
    link = next(a for a in r["privacy"]["attacks"] if a["mode"] == "linkage")
    assert link["record_top_k"][0] == 1.0  # every record links to itself


def test_mixing_pushes_attacks_toward_chance(table):
    strong = SelectiveMeanAnonymizer("expression", g=24, t=0.8, w=1, r_p=0.0, random_state=0)
    r = evaluate(table, "expression", "identity", anonymizer=strong, models=["knn", "forest"])
    clear = max(a["accuracy"] for a in r["privacy"]["clear"])
    assert r["privacy"]["worst_case"]["accuracy"] < 0.5 * clear
    assert r["utility"]["interest"]["anonymized"] > 0.8


def test_bad_roles_and_columns(table):
    with pytest.raises(BioanonError, match="both sensitive and useful"):
        evaluate(table, "expression", "expression", anonymizer=Identity())
    with pytest.raises(BioanonError, match="did you mean 'identity'"):
        evaluate(table, "expression", "identty", anonymizer=Identity())


def test_kl_is_zero_for_uniform_and_positive_otherwise():
    from bioanon.metrics import kl_from_uniform, top_k_accuracy

    assert kl_from_uniform(np.full((4, 5), 0.2)) == pytest.approx(0.0)
    assert kl_from_uniform(np.eye(5)) == pytest.approx(np.log(5), rel=1e-6)
    proba = np.array([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]])
    assert top_k_accuracy(proba, np.array(["a", "b", "c"]), np.array(["c", "b"]), 3) == [
        0.0, 0.5, 1.0]


def test_contact_sheet_is_opt_in_and_uncaptioned(tmp_path, monkeypatch):
    import bioanon.report.preview as pv

    seen = []
    real = pv.contact_sheet
    monkeypatch.setattr(pv, "contact_sheet",
                        lambda *a, **k: seen.append(a[3] if len(a) > 3 else k.get("captions"))
                        or real(*a, **k))
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=3)
    t.meta["image_shape"] = [4, 8]
    kw = dict(anonymizer=Identity(), models=["knn"], attackers=["naive"], selection=[],
              membership=False, verification=False)
    r = evaluate(t, "expression", "identity", **kw)
    assert r.figures == {}  # off by default: it shows originals
    r = evaluate(t, "expression", "identity", preview=True, **kw)
    paths = r.write(tmp_path)
    assert len(r.figures) == 1
    assert "release looks like" in paths["html"].read_text()
    assert "release looks like" not in paths["json"].read_text()
    assert seen == [None]  # drawn without captions: no sensitive value on the sheet


def test_utility_views_reuse_the_clear_model_across_settings(monkeypatch):
    """A search judges every setting on one split: the model trained on clear records is
    fitted once (shared cache), the one trained on each release every time; same figures."""
    from bioanon.attack import ModelCache
    from bioanon.evaluation import split_table
    from bioanon.evaluation import utility as utility_mod

    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=2)
    tr, te = split_table(t, "expression", "identity", 0.25, 0)
    train, test = t.subset(tr), t.subset(te)
    rng = np.random.default_rng(0)
    fits = []
    real = utility_mod.make_recognizer
    monkeypatch.setattr(utility_mod, "make_recognizer",
                        lambda *a, **k: fits.append(1) or real(*a, **k))
    cache = ModelCache()
    for _ in range(2):
        anon_tr = train.X + rng.normal(size=train.X.shape).astype(np.float32)
        anon_te = test.X + rng.normal(size=test.X.shape).astype(np.float32)
        shared = utility_mod.utility_views(train, test, anon_tr, anon_te, ["expression"],
                                           "logreg", 0, 1, cache=cache)
        alone = utility_mod.utility_views(train, test, anon_tr, anon_te, ["expression"],
                                          "logreg", 0, 1)
        assert shared == alone
    assert len(fits) == 3 + 4  # shared: clear once + release twice; alone: 2 × 2


@pytest.mark.parametrize("scale", [1e18, 1e30])
def test_features_in_far_units_are_judged_without_numpy_overflow(scale):
    """Features of 1e18 or more (nanosecond timestamps, other units): a membership
    attacker's standardization squared them in float32 (NumPy's "overflow encountered in
    square" printed by a valid run; a scale of inf: that attacker read every record alike).
    No warning now, and the figure is the one read in the table's own units."""
    import warnings

    from bioanon.table import FeatureTable

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32,
                       random_state=0)
    far = FeatureTable(t.X.astype(np.float64) * scale, t.labels, t.feature_names)

    def membership(table):
        rep = evaluate(table, "expression", "identity",
                       anonymizer=SelectiveMeanAnonymizer("expression", g=4, t=0.5,
                                                          random_state=0), random_state=0)
        return [r["value"] for r in rep["risks"] if r["name"] == "record-membership"]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert membership(far) == pytest.approx(membership(t), abs=0.05)
