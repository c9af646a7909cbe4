"""The judge v2: baselines, intervals, membership, contributors, verdict, and the secrets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from typer.testing import CliRunner

from bioanon import evaluate
from bioanon.anonymize import GaussianNoiseAnonymizer
from bioanon.anonymize.base import AnonymizerMixin, split_input
from bioanon.attack.contributors import contributor_disclosure
from bioanon.attack.control import control_rate
from bioanon.attack.membership import membership_auc, membership_scores
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation, derive_seed, verdict
from bioanon.metrics.intervals import auc_interval, newcombe_difference
from bioanon.report.build import build_report

FAST = {"models": ["knn"], "attackers": ["naive", "parrot", "linkage"], "n_jobs": 1,
        "verification": False}


# ------------------------------------------------------------------ hand-computed fixtures
def test_control_baseline_on_a_six_record_table():
    # gender m → identity a (2 of 3), f → c (2 of 3); test: a b c d a c guessed a a c c a c
    train = pd.DataFrame({"g": ["m", "m", "m", "f", "f", "f"]})
    y_train = np.array(["a", "a", "b", "c", "c", "d"])
    test = pd.DataFrame({"g": ["m", "m", "f", "f", "m", "f"]})
    y_test = np.array(["a", "b", "c", "d", "a", "c"])
    r = control_rate(train, y_train, test, y_test, ["g"])
    assert (r.successes, r.n) == (4, 6)
    # no released label: the commonest identity overall (a and c tie; sorted: a) → 2 of 6
    assert control_rate(train, y_train, test, y_test, []).successes == 2


def test_advantage_interval_matches_newcombe_and_wilson():
    # Newcombe (1998), method 10, example (56/70 vs 48/80): 0.2 [0.0524, 0.3339]
    d, lo, hi = newcombe_difference(56, 70, 48, 80)
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (0.2, 0.0524, 0.3339)
    # against a known chance of 0.5: Wilson(8/10) = [0.4902, 0.9433] shifted by 0.5
    d, lo, hi = newcombe_difference(8, 10, None, None, p2=0.5)
    assert (round(d, 4), round(lo, 4), round(hi, 4)) == (0.3, -0.0098, 0.4433)


def test_membership_auc_on_a_six_record_table():
    # members score 0.9, 0.8, 0.4; non-members 0.5, 0.3, 0.1: 8 of 9 pairs ordered → 8/9
    scores = {"s": np.array([0.9, 0.8, 0.4, 0.5, 0.3, 0.1])}
    r = membership_auc(scores, np.array([1, 1, 1, 0, 0, 0], bool), "record")
    assert r.auc == pytest.approx(8 / 9)
    assert r.ci == pytest.approx(auc_interval(8 / 9, 3, 3))
    # a release that copies its members: every attacker tells them apart (AUC 1)
    rng = np.random.default_rng(0)
    cand = rng.normal(size=(6, 5))
    r = membership_auc(membership_scores(cand, cand[:3]), np.r_[[True] * 3, [False] * 3],
                       "record")
    assert r.auc == 1.0


# ------------------------------------------------------------------ contributor disclosure
class CopyDonor(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """Each released record is a copy of another identity's record (or fresh noise)."""

    def __init__(self, copy: bool = True, identity: str = "identity",
                 random_state: int | None = None) -> None:
        self.copy = copy
        self.identity = identity
        self.random_state = random_state

    def fit(self, X, labels=None):
        return self

    def _release(self, X, labels):
        ident = labels[self.identity].astype(str).to_numpy()
        order = np.argsort(ident, kind="stable")
        donor = np.empty(len(ident), dtype=np.int64)
        donor[order] = np.roll(order, len(ident) // 2)  # half-way round: another identity
        rng = np.random.default_rng(self.random_state)
        out = X[donor] if self.copy else rng.normal(size=X.shape)
        M = sp.csr_matrix((np.ones(len(ident)), (np.arange(len(ident)), donor)),
                          shape=(len(ident),) * 2)
        return out.astype(np.float32), M

    def transform(self, X, labels=None):
        X, labels = split_input(X, labels)
        return self._release(X, labels)[0]

    def release_with_mixing(self, X, labels=None):
        X, labels = split_input(X, labels)
        return self._release(X, labels)


@pytest.fixture(scope="module")
def small():
    return make_biometric(n_identities=6, records_per_identity=24, n_features=32,
                          random_state=4)


def test_copied_donors_fire_contributor_disclosure(small):
    ev = Evaluation(small, "expression", "identity", anonymizer=CopyDonor(True), **FAST)
    c = ev.evaluate().contributors()
    assert c is not None and c.fires and c.rate.value > 0.8
    assert not c.own_identity_included
    rep = build_report(ev)
    assert rep["privacy"]["contributors"]["fires"] is True
    # the mixing matrix is used in process and written nowhere
    assert "donor" not in json.dumps(rep.to_dict()) and not hasattr(ev, "mixing_")


def test_uncopied_release_does_not_fire(small):
    c = Evaluation(small, "expression", "identity", anonymizer=CopyDonor(False),
                   **FAST).evaluate().contributors()
    assert c is not None and not c.fires


def test_contributor_base_rate_by_hand():
    M = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]]))
    ids = np.array(["a", "b", "c", "d"])
    r = contributor_disclosure(M, ids, np.array(["b", "a", "a", "a"]), "x")
    # hits: row 0 {a,b} ∋ b, row 1 {b,c} ∌ a, row 2 {c,d} ∌ a, row 3 {a,d} ∋ a → 2/4
    assert r.rate.value == 0.5 and r.base_rate == 0.5 and r.own_identity_included


# ------------------------------------------------------------------ baselines in the protocol
def test_control_beats_chance_when_a_released_label_narrows_identity():
    t = make_biometric(n_identities=8, records_per_identity=20, n_features=32, random_state=1)
    ev = Evaluation(t, "expression", "identity", additional={"gender": 0.5},
                    anonymizer=CopyDonor(False), **FAST).evaluate()
    assert ev.control().value > ev.chance() + 0.05  # gender halves the candidates
    assert ev.baseline()[1] == "control"
    w = ev.worst_case()
    assert w.advantage.value == pytest.approx(w.rate.value - ev.control().value)
    # gender is constant per identity: scored on identities never seen in training
    u = ev.utility()["gender"]
    assert u.split == "unseen identities"
    rep = build_report(ev)
    assert any("not in training" in n for n in rep["utility"]["notes"])
    assert rep["verdict"]["control"] == ev.control().value


def test_identity_release_fails_the_verdict_and_noise_meets_a_loose_one(small, tmp_path):
    class Same(CopyDonor):
        def _release(self, X, labels):
            return X.astype(np.float32), sp.identity(len(X), format="csr")

    rep = evaluate(small, "expression", "identity", anonymizer=Same(), **FAST)
    v = rep["verdict"]
    assert not v["met"] and v["worst_case"]["accuracy"] > 0.9
    assert rep["privacy"]["membership"][0]["auc"] > 0.95
    assert v["sentence"].startswith("Privacy target NOT met")
    page = rep.write(tmp_path)["html"].read_text()
    # the page opens with the risk table, then the verdict sentence, before any other section
    assert page.index("id='risk-table'") < page.index("id='verdict'") < \
        page.index("<h2>", page.index("id='verdict'"))
    for section in ("Membership disclosure", "Contributor disclosure", "VoicePrivacy",
                    "Baselines"):
        assert section in page
    rep = evaluate(small, "expression", "identity", anonymizer=CopyDonor(False),
                   target_advantage=0.3, **FAST)
    # recognition is within the loose target (membership and inference are judged apart)
    assert rep["verdict"]["recognition_met"] and verdict(rep, 0.3).recognition_met
    assert 0.3 < rep["privacy"]["membership"][0]["auc"] < 0.7
    # the cross-fitted worst case is never above the max over attacks on the same records
    cf = rep["privacy"]["worst_case_crossfit"]
    assert cf["accuracy"] <= rep["privacy"]["worst_case"]["accuracy"]
    assert len(cf["attackers"]) == 2


# ------------------------------------------------------------------ secrets (issue 11)
class SeedSpy(CopyDonor):
    seeds: list = []

    def _release(self, X, labels):
        SeedSpy.seeds.append(self.random_state)
        return super()._release(X, labels)


def test_the_evaluation_seed_never_seeds_the_anonymizer(small):
    SeedSpy.seeds = []
    Evaluation(small, "expression", "identity", anonymizer=SeedSpy(False), random_state=7,
               membership=False, **FAST).evaluate()
    # the judged release's seed is derived one way from the evaluation's; every other release
    # (the training split's, the record games', the identity releases') one way from that
    own = derive_seed(7, "anonymizer")
    others = {derive_seed(own, p) % 2**31 for p in
              ["train split", *(f"record game/{g}" for g in range(2, 6)),
               *(f"identity release/{f}" for f in range(1, 6))]}
    assert own in SeedSpy.seeds
    assert derive_seed(own, "train split") % 2**31 in SeedSpy.seeds
    assert all(s == own or s in others for s in SeedSpy.seeds)
    assert 7 not in SeedSpy.seeds


def test_cli_evaluate_secrets(small, tmp_path, monkeypatch):
    import bioanon.cli.common as common
    from bioanon.cli import app

    seen = []
    real = common.build_method

    def spy(name, params=None, **kw):
        seen.append(kw.get("random_state"))
        return real(name, params, **kw)

    monkeypatch.setattr(common, "build_method", spy)
    src = tmp_path / "secret-folder" / "faces.parquet"
    src.parent.mkdir()
    small.write(src)
    runner = CliRunner()
    out = tmp_path / "rep"
    res = runner.invoke(app, ["evaluate", str(src), "--interest", "expression", "--sensitive",
                              "identity", "--method", "noise", "--sigma", "1", "--seed", "5",
                              "--models", "knn", "--attackers", "naive,parrot", "--selection",
                              "none", "--jobs", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert seen == [derive_seed(5, "anonymizer")]  # not 5
    for name in ("report.json", "report.html"):
        text = (out / name).read_text()
        assert str(src.parent) not in text and "secret-folder" not in text
        assert "faces.parquet" in text
        assert str(derive_seed(5, "anonymizer")) not in text
    doc = json.loads((out / "report.json").read_text())
    from bioanon.report.verdict_points import verdict_points

    head, points = verdict_points(doc["verdict"])  # the verdict as a short list
    flat = " ".join(res.output.split())
    assert f"verdict: {head}" in flat and all(" ".join(p.split()) in flat for p in points)
    assert "contact sheet" not in res.output  # not a pixel table, no --preview
    raw = runner.invoke(app, ["evaluate", "--help"]).output
    help_text = " ".join(raw.replace("│", " ").split())
    assert "written to report.json" in help_text and "not written" in help_text


def test_cli_preview_is_opt_in_and_announced(tmp_path):
    from bioanon.cli import app

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=3)
    t.meta["image_shape"] = [4, 8]
    src = tmp_path / "px.parquet"
    t.write(src)
    args = ["evaluate", str(src), "--interest", "expression", "--sensitive", "identity",
            "--method", "noise", "--sigma", "1", "--models", "knn", "--attackers", "naive",
            "--selection", "none", "--jobs", "1"]
    runner = CliRunner()
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    assert "release looks like" not in (tmp_path / "a" / "report.html").read_text()
    res = runner.invoke(app, [*args, "--preview", "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    assert "release looks like" in (tmp_path / "b" / "report.html").read_text()
    assert "contact sheet" in res.output and "keep it private" in res.output


def test_face_pixel_tables_get_the_pretrained_recognizer():
    from bioanon.attack.pretrained import available

    if not available():
        pytest.skip("the face extra (dlib and its model files) is not installed")
    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(4), 8)
    base = rng.random((4, 16 * 16))
    X = np.clip(base[ids] + 0.05 * rng.normal(size=(32, 256)), 0, 1).astype(np.float32)
    from bioanon.table import FeatureTable

    t = FeatureTable(X, pd.DataFrame({"subject": ids.astype(str),
                                      "glasses": np.tile(["y", "n"], 16)}),
                     meta={"image_shape": [16, 16]})
    ev = Evaluation(t, "glasses", "subject", models="all", attackers="naive")
    ev._check()
    assert "dlib_embedding" in ev.model_list and "hgb" in ev.model_list
    rep = evaluate(t, "glasses", "subject", models=["dlib_embedding"], attackers=["naive"],
                   anonymizer=CopyDonor(False, "subject"), n_jobs=1, membership=False,
                   verification=False)
    assert [a["model"] for a in rep["privacy"]["attacks"]] == ["dlib_embedding"]
    assert rep["privacy"]["clear"][0]["accuracy"] > 0.5  # the embedding separates the faces


def test_the_verdict_judges_the_cross_fitted_worst_case_and_names_the_maximum(small):
    """The max over ~30 attacks is biased upwards: the verdict reads the cross-fitted bound,
    and reports the plain maximum beside it."""
    rep = evaluate(small, "expression", "identity", anonymizer=CopyDonor(False), **FAST)
    p, cf = rep["privacy"], rep["privacy"]["worst_case_crossfit"]
    v = rep["verdict"]
    assert v["judged_by"] == "cross-fitted worst case"
    assert v["advantage"]["ci"] == cf["advantage"]["ci"]
    assert v["worst_case"]["accuracy"] == cf["accuracy"]
    assert v["max_over_panel"]["accuracy"] == p["worst_case"]["accuracy"]
    assert "plain maximum over the panel" in v["sentence"]
    # a target between the two upper bounds: met by the cross-fitted rule, not by the max
    lo, hi = cf["advantage"]["ci"][1], p["advantage"]["ci"][1]
    if lo < hi:
        mid = (lo + hi) / 2
        assert verdict(rep, mid).recognition_met
        assert not verdict({**rep, "privacy": {**p, "worst_case_crossfit": None}},
                           mid).recognition_met
    # without a cross-fitted figure the verdict falls back to the maximum, and says so
    fallback = verdict({**rep, "privacy": {**p, "worst_case_crossfit": None}}, 0.05)
    assert fallback.judged_by.startswith("maximum") and fallback.accuracy == \
        p["worst_case"]["accuracy"]


def test_a_table_larger_than_max_records_is_judged_on_a_stratified_sample_and_says_so():
    t = make_biometric(n_identities=8, records_per_identity=40, n_features=32, random_state=2)
    ev = Evaluation(t, "expression", "identity", models=["knn"], attackers=["naive", "parrot"],
                    anonymizer=GaussianNoiseAnonymizer(sigma=1.0), n_jobs=1,
                    membership=False, verification=False, max_records=160).evaluate()
    doc = build_report(ev)
    sample = doc["dataset"]["panel_sample"]
    assert sample["sampled"] and sample["n_records"] <= 160 < sample["total_records"] == 320
    assert sample["n_identities"] == sample["total_identities"] == 8  # every identity kept
    assert doc["verdict"]["sample"] == sample
    assert "stratified sample" in doc["verdict"]["sentence"]
    assert doc["dataset"]["n_records"] == sample["n_records"]
    # a table within the bound is judged whole and says nothing about sampling
    whole = build_report(Evaluation(t, "expression", "identity", models=["knn"],
                                    attackers=["naive"],
                                    anonymizer=GaussianNoiseAnonymizer(sigma=1.0), n_jobs=1,
                                    membership=False, verification=False).evaluate())
    assert whole["dataset"]["panel_sample"] is None and "sample" not in whole["verdict"]
