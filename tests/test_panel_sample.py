"""At scale the recognition panel scores a seeded sample of the released records (its cost
stops growing as records × identities), says so, and reads what every record reads."""

from __future__ import annotations

import numpy as np
import pytest

import bioanon.attack.panel_sample as panel_sample
from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets import make_biometric

KW = {"models": ["knn"], "attackers": "naive,parrot,linkage", "n_jobs": 1, "random_state": 0}


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=30, records_per_identity=12, n_features=32,
                          random_state=5)


def _recognition(report):
    return next(r for r in report["risks"] if r["name"] == "record-recognition")


def test_the_sample_binds_only_above_the_bound_and_is_stated(table, monkeypatch):
    anon = SelectiveMeanAnonymizer("expression", g=4, r_p=0.05)
    full = evaluate(table, "expression", "identity", anonymizer=anon, **KW)
    n = full["privacy"]["probes"]["of"]
    assert full["privacy"]["probes"] == {"n": n, "of": n, "sample": ""}
    monkeypatch.setattr(panel_sample, "MAX_TRIALS", 30 * (n // 2))  # half the probes
    part = evaluate(table, "expression", "identity", anonymizer=anon, **KW)
    probes = part["privacy"]["probes"]
    assert probes["n"] == n // 2 and probes["of"] == n
    assert f"a seeded random sample of {n // 2} of {n} released records" in probes["sample"]
    # every attacker's rate is the sample's (its n), the recognition risk's too, and says so
    assert {a["n"] for a in part["privacy"]["attacks"]} == {n // 2}
    rec = _recognition(part)
    assert rec["extras"]["n"] == n // 2
    assert "the released records scored: a seeded random sample" in str(
        part["privacy"]["worst_case_crossfit"])
    # contributor disclosure (a mixing release) reads the sampled records' guesses
    assert part["privacy"]["contributors"]["n"] == n // 2
    assert full["privacy"]["contributors"]["n"] == n
    # the other risks do not read the panel: the same figures to the bit
    others = {r["name"]: (r["value"], r["ci"]) for r in full["risks"] if "recognition"
              not in r["name"]}
    assert others == {r["name"]: (r["value"], r["ci"]) for r in part["risks"]
                      if "recognition" not in r["name"]}
    # the linkage attacker still searches every clear test record: its chance of finding a
    # record's own original is 1 / all of them, not 1 / the sample
    link = next(a for a in part["privacy"]["attacks"] if a["mode"] == "linkage")
    assert link["record_chance_top_k"][0] == pytest.approx(1 / n)
    # an unbiased estimate: the sample's accuracy within its own interval's reach of all's
    a_full = {(a["mode"], a["model"]): a["accuracy"] for a in full["privacy"]["attacks"]}
    for a in part["privacy"]["attacks"]:
        half = (a["ci"][1] - a["ci"][0])
        assert abs(a["accuracy"] - a_full[(a["mode"], a["model"])]) <= half


def test_the_sample_is_seeded_and_sorted():
    y = np.repeat(np.arange(100).astype(str), 30)
    a = panel_sample.panel_probe_rows(y, 3, max_trials=100_000)
    b = panel_sample.panel_probe_rows(y, 3, max_trials=100_000)
    c = panel_sample.panel_probe_rows(y, 4, max_trials=100_000)
    assert a is not None and c is not None and a.size == 1_000
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all(np.diff(a) > 0)
    assert panel_sample.panel_probe_rows(y, 3, max_trials=300_000) is None
