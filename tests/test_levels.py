"""The membership advantage, the DP bounds on a membership test, the named levels, the plan,
and the identity-permutation interval of recognition (issue 27)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from bioanon.cli.common import cli_message
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation.split import split_table
from bioanon.levels import DEFAULT_LEVEL, LEVELS, resolve_level
from bioanon.metrics.advantage import (
    advantage_from_auc,
    crossfit_advantage,
    inference_advantage,
    smallest_showable,
)
from bioanon.metrics.intervals import newcombe_difference
from bioanon.metrics.recognition_null import identity_permutation_interval
from bioanon.metrics.risk_stats import judge
from bioanon.plan import ACCEPTED, COVERED, INCONCLUSIVE, SHOWABLE, PlanRefused, make_plan
from bioanon.privacy_bounds import (
    BoundExceeded,
    Guarantee,
    advantage_bound_epsilon,
    advantage_bound_gdp,
    auc_bound_epsilon,
    auc_bound_gdp,
    check_empirical,
    epsilon_for_advantage,
    guarantee_of,
    mu_for_advantage,
    mu_for_auc,
    mu_from_rho,
)


# ---------------------------------------------------------------------- the advantage
def test_advantage_hand_computed():
    # half A = 0,2,4,6 (members 4, 2; non-members 2.5, 0); half B = 1,3,5,7 (3, 1; 0, 0)
    member = np.array([1, 1, 1, 1, 0, 0, 0, 0], bool)
    s = np.array([4.0, 3, 2, 1, 2.5, 0, 0, 0])
    half = np.arange(8) % 2 == 0
    r = crossfit_advantage({"s": s}, member, half)
    # the rule chosen on A flags s ≥ 4: on B it flags nothing; the rule chosen on B flags
    # s ≥ 1: on A it flags 4, 2 (members) and 2.5 (non-member); pooled TPR 2/4, FPR 1/4
    assert r.value == pytest.approx(0.25)
    # linearized over the 8 candidates: members (f − 1/2)/4, non-members −(f − 1/4)/4,
    # squares summing to 0.109375, times 8/7; scaled by 1.25 for the rules' choice
    assert r.se == pytest.approx(1.25 * math.sqrt(8 / 7 * 0.109375))
    assert r.ci == pytest.approx((0.25 - 1.959964 * r.se, min(1.0, 0.25 + 1.959964 * r.se)),
                                 abs=1e-5)
    assert r.balanced_accuracy == pytest.approx(0.625)


def test_advantage_chooses_among_attackers_and_keeps_their_direction():
    member = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    rng = np.random.default_rng(0)
    good = member + rng.normal(0, 0.1, 100)
    r = crossfit_advantage({"noise": rng.normal(size=100), "good": good}, member)
    assert r.value > 0.9 and set(r.attackers) == {"good"} and len(r.attackers) == 5
    # a score that is lower for members is not flipped (higher means member, by convention)
    rev = crossfit_advantage({"reversed": -good}, member)
    assert rev.value == pytest.approx(0.0, abs=0.05)


def test_inference_is_a_membership_test_of_advantage_p1_minus_p0():
    member = np.r_[np.ones(40, bool), np.zeros(60, bool)]
    # right on 30 of 40 members (0.75), on 30 of 60 non-members (0.5), in each half too
    hits = np.r_[(np.arange(40) // 2) % 4 != 0, (np.arange(60) // 2) % 2 == 0]
    half = np.arange(100) % 2 == 1
    r = inference_advantage({"nearest": hits}, member, half)
    assert r.member_rate == pytest.approx(0.75) and r.nonmember_rate == pytest.approx(0.5)
    assert r.value == pytest.approx(0.25)
    lo, hi = newcombe_difference(30, 40, 30, 60)[1:]
    assert r.ci[0] < 0.25 < r.ci[1] and r.ci[1] - r.ci[0] == pytest.approx(hi - lo, rel=0.3)


def test_leak_free_passes_the_smallest_showable_target_in_95_percent():
    rng = np.random.default_rng(1)
    n1, n0 = 100, 300
    target = smallest_showable(n1, n0)
    member = np.r_[np.ones(n1, bool), np.zeros(n0, bool)]
    passed = 0
    values = []
    for s in range(200):
        r = crossfit_advantage({f"a{k}": rng.normal(size=n1 + n0) for k in range(3)},
                               member, rng=np.random.default_rng(s))
        passed += r.ci[1] <= target
        values.append(r.value)
    assert passed / 200 >= 0.93
    assert abs(np.mean(values)) < 0.01  # cross-fitting: no winner's curse


def test_units_keep_an_identity_together():
    # 30 identities, each scored against 3 releases (member in 2, non-member in 1)
    ids = np.tile(np.arange(30), 3)
    member = np.ones(90, bool)
    for f in range(3):
        member[f * 30 + np.arange(f, 30, 3)] = False
    copy = member.astype(float)
    r = crossfit_advantage({"copy": copy}, member, units=ids, unit="identities")
    assert r.value == pytest.approx(1.0) and r.n_units == 30 and r.unit == "identities"
    assert r.extras["member_units"] == 30 and r.extras["nonmember_units"] == 30


def test_binormal_auc_to_advantage():
    assert advantage_from_auc(0.6) == pytest.approx(0.1422, abs=1e-4)
    d = math.sqrt(2) * norm.ppf(0.6)
    assert advantage_from_auc(0.6) == pytest.approx(2 * norm.cdf(d / 2) - 1)


# ---------------------------------------------------------------------- the DP bounds
def test_bounds_on_hand_values():
    # (ε, δ): (e^ε − 1 + 2δ)/(e^ε + 1)
    assert advantage_bound_epsilon(math.log(3)) == pytest.approx(0.5)
    assert advantage_bound_epsilon(math.log(3), 0.01) == pytest.approx(0.505)
    assert advantage_bound_epsilon(1.0) == pytest.approx(math.tanh(0.5))
    # μ-GDP
    assert advantage_bound_gdp(2 * norm.ppf(0.75)) == pytest.approx(0.5)
    assert auc_bound_gdp(1.0) == pytest.approx(norm.cdf(1 / math.sqrt(2)))
    # AUC under (ε, δ): the area under min(1, e^ε α + δ, 1 − e^{−ε}(1 − δ − α))
    alpha = np.linspace(0, 1, 200_001)
    for eps, delta in ((math.log(3), 0.0), (1.0, 1e-3), (0.2, 0.05)):
        roc = np.minimum(1, np.minimum(math.exp(eps) * alpha + delta,
                                       1 - math.exp(-eps) * (1 - delta - alpha)))
        roc = np.maximum(roc, 0)
        assert auc_bound_epsilon(eps, delta) == pytest.approx(np.trapezoid(roc, alpha),
                                                              abs=1e-6)
    # the inverses
    for a in (0.05, 0.1, 0.14, 0.5):
        assert advantage_bound_epsilon(epsilon_for_advantage(a)) == pytest.approx(a)
        assert advantage_bound_epsilon(epsilon_for_advantage(a, 1e-6), 1e-6) == \
            pytest.approx(a)
        assert advantage_bound_gdp(mu_for_advantage(a)) == pytest.approx(a)
    assert auc_bound_gdp(mu_for_auc(0.6)) == pytest.approx(0.6)
    assert epsilon_for_advantage(0.1) == pytest.approx(2 * math.atanh(0.1))
    assert mu_from_rho(0.5) == 1.0
    with pytest.raises(BioanonError):
        epsilon_for_advantage(0.1, 0.2)  # δ alone exceeds the target


def test_guarantee_covers_by_unit_and_strictness():
    g = Guarantee(0.2, 1e-6, "identity", mu=None, strict=True)
    assert g.covers("identity") and g.covers("record") and not g.covers("group")
    assert not Guarantee(0.2, 1e-6, "record").covers("identity")
    assert not Guarantee(0.2, 1e-6, "identity", strict=False).covers("identity")
    # μ known: the tighter GDP bound is used
    tight = Guarantee(5.0, 1e-6, "record", mu=0.2)
    assert tight.advantage_bound() == pytest.approx(advantage_bound_gdp(0.2))
    # a dp-synthetic statement: μ = sqrt(2ρ)
    st = guarantee_of({"epsilon": 1.0, "delta": 1e-6, "privacy_unit": "identity",
                       "rho": 0.02, "strict": True})
    assert st is not None and st.mu == pytest.approx(0.2) and st.unit == "identity"
    assert guarantee_of({}) is None
    check_empirical(0.05, 0.1, "x")
    with pytest.raises(BoundExceeded):
        check_empirical(0.2, 0.1, "x")


def test_bounds_against_opendp():
    dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed")
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    metric = dp.l2_distance(T=float)
    for scale in (1.0, 2.0, 5.0):
        meas = dp.m.make_gaussian(domain, metric, scale=scale)
        rho = float(meas.map(1.0))
        mu = mu_from_rho(rho)
        assert mu == pytest.approx(1.0 / scale)  # a Gaussian of noise σ at Δ = 1 is 1/σ-GDP
        curve = dp.c.make_zCDP_to_approxDP(meas).map(1.0)
        for delta in (1e-3, 1e-6, 1e-9):
            eps = float(curve.epsilon(delta))
            # OpenDP's conversion is valid, the GDP profile exact: μ-GDP's δ(ε) ≤ δ there
            exact = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
            assert exact <= delta * (1 + 1e-6)
            # so the advantage bound of OpenDP's (ε, δ) is never below the GDP bound
            assert advantage_bound_epsilon(eps, delta) >= advantage_bound_gdp(mu) - 1e-12
        # and a level's μ, run as a Gaussian, meets the level's target in OpenDP's (ε, δ)
    mu_t = mu_for_advantage(0.14)
    meas = dp.m.make_gaussian(domain, metric, scale=1.0 / mu_t)
    assert advantage_bound_gdp(mu_from_rho(float(meas.map(1.0)))) == pytest.approx(0.14)


# ---------------------------------------------------------------------- the levels
def test_levels():
    std = resolve_level(None)
    assert std.name == DEFAULT_LEVEL
    # no looser than the former membership target AUC 0.6 (binormal)
    assert max(std.record, std.identity) <= advantage_from_auc(0.6)
    assert "55% of the time, against 50% by chance" in std.sentence("record")
    assert "57% of the time" in std.sentence("identity")
    for lv in LEVELS.values():
        for level in ("record", "identity"):
            need = lv.dp_needed(level)
            assert advantage_bound_epsilon(need["epsilon_pure"]) == \
                pytest.approx(lv.target(level))
            assert advantage_bound_gdp(need["mu"]) == pytest.approx(lv.target(level))
    assert LEVELS["strict"].record < std.record < LEVELS["basic"].record
    assert resolve_level("0.07").record == resolve_level(0.07).identity == 0.07
    for bad in ("loose", 0, 1.5, "nan"):
        with pytest.raises(BioanonError):
            resolve_level(bad)


# ---------------------------------------------------------------------- the plan
def test_plan_counts_the_split():
    t = make_biometric(n_identities=30, records_per_identity=11, n_features=32)
    tr, te = split_table(t, "expression", "identity", 0.25, 0)
    p = make_plan(t, "expression", "identity")
    row = p.row("record-membership")
    assert row is not None
    # the record games pooled: the held-out split and parts of the training split as large,
    # the last taking what is left (11 records a person: 3 held out, 8 left, so 3 games and
    # every record a member once), every record a non-member in one game at least
    n = te.size + tr.size
    assert (row.n_members, row.n_nonmembers) == (n, n)
    assert row.smallest == pytest.approx(smallest_showable(n, n))
    assert row.smallest < smallest_showable(te.size, tr.size)
    ident = p.row("identity-membership")
    assert ident is not None and ident.n_members == 30


def test_plan_refuses_a_24_person_table_with_ways_forward():
    t = make_biometric(n_identities=24, records_per_identity=12, n_features=32)
    p = make_plan(t, "expression", "identity")
    assert not p.can_proceed
    assert {r.name for r in p.blocked} >= {"record-membership", "identity-membership"}
    assert all(r.status == INCONCLUSIVE for r in p.blocked)
    line = p.refusal_line()  # the library's words
    assert "\n" not in line and INCONCLUSIVE in line and "not met" not in line
    assert "privacy_unit='identity'" in line and "'identity-membership'" in line
    assert "more data: about" in line and "--" not in line
    cli = cli_message(PlanRefused(p))  # the command line's words, translated at its boundary
    assert "--privacy-unit 'identity'" in cli and "--accept-risk identity-membership" in cli
    assert "accept_risks" not in cli and "epsilon=" not in cli
    d = p.to_dict()
    assert d["can_proceed"] is False and d["refusal"] == line and "refusal_cli" not in d
    assert "plan (from the table's shape" in p.render()


def test_plan_shows_a_large_population_and_names_what_changes_it():
    t = make_biometric(n_identities=520, records_per_identity=6, n_features=32)
    p = make_plan(t, "expression", "identity")
    assert p.can_proceed, p.render()
    assert all(r.status == SHOWABLE for r in p.rows)
    strict = make_plan(t, "expression", "identity", level="strict")
    row = strict.row("record-membership")
    assert row is not None and row.status == INCONCLUSIVE
    # the records it would need show the target: recompute the bound at that size
    need = row.needed["records"]  # every record a member once: as many members as records
    assert smallest_showable(need, need) <= 0.05 * 1.01


def test_plan_names_released_classes_of_a_few_records():
    """A released label class of one record is said before the search (text and JSON), and
    only for the columns the release carries; it never blocks the plan."""
    t = make_biometric(n_identities=520, records_per_identity=6, n_features=32)
    assert make_plan(t, "expression", "identity").small_classes == ""
    labels = t.labels.copy()
    labels.loc[0, "expression"] = "rare"
    p = make_plan(labels, "expression", "identity")
    assert p.can_proceed
    assert "released label 'expression' has 1 class of fewer than 5 records ('rare' 1)" in (
        p.render())
    assert p.to_dict()["small_classes"] == p.small_classes
    from bioanon.report.first_screen import plan_section  # the report says it too

    assert "released label &#x27;expression&#x27; has 1 class" in plan_section(
        {"plan": p.to_dict()})
    labels.loc[1, "gender"] = "x"  # gender not released: not named
    assert "gender" not in make_plan(labels, "expression", "identity").small_classes
    both = make_plan(labels, "expression", "identity", label_columns=["expression", "gender"])
    assert "'gender' has 1 class" in both.small_classes


def test_plan_covered_by_a_guarantee_or_accepted():
    t = make_biometric(n_identities=24, records_per_identity=12, n_features=32)
    g = Guarantee(0.1, 1e-6, "identity", strict=True)
    p = make_plan(t, "expression", "identity", guarantee=g,
                  accept={"record-recognition": "tested elsewhere"})
    assert p.row("identity-membership").status == COVERED  # type: ignore[union-attr]
    assert p.row("record-inference").status == COVERED  # type: ignore[union-attr]
    assert p.row("record-recognition").status == ACCEPTED  # type: ignore[union-attr]
    assert p.can_proceed
    # a guarantee at the record unit does not cover the identity level, nor one not strict
    p2 = make_plan(t, "expression", "identity", guarantee=Guarantee(0.1, 1e-6, "record"))
    assert p2.row("identity-membership").status == INCONCLUSIVE  # type: ignore[union-attr]
    p3 = make_plan(t, "expression", "identity",
                   guarantee=Guarantee(0.1, 1e-6, "identity", strict=False))
    assert p3.row("record-membership").status == INCONCLUSIVE  # type: ignore[union-attr]


def test_plan_group_split_says_identity_level_is_not_measured():
    t = make_biometric(n_identities=40, records_per_identity=6, n_features=32)
    p = make_plan(t, "expression", "identity", group="identity")
    assert p.row("group-membership") is not None and p.row("group-recognition") is not None
    ident = p.row("identity-membership")
    assert ident is not None and "groups apart" in ident.why


# ---------------------------------------------------------------------- recognition
def _speakers(seed: int, leaky: bool, k: int = 6, per: int = 60,
              classes: int = 10, d: int = 16) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The issue's case: 6 speakers, a release with no speaker information (per-class
    Gaussian samples, speaker labels permuted within class) or a leaky one (the records
    with a little noise); a recognizer trained on it predicts the clear held-out records."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(seed)
    cls_mu, spk_mu = rng.normal(size=(classes, d)) * 2, rng.normal(size=(k, d)) * 3
    spk = np.repeat(np.arange(k), per)
    cl = np.tile(np.arange(classes), k * per // classes)
    X = cls_mu[cl] + spk_mu[spk] + rng.normal(size=(spk.size, d))
    rel = rng.random(spk.size) < 0.5
    Rs = spk[rel].copy()
    if leaky:
        R = X[rel] + rng.normal(size=(int(rel.sum()), d)) * 0.3
    else:
        Rc, R = cl[rel], np.empty((int(rel.sum()), d))
        for c in range(classes):
            m = Rc == c
            R[m] = X[rel][m].mean(0) + rng.normal(size=(int(m.sum()), d)) * X[rel][m].std(0)
            Rs[m] = rng.permutation(Rs[m])
    preds = {name: clf.fit(R, Rs).predict(X[~rel]).astype(str)
             for name, clf in (("knn", KNeighborsClassifier(5)),
                               ("lda", LinearDiscriminantAnalysis()))}
    return preds, spk[~rel].astype(str)


def test_recognition_interval_holds_with_six_identities():
    target = 0.05
    free_perm, free_records, leaky_perm = [], [], []
    for seed in range(20):
        preds, truth = _speakers(seed, leaky=False)
        r = identity_permutation_interval(preds, truth, 1 / 6, rng=np.random.default_rng(seed))
        assert r["exact"] and r["n_perm"] == 720
        free_perm.append(judge(r["ci"][1], target, r["null_upper"], r["ci"][0]))
        # the record-level interval (Newcombe against chance) of the same figure
        n = truth.size
        _, lo, hi = newcombe_difference(round(r["accuracy"] * n), n, None, None, p2=1 / 6)
        null = newcombe_difference(n // 6, n, None, None, p2=1 / 6)[2]
        free_records.append(judge(hi, target, null, lo))
        preds, truth = _speakers(seed, leaky=True)
        r = identity_permutation_interval(preds, truth, 1 / 6, rng=np.random.default_rng(seed))
        leaky_perm.append(judge(r["ci"][1], target, r["null_upper"], r["ci"][0]))
    # the release without speaker information is not failed (met, or inconclusive at this
    # size), while the interval over records fails it by the luck of a few people
    assert free_perm.count("not met") <= 1
    assert free_records.count("not met") >= 4
    assert leaky_perm.count("not met") == 20


def test_recognition_interval_permutes_within_strata():
    truth = np.repeat(np.array(list("abcdefgh")), 10)
    strata = {i: ("f" if i in "abcd" else "m") for i in "abcdefgh"}
    r = identity_permutation_interval({"copy": truth}, truth, 1 / 8, strata=strata)
    assert r["exact"] and r["n_perm"] == 24 * 24
    assert r["advantage"] == pytest.approx(7 / 8)


# ---------------------------------------------------------------------- release and the plan
def _cli(*args: object):
    from typer.testing import CliRunner

    from bioanon.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def people24(tmp_path_factory):
    p = tmp_path_factory.mktemp("in24") / "p24.parquet"
    make_biometric(n_identities=24, records_per_identity=12, n_features=32,
                   random_state=0).write(p)
    return p


def test_release_refuses_a_24_person_table_with_the_plans_reason(people24, tmp_path):
    out = tmp_path / "rel.parquet"
    res = _cli("release", people24, "-o", out, "--interest", "expression", "--sensitive",
               "identity", "--models", "knn", "--jobs", "1")
    assert res.exit_code == 2, res.output
    text = res.output
    assert "plan (from the table's shape: 288 records, 24 identities)" in text
    err = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(err) == 1
    assert "inconclusive at this size" in err[0] and "not met" not in err[0]
    assert "--accept-risk identity-membership" in err[0]
    assert "--privacy-unit 'identity'" in err[0] and "more data: about" in err[0]
    # the suggestion works as typed: one --reason after each --accept-risk
    import shlex

    from bioanon.cli.options import parse_accept

    typed = shlex.split(err[0][err[0].index("accept by name (") + 16:].rstrip(")"))
    names = [typed[i + 1] for i, t in enumerate(typed) if t == "--accept-risk"]
    reasons = [typed[i + 1] for i, t in enumerate(typed) if t == "--reason"]
    import re

    blocked = re.findall(r"([a-z]+-[a-z]+) \(can rule out", err[0])
    assert blocked and list(parse_accept(names, reasons)) == blocked
    assert "settings" not in text and "CAS" not in text  # stopped before any setting
    assert list(tmp_path.iterdir()) == []


def test_release_old_targets_and_bad_levels_are_one_line_errors(people24, tmp_path):
    out = tmp_path / "rel.parquet"
    base = ["release", people24, "-o", out, "--interest", "expression", "--sensitive",
            "identity"]
    for extra, words in ((["--target-membership", "0.6"], "--level"),
                         (["--target-inference", "0.05"], "--level"),
                         (["--level", "loose"], "strict, standard, basic"),
                         (["--level", "1.5"], "strict, standard, basic")):
        res = _cli(*base, *extra)
        assert res.exit_code == 2, res.output
        assert res.output.startswith("error:") and words in res.output
        assert "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_a_strict_identity_guarantee_covers_membership_and_inference():
    from bioanon.anonymize.registry import build_method
    from bioanon.evaluation import Evaluation

    t = make_biometric(n_identities=24, records_per_identity=12, n_features=32,
                       random_state=0)
    noise = build_method("noise", {"sigma": 50.0}, interest="expression",
                         sensitive="identity", additional=[], random_state=None)
    g = Guarantee(1.0, 1e-6, "identity", mu=0.2, strict=True)  # bound 0.080
    ev = Evaluation(t, "expression", "identity", anonymizer=noise, models=["knn"],
                    attackers=["naive"], n_jobs=1, verification=False, guarantee=g).evaluate()
    by = {r.name: r for r in ev.risks()}
    for name in ("record-membership", "record-inference"):
        r = by[name]
        assert r.status == COVERED and "covered by the guarantee (ε 1" in r.reason
        assert np.isfinite(r.value) and r.extras["guarantee"]["advantage_bound"] < 0.1
    # a level not measured at all (24 identities: the identity level needs the folds) is
    # covered by the proof, its figure still said missing
    assert by["identity-membership"].status in (COVERED, INCONCLUSIVE)
    # the verdict re-judges and keeps the cover
    v = ev.verdict()
    assert v.risks and {r.name for r in v.risks if r.status == COVERED} >= \
        {"record-membership", "record-inference"}
    # an empirical figure above the proven bound is a bug, said loudly
    copy = build_method("noise", {"sigma": 1e-6}, interest="expression",
                        sensitive="identity", additional=[], random_state=None)
    with pytest.raises(BoundExceeded):
        Evaluation(t, "expression", "identity", anonymizer=copy, models=["knn"],
                   attackers=["naive"], n_jobs=1, verification=False,
                   guarantee=g).evaluate()


def test_accepting_a_risk_never_waives_a_measured_leak():
    """Acceptance covers what the table cannot show; an interval wholly above the target
    stays 'not met' (on Yale, an accepted record-recognition read advantage 0.93 [0.85, 0.93]
    and certified before this rule)."""
    from bioanon.evaluation.risks import apply_accepted
    from bioanon.metrics.results import INCONCLUSIVE, RiskResult

    leak = RiskResult("recognition", "record", "advantage", 0.93, (0.85, 0.93), "linkage",
                      0.07, "chance", 0.05, "not met", "upper bound 0.93 > 0.05")
    unsure = RiskResult("membership", "record", "advantage", 0.02, (-0.2, 0.24), "tracing",
                        0.0, "no membership signal", 0.1, INCONCLUSIVE, "")
    out = apply_accepted([leak, unsure], {"record-recognition": "15 people",
                                         "record-membership": "15 people"})
    assert [r.status for r in out] == ["not met", "accepted"]
    assert "lower bound 0.850 > 0.05" in out[0].reason
    assert not out[0].passes and out[1].passes


def test_an_accepted_risk_passes_only_with_its_estimate_within_the_target():
    """Issue 34: on SP-SW-HAR an accepted identity membership of +0.390 [+0.108, +0.672]
    against a target of 0.14 certified in green. An estimate above the target is "not met",
    however wide its interval; the verdict and its sentence say so."""
    from bioanon.evaluation.risks import apply_accepted
    from bioanon.evaluation.verdict import judge_risks
    from bioanon.levels import resolve_level
    from bioanon.metrics.results import INCONCLUSIVE, PASSING, RiskResult

    har = RiskResult("membership", "identity", "advantage", 0.39, (0.108, 0.672), "tracing",
                     0.0, "no signal", 0.14, INCONCLUSIVE, "")
    small = RiskResult("membership", "record", "advantage", 0.04, (-0.2, 0.28), "tracing",
                       0.0, "no signal", 0.10, INCONCLUSIVE, "")
    accept = {"identity-membership": "19 people", "record-membership": "a small study"}
    out = apply_accepted([har, small], accept)
    assert [r.status for r in out] == ["not met", "accepted"]
    assert "estimate 0.390 lies above the target 0.14" in out[0].reason
    assert out[1].status_text == "accepted (inconclusive at this size, estimate within target)"
    assert [r.status in PASSING for r in out] == [False, True]
    # re-judged (as the verdict and the search's ranking do): the same answer, once more
    again = judge_risks(out, 0.05, resolve_level("standard"), dict(accept))
    assert [r.status for r in again] == ["not met", "accepted"]
    assert again[1].extras["accepted_reason"] == "a small study"


# ---------------------------------------------------------------------- the margin, planned
def test_margin_chance_is_the_margin_rule_at_a_leak_free_figure():
    """A leak-free figure v is chosen with margin exactly when the margin rule
    (:func:`pass_probability_of`) gives it ≥ 0.8: margin_chance is the normal chance of
    that event, so at the boundary the rule reads 0.8 and a draw of v reproduces it."""
    from bioanon.certification.margin import pass_probability_of
    from bioanon.metrics.advantage import Z95, margin_chance
    from bioanon.metrics.pass_chance import reading_for

    t, se, sd = 0.05, 0.0136, 0.0136
    edge = reading_for(0.8, se, t)
    assert pass_probability_of(edge, edge + Z95 * se, t) == pytest.approx(0.8, abs=1e-9)
    # far above 0 the rule is the untruncated normal one: Φ((t − 1.96·s − v) / (√2·s))
    far = 0.2 - (Z95 + np.sqrt(2) * norm.ppf(0.8)) * se
    assert pass_probability_of(far, far + Z95 * se, 0.2) == pytest.approx(0.8, abs=1e-6)
    v = np.random.default_rng(0).normal(0.0, sd, 4000)
    rule = np.array([pass_probability_of(x, x + Z95 * se, t) >= 0.8 for x in v])
    assert rule.mean() == pytest.approx(margin_chance(t, se, sd, 0.8), abs=0.03)


def test_plan_says_when_the_margin_is_tight():
    # six people of 500 records (FSDD's shape): recognition showable, only just
    t = make_biometric(n_identities=6, records_per_identity=500, n_features=32)
    p = make_plan(t, "expression", "identity",
                  accept={"identity-membership": "6 people", "identity-inference": "6 people"})
    assert p.can_proceed
    rec = p.row("record-recognition")
    assert rec is not None and rec.status == SHOWABLE
    assert 0.3 < rec.margin < 0.8 and p.margin_chance == pytest.approx(rec.margin, rel=0.01)
    assert "margin: a release leaking nothing" in p.render()
    assert f"record-recognition {rec.margin:.2f}" in p.margin_line()
    # under an even chance the line says a leak-free release is more likely refused
    assert rec.margin < 0.5 and "more likely refused than certified" in p.margin_line()
    assert p.to_dict()["margin_chance"] == pytest.approx(p.margin_chance)
    from bioanon.report.first_screen import plan_section  # the report says it too

    assert "margin: a release leaking nothing" in plan_section({"plan": p.to_dict()})
    # many people: nothing to say
    big = make_plan(make_biometric(n_identities=300, records_per_identity=12, n_features=32),
                    "expression", "identity",
                    accept={"identity-membership": "x", "identity-inference": "x"})
    assert big.margin_chance > 0.99 and big.margin_line() == ""
    assert "margin:" not in big.render()


def test_an_accepted_risk_says_how_often_a_leak_free_estimate_exceeds_its_target():
    """Accepting a risk the table cannot show waives its interval, not its estimate (an
    accepted risk above its target is not met): the plan says, before the search, how often
    a release leaking nothing reads an estimate above the target at this size, and that
    chance is what the cross-fitted estimator does on leak-free scores of the plan's counts."""
    from bioanon.plan import _accepted_chance

    t = make_biometric(n_identities=24, records_per_identity=12, n_features=32)
    accept = {"record-membership": "small", "record-inference": "small"}
    p = make_plan(t, "expression", "identity", accept=accept, level="strict")
    row = p.row("record-membership")
    assert row is not None and row.status == ACCEPTED and row.leak_free_over is not None
    assert 0.1 < row.leak_free_over < 0.3  # target 0.05 at 288 members and non-members
    assert f"with chance {row.leak_free_over:.2f} here" in row.why
    assert "judged on its estimate" in p.render()
    assert p.to_dict()["rows"][1]["leak_free_over_target"] == pytest.approx(row.leak_free_over)
    # neither a showable row nor a level measured at no size carries one
    assert p.row("record-recognition").leak_free_over is None  # type: ignore[union-attr]
    # the chance against the estimator itself: leak-free scores of the row's counts
    n1, n0 = row.n_members, row.n_nonmembers
    member = np.r_[np.ones(n1, bool), np.zeros(n0, bool)]
    rng = np.random.default_rng(3)
    over = np.mean([crossfit_advantage({f"a{k}": rng.normal(size=n1 + n0) for k in range(3)},
                                       member, rng=np.random.default_rng(s)).value
                    > row.target for s in range(300)])
    assert over == pytest.approx(row.leak_free_over, abs=0.06)
    # a larger table: the same target is exceeded less often; a looser one too
    big = make_plan(make_biometric(n_identities=48, records_per_identity=12, n_features=32),
                    "expression", "identity", accept=accept, level="strict")
    big_row = big.row("record-membership")
    assert big_row is not None and big_row.leak_free_over is not None
    assert big_row.leak_free_over < row.leak_free_over
    loose = make_plan(t, "expression", "identity", accept=accept).row("record-membership")
    assert loose is not None and loose.leak_free_over is not None
    assert loose.leak_free_over < row.leak_free_over
    assert _accepted_chance(row, 1e-9).leak_free_over == pytest.approx(0.0, abs=1e-12)
    # the plan's own line, beside the margin's: every measured accepted row, combined
    inf = p.row("record-inference")
    assert inf is not None and inf.leak_free_over is not None
    both = 1 - (1 - row.leak_free_over) * (1 - inf.leak_free_over)
    assert p.accepted_over == pytest.approx(both)
    assert f"chance up to about {both:.2f} here" in p.accepted_line()
    assert not p.can_proceed and p.accepted_line() not in p.render()  # refused: the refusal
    every = make_plan(t, "expression", "identity", level="strict", accept={
        **accept, "identity-membership": "small", "identity-inference": "small",
        "record-recognition": "small"})
    assert every.can_proceed and every.accepted_over > both
    assert every.accepted_line() in every.render()
    assert every.to_dict()["accepted"] == every.accepted_line()
    from bioanon.report.first_screen import plan_section

    assert "accepted risks are judged on their estimates" in plan_section(
        {"plan": every.to_dict()})
    # nothing accepted and measured: no line
    assert big_row.leak_free_over is not None
    none = make_plan(make_biometric(n_identities=300, records_per_identity=12, n_features=32),
                     "expression", "identity")
    assert none.accepted_over == 0.0 and none.accepted_line() == ""


def test_a_sample_that_rules_out_no_advantage_below_1_says_nothing():
    """An advantage is at most 1: where the sizes give a smallest showable target of 1 or
    more (a group of three values: each game holds one value in and one out), the plan says
    it can rule out nothing, on the terminal and in JSON, never "can rule out 2.558"."""
    t = make_biometric(n_identities=40, records_per_identity=10, n_features=32)
    p = make_plan(t, "expression", "identity", group="environment")
    row = p.row("group-membership")
    assert row is not None and row.smallest >= 1.0  # the sizes leave no bound below 1
    assert row.to_dict()["smallest_showable"] is None
    line = next(ln for ln in p.render().splitlines() if "group-membership" in ln)
    assert "can rule out nothing" in line, line
    assert "needed" in row.to_dict()  # the ways forward are still read from the sizes
