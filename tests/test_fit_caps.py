"""The caps on model-fit records and attacker candidates: applied, reported, and inert below
their sizes (sizes only; nothing here times anything)."""

from __future__ import annotations

import pytest

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation import Evaluation
from bioanon.report.build import build_report

KW = dict(models=["knn"], attackers="naive,parrot", n_jobs=1, verification=False)


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=24, records_per_identity=16, n_features=32,
                          random_state=3)


def run(table, **caps):
    anon = SelectiveMeanAnonymizer("expression", g=4, r_p=0.1)
    return Evaluation(table, "expression", "identity", anonymizer=anon, random_state=5,
                      **KW, **caps).evaluate()


def by_name(ev):
    return {r.name: r for r in ev.risks()}


def test_caps_are_applied_and_reported(table):
    ev = run(table, max_fit_records=100, max_candidates=60)
    assert ev.n_train_ > 100 and ev.n_test_ > 60  # both caps bind on this table
    u = ev.utility_raw_["expression"]
    assert u["n_fit"] == 100 and u["n_train"] == ev.n_train_
    assert u["n"] == ev.n_test_  # the test records are never sampled
    rec = by_name(ev)["record-membership"].extras
    # the cap per side and game; the record level pools four games
    assert rec["n_games"] == 4
    assert (rec["n_members"], rec["n_nonmembers"]) == (240, 240)
    assert by_name(ev)["record-inference"].extras["n_members"] == 240
    ident = by_name(ev)["identity-membership"].extras
    assert ident["n_identities"] == 24  # every identity kept at the identity level
    data = build_report(ev)
    sizes = data["dataset"]["fit_sizes"]
    assert sizes["binding"] and sizes["max_fit_records"] == 100
    assert sizes["utility"]["expression"]["n_fit"] == 100
    assert sizes["candidates"]["members"] == 60
    assert sizes["candidates"]["non_members_total"] == ev.n_train_
    assert "recognition" in sizes["half_widths"]
    sentence = data["verdict"]["sentence"]
    assert "trained on at most 100 records" in sentence
    assert f"60 of {ev.n_test_} members" in sentence and "95% half-widths" in sentence


def test_caps_above_the_sizes_change_nothing(table):
    free = run(table, max_fit_records=None, max_candidates=None)
    capped = run(table, max_fit_records=10_000, max_candidates=10_000)
    assert capped.cas().value == free.cas().value
    assert capped.utility_raw_["expression"]["n_fit"] == free.n_train_
    a, b = by_name(free), by_name(capped)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].value == b[name].value or (a[name].value != a[name].value)
        assert a[name].ci == b[name].ci or a[name].ci[0] != a[name].ci[0]
    data = build_report(capped)
    assert not data["dataset"]["fit_sizes"]["binding"]
    assert "trained on at most" not in data["verdict"]["sentence"]


@pytest.mark.parametrize("name", ["max_fit_records", "max_candidates"])
def test_a_cap_below_two_is_refused(table, name):
    with pytest.raises(BioanonError, match=name) as exc:
        run(table, **{name: 1})
    assert exc.value.parameter == name
