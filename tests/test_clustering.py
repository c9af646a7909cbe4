"""Fixed-size clusterers: sizes in [k, 2k−1], MDAV by hand, memory refusal, quality report."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from bioanon.anonymize.clustering import (
    CLUSTERERS,
    FixedSizeClusterer,
    cluster_quality,
    fixed_size_clusters,
    hierarchical_partition,
    mdav,
)
from bioanon.errors import BioanonError


def partition(labels: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels)}


def test_mdav_matches_hand_computed_example() -> None:
    # n=9, k=2. Round 1 (n >= 3k): centroid 15.78, furthest r = 41 -> {41, 40};
    # furthest from 41 is 0 -> {0, 1}. Then 5 left (2k <= 5 < 3k): centroid 12, furthest 22
    # -> {22, 20}; the rest {3, 7, 8} is the last cluster.
    X = np.array([0.0, 1.0, 3.0, 7.0, 8.0, 20.0, 22.0, 40.0, 41.0])[:, None]
    got = partition(mdav(X, 2))
    want = {frozenset({7, 8}), frozenset({0, 1}), frozenset({5, 6}), frozenset({2, 3, 4})}
    assert got == want


def test_mdav_two_dimensional_example() -> None:
    # two tight groups of three far apart: k=3 must find them exactly
    X = np.array([[0, 0], [0, 1], [1, 0], [10, 10], [10, 11], [11, 10]], dtype=float)
    assert partition(mdav(X, 3)) == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


@settings(max_examples=100, deadline=None)
@given(n=st.integers(2, 70), k=st.integers(2, 7), d=st.integers(1, 4),
       method=st.sampled_from(CLUSTERERS), seed=st.integers(0, 2**16))
def test_cluster_sizes_between_k_and_2k_minus_1(n: int, k: int, d: int, method: str,
                                                 seed: int) -> None:
    if n < k:
        with pytest.raises(BioanonError, match="records for k"):
            fixed_size_clusters(np.zeros((n, d)), k, method)
        return
    X = np.random.default_rng(seed).normal(size=(n, d))
    labels = fixed_size_clusters(X, k, method, random_state=seed)
    sizes = np.bincount(labels)
    assert labels.shape == (n,)
    assert sizes.min() >= k
    assert sizes.max() <= 2 * k - 1
    assert set(np.unique(labels)) == set(range(sizes.size))  # labels are 0..m−1


@pytest.mark.parametrize("linkage", ["average", "complete", "ward", "single"])
def test_hierarchical_recovers_separated_groups(linkage: str) -> None:
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [50, 0], [0, 50], [50, 50]], dtype=float)
    X = np.repeat(centres, 4, axis=0) + rng.normal(scale=0.5, size=(16, 2))
    got = partition(hierarchical_partition(X, 4, linkage))
    assert got == {frozenset(range(i, i + 4)) for i in range(0, 16, 4)}


def test_hierarchical_refuses_beyond_memory_limit() -> None:
    X = np.zeros((3000, 2))
    with pytest.raises(BioanonError, match="use clusterer='mdav'"):
        hierarchical_partition(X, 5, max_memory=1 << 20)


def test_bad_k_and_unknown_names() -> None:
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(BioanonError, match="k >= 2"):
        mdav(X, 1)
    with pytest.raises(BioanonError, match="integer"):
        mdav(X, 2.5)
    with pytest.raises(BioanonError, match="did you mean 'mdav'"):
        fixed_size_clusters(X, 2, "mdv")
    with pytest.raises(BioanonError, match="linkage"):
        hierarchical_partition(X, 2, "wart")


def test_cluster_quality_prefers_true_groups() -> None:
    rng = np.random.default_rng(1)
    X = np.repeat(rng.normal(scale=20, size=(6, 3)), 3, axis=0) + rng.normal(size=(18, 3))
    good = mdav(X, 3)
    bad = rng.permutation(good)
    qg, qb = cluster_quality(X, good), cluster_quality(X, bad)
    assert qg["n_clusters"] == 6
    assert qg["pairwise_min"] <= qg["pairwise_mean"] <= qg["pairwise_max"]
    assert qg["pairwise_mean"] < qb["pairwise_mean"]
    assert qg["silhouette"] > qb["silhouette"]


def test_estimator_wrapper_clones_and_fits() -> None:
    X = np.random.default_rng(2).normal(size=(30, 4))
    est = clone(FixedSizeClusterer(k=4, method="kmember", random_state=0))
    sizes = np.bincount(est.fit_predict(X))
    assert sizes.min() >= 4 and sizes.max() <= 7


@settings(max_examples=60, deadline=None)
@given(n_ids=st.integers(2, 8), per_id=st.integers(1, 12), k=st.integers(2, 5),
       seed=st.integers(0, 2**16))
def test_distinct_grouping_clusters_hold_k_different_values(n_ids: int, per_id: int, k: int,
                                                            seed: int) -> None:
    from bioanon.anonymize.clustering import distinct_grouping

    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(n_ids), per_id)
    X = rng.normal(size=(n_ids, 3))[ids] * 5 + rng.normal(size=(ids.size, 3))
    if n_ids < k or ids.size < k:
        with pytest.raises(BioanonError):
            distinct_grouping(X, k, ids)
        return
    try:
        labels = distinct_grouping(X, k, ids)
    except BioanonError as exc:  # only when some value is too frequent to spread
        assert "too many records" in str(exc)
        return
    for c in np.unique(labels):
        members = ids[labels == c]
        assert members.size >= k
        assert np.unique(members).size == members.size  # all values differ


def test_distinct_grouping_refuses_a_dominant_value() -> None:
    from bioanon.anonymize.clustering import distinct_grouping

    ids = np.r_[np.zeros(20, int), np.arange(1, 11)]  # value 0: 20 records > n/k = 10
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(BioanonError, match="too many records"):
        distinct_grouping(X, 3, ids)
