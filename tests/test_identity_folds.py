"""The identity level over K releases: every identity is a non-member of exactly one release,
the fold statistics are right on hand tables, and a leak-free release reads no signal."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.datasets import make_biometric
from bioanon.evaluation.risks.base import IDENTITY_FOLDS, RiskContext
from bioanon.evaluation.risks.inference import InferenceRisk
from bioanon.evaluation.risks.membership import MembershipRisk
from bioanon.evaluation.split import split_table
from bioanon.metrics.results import RiskResult
from bioanon.metrics.risk_stats import crossfit_auc_folds, paired_advantage


class Copy:
    """Releases the records themselves."""

    def get_params(self, deep: bool = False) -> dict:
        return {}

    def fit_transform(self, X, y=None):
        return X.X.copy()


class Blind:
    """Draws from a fixed Gaussian: holds nothing of anyone."""

    def __init__(self, d: int) -> None:
        self.d = d

    def get_params(self, deep: bool = False) -> dict:
        return {"d": self.d}

    def set_params(self, **p):
        return self

    def fit_transform(self, X, y=None):
        return np.random.default_rng(7).normal(size=(X.n_records, self.d)).astype(np.float32)


def _ctx(anon, n_ids=30, seed=0):
    t = make_biometric(n_identities=n_ids, records_per_identity=12, n_features=32,
                       random_state=0)
    tr, te = split_table(t, "expression", "identity", 0.25, 0)
    train, test = t.subset(tr), t.subset(te)
    anon_test = anon.fit_transform(test)
    return RiskContext(train, test, anon_test, anon, "expression", "identity",
                       ["expression"], None, seed)


def test_every_identity_is_a_non_member_of_exactly_one_release():
    ctx = _ctx(Copy())
    rels = ctx.identity_releases()
    assert isinstance(rels, list) and len(rels) == IDENTITY_FOLDS
    ids = rels[0].ids
    times_out = sum((~r.member).astype(int) for r in rels)
    assert set(np.unique(times_out)) == {1}
    # a record's membership follows its identity, in every release
    for r in rels:
        out_ids = set(ids[~r.member])
        assert not out_ids & set(ids[r.member])
        assert set(r.labels["identity"].astype(str)) == set(ids[r.member])


def test_too_few_identities_for_the_folds_is_said_in_words():
    ctx = _ctx(Copy(), n_ids=6)
    why = ctx.identity_releases()
    assert isinstance(why, str) and "too few" in why


def test_fold_auc_on_a_hand_table():
    rng = np.random.default_rng(0)
    m0 = np.array([1, 1, 0, 0, 1, 1, 0, 0], bool)
    m1 = ~m0
    # "good" ranks every member above every non-member in both folds; "bad" inverts it
    s0 = {"good": m0 * 1.0, "bad": -(m0 * 1.0)}
    s1 = {"good": m1 * 1.0, "bad": -(m1 * 1.0)}
    half = np.array([1, 0, 1, 0, 1, 0, 1, 0], bool)
    r = crossfit_auc_folds([s0, s1], [m0, m1], half, rng, n_boot=50)
    assert r["auc"] == 1.0 and r["attackers"] == ["good", "good"]
    assert r["n_identities"] == 8 and r["n_folds"] == 2
    # an attacker that is right in one fold and wrong in the other averages to 0.5
    s1b = {"good": -(m1 * 1.0), "bad": m1 * 1.0}
    r2 = crossfit_auc_folds([s0, s1b], [m0, m1], half, rng, n_boot=50)
    assert r2["auc"] == 0.5


def test_fold_auc_of_pure_noise_covers_one_half():
    rng = np.random.default_rng(1)
    n = 300
    folds = np.arange(n) % 3
    members = [folds != f for f in range(3)]
    scores = [{f"a{k}": rng.normal(size=n) for k in range(5)} for _ in range(3)]
    r = crossfit_auc_folds(scores, members, rng.permutation(n) < n // 2, rng, n_boot=200)
    lo, hi = r["ci"]
    assert lo <= 0.5 <= hi and 0.52 < hi < 0.6
    assert r["null_upper"] == pytest.approx(0.5 + (hi - lo) / 2)


def test_paired_advantage_on_a_hand_table():
    d, lo, hi, null = paired_advantage(np.array([1.0, 0.5, 1.0]), np.array([0.5, 0.5, 0.5]))
    # differences 0.5, 0, 0.5: mean 1/3, sd 0.2887, half-width 1.96·0.2887/√3
    assert d == pytest.approx(1 / 3)
    assert hi - d == pytest.approx(1.959964 * 0.288675 / np.sqrt(3), rel=1e-4)
    assert null == pytest.approx(hi - d) and lo == pytest.approx(d - null)


def test_a_copy_is_traced_and_a_blind_release_is_not_at_identity_level():
    copy = MembershipRisk(_ctx(Copy()), 0.14).evaluate().results()
    idc = next(r for r in copy if r.level == "identity")
    assert isinstance(idc, RiskResult) and idc.value > 0.8 and idc.status == "not met"
    assert idc.statistic == "advantage" and idc.extras["auc"] > 0.9
    assert idc.extras["n_folds"] == IDENTITY_FOLDS
    blind = MembershipRisk(_ctx(Blind(32)), 0.14).evaluate().results()
    idb = next(r for r in blind if r.level == "identity")
    assert idb.ci[0] <= 0.0 <= idb.ci[1]
    inf = InferenceRisk(_ctx(Blind(32)), 0.14).evaluate().results()
    ii = next(r for r in inf if r.level == "identity")
    assert ii.ci[0] <= 0.0 <= ii.ci[1] and ii.extras["n_folds"] == IDENTITY_FOLDS


def test_record_level_halves_are_by_identity_when_there_are_enough():
    from bioanon.metrics.advantage import inference_advantage

    rng = np.random.default_rng(3)
    n_ids = 60
    people = np.repeat(np.arange(n_ids), 12)
    member = np.tile(np.r_[np.ones(3, bool), np.zeros(9, bool)], n_ids)
    ease = rng.uniform(0.4, 1.0, n_ids)[people]          # some people are easy to read
    held = rng.random(people.size) < ease                 # members no easier than the rest
    r = inference_advantage({"a": held}, member, units=people, unit="records")
    assert r.ci[0] <= 0.0 <= r.ci[1] and r.n_units == n_ids
    # the person's ease enters both rates of a person's unit and cancels in its residual
    flat = inference_advantage({"a": held}, member)
    assert r.se < 1.5 * flat.se
