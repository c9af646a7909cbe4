"""Every rate of the evaluation's summary (the terminal table, ``--json``, report.json's
``summary``) comes with its 95% interval: the utility views and the label-only control as
the typed results give them, the plain worst case, the contributors' rate."""

from __future__ import annotations

import re

import pytest

from bioanon.anonymize import GaussianNoiseAnonymizer
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation
from bioanon.report.build import build_report
from bioanon.report.summary import VIEWS, summary, summary_rows

FAST = {"models": ["knn"], "attackers": ["naive", "parrot", "linkage"], "n_jobs": 1,
        "verification": False}
#: the rows whose figure is not a measured rate: a class's share, a weighted sum
NOT_RATES = ("chance for", "secondary: utility U")


@pytest.fixture(scope="module")
def evaluated() -> Evaluation:
    t = make_biometric(n_identities=8, records_per_identity=20, n_features=32, random_state=1)
    return Evaluation(t, "expression", "identity", additional={"gender": 0.5},
                      anonymizer=GaussianNoiseAnonymizer(sigma=1.0), random_state=0,
                      selection="auto", **FAST).evaluate()


def test_the_summary_gives_each_utility_view_and_the_control_their_intervals(evaluated):
    ev = evaluated
    s = summary(build_report(ev))
    typed = ev.utility()
    views = {"clear": "clear", "anonymized": "paper", "anonymized_to_clear": "cas",
             "anonymized_to_anonymized": "anonymized_to_anonymized"}
    assert set(views) == set(VIEWS)
    for col, entry in (("expression", s["utility"]), ("gender", s["utility"]["additional"]
                                                      ["gender"])):
        for view, ci in entry["ci"].items():
            rate = getattr(typed[col], views[view])
            assert ci == pytest.approx(list(rate.ci)), (col, view)  # the typed result's
            assert ci[0] <= entry[view] <= ci[1]
    assert set(s["utility"]["ci"]) == set(VIEWS)
    assert set(s["utility"]["additional"]["gender"]["ci"]) == {"clear", "anonymized"}
    assert s["control_ci"] == pytest.approx(list(ev.control().ci))
    assert s["control_ci"][0] <= s["control"] <= s["control_ci"][1]


def test_every_rate_row_of_the_terminal_table_shows_its_interval(evaluated):
    rows = summary_rows(summary(build_report(evaluated)))
    rates = [(k, v) for k, v in rows if not k.startswith(NOT_RATES)]
    assert any(k.startswith("control") for k, _ in rates)
    assert any(k.startswith("worst case, plain") for k, _ in rates)
    assert any(k.startswith("selection random") for k, _ in rates)  # a range over draws
    for label, value in rates:
        # each figure of the row is followed by its interval ("0.973 [0.966, 0.979]"); a
        # reference in parentheses ("(linkage / cosine_nn)", "(0.91 × clear 0.963)") aside
        figures = re.split(r"[→/]", re.sub(r"\([^()]*\)", "", value))
        assert all("[" in f for f in figures if f.strip()), (label, value)


def test_the_consumer_panel_rows_give_the_clear_accuracy_its_interval(evaluated):
    rows = [v for k, v in summary_rows(summary(build_report(evaluated))) if " panel " in k]
    assert rows and all(re.search(r"\(clear \d\.\d{3} \[", v) for v in rows), rows


def test_the_verdict_gives_the_headline_cas_its_interval(evaluated):
    from bioanon.evaluation import verdict
    from bioanon.report.verdict_points import verdict_points

    u = evaluated.utility()["expression"]
    v = verdict(evaluated, 0.05)
    assert v.cas_ci == pytest.approx(u.cas.ci) and v.clear_ci == pytest.approx(u.clear.ci)
    # read back from the report as written: the same intervals
    again = verdict(build_report(evaluated).to_dict(), 0.05)
    assert again.cas_ci == pytest.approx(u.cas.ci) and again.clear_ci == pytest.approx(
        u.clear.ci)
    lo, hi = u.cas.ci
    assert f"CAS {u.cas.value:.3f} [{lo:.3f}, {hi:.3f}]" in verdict_points(v.to_dict())[1][-1]
