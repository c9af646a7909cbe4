"""The staged search (cheap risks on every setting, the panel in CAS order) chooses what the
exhaustive search chooses, and a setting failing a cheap risk never meets the panel."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import bioanon.evaluation.protocol as protocol
from bioanon.certification.search import (
    FULL_PANEL,
    NOT_JUDGED,
    SCREENED,
    STAGE1,
    SearchSpace,
    closeness,
    row_line,
    search,
)
from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

WHY = "test of the staged search"
KW: dict[str, Any] = {"methods": ["selective-mean", "noise"], "target_advantage": 0.3,
                      "models": ["knn"], "attackers": "naive,parrot,reverse", "n_jobs": 1,
                      "accept_risks": {"identity-membership": WHY, "identity-inference": WHY},
                      "random_state": 515151, "budget_minutes": None}


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=0)


@pytest.fixture
def panels(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the recognition panels run (search and confirmation alike)."""
    calls: list[int] = []
    real = protocol.run_panel

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(protocol, "run_panel", counting)
    return calls


def _public(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def test_the_staged_search_chooses_what_the_exhaustive_one_does(table: FeatureTable,
                                                                 panels: list[int]) -> None:
    full = search(table, "expression", "identity", exhaustive=True, level=0.99, **KW)
    n_full = len(panels)
    panels.clear()
    fast = search(table, "expression", "identity", level=0.99, **KW)
    assert full.candidate is not None and full.certified
    # the same winner, the same certificate (confirmation verdict), fewer panels
    assert fast.candidate is not None and fast.candidate.label() == full.candidate.label()
    assert fast.chosen == full.chosen and fast.certified == full.certified
    assert json.dumps(fast.confirmation["verdict"], sort_keys=True) == \
        json.dumps(full.confirmation["verdict"], sort_keys=True)
    assert len(panels) < n_full == len(full.rows) + 1
    # a row judged by the panel is the exhaustive search's row; the others are named
    by_setting = {r["setting"]: r for r in _public(full.rows)}
    assert [r["setting"] for r in fast.rows] == list(by_setting)
    for r in _public(fast.rows):
        same = by_setting[r["setting"]]
        assert r["cas"] == same["cas"]  # stage 1's CAS is the full evaluation's
        if r["judged_by"] == FULL_PANEL:
            assert json.dumps(r, sort_keys=True) == json.dumps(same, sort_keys=True)  # NaN
        else:
            assert r["judged_by"] == STAGE1 and r["not_judged"] == NOT_JUDGED
            assert r["cas"] <= fast.rows[fast.chosen]["cas"]
            assert row_line(r).endswith(NOT_JUDGED)
            cheap = {x["name"]: x["status"] for x in r["risks"]}
            assert cheap == {x["name"]: x["status"] for x in same["risks"]
                             if x["risk"] != "recognition"}
    assert any(r["judged_by"] == STAGE1 for r in fast.rows)


def test_a_setting_failing_a_cheap_risk_gets_no_panel(table: FeatureTable,
                                                      panels: list[int]) -> None:
    # a membership target no measured figure meets: every setting fails at stage 1
    fast = search(table, "expression", "identity", level=0.001, **KW)
    assert panels == [] and fast.chosen is None and not fast.certified
    assert fast.rows and all(r["judged_by"] in (STAGE1, SCREENED) and not r["passed_stage1"]
                             for r in fast.rows)
    for r in fast.rows:
        line = row_line(r)
        assert "fails (record-membership" in line
        assert ("judged at stage 1" if r["judged_by"] == STAGE1 else "screened at stage 1") \
            in line
    full = search(table, "expression", "identity", level=0.001, exhaustive=True, **KW)
    assert full.chosen is None and len(panels) == len(full.rows)  # the same verdict
    _screened_rows_fail_in_full(fast, full)
    near, _ = fast.closest()
    assert near is not None and near["setting"] in {r["setting"] for r in fast.rows}


def test_closeness_counts_a_risk_not_judged_as_not_met() -> None:
    met = {"name": "record-membership", "risk": "membership", "status": "met",
           "ci": [0.0, 0.1], "target": 0.2}
    bad = {**met, "status": "not met", "ci": [0.2, 0.5]}
    rec = {"name": "record-recognition", "risk": "recognition", "status": "met",
           "ci": [0.0, 0.01], "target": 0.05}
    inf = {**met, "name": "record-inference", "risk": "inference"}
    judged = {"cas": 0.5, "risks": [rec, bad, inf]}
    cheap_only = {"cas": 0.9, "risks": [bad, inf]}  # recognition not judged
    assert closeness(judged) == (1, pytest.approx(0.3), -0.5)
    assert closeness(cheap_only)[0] == 2 and closeness(judged) < closeness(cheap_only)
    assert closeness({"cas": 0.6, "risks": [rec, bad, inf]}) < closeness(judged)


def _screened_rows_fail_in_full(fast: Any, full: Any) -> int:
    """Every row the screen decided fails record-level membership in the exhaustive search
    too (its figure there is every attacker's); returns how many rows were screened."""
    by_setting = {r["setting"]: r for r in full.rows}
    screened = [r for r in fast.rows if r["judged_by"] == SCREENED]
    for r in screened:
        mine = {x["name"]: x for x in r["risks"]}
        theirs = {x["name"]: x for x in by_setting[r["setting"]]["risks"]}
        assert mine["record-membership"]["status"] == "not met"
        assert mine["record-membership"]["ci"][0] > 0.14  # above every level's record target
        assert theirs["record-membership"]["status"] == "not met"
        assert not by_setting[r["setting"]]["met"]
        # no model is trained on its release (no CAS); the clear figures are the search's
        assert np.isnan(r["cas"]) and not r["met_utility"]
        assert r["clear"] == by_setting[r["setting"]]["clear"]
        # ... and the clear data's own pick of the ranking panel, as on every other row
        assert {x["clear"] for x in fast.rows} == {r["clear"]}
        line = row_line(r)
        assert "CAS not measured (screened)" in line
        assert "screened at stage 1" in mine["record-inference"]["reason"]
        # the risks the screen left unmeasured read so, not "inconclusive at this size" (the
        # plan may show them), and the line's failures are the measured one alone
        assert "record-inference advantage — not measured" in line
        assert "inconclusive" not in line
        assert "-> fails (record-membership) [screened at stage 1" in line
    return len(screened)


@pytest.mark.slow
def test_the_screen_keeps_the_exhaustive_choice(table: FeatureTable) -> None:
    # level 0.25: one setting (noise, sigma 1) is far above it on the cheap attackers alone,
    # another (dp-cells) meets every target; the screen decides the first without the
    # other attackers and the choice, its confirmation and the certificate stay the same
    kw = {**KW, "methods": ["noise", "laplace", "dp-cells", "selective-mean"]}
    fast = search(table, "expression", "identity", level=0.25, **kw)
    full = search(table, "expression", "identity", level=0.25, exhaustive=True, **kw)
    plain = search(table, "expression", "identity", level=0.25,
                   space=SearchSpace(screen=False), **kw)
    assert full.candidate is not None and full.certified
    for other in (fast, plain):
        assert other.candidate is not None
        assert other.candidate.label() == full.candidate.label()
        assert other.certified == full.certified
        assert json.dumps(other.confirmation["verdict"], sort_keys=True) == \
            json.dumps(full.confirmation["verdict"], sort_keys=True)
    assert _screened_rows_fail_in_full(fast, full) >= 1
    assert not any(r["judged_by"] == SCREENED for r in plain.rows)
    # the rows the screen did not decide are stage 1's figures, bit for bit
    same = {r["setting"]: r for r in _public(plain.rows)}
    for r in _public(fast.rows):
        if r["judged_by"] != SCREENED:
            assert json.dumps(r, sort_keys=True) == json.dumps(same[r["setting"]],
                                                               sort_keys=True)


def test_a_row_short_only_of_margin_is_closer_than_one_failing_a_target() -> None:
    """FSDD's README release at seed 0: a setting meeting every target without margin is the
    closest, before a more noisy one failing inference by 0.002."""
    from bioanon.evaluation.risks.registry import REGISTRY

    def risk(name: str, upper: float, status: str) -> dict[str, Any]:
        return {"name": f"record-{name}", "risk": name, "status": status,
                "ci": [upper - 0.06, upper], "target": 0.10}

    names = [spec.name for spec in REGISTRY]
    met_all = [risk(n, 0.092, "met") for n in names]
    margin = {"cas": 0.853, "risks": met_all, "short_of_margin": ["record-membership"],
              "pass_probability": 0.30}
    failing = {"cas": 0.811, "risks": [*met_all[:-1], risk(names[-1], 0.102, "not met")]}
    assert closeness(margin)[0] == 0 and closeness(failing)[0] == 1
    assert closeness(margin) < closeness(failing)
    assert closeness(margin)[1] == pytest.approx(0.5)


def test_the_screen_reads_the_group_level_when_groups_are_kept_whole() -> None:
    """A split keeping groups whole (SP-SW-HAR's executions): the screen reads group-level
    membership by the cheap attackers on the full figure's candidates and groups; the
    screened rows fail group membership in the exhaustive search too, and the choice, the
    certificate and every row it did not decide are the unscreened search's."""
    t = make_biometric(n_identities=40, records_per_identity=12, n_features=32,
                       random_state=2)
    why = "test of the group-level screen"
    kw = {**KW, "methods": ["noise", "dp-cells"], "group": "identity", "level": 0.25,
          "accept_risks": {"identity-membership": why, "identity-inference": why}}
    fast = search(t, "expression", "gender", **kw)
    plain = search(t, "expression", "gender", space=SearchSpace(screen=False), **kw)
    full = search(t, "expression", "gender", exhaustive=True, **kw)
    screened = [r for r in fast.rows if r["judged_by"] == SCREENED]
    assert screened, "no setting was screened: the test table no longer exercises the screen"
    by_setting = {r["setting"]: r for r in full.rows}
    for r in screened:
        mine = {x["name"]: x for x in r["risks"]}
        assert mine["group-membership"]["status"] == "not met"
        assert mine["group-membership"]["ci"][0] > 0.14
        assert "first group-level game" in mine["group-membership"]["reason"]
        assert not by_setting[r["setting"]]["met"]
        theirs = {x["name"]: x for x in by_setting[r["setting"]]["risks"]}
        assert theirs["group-membership"]["status"] == "not met"
    for other in (fast, plain):
        assert (other.candidate is None) == (full.candidate is None)
        if full.candidate is not None:
            assert other.candidate is not None
            assert other.candidate.label() == full.candidate.label()
        assert other.certified == full.certified
    same = {r["setting"]: r for r in _public(plain.rows)}
    for r in _public(fast.rows):
        if r["judged_by"] != SCREENED:
            assert json.dumps(r, sort_keys=True) == json.dumps(same[r["setting"]],
                                                               sort_keys=True)
    # the chart says which settings have no CAS, one line each
    from bioanon.certification.chart import search_figure

    texts = [x.get_text() for x in search_figure(fast, "gender", "expression").axes[0].texts]
    assert texts.count("not measured (screened)") == len(screened)


def test_the_full_figure_reuses_the_screen_s_scores(table: FeatureTable,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A setting the screen does not decide: the first record game of its full figure is the
    screen's game, so the screen's three attackers are not run on it again (their scores are
    taken as they are; the rows are bit for bit those of a search without the screen:
    test_the_screen_keeps_the_exhaustive_choice)."""
    import bioanon.attack.game as game_module
    from bioanon.attack.registry import SCREEN

    runs: list[tuple[str, bool]] = []
    real = game_module.run_attackers

    def counting(attackers: Any, game: Any, known: Any = None) -> Any:
        runs.extend((a.name, bool(known) and a.name in known) for a in attackers)
        return real(attackers, game, known)

    import bioanon.evaluation.risks.membership as membership

    monkeypatch.setattr(membership, "run_attackers", counting)
    res = search(table, "expression", "identity", level=0.99,
                 **{**KW, "methods": ["dp-cells"], "target_advantage": 0.9})
    unscreened = [r for r in res.rows if r["judged_by"] != SCREENED]
    assert unscreened, "a setting must pass the screen for this test to bite"
    reused = [name for name, hit in runs if hit]
    # each unscreened setting's first game took the screen's three attackers' scores
    assert reused.count(SCREEN[0].name) >= len(unscreened)
    assert set(reused) == {a.name for a in SCREEN}
