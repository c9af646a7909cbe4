"""The utility floor (``min_utility``): a setting is useful only when its CAS reaches the
floor × the clear accuracy, on the tuning split and again on the confirmation; a certified
release has one by default (0 sets none), and a refusal names the trade-off in one line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bioanon.certification.search import (
    CHOICE_RULE,
    SearchResult,
    check_min_utility,
    floor_met,
    search,
)
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable

WHY = "test of the utility floor"
KW: dict[str, Any] = {"methods": ["selective-mean", "noise"], "target_advantage": 0.3,
                      "models": ["knn"], "attackers": "naive,parrot", "n_jobs": 1,
                      "accept_risks": {"identity-membership": WHY, "identity-inference": WHY},
                      "random_state": 424242, "budget_minutes": None, "level": 0.99}


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=1)


@pytest.fixture(scope="module")
def free(table: FeatureTable) -> SearchResult:
    return search(table, "expression", "identity", **KW)


@pytest.fixture(scope="module")
def floored(table: FeatureTable) -> SearchResult:
    return search(table, "expression", "identity", min_utility=0.97, **KW)


def test_a_floor_removes_the_settings_below_it(free: SearchResult,
                                               floored: SearchResult) -> None:
    # same split and seeds: the same figures, judged against the floor
    assert [r["cas"] for r in free.rows] == [r["cas"] for r in floored.rows]
    below = [r for r in floored.rows if r["cas"] < 0.97 * r["clear"]]
    above = [r for r in floored.rows if r["cas"] >= 0.97 * r["clear"]]
    assert below, "the table must hold a setting below the floor for this test to bite"
    assert not any(r["met_utility"] for r in below)
    assert not any(r["met"] for r in below)
    free_of = {r["setting"]: r for r in free.rows}
    assert any(free_of[r["setting"]]["met_utility"] for r in below)  # the floor bit
    for r in above:  # a setting above the floor is judged as without one, unless the
        gate = r.get("consumer_gate") or {}  # whole panel put it under the floor there
        if gate.get("passed") is False:
            assert not r["met_utility"] and gate["cas"] < 0.97 * gate["clear"]
        else:
            assert r["met_utility"] == free_of[r["setting"]]["met_utility"]


def test_the_chosen_setting_reaches_the_floor_or_none_is_certified(
        floored: SearchResult) -> None:
    if floored.candidate is not None:
        row = floored.rows[floored.chosen or 0]
        assert row["cas"] >= 0.97 * row["clear"]
    if floored.certified:
        conf = floored.confirmation
        assert conf["utility"]["cas"]["value"] >= 0.97 * conf["utility"]["interest"]["clear"]
    else:
        assert "utility" in floored.failure_line() or "fell short" in floored.failure_line()


def test_the_rule_and_the_result_state_the_floor(free: SearchResult,
                                                 floored: SearchResult) -> None:
    assert free.to_dict()["rule"] == CHOICE_RULE and free.to_dict()["min_utility"] is None
    d = floored.to_dict()
    assert d["min_utility"] == 0.97 and "0.97 × the clear accuracy" in d["rule"]


def test_a_confirmation_below_the_floor_is_not_certified() -> None:
    conf = {"verdict": {"met": True, "risks": []},
            "utility": {"cas": {"value": 0.80, "ci": [0.7, 0.9]},
                        "interest": {"clear": 0.95}}}
    row = {"method": "noise", "_params": {}, "setting": "noise()", "cas": 0.94,
           "clear": 0.95, "met": True}
    res = SearchResult([row], 0.05, chosen=0, confirmation=conf, min_utility=0.9)
    assert not res.certified
    assert "below the floor 0.9 × clear 0.950 = 0.855" in res.failure_line()
    res.min_utility = 0.8
    assert res.certified
    res.min_utility = None
    assert res.certified


@pytest.mark.parametrize("bad", [-0.2, 1.5, float("nan"), "x", True])
def test_a_floor_outside_0_1_is_refused_naming_its_parameter(bad: Any) -> None:
    with pytest.raises(BioanonError, match="min_utility=") as info:
        check_min_utility(bad)
    assert info.value.parameter == "min_utility"


def test_floor_met_compares_point_estimates() -> None:
    assert floor_met(0.95, 1.0, 0.95) and not floor_met(0.9499, 1.0, 0.95)
    assert floor_met(0.1, 0.9, None)


def test_zero_sets_no_floor() -> None:
    assert check_min_utility(0) is None and check_min_utility(0.0) is None
    assert check_min_utility(1) == 1.0 and check_min_utility(0.8) == 0.8


# ---------------------------------------------------------------------- the default floor
def test_a_certified_release_has_the_default_floor() -> None:
    from bioanon.certification.settings import ReleaseSettings, settings_of
    from bioanon.levels import DEFAULT_MIN_UTILITY

    assert 0.5 <= DEFAULT_MIN_UTILITY < 1.0
    assert ReleaseSettings().min_utility == DEFAULT_MIN_UTILITY
    s, _ = settings_of("certify", {})
    assert s.min_utility == DEFAULT_MIN_UTILITY
    s, _ = settings_of("certify", {"min_utility": 0})
    assert s.min_utility == 0  # checked, then no floor: the search gets None
    with pytest.raises(BioanonError, match="min_utility="):
        settings_of("certify", {"min_utility": 1.2})[0].check(settings_of("certify", {})[1])


def test_the_command_line_leaves_the_default_to_the_library() -> None:
    from bioanon.cli.release_flags import flagged, settings_from

    typed = {name: s.flag.default for name, s in flagged().items()}  # as typer passes them
    assert "min_utility" not in settings_from(typed, "memory")
    assert settings_from({**typed, "min_utility": 0.0}, "memory")["min_utility"] == 0.0
    assert settings_from({**typed, "min_utility": 0.9}, "bucketed")["min_utility"] == 0.9


CERT_KW = {k: v for k, v in KW.items() if k not in ("random_state",)}


@pytest.fixture(scope="module")
def certified(table: FeatureTable) -> Any:
    from bioanon.certification import certify
    from bioanon.release import Roles

    return certify(table, Roles(sensitive="identity", interest="expression"),
                   random_state=424242, **CERT_KW)


def test_certify_applies_the_default_floor(certified: Any) -> None:
    from bioanon.levels import DEFAULT_MIN_UTILITY

    res = certified.search
    assert res.min_utility == DEFAULT_MIN_UTILITY
    assert certified.manifest["certification"]["min_utility"] == DEFAULT_MIN_UTILITY
    row = res.rows[res.chosen]
    assert row["cas"] >= DEFAULT_MIN_UTILITY * row["clear"]
    # the settings below the floor are not useful, whatever their privacy
    for r in res.rows:
        if r["cas"] < DEFAULT_MIN_UTILITY * r["clear"]:
            assert not r["met_utility"] and not r["met"]
    assert f"{DEFAULT_MIN_UTILITY:g} × the clear accuracy" in res.rule()


def test_a_floor_above_every_setting_refuses_naming_the_trade_off(table: FeatureTable,
                                                                  certified: Any) -> None:
    from bioanon.certification import NotCertified, certify
    from bioanon.release import Roles

    best = max(r["cas"] / r["clear"] for r in certified.search.rows)
    with pytest.raises(NotCertified) as info:
        certify(table, Roles(sensitive="identity", interest="expression"),
                random_state=424242, min_utility=min(1.0, best + 0.001),
                tradeoff_panels=2, **CERT_KW)  # the first panel's row moves on this table
    exc = info.value
    line = str(exc)
    assert "\n" not in line and "trade-off: " in line
    facts = exc.refusal
    assert facts is not None and facts["line"] in line
    # the best CAS that met every target (below the floor), judged by the panel
    mine = facts["best_met"]
    assert mine["chosen"] and mine["setting"] is not None and mine["below_floor"]
    assert mine["judged_by"] == "the full panel"
    assert f"{mine['fraction']:.2f} × clear ({mine['setting']}, below the floor" in line
    # it is the certified setting of the same search without the floor's bite
    assert mine["setting"] == certified.setting
    top = facts["most_useful"]
    assert top["fraction"] == pytest.approx(best)
    assert f"the most useful setting, {top['setting']}" in line


# ---------------------------------------------------------------------- the refusal line
def _risk(risk: str, level: str, value: float, half: float, target: float) -> Any:
    from bioanon.evaluation.risks.base import risk_result

    return risk_result(risk, level, "advantage", value, (value - half, value + half),
                       "model-aware", 0.0, "no membership signal", target, 0.03, "")


def _row(setting: str, cas: float, membership: float, width: float = 1.0) -> dict[str, Any]:
    """A search row judged by the full panel at level standard (record 0.10, identity 0.14),
    its record membership ``membership`` ± 0.04 (every interval's half-width × ``width``)."""
    from bioanon.evaluation.verdict import judge_risks
    from bioanon.levels import resolve_level

    raw = [_risk("recognition", "record", 0.0, 0.02 * width, 0.05),
           _risk("membership", "record", membership, 0.04 * width, 0.10),
           _risk("inference", "record", 0.0, 0.03 * width, 0.10),
           _risk("membership", "identity", 0.0, 0.05 * width, 0.14)]
    risks = judge_risks(raw, 0.05, resolve_level("standard"), {})
    ok = all(r.passes for r in risks)
    useful = cas >= 0.8
    return {"method": setting.split("(")[0], "_params": {}, "setting": setting, "cas": cas,
            "cas_ci": [cas - 0.02, cas + 0.02], "clear": 1.0, "clear_ci": [0.98, 1.0],
            "interest_chance": 0.1, "clear_useful": True,
            "risks": [r.to_dict() for r in risks], "met_privacy": ok, "met_utility": useful,
            "met": ok and useful, "advantage_ci": [-0.02, 0.02], "judged_by": "the full panel",
            "_risks": raw}


def synthetic_result() -> SearchResult:
    """Three settings: the most useful leaks (record membership 0.12 ± 0.04: fails standard
    and basic), a middle one meets basic only, with margin (0.07 ± 0.04), the least useful
    meets strict, with margin (0.01 ± 0.02: upper bound 0.03), but lies below the floor."""
    rows = [_row("a()", 0.95, 0.12), _row("b()", 0.90, 0.07), _row("c()", 0.60, 0.01, 0.5)]
    res = SearchResult(rows, 0.05, level="standard", min_utility=0.8, interest="x")
    res.tradeoff = res.tradeoff_table()
    return res


def test_the_refusal_line_names_the_best_cas_the_looser_level_and_the_shortfall() -> None:
    res = synthetic_result()
    assert res.chosen is None and not res.certified
    line = res.refusal_line()
    assert "\n" not in line
    assert ("best CAS meeting every target at level standard (tuning split): 0.60 × clear "
            "(c(), below the floor 0.8 × clear)") in line
    assert "a more useful release meets every target at level basic: 0.90 × clear (b())" in line
    assert ("the most useful setting, a() (0.95 × clear), fell short on record-membership "
            "advantage 0.120 (upper bound 0.160) > target 0.1") in line


def test_the_refusal_says_when_no_level_is_more_useful() -> None:
    res = synthetic_result()
    res.rows = [_row("a()", 0.95, 0.30), _row("c()", 0.60, 0.01)]  # a() fails every level
    res.tradeoff = res.tradeoff_table()
    line = res.refusal_line()
    assert "no named level gives a more useful release" in line
    assert "record-membership advantage 0.300 (upper bound 0.340) > target 0.1" in line
    res.rows = [_row("a()", 0.95, 0.30)]
    res.tradeoff = res.tradeoff_table()
    assert "no setting met every target at level standard" in res.refusal_line()


def test_no_trade_off_is_named_when_utility_cannot_be_measured() -> None:
    res = synthetic_result()
    for r in res.rows:
        r["clear_useful"] = False
    assert res.refusal_line() == res.failure_line()
    assert "utility cannot be measured" in res.refusal_line()


def test_a_refusal_for_margin_says_margin_not_recognition() -> None:
    """The most useful setting met every target on the tuning split, judged by the panel,
    but without margin: the line says so with its chance (it once said "fell short on
    recognition (not judged by the panel)" of a row the panel had judged)."""
    from bioanon.certification.margin import pass_probability, short_of_margin
    from bioanon.evaluation.verdict import judge_risks
    from bioanon.levels import resolve_level

    res = synthetic_result()
    top = _row("a()", 0.95, 0.075, width=0.6)  # upper bound 0.099 against 0.10: no margin
    risks = judge_risks(top["_risks"], 0.05, resolve_level("standard"), {})
    assert all(r.passes for r in risks)
    top.update(short_of_margin=short_of_margin(risks, []),
               pass_probability=pass_probability(risks, []), met=False)
    assert top["short_of_margin"] == ["record-membership"] and top["pass_probability"] < 0.8
    res.rows[0] = top
    res.tradeoff = res.tradeoff_table()
    line = res.refusal_line()
    assert ("the most useful setting, a() (0.95 × clear), fell short on margin: "
            "record-membership within target on the tuning split, but the chance that a "
            f"fresh evaluation passes is {top['pass_probability']:.2f} < 0.8") in line
    assert "not judged by the panel" not in line
    from bioanon.certification.tradeoff import refusal_facts

    facts = refusal_facts(res.tradeoff, res.rows)["most_useful"]  # --json's refusal
    assert facts["short_of_margin"] == ["record-membership"]
    assert facts["pass_probability"] == pytest.approx(top["pass_probability"])


# ---------------------------------------------------------------------- the floor at stage 1
def _without_the_floor_at_stage_1(**kw: Any) -> SearchResult:
    """The same search with stage 1's utility floor switched off (every attacker judges a
    setting under it): the reference the floor must not change the outcome of."""
    from dataclasses import replace

    from bioanon.certification.search import staged

    judge_anonymizer = staged.judge_anonymizer
    with pytest.MonkeyPatch.context() as m:  # n_jobs=1: stage 1 runs in this process
        m.setattr(staged, "judge_anonymizer", lambda judge, *a: judge_anonymizer(
            replace(judge, min_utility=None), *a))
        return search(**kw)


def _public(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as their report holds them (NaN equal to NaN)."""
    import json

    return [json.dumps({k: v for k, v in r.items() if not k.startswith("_")}, sort_keys=True,
                       default=str) for r in rows]


@pytest.fixture(scope="module")
def floored_everywhere(table: FeatureTable) -> SearchResult:
    return _without_the_floor_at_stage_1(table=table, interest="expression",
                                         sensitive="identity", min_utility=0.97, **KW)


def test_stage_1_decides_a_setting_under_the_floor_without_its_attackers(
        floored: SearchResult, floored_everywhere: SearchResult) -> None:
    from bioanon.certification.search.rows import FLOORED, STAGE1, row_line
    from bioanon.evaluation.risks.base import FLOORED_REASON

    decided = [j for j, r in enumerate(floored.rows) if r["judged_by"] == FLOORED]
    assert decided, "the table must hold a setting under the floor for this test to bite"
    for j, (r, ref) in enumerate(zip(floored.rows, floored_everywhere.rows, strict=True)):
        if j not in decided:  # a setting the floor did not decide: the very same row
            assert _public([r]) == _public([ref])
            continue
        # the utility is the one every attacker's run measures, and it fails the floor
        assert ref["judged_by"] == STAGE1 and not ref["met_utility"]
        assert (r["cas"], r["cas_ci"], r["clear"]) == (ref["cas"], ref["cas_ci"], ref["clear"])
        assert not r["met"] and not r["met_utility"] and not r["passed_stage1"]
        own = [x for x in r["risks"] if x["status"] != "accepted"]  # accepted: the user's
        assert own and all(FLOORED_REASON in x["reason"] for x in own)
        line = row_line(r)  # the terminal says so, and no risk reads "inconclusive"
        assert "risks not measured -> fails (utility) [decided at stage 1 by the utility " \
               "floor" in line and "inconclusive" not in line
        assert any(x["status"] in ("met", "not met") for x in ref["risks"])  # measured there
    # the choice, its confirmation and the trade-off are the search's without the floor
    assert floored.chosen == floored_everywhere.chosen
    assert floored.certified == floored_everywhere.certified
    mine, ref = floored.tradeoff_table(), floored_everywhere.tradeoff_table()
    assert [_entry(e) for e in mine] == [_entry(e) for e in ref]
    # an entry a setting left under the floor could come before says so (none would here)
    assert all(e["floored_unjudged"] == 0 for e in ref)
    rows_cas = [r["cas"] for r in floored.rows]
    for e in mine:
        above = [j for j in decided if e["setting"] is None or rows_cas[j] > e["cas"]]
        assert e["floored_unjudged"] == len(above)


def _entry(e: dict[str, Any]) -> dict[str, Any]:
    """A trade-off entry without what only says which settings were left unjudged."""
    return {k: v for k, v in e.items() if k != "floored_unjudged"}


def test_a_refusal_judges_the_floored_settings_for_its_trade_off(table: FeatureTable) -> None:
    # a floor no release reaches: nothing above it meets the level, so the refusal's
    # trade-off names the most useful setting under it that does, with the figures every
    # attacker gives it (stage 1 again, without the floor), judged by decreasing CAS until
    # one meets the chosen level: the settings after it are left as the floor decided them
    from bioanon.certification.search.rows import FLOORED

    kw = {**KW, "table": table, "interest": "expression", "sensitive": "identity",
          "min_utility": 1.0}
    res, ref = search(**kw), _without_the_floor_at_stage_1(**kw)
    assert not res.certified and res.chosen is None
    mine = next(e for e in res.tradeoff_table() if e["chosen"])
    assert mine["setting"] is not None and mine["below_floor"]
    order = sorted(range(len(ref.rows)), key=lambda j: -ref.rows[j]["cas"])
    after = order[order.index(mine["_row"]) + 1:]
    assert after, "settings must come after the entry for this test to bite"
    for j, (r, f) in enumerate(zip(res.rows, ref.rows, strict=True)):
        if j in after:  # left under the floor, its CAS measured
            assert r["judged_by"] == FLOORED and r["cas"] == f["cas"]
        else:  # judged again: the row every attacker gives it, to the bit
            assert _public([r]) == _public([f])
    table_ref = ref.tradeoff_table()
    assert _entry(mine) == _entry(next(e for e in table_ref if e["chosen"]))
    for e, f in zip(res.tradeoff_table(), table_ref, strict=True):
        assert e["floored_unjudged"] or _entry(e) == _entry(f)  # open ones say they are
    assert res.refusal_line() == ref.refusal_line()


def test_the_floored_settings_judged_for_the_trade_off_do_not_depend_on_the_workers(
        table: FeatureTable, monkeypatch: pytest.MonkeyPatch) -> None:
    # judged one at a time or several at once (as on a machine of more cores), the refusal
    # keeps the same rows: those a batch judged after the entry are let go
    from bioanon.certification.search import staged

    kw = {**KW, "table": table, "interest": "expression", "sensitive": "identity",
          "min_utility": 1.0}
    one = search(**kw)
    monkeypatch.setattr(staged, "unfloor_share", lambda n_jobs, n: n)  # all at once
    every = search(**kw)
    assert _public(one.rows) == _public(every.rows)
    assert one.tradeoff_table() == every.tradeoff_table()
    assert any(e["floored_unjudged"] for e in one.tradeoff_table())


def test_an_evaluation_decided_by_the_floor_keeps_its_utility_and_cannot_resume(
        table: FeatureTable) -> None:
    from bioanon.anonymize import GaussianNoiseAnonymizer
    from bioanon.evaluation import Evaluation
    from bioanon.evaluation.options import EvaluationOptions
    from bioanon.evaluation.risks.base import FLOORED_REASON

    def stage1(**kw: Any) -> Evaluation:
        return Evaluation(table, "expression", "identity", None,
                          GaussianNoiseAnonymizer(sigma=3.0), random_state=5,
                          options=EvaluationOptions.of(n_jobs=1, consumer_panel="ranking")
                          ).evaluate(recognition=False, screen=0.99, **kw)

    free, low, high = stage1(), stage1(floor=0.1), stage1(floor=0.99)
    assert free.floored_ is None and low.floored_ is None  # CAS above a floor of 0.1
    assert high.floored_ and FLOORED_REASON in high.floored_
    assert high.utility() == free.utility() == low.utility()  # the same CAS, measured once
    # a floor the setting clears changes nothing: every risk as without one (NaN as NaN)
    assert [str(r.to_dict()) for r in low.risks()] == [str(r.to_dict()) for r in free.risks()]
    assert all(r.status == "inconclusive at this size" and FLOORED_REASON in r.reason
               for r in high.risks())
    assert any(np.isfinite(r.value) for r in free.risks())
    with pytest.raises(BioanonError, match="utility floor decided cannot be resumed"):
        high.resume()
    with pytest.raises(BioanonError, match="floor= apply to a stage-1 evaluation"):
        Evaluation(table, "expression", "identity", None, GaussianNoiseAnonymizer(),
                   random_state=5).evaluate(floor=0.5)
