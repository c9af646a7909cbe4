"""Membership attackers on large tables compute distances in float32: same ranking."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.attack import density, membership
from bioanon.metrics.intervals import rank_auc


def test_float32_distances_keep_the_members_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    members, others, ref = rng.normal(size=(3, 300, 16))
    released = members + 0.05 * rng.normal(size=members.shape)  # near copies of the members
    cand = np.vstack([members, others])
    wide = density.density_scores_multi(cand, released, ref, ks=(1, 5))
    monkeypatch.setattr(density, "FLOAT32_PAIRS", 0)  # every table counts as large
    narrow = density.density_scores_multi(cand, released, ref, ks=(1, 5))
    for k in (1, 5):
        np.testing.assert_allclose(narrow[k], wide[k], atol=1e-3)
        assert rank_auc(narrow[k][:300], narrow[k][300:]) == pytest.approx(
            rank_auc(wide[k][:300], wide[k][300:]), abs=1e-4)
    assert rank_auc(wide[1][:300], wide[1][300:]) > 0.9  # the attack does find them


@pytest.mark.parametrize("float32", [False, True])
def test_one_product_gives_the_nearest_cosine_and_distance(
        monkeypatch: pytest.MonkeyPatch, float32: bool) -> None:
    # the nearest-released attacker reads its cosine and Euclidean scores off one matrix
    # product (in float32 from COSINE_FLOAT32_PAIRS pairs on): the brute-force figures,
    # whatever the block, a zero row included
    from bioanon.attack import tracing

    monkeypatch.setattr(tracing, "COSINE_FLOAT32_PAIRS", 0 if float32 else 10**12)
    rng = np.random.default_rng(5)
    released = rng.normal(size=(150, 16))
    cand = np.vstack([released[:50] + 0.05 * rng.normal(size=(50, 16)),
                      rng.normal(size=(99, 16)), np.zeros((1, 16))])
    diff = cand[:, None, :] - released[None, :, :]
    want_dist = np.sqrt((diff ** 2).sum(axis=2)).min(axis=1)
    norms = np.linalg.norm(cand, axis=1)
    unit = cand / np.where(norms == 0, 1, norms)[:, None]
    want_cos = (unit @ (released / np.linalg.norm(released, axis=1)[:, None]).T).max(axis=1)
    cos, dist = membership._nearest_both(cand, released, block=64)
    tol = 2e-3 if float32 else 1e-9
    np.testing.assert_allclose(dist, want_dist, atol=tol)
    np.testing.assert_allclose(cos, want_cos, atol=tol)
    assert cos[-1] == 0.0 and dist[-1] == pytest.approx(np.linalg.norm(released, axis=1).min(),
                                                        abs=tol)
    assert rank_auc(-dist[:50], -dist[50:]) == 1.0  # near copies nearest, in either precision


def test_the_peer_similarity_does_not_depend_on_the_candidates_order() -> None:
    # each record game holds the same candidates in another order: one computation, and
    # every record gets the same number in every order
    rng = np.random.default_rng(6)
    cand = rng.normal(size=(300, 8))
    cand[7] = cand[3]  # twins
    membership._PEERS.clear()
    first = membership.peer_similarity(cand)
    perm = rng.permutation(300)
    again = membership.peer_similarity(cand[perm])
    np.testing.assert_array_equal(again, first[perm])
    assert len(membership._PEERS._items) == 1
    assert first[3] == pytest.approx(1.0) and first[7] == pytest.approx(1.0)


def test_the_reference_side_is_computed_once_per_candidates_and_reference(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the reference's k-th distances do not depend on the release: a second release scored
    # on the same candidates and reference reuses them, and the scores are the same numbers
    rng = np.random.default_rng(1)
    members, others, ref = rng.normal(size=(3, 200, 8))
    cand = np.vstack([members, others])
    first, second = members + 0.1 * rng.normal(size=members.shape), rng.normal(size=(200, 8))
    fresh = {k: density.density_scores_multi(cand, r, ref, ks=(1, 5)) for k, r in
             (("first", first), ("second", second))}
    calls: list[int] = []
    real = density._kth_dists
    monkeypatch.setattr(density, "_kth_dists", lambda P, G, ks, skip=None, block=1024: (
        calls.append(G.shape[0]), real(P, G, ks, skip, block))[1])
    density._REFERENCE.clear()
    again = {k: density.density_scores_multi(cand, r, ref, ks=(1, 5)) for k, r in
             (("first", first), ("second", second))}
    assert calls == [200, 200, 200]  # release, reference, release: the reference once
    for name in fresh:
        for k in (1, 5):
            np.testing.assert_array_equal(again[name][k], fresh[name][k])
    skip = np.r_[-np.ones(200, int), np.arange(200)]  # another reference side: computed
    density.density_scores_multi(cand, first, ref, ks=(1, 5), candidate_in_reference=skip)
    assert calls[-2:] == [200, 200]


def test_float32_cosine_attackers_keep_the_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    # from COSINE_FLOAT32_PAIRS pairs on (a search's games) the cosine attackers compute in
    # float32: the scores move by float32's rounding only and the members' ranking stays
    from bioanon.attack import inference_labels, tracing

    rng = np.random.default_rng(2)
    members, others = rng.normal(size=(2, 300, 16))
    released = members + 0.3 * rng.normal(size=members.shape)
    labels = np.repeat(["a", "b", "c"], 100)
    cand = np.vstack([members, others])
    cand_labels = np.r_[labels, labels]

    def scores() -> dict[str, np.ndarray]:
        membership._PEERS.clear()
        out = membership.membership_scores(cand, released)
        out["tracing"] = tracing.tracing_scores(cand, released, labels, cand_labels, top=3)
        out["nearest label"] = inference_labels.nearest_labels(cand, released, labels)
        out["traced label"] = tracing.traced_labels(cand, released, labels, top=3)
        return out

    monkeypatch.setattr(tracing, "COSINE_FLOAT32_PAIRS", 10**12)  # float64 everywhere
    wide = scores()
    monkeypatch.setattr(tracing, "COSINE_FLOAT32_PAIRS", 0)  # every game counts as large
    narrow = scores()
    for name in ("nearest_released", "calibrated", "tracing"):
        assert not np.array_equal(narrow[name], wide[name])  # the float32 path did run
        np.testing.assert_allclose(narrow[name], wide[name], atol=1e-5)
        assert rank_auc(narrow[name][:300], narrow[name][300:]) == pytest.approx(
            rank_auc(wide[name][:300], wide[name][300:]), abs=1e-3)
        assert rank_auc(wide[name][:300], wide[name][300:]) > 0.8  # the attack finds them
    for name in ("nearest label", "traced label"):
        assert (narrow[name] == wide[name]).mean() > 0.99


def test_the_peer_similarity_is_computed_once_per_candidates(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the calibrated score's population side does not depend on the release: two releases
    # scored on the same candidates compute it once, and the scores are the same numbers
    rng = np.random.default_rng(3)
    cand = rng.normal(size=(200, 8))
    first, second = cand[:100] + 0.1 * rng.normal(size=(100, 8)), rng.normal(size=(100, 8))
    membership._PEERS.clear()
    fresh = [membership.membership_scores(cand, r)["calibrated"] for r in (first, second)]
    calls: list[int] = []
    real = membership._max_sim
    monkeypatch.setattr(membership, "_max_sim", lambda P, G, exclude_self=False, block=2048: (
        calls.append(int(exclude_self)), real(P, G, exclude_self, block))[1])
    membership._PEERS.clear()
    again = [membership.membership_scores(cand, r)["calibrated"] for r in (first, second)]
    assert calls == [1]  # the peers, once (each release's scores: one product apiece)
    for a, b in zip(fresh, again, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_k_smallest_are_the_partition_s_bit_for_bit(dtype) -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(size=(300, 2000)).astype(dtype)
    d[:, ::7] = np.round(d[:, ::7], 1)  # ties
    d[np.arange(300), rng.integers(0, 2000, 300)] = np.inf  # a left-out record per row
    d[5] = d[5, 0]  # a row of one value
    for k in (1, 2, 5, 40):
        want = np.partition(d, k - 1, axis=1)[:, :k]
        want.sort(axis=1)
        got = density.smallest(d, k)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    narrow = d[:, :30]  # too narrow to sample: the partition itself
    np.testing.assert_array_equal(density.smallest(narrow, 5),
                                  np.sort(narrow, axis=1)[:, :5])
