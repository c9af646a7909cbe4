"""The utility floor (``min_utility``): a setting is useful only when its CAS reaches the
floor × the clear accuracy, on the tuning split and again on the confirmation."""

from __future__ import annotations

from typing import Any

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
    for r in above:  # a setting above the floor is judged as without one
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


@pytest.mark.parametrize("bad", [0, 0.0, -0.2, 1.5, float("nan"), "x"])
def test_a_floor_outside_0_1_is_refused_naming_its_parameter(bad: Any) -> None:
    with pytest.raises(BioanonError, match="min_utility=") as info:
        check_min_utility(bad)
    assert info.value.parameter == "min_utility"


def test_floor_met_compares_point_estimates() -> None:
    assert floor_met(0.95, 1.0, 0.95) and not floor_met(0.9499, 1.0, 0.95)
    assert floor_met(0.1, 0.9, None)
