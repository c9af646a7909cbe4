"""k-Same and k-Same-Select: the k-anonymity invariant, the 1/k bound, utility classes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from bioanon.anonymize import KSameAnonymizer, KSameSelectAnonymizer
from bioanon.errors import BioanonError
from bioanon.metrics import (
    anonymity_sets,
    information_loss,
    is_k_anonymous,
    k_anonymity,
    rank1,
    record_linkage_rate,
)
from bioanon.table import FeatureTable


@settings(max_examples=100, deadline=None)
@given(n=st.integers(2, 60), k=st.integers(2, 6), d=st.integers(1, 5),
       clusterer=st.sampled_from(["knn", "mdav", "kmember", "hierarchical"]),
       seed=st.integers(0, 2**16))
def test_release_is_k_anonymous(n: int, k: int, d: int, clusterer: str, seed: int) -> None:
    X = np.random.default_rng(seed).normal(size=(n, d))
    anon = KSameAnonymizer(k=k, clusterer=clusterer, random_state=seed)
    if n < k:
        with pytest.raises(BioanonError, match="records for k"):
            anon.fit_transform(X)
        return
    out = anon.fit_transform(X)
    sets = anonymity_sets(out)
    counts = np.bincount(sets)
    assert counts.min() >= k  # every released vector is shared by at least k−1 others
    assert counts.max() <= 2 * k - 1  # distinct data: one set per cluster, of size <= 2k−1
    # each set is released as its members' mean
    for s in np.unique(sets):
        members = sets == s
        np.testing.assert_allclose(out[members][0], X[members].mean(axis=0), atol=1e-4)


def test_record_linkage_is_at_most_one_over_k() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 8))
    for k in (2, 3, 5, 8):
        out = KSameAnonymizer(k=k).fit_transform(X)
        assert k_anonymity(out) >= k
        assert record_linkage_rate(X, out) <= 1.0 / k + 1e-12
        # person-specific set: one record per person, naive rank-1 is bounded the same way
        ids = np.arange(200)
        assert rank1(X, ids, out, ids) <= 1.0 / k + 1e-12
    # and without anonymization the linkage is perfect, so the bound is not vacuous
    assert record_linkage_rate(X, X) == 1.0


def test_information_loss_grows_with_k() -> None:
    X = np.random.default_rng(1).normal(size=(300, 6))
    losses = [information_loss(X, KSameAnonymizer(k=k).fit_transform(X)) for k in (2, 5, 15)]
    assert losses[0] < losses[1] < losses[2]


def test_ksame_select_keeps_the_utility_class() -> None:
    rng = np.random.default_rng(2)
    y = np.repeat(["smile", "neutral"], 30)
    X = rng.normal(size=(60, 5))
    lab = pd.DataFrame({"expression": y})
    out = KSameSelectAnonymizer("expression", k=4).fit_transform(X, lab)
    sets = anonymity_sets(out)
    assert is_k_anonymous(out, 4)
    for s in np.unique(sets):  # no released vector mixes the two expressions
        assert np.unique(y[sets == s]).size == 1
    # plain k-Same on the same data does mix them somewhere
    plain = anonymity_sets(KSameAnonymizer(k=4).fit_transform(X))
    assert any(np.unique(y[plain == s]).size > 1 for s in np.unique(plain))


def test_ksame_select_refuses_small_class() -> None:
    X = np.random.default_rng(3).normal(size=(12, 3))
    lab = pd.DataFrame({"expression": ["a"] * 9 + ["b"] * 3})
    with pytest.raises(BioanonError, match="'b' \\(3\\).*lower k to 3"):
        KSameSelectAnonymizer("expression", k=4).fit(X, lab)
    with pytest.raises(BioanonError, match="not found"):
        KSameSelectAnonymizer("expresion", k=2).fit(X, lab)


def test_errors_for_k() -> None:
    X = np.zeros((3, 2))
    with pytest.raises(BioanonError, match="k=1 is out of range; use an integer >= 2"):
        KSameAnonymizer(k=1).fit(X)
    with pytest.raises(BioanonError, match="only 3 records for k=4"):
        KSameAnonymizer(k=4).fit(X)


def test_eigenface_space_and_table_io() -> None:
    rng = np.random.default_rng(4)
    t = FeatureTable(rng.normal(size=(40, 30)), pd.DataFrame({"id": np.arange(40)}))
    anon = clone(KSameAnonymizer(k=3, n_components=5, random_state=0))
    out = anon.fit_transform(t)
    assert isinstance(out, FeatureTable)
    assert out.X.shape == (40, 30)
    assert is_k_anonymous(out.X, 3)
    assert "random_state" not in anon.public_params()


def test_ksame_select_single_record_class_suggests_dropping() -> None:
    X = np.random.default_rng(5).normal(size=(7, 2))
    lab = pd.DataFrame({"e": ["a"] * 6 + ["b"]})
    with pytest.raises(BioanonError, match="drop or merge"):
        KSameSelectAnonymizer("e", k=2).fit(X, lab)


def test_distinct_ksame_bounds_identity_recognition() -> None:
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(6)
    ids = np.repeat(np.arange(6), 40)  # several records per person
    X = rng.normal(size=(6, 10))[ids] * 4 + rng.normal(size=(240, 10))
    lab = pd.DataFrame({"speaker": ids})
    rec = KNeighborsClassifier(1).fit(X, ids)  # an attacker with clear records
    plain = KSameAnonymizer(k=3).fit_transform(X, lab)
    distinct = KSameAnonymizer(k=3, distinct="speaker").fit_transform(X, lab)
    assert np.mean(rec.predict(plain) == ids) > 0.9  # plain k-Same keeps the person
    assert np.mean(rec.predict(distinct) == ids) <= 1 / 3 + 1e-12
    assert is_k_anonymous(distinct, 3)
    with pytest.raises(BioanonError, match="not found"):
        KSameAnonymizer(k=3, distinct="speakr").fit(X, lab)
