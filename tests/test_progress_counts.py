"""Progress counters never run past their total and never go back: a search's stages, and
the inner steps of each evaluation (the attack panel's fits among them)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from bioanon.anonymize.selective_mean import SelectiveMeanAnonymizer
from bioanon.certification.search import search
from bioanon.datasets import make_biometric
from bioanon.report.build import evaluate
from bioanon.table import FeatureTable

WHY = "test of the progress counters"
KW: dict[str, Any] = {"methods": ["selective-mean", "noise"], "target_advantage": 0.3,
                      "models": ["knn"], "attackers": "naive,parrot,reverse", "n_jobs": 1,
                      "accept_risks": {"identity-membership": WHY, "identity-inference": WHY},
                      "random_state": 515151, "budget_minutes": None, "level": 0.99}


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=0)


def _monotone_within_total(calls: list[tuple[int, int, str]]) -> None:
    assert calls
    last = 0
    for done, total, text in calls:
        assert 0 <= done <= total, (done, total, text)
        assert done >= last, (done, total, text, last)
        last = done


@pytest.mark.parametrize("exhaustive", [False, True])
def test_a_search_counts_up_to_its_total(table: FeatureTable, exhaustive: bool,
                                         caplog: pytest.LogCaptureFixture) -> None:
    calls: list[tuple[int, int, str]] = []
    with caplog.at_level(logging.DEBUG, logger="bioanon"):
        res = search(table, "expression", "identity", exhaustive=exhaustive,
                     progress=lambda d, n, text: calls.append((d, n, text)), **KW)
    assert res.rows
    _monotone_within_total(calls)
    assert calls[-1][0] == calls[-1][1] and calls[-1][2] == "done"
    stage2 = [c for c in calls if c[2].startswith("stage 2:")]
    assert exhaustive or stage2  # the staged search's panel stage is said with its count
    # every inner step logged (each evaluation's own counter) stays within its total
    counted = [r for r in caplog.records if getattr(r, "total", None)]
    assert counted and all(0 <= r.done <= r.total for r in counted)  # type: ignore[attr-defined]


def test_an_evaluation_counts_the_panel_fits_within_its_total(table: FeatureTable) -> None:
    calls: list[tuple[int, int, str]] = []
    evaluate(table, "expression", "identity", models=["knn", "forest"],
             attackers="naive,parrot,reverse", n_jobs=1,
             anonymizer=SelectiveMeanAnonymizer("expression", g=4, r_p=0.2),
             progress=lambda d, n, text: calls.append((d, n, text)))
    _monotone_within_total(calls)
    assert any(text.startswith("attack panel:") for _, _, text in calls)
    assert calls[-1][0] == calls[-1][1] and calls[-1][2] == "done"


def test_an_evaluation_says_each_game_and_fold_of_its_risks() -> None:
    """Membership and inference play several games and folds, seconds each on a large table
    (the demo's confirmation said nothing for 15 s): each one's start is said, without
    counting a step, and the lines leave no trace in the evaluation (it can be pickled)."""
    import pickle

    people = make_biometric(n_identities=40, records_per_identity=15, n_features=32,
                            random_state=1)
    calls: list[tuple[int, int, str]] = []
    ev = evaluate(people, "expression", "identity", models=["knn"],
                  attackers="naive,parrot,reverse", n_jobs=1,
                  anonymizer=SelectiveMeanAnonymizer("expression", g=4, r_p=0.2),
                  progress=lambda d, n, text: calls.append((d, n, text)))
    _monotone_within_total(calls)
    texts = [text for _, _, text in calls]
    for risk in ("membership", "inference"):
        for what in ("record game", "identity fold"):
            lines = [t for t in texts if t.startswith(f"{risk}: {what} ")]
            n = len(lines)
            assert n >= 2 and lines == [f"{risk}: {what} {k} of {n}" for k in range(1, n + 1)]
    # a line of a game counts no step: the count it shows is the one before it
    said = [i for i, t in enumerate(texts) if ": record game " in t or ": identity fold " in t]
    assert len({calls[i][0] for i in said}) == 1
    pickle.dumps(ev)
