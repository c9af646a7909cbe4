"""The trade-off table: per level (strict, standard, basic), the most useful setting the
search found meeting that level's targets — consistent with the judged rows and the targets,
shown in the terminal, report.json and report.html, and never changing the choice."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from bioanon.certification.margin import CONFIRM_PROBABILITY, pass_probability_of
from bioanon.certification.search import SearchResult, search
from bioanon.certification.tradeoff import (
    PANEL,
    STAGE1_ONLY,
    TABLE_LEVELS,
    best_at,
    recognition_half_width,
    stage1_only,
    table_lines,
)
from bioanon.datasets import make_biometric
from bioanon.levels import resolve_level
from bioanon.table import FeatureTable
from tests.test_min_utility import _row, synthetic_result

WHY = "test of the trade-off table"
KW: dict[str, Any] = {"methods": ["selective-mean", "noise"], "target_advantage": 0.5,
                      "models": ["knn"], "attackers": "naive,parrot", "n_jobs": 1,
                      "accept_risks": {"identity-membership": WHY, "identity-inference": WHY,
                                       "record-membership": WHY, "record-inference": WHY},
                      "random_state": 626262, "budget_minutes": None, "level": "basic"}
#: (level basic: noise(sigma=3)'s record membership reads 0.09-0.10 on this table, on the
#: standard target's edge, and the test needs a search that certifies)


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=2)


@pytest.fixture(scope="module")
def plain(table: FeatureTable) -> SearchResult:
    return search(table, "expression", "identity", **KW)


@pytest.fixture(scope="module")
def judged(table: FeatureTable) -> SearchResult:
    return search(table, "expression", "identity", tradeoff_panels=2, **KW)


def _meets(row: dict[str, Any], level: str, target: float, accepted: set[str]) -> bool:
    """Whether a row's public figures meet a level's targets, read here from the figures:
    every risk's upper bound within its target (an accepted one: its estimate, or no
    estimate at all), CAS above chance."""
    lv = resolve_level(level)
    if not row["cas_ci"][0] > row["interest_chance"]:
        return False
    p = 1.0  # the chance that a fresh evaluation passes too (the margin of the choice)
    for r in row["risks"]:
        t = target if r["risk"] == "recognition" else lv.target(r["level"])
        if r["name"] in accepted:
            if math.isfinite(r["value"]) and r["value"] > t:
                return False
        elif not (math.isfinite(r["ci"][1]) and r["ci"][1] <= t):
            return False
        else:
            p *= pass_probability_of(r["value"], r["ci"][1], t)
    return p >= CONFIRM_PROBABILITY


def _check(res: SearchResult) -> None:
    table = res.tradeoff
    assert [e["level"] for e in table][:3] == list(TABLE_LEVELS)
    assert sum(e["chosen"] for e in table) == 1
    for e in table:
        lv = resolve_level(e["level"])
        assert (e["record_target"], e["identity_target"]) == (lv.record, lv.identity)
        accepted = set(res.accept_risks) | set(e["accepts"])
        ok = [r for r in res.rows if _meets(r, e["level"], res.target_advantage, accepted)]
        if e["setting"] is None:
            assert not ok
            continue
        row = next(r for r in res.rows if r["setting"] == e["setting"])
        assert row["cas"] == e["cas"] and e["fraction"] == pytest.approx(
            row["cas"] / row["clear"])
        assert _meets(row, e["level"], res.target_advantage, accepted)
        assert e["cas"] == max(r["cas"] for r in ok)  # none more useful meets the level
        has_rec = any(r["risk"] == "recognition" for r in row["risks"])
        assert e["judged_by"] == (PANEL if has_rec else STAGE1_ONLY)
    # stricter levels never find a more useful setting than looser ones
    cas = [e["cas"] if e["cas"] is not None else -1.0 for e in table[:3]]
    assert cas == sorted(cas)


def test_the_table_is_consistent_with_the_rows_and_the_targets(plain: SearchResult,
                                                               judged: SearchResult) -> None:
    for res in (plain, judged):
        _check(res)
    mine = next(e for e in plain.tradeoff if e["chosen"])
    if plain.certified:  # the chosen level's row is the search's choice
        assert mine["setting"] == plain.rows[plain.chosen]["setting"]


def test_judging_the_table_never_changes_the_choice(plain: SearchResult,
                                                    judged: SearchResult) -> None:
    assert plain.certified, "the table must certify a setting for this test to bite"
    assert plain.chosen == judged.chosen and plain.certified == judged.certified
    assert json.dumps(plain.confirmation["verdict"], sort_keys=True, default=str) == \
        json.dumps(judged.confirmation["verdict"], sort_keys=True, default=str)
    # judging with the panel only adds figures: a row stage 1 judged may become a panel row
    assert sum(r["judged_by"] == PANEL for r in judged.rows) >= \
        sum(r["judged_by"] == PANEL for r in plain.rows)
    stage1_rows = [e for e in judged.tradeoff if e["judged_by"] == STAGE1_ONLY]
    assert len(stage1_rows) <= len([e for e in plain.tradeoff
                                    if e["judged_by"] == STAGE1_ONLY])


def test_the_table_is_written_to_the_result_and_the_terminal(judged: SearchResult) -> None:
    d = json.loads(json.dumps(judged.to_dict(), default=str))
    assert [e["level"] for e in d["tradeoff"]] == list(TABLE_LEVELS)
    assert not any(k.startswith("_") for e in d["tradeoff"] for k in e)
    lines = table_lines(judged.tradeoff)
    assert len(lines) == 1 + len(TABLE_LEVELS)
    for e, line in zip(judged.tradeoff, lines[1:], strict=True):
        assert line.strip().startswith(e["level"])
        assert (e["setting"] or "none") in line


def test_a_synthetic_table_gives_each_level_its_setting() -> None:
    res = synthetic_result()
    by = {e["level"]: e for e in res.tradeoff}
    assert by["strict"]["setting"] == "c()" and by["standard"]["setting"] == "c()"
    assert by["basic"]["setting"] == "b()" and by["standard"]["chosen"]
    assert by["standard"]["below_floor"] and not by["basic"]["below_floor"]
    assert all(e["judged_by"] == PANEL for e in res.tradeoff)
    # a row without recognition (stage 1 only) is marked so, never passed off as judged
    row = _row("d()", 0.99, 0.0, 0.5)
    row["_risks"] = [r for r in row["_risks"] if r.risk != "recognition"]
    row["risks"] = [r for r in row["risks"] if r["risk"] != "recognition"]
    res.rows.append(row)
    table = res.tradeoff_table()
    assert all(e["setting"] == "d()" and e["judged_by"] == STAGE1_ONLY for e in table)
    assert "stage 1: recognition not judged" in table_lines(table)[1]


def test_a_numeric_level_adds_its_own_row() -> None:
    res = synthetic_result()
    res.level = 0.09
    names = [e["level"] for e in res.tradeoff_table()]
    assert names == [*TABLE_LEVELS, "0.09"]


def test_the_panel_judges_the_rows_stage_1_alone_judged(table: FeatureTable,
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    # a chosen level no setting meets: every row passes no stage 1, so the named levels'
    # best settings were never judged by the panel — until tradeoff_panels lets it
    kw = {**KW, "level": 0.001}
    plain = search(table, "expression", "identity", **kw)
    assert plain.chosen is None
    before = [e for e in plain.tradeoff if e["judged_by"] == STAGE1_ONLY]
    assert before, "the table must hold a stage-1 row for this test to bite"
    import bioanon.certification.search.staged as staged

    resumed: list[str] = []
    real = staged.resume_setting
    monkeypatch.setattr(staged, "resume_setting", lambda judge, ev, progress: (
        resumed.append(type(ev).__name__), real(judge, ev, progress))[1])
    judged = search(table, "expression", "identity", tradeoff_panels=1, **kw)
    assert resumed == ["Evaluation"]  # the trade-off's panel resumed stage 1's evaluation
    assert judged.chosen is None
    n_panel = [sum(r["judged_by"] == PANEL for r in res.rows) for res in (plain, judged)]
    assert n_panel[1] == n_panel[0] + 1  # one more setting judged, no more
    _check(judged)
    # the panel resumed that setting's stage-1 evaluation: its row is the one a full
    # evaluation from scratch gives (the exhaustive search's), to the bit
    full = search(table, "expression", "identity", exhaustive=True, **kw)
    by_setting = {r["setting"]: r for r in full.rows}
    new = [r for r in judged.rows if r.get("tradeoff_judged")]
    assert len(new) == 1
    assert not any("_stage1" in r for r in judged.rows)  # let go once the table is filled

    def public_row(r: dict[str, Any]) -> str:
        drop = ("judged_by", "tradeoff_judged")
        return json.dumps({k: v for k, v in r.items() if not k.startswith("_")
                           and k not in drop}, sort_keys=True)

    assert public_row(new[0]) == public_row(by_setting[new[0]["setting"]])
    assert "stage 1: recognition not judged" in " ".join(table_lines(plain.tradeoff))


def test_the_report_s_first_screen_shows_the_table(judged: SearchResult) -> None:
    from bioanon.certification.tradeoff import public
    from bioanon.report.html import (
        SECTIONS,
        deciding_section,
        headline_section,
        tradeoff_section,
    )

    # right after the headline (a refusal decided on the tuning split shows that row between)
    between = SECTIONS[SECTIONS.index(headline_section) + 1:SECTIONS.index(tradeoff_section)]
    assert between == [deciding_section]
    page = tradeoff_section({"tradeoff": public(judged.tradeoff)})
    assert "id='tradeoff-table'" in page and "(chosen)" in page
    for e in judged.tradeoff:
        assert e["level"] in page and (e["setting"] or "none") in page
    assert tradeoff_section({}) == ""


def test_a_risk_the_screen_left_unmeasured_reads_not_measured() -> None:
    from bioanon.certification.tradeoff import tradeoff_line

    screened = {"name": "record-inference", "risk": "inference", "level": "record",
                "statistic": "advantage", "value": float("nan"),
                "ci": [float("nan"), float("nan")], "target": 0.1,
                "status": "inconclusive at this size",
                "reason": "not measured: screened at stage 1: the cheap membership attackers"}
    member = {"name": "record-membership", "risk": "membership", "level": "record",
              "statistic": "advantage", "value": 0.73, "ci": [0.70, 0.77], "target": 0.1,
              "status": "not met", "reason": "screened at stage 1: ..."}
    row = {"setting": "a()", "cas": 0.9, "cas_ci": [0.85, 0.95], "clear": 1.0,
           "interest_chance": 0.1, "met": False, "met_utility": True,
           "risks": [member, screened], "_risks": []}
    line = tradeoff_line([], [row], None)
    assert "record-membership advantage 0.730 (upper bound 0.770) > target 0.1" in line
    assert "record-inference not measured (stage 1's screen" in line and "nan" not in line


def test_the_panel_judges_rows_above_the_utility_floor_first() -> None:
    """A row below the utility floor is released only if the user lowers the floor, so the
    recognition panel judges the rows above it first (the refusal's level suggestion), then
    the rows below it; within each, the chosen level's first, then by decreasing CAS."""
    def entry(row: int, cas: float, chosen: bool, below: bool) -> dict[str, Any]:
        return {"_row": row, "cas": cas, "chosen": chosen, "below_floor": below,
                "judged_by": STAGE1_ONLY}

    t = [entry(0, 0.5, True, True), entry(1, 0.6, False, True), entry(2, 0.85, False, False),
         entry(3, 0.9, False, False), {**entry(4, 0.95, False, False), "judged_by": PANEL}]
    assert stage1_only(t) == [3, 2, 0, 1]
    assert stage1_only([{**e, "below_floor": None} for e in t]) == [0, 3, 2, 1]


def test_a_stage_1_row_is_offered_only_if_a_leak_free_recognition_keeps_its_margin() -> None:
    """Recognition is not judged at stage 1, and its interval on a small table leaves even a
    leak-free release short of certain (FSDD: ±0.03 against 0.05, a chance of 0.90): a
    stage-1 row is offered at a level only if its margin holds with that factor, so the
    refusal never points to a level whose run then refuses on recognition's margin."""
    from bioanon.certification.margin import CONFIRM_PROBABILITY, pass_probability_of
    from bioanon.evaluation.risks.base import risk_result
    from bioanon.metrics.pass_chance import most_stated

    def risk(kind: str, value: float, half: float, target: float) -> Any:
        return risk_result(kind, "record", "advantage", value, (value - half, value + half),
                           "a", 0.0, "b", target, 0.03, "")

    def row(setting: str, cas: float, risks: list[Any]) -> dict[str, Any]:
        return {"setting": setting, "cas": cas, "cas_ci": [cas - 0.02, cas + 0.02],
                "clear": 0.95, "interest_chance": 0.1, "_risks": risks}

    factor = most_stated(0.03 / 1.959964, 0.05)  # what a true 0 passes with, at most
    assert 0.8 < factor < 0.95
    panel = row("judged()", 0.7, [risk("recognition", 0.0, 0.03, 0.05),
                                  risk("membership", 0.0, 0.01, 0.10)])
    # membership alone passes a fresh run with ~0.84: enough alone, not with the factor
    half = 0.05
    p_alone = pass_probability_of(0.0, half, 0.10)
    assert p_alone >= CONFIRM_PROBABILITY > p_alone * factor
    tight = row("stage1_tight()", 0.9, [risk("membership", 0.0, half, 0.10)])
    roomy = row("stage1_roomy()", 0.8, [risk("membership", 0.0, 0.01, 0.10)])
    rows = [panel, tight, roomy]
    assert recognition_half_width(rows) == pytest.approx(0.03)
    j, _ = best_at(rows, "standard", 0.05)
    assert rows[j]["setting"] == "stage1_roomy()"  # the tight one would not carry it
    # without a panel-judged row nothing is known of recognition's width: no factor
    j, _ = best_at([tight, roomy], "standard", 0.05)
    assert [tight, roomy][j]["setting"] == "stage1_tight()"
    # recognition accepted by name: its figure cannot refuse, no factor either
    j, _ = best_at(rows, "standard", 0.05, accept={"record-recognition": "why"})
    assert rows[j]["setting"] == "stage1_tight()"


def test_the_closest_report_resumes_a_stage_1_row(table: FeatureTable,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal's closest setting that stage 1 alone judged is reported from its stage-1
    evaluation (the recognition panel resumed on it), not from a whole evaluation again: the
    report's risks are those a fresh full evaluation gives (the exhaustive search's row for
    that setting), to the bit."""
    import bioanon.certification.search.confirmation as confirmation

    kw = {**KW, "level": 0.001}
    resumed: list[str] = []
    real = confirmation.resume_setting
    monkeypatch.setattr(confirmation, "resume_setting", lambda judge, ev, progress: (
        resumed.append(type(ev).__name__), real(judge, ev, progress))[1])
    res = search(table, "expression", "identity", tradeoff_panels=0, report_closest=True,
                 **kw)
    near, _ = res.closest()
    assert res.chosen is None and near is not None and near["judged_by"] != PANEL
    assert resumed == ["Evaluation"] and res.closest_report is not None
    assert not any("_stage1" in r or "_ev" in r for r in res.rows)  # let go after
    full = search(table, "expression", "identity", exhaustive=True, **kw)
    row = next(r for r in full.rows if r["setting"] == near["setting"])
    # the measured figures (the report writes a figure not measured as null, the row NaN)
    want = {r["name"]: (r["value"], list(r["ci"])) for r in row["risks"]
            if r["value"] is not None and np.isfinite(r["value"])}
    got = {r["name"]: (r["value"], list(r["ci"])) for r in res.closest_report["risks"]
           if r["name"] in want}
    assert got == want and any(n.endswith("recognition") for n in got)
