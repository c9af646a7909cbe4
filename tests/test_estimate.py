"""The expected time said after the plan: the cost model, scaled by this machine's speed.

No test here times anything: the machine's workload is replaced by a fixed number of seconds.
"""

from __future__ import annotations

import pytest

from bioanon.certification import estimate as est


def test_the_estimate_scales_the_model_by_the_machine_factor(monkeypatch):
    base = est.estimate(3000, 400, 34, n_jobs=2, factor=1.0)
    monkeypatch.setattr(est, "_workload", lambda: 2.0 * est.WORKLOAD_SECONDS)
    slow = est.estimate(3000, 400, 34, n_jobs=2)  # measured: twice the calibration's time
    # a release slows by less than the workload: 2 ** (2/3), about 1.59 x
    assert slow.seconds - est.START_SECONDS == pytest.approx(
        2.0 ** est.MACHINE_EXPONENT * (base.seconds - est.START_SECONDS))
    assert 1.5 < 2.0 ** est.MACHINE_EXPONENT < 1.7
    assert slow.text() != base.text() and slow.line().startswith("expected time: about ")
    # the model alone is what it was: FSDD's 34 settings on 2 workers
    assert round(est.expected_seconds(3000, 400, 34, workers=2)) == 59


def test_the_factor_is_bounded_and_not_measured_for_nothing_to_judge(monkeypatch):
    monkeypatch.setattr(est, "_workload", lambda: 1e9)
    assert est.machine_factor() == est.FACTOR_BOUNDS[1]
    monkeypatch.setattr(est, "_workload", lambda: 0.0)
    assert est.machine_factor() == est.FACTOR_BOUNDS[0]

    def never() -> float:
        raise AssertionError("no setting to judge: nothing to time")

    monkeypatch.setattr(est, "_workload", never)
    assert est.estimate(600, 32, 0).seconds == est.START_SECONDS


def test_the_workload_is_single_threaded_and_leaves_the_caller_s_threads(monkeypatch):
    from threadpoolctl import threadpool_info

    before = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    seconds = est._workload()
    assert seconds > 0.0
    assert [(i["internal_api"], i["num_threads"]) for i in threadpool_info()] == before
