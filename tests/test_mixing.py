"""Weighted cluster mixing: k-anonymity, random weights, the re-identification risk loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bioanon.anonymize import ClusterMixAnonymizer
from bioanon.anonymize.cluster_release import cluster_means, pairwise_percentile
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.metrics import anonymity_sets, is_k_anonymous


def test_cluster_means_weighted() -> None:
    X = np.array([[0.0], [2.0], [10.0], [20.0]])
    got = cluster_means(X, np.array([0, 0, 1, 1]), np.array([1.0, 3.0, 1.0, 1.0]))
    np.testing.assert_allclose(got.ravel(), [1.5, 15.0])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 50), k=st.integers(2, 4), seed=st.integers(0, 2**16),
       delta=st.floats(0.0, 0.2))
def test_mixing_is_k_anonymous(n: int, k: int, seed: int, delta: float) -> None:
    X = np.random.default_rng(seed).normal(size=(n, 3))
    anon = ClusterMixAnonymizer(k=k, delta=min(delta, 0.9 / k), risk_threshold=0.5,
                                random_state=seed)
    res = anon.fit(X).release_result(X)
    counts = np.bincount(anonymity_sets(res.X))
    assert counts.min() >= k and counts.max() <= 2 * k - 1
    assert 0.0 <= res.info["reid_rate"] <= res.info["reid_rate_initial"] <= 1.0
    assert not hasattr(anon, "reid_rate_")  # diagnostics are returned, never stored


def test_risk_loop_lowers_reidentification_on_constructed_case() -> None:
    # clusters of three: two members close together, one far away. The plain mean sits
    # within the threshold of one close member; lowering its weight moves the mix away.
    rng = np.random.default_rng(0)
    base = np.array([[0.0, 0.0], [0.3, 0.0], [4.0, 0.0]])
    X = np.concatenate([base + [100.0 * i, 0.0] for i in range(10)]) + \
        rng.normal(scale=0.01, size=(30, 2))
    anon = ClusterMixAnonymizer(k=3, risk_threshold=1.3, beta=0.3, max_rounds=50,
                                random_state=0)
    res = anon.fit(X).release_result(X)
    out, info = res.X, res.info
    assert info["reid_rate_initial"] > 0.3
    assert info["reid_rate"] < info["reid_rate_initial"]
    assert info["reid_rate"] == 0.0
    assert 0 < info["n_rounds"] < 50  # terminated before the round limit
    assert is_k_anonymous(out, 3)
    assert info["cluster_reid_rates_initial"].max() == pytest.approx(1 / 3)


def test_risk_loop_stops_at_round_limit_when_it_cannot_help() -> None:
    X = np.zeros((6, 2))  # every member sits on the mix: no weighting can fix that
    anon = ClusterMixAnonymizer(k=3, risk_threshold=1.0, max_rounds=4, random_state=0)
    info = anon.fit(X).release_result(X).info
    assert info["n_rounds"] == 0  # best round is the first; the loop gave up at 4 rounds
    assert info["reid_rate"] == 1.0


def test_random_weights_change_the_release_and_keep_anonymity() -> None:
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                       random_state=0)
    a = ClusterMixAnonymizer(k=4, delta=0.1, risk_threshold=None, random_state=1)
    b = ClusterMixAnonymizer(k=4, delta=0.1, risk_threshold=None, random_state=2)
    plain = ClusterMixAnonymizer(k=4, risk_threshold=None, random_state=1)
    oa, ob, op = (m.fit_transform(t.X, t.labels) for m in (a, b, plain))
    assert not np.allclose(oa, ob)
    assert is_k_anonymous(oa, 4) and is_k_anonymous(ob, 4)
    # same clusters as the unweighted release (MDAV is deterministic)
    assert sorted(np.bincount(anonymity_sets(oa))) == sorted(np.bincount(anonymity_sets(op)))
    assert np.isnan(plain.release_result(t.X, t.labels).info["reid_rate"])


def test_auto_threshold_uses_identity() -> None:
    rng = np.random.default_rng(3)
    ids = np.repeat(np.arange(5), 10)
    X = rng.normal(size=(5, 4))[ids] * 10 + rng.normal(size=(50, 4))
    same = pairwise_percentile(X, ids, 50, rng)
    nn = pairwise_percentile(X, None, 50, rng)
    assert 0 < nn < same < 5  # within-identity spread, not the 10× between-identity one
    anon = ClusterMixAnonymizer(k=3, sensitive="identity", random_state=0)
    info = anon.fit(X, {"identity": ids}).release_result(X, {"identity": ids}).info
    assert info["threshold"] == pytest.approx(pairwise_percentile(
        X, ids, 5.0, np.random.default_rng(0)), rel=0.5)


def test_parameter_errors() -> None:
    X = np.zeros((10, 2))
    with pytest.raises(BioanonError, match="delta"):
        ClusterMixAnonymizer(k=4, delta=0.3).fit(X)
    with pytest.raises(BioanonError, match="beta"):
        ClusterMixAnonymizer(k=4, beta=1.5).fit(X)
    with pytest.raises(BioanonError, match="did you mean 'kmember'"):
        ClusterMixAnonymizer(k=4, clusterer="kmembr").fit(X)
    with pytest.raises(BioanonError, match="risk_threshold"):
        ClusterMixAnonymizer(k=4, risk_threshold="high").fit_transform(X)
    with pytest.raises(BioanonError, match="^k=1 is out of range; use an integer >= 2"):
        ClusterMixAnonymizer(k=1).fit(X)
