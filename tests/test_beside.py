"""Utility runs beside the cheap risks when the jobs allow: the same report, an error said."""

from __future__ import annotations

import threading

import pytest

from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation import beside, protocol


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=30, records_per_identity=12, n_features=32,
                          random_state=2)


REAL_UTILITY = protocol.Evaluation._utility


def _report(table, monkeypatch, parallel: bool):
    threads: list[str] = []
    real = REAL_UTILITY

    def utility(self, *a, **kw):
        threads.append(threading.current_thread().name)
        return real(self, *a, **kw)

    monkeypatch.setattr(protocol.Evaluation, "_utility", utility)
    monkeypatch.setattr(protocol, "is_parallel", lambda n_jobs, n: parallel)
    out = evaluate(table, "expression", "identity", models="knn", attackers="naive,parrot",
                   anonymizer=SelectiveMeanAnonymizer("expression", g=4, r_p=0.1), random_state=3,
                   n_jobs=2)
    return out, threads


def _figures(obj):
    """The report without its clock readings (the fits' seconds)."""
    if isinstance(obj, dict):
        return {k: _figures(v) for k, v in obj.items() if k not in ("timing", "fit_seconds")}
    if isinstance(obj, list):
        return [_figures(v) for v in obj]
    return obj


def test_utility_beside_the_risks_gives_the_sequential_report(table, monkeypatch):
    one, where_one = _report(table, monkeypatch, parallel=False)
    both, where_both = _report(table, monkeypatch, parallel=True)
    assert where_one == ["MainThread"] and where_both == ["bioanon-beside"]
    one, both = _figures(one.to_dict()), _figures(both.to_dict())
    assert one["utility"] and one["risks"] and one["privacy"]["membership"]
    assert both == one  # every figure, to the bit


def test_an_error_in_the_utility_thread_is_raised_by_the_evaluation(table, monkeypatch):
    def broken(self, *a, **kw):
        raise BioanonError("utility broke")

    monkeypatch.setattr(protocol.Evaluation, "_utility", broken)
    monkeypatch.setattr(protocol, "is_parallel", lambda n_jobs, n: True)
    with pytest.raises(BioanonError, match="utility broke"):
        evaluate(table, "expression", "identity", models="knn", attackers="naive",
                 anonymizer=SelectiveMeanAnonymizer("expression", g=4, r_p=0.1), n_jobs=2)


def test_the_risks_error_wins_and_the_thread_is_waited_for():
    done: list[int] = []
    b = beside.Beside(lambda: done.append(1), parallel=True)
    b.wait(raise_error=False)
    assert done == [1]
    failing = beside.Beside(lambda: 1 / 0, parallel=True)
    failing.wait(raise_error=False)  # the caller's own error is the one raised
    failing.wait()  # and the dropped one is not raised later
