"""The same table in other units reads the same utility: the consumer's models read every
array in the units :func:`bioanon.evaluation.units.unit_scale` gives (a power of two), after
anonymization. scikit-learn's trees treat values closer than 1e-7 as equal, so the consumer's
forest once read a table in micro-units poorly (CAS 0.911 against 0.978)."""

from __future__ import annotations

import numpy as np

from bioanon import SelectiveMeanAnonymizer, evaluate
from bioanon.datasets import make_biometric
from bioanon.evaluation.units import HIGH, LOW, unit_scale
from bioanon.table import FeatureTable


def _cas(t: FeatureTable) -> float:
    anon = SelectiveMeanAnonymizer(interest="expression", sensitive="identity", g=8, t=0.5)
    report = evaluate(t, "expression", "identity", anonymizer=anon, models="knn",
                      attackers="naive,parrot", n_jobs=1)
    return float(report["utility"]["cas"]["value"])


def test_a_table_in_micro_units_reads_the_utility_of_its_own_units():
    t = make_biometric(n_identities=30, records_per_identity=12, n_features=32,
                       random_state=0)
    micro = FeatureTable(t.X * 1e-6, t.labels, t.feature_names, {})
    s = unit_scale(micro.X)
    assert unit_scale(t.X) == 1.0 and s > 1e5 and np.log2(s) == round(np.log2(s))
    assert _cas(micro) == _cas(t)


def test_the_usual_range_is_read_as_it_is():
    rng = np.random.default_rng(0)
    for sd in (2 * LOW, 0.2, 50.0, HIGH / 2):
        assert unit_scale(rng.normal(scale=sd, size=(500, 8))) == 1.0
    assert unit_scale(rng.normal(scale=1e9, size=(500, 8))) == 2.0 ** -30
