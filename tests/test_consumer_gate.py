"""The consumer gate: before a setting is confirmed, the consumer's whole panel judges it on
the tuning split (the search ranked it by the cheaper ranking panel), so that a setting whose
whole-panel pick falls under the utility floor fails there, not on the final confirmation."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bioanon.certification.search import confirmation, search
from bioanon.certification.search.rows import row_line
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation
from bioanon.evaluation.consumer import CONSUMER_MODELS
from bioanon.table import FeatureTable

WHY = "test of the consumer gate"


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=8, records_per_identity=40, n_features=32,
                          random_state=0)


@pytest.fixture(scope="module")
def gated(table: FeatureTable) -> dict[str, Any]:
    """A search whose gate is watched: the row, its evaluation and the judge it was given."""
    seen: dict[str, Any] = {}
    original = confirmation.consumer_gate

    def watch(row: dict[str, Any], judge: Any, say: Any) -> bool:
        seen.setdefault("calls", []).append(row["setting"])
        seen.update(row=row, ev=row.get("_ev"), judge=judge)
        return original(row, judge, say)

    mp = pytest.MonkeyPatch()
    mp.setattr(confirmation, "consumer_gate", watch)
    try:
        seen["result"] = search(
            table, "expression", "identity", methods=["noise"], target_advantage=0.5,
            models=["knn"], attackers="naive,parrot", n_jobs=1, budget_minutes=None,
            level=0.99, random_state=1, min_utility=0.3,
            accept_risks={"identity-membership": WHY, "identity-inference": WHY})
    finally:
        mp.undo()
    return seen


def test_the_gate_reads_the_whole_panel_on_the_tuning_split(gated, table) -> None:
    res, row, judge = gated["result"], gated["row"], gated["judge"]
    assert res.certified and gated["calls"] == [res.rows[res.chosen]["setting"]]
    gate = row["consumer_gate"]
    assert gate["passed"] and gate["pick"] in CONSUMER_MODELS
    # the consumers the ranking panel ran on that release are read, the others fitted
    assert gate["fitted"] == [m for m in CONSUMER_MODELS
                              if m not in judge.for_tuning.consumer_models()]
    ranked = judge.for_tuning  # the search ranked by fewer consumers than the whole panel
    # (this table's linear consumers fall short of the forest on clear records: a smaller
    # forest ranks beside them, and the gate fits the consumer's own forest)
    assert ranked.consumer_panel == "forest-ranking" and "forest" in gate["fitted"]
    # the gate's figures are the whole panel's on the tuning split: an evaluation of the
    # same setting, split and seed under the confirmation's options reads the same CAS
    cand = next(c for c in _candidates(res, row))
    whole = Evaluation(judge.tuning_table, "expression", "identity",
                       anonymizer=judge.anonymizer(cand), random_state=judge.seed,
                       options=judge.options).evaluate(recognition=False)
    u = whole.utility()["expression"]
    assert gate["cas"] == u.cas.value and gate["pick"] == whole.utility_raw_[
        "expression"]["cas_model"]
    # against the row's own clear figure and floor (the ranking panel's clear pick)
    assert gate["clear"] == row["clear"] and gate["floor"] == pytest.approx(0.3 * row["clear"])
    # the row's own evaluation is left as the ranking panel made it (its report, the table)
    ev = gated["ev"]
    assert ev.options.consumer_panel == ranked.consumer_panel
    assert [m["model"] for m in ev.utility_raw_["expression"]["consumer"]["models"]] == list(
        ranked.consumer_models())


def test_a_setting_under_the_floor_there_fails_utility_and_is_not_confirmed(gated) -> None:
    row, judge = dict(gated["row"]), gated["judge"]
    gate = row.pop("consumer_gate")
    row["_ev"], row["met"], row["met_utility"] = gated["ev"], True, True
    strict = replace(judge, min_utility=gate["cas"] / gate["clear"] + 0.01)
    said: list[str] = []
    assert confirmation.consumer_gate(row, strict, said.append) is False
    assert row["met"] is False and row["met_utility"] is False
    assert row["consumer_gate"]["passed"] is False and said
    assert "fails (utility: the consumer's whole panel on the tuning split picks" in row_line(
        row)
    why = gated["result"].utility_shortfall(row)  # a refusal's words: the pick's CAS
    assert why.startswith("utility: the consumer's whole panel on the tuning split picks")
    assert f"CAS {row['consumer_gate']['cas']:.3f}" in why
    # and the search moves on: confirm_setting does not confirm it, nothing is chosen
    result = gated["result"]
    saved = (result.chosen, result.confirmation)
    result.chosen = result.confirmation = None
    j = result.rows.index(next(r for r in result.rows if r["setting"] == row["setting"]))
    kept = result.rows[j]
    result.rows[j] = row
    row["met"] = True
    try:
        assert confirmation.confirm_setting(result, j, strict, said.append) is False
        assert result.chosen is None and result.confirmation is None
    finally:
        result.rows[j] = kept
        result.chosen, result.confirmation = saved


def test_no_gate_where_the_tuning_split_ranks_by_the_whole_panel(gated) -> None:
    row, judge = dict(gated["row"]), gated["judge"]
    row.pop("consumer_gate")
    row["_ev"] = gated["ev"]
    whole = replace(judge, tuning_options=judge.options)
    assert confirmation.consumer_gate(row, whole, lambda _t: None) is True
    assert "consumer_gate" not in row
    assert confirmation.consumer_gate(row, replace(judge, min_utility=None),
                                      lambda _t: None) is True
    assert "consumer_gate" not in row


def _candidates(res: Any, row: dict[str, Any]) -> Any:
    from bioanon.certification.search.candidates import Candidate

    r = next(r for r in res.rows if r["setting"] == row["setting"])
    yield Candidate(r["method"], dict(r["params"]), {})
