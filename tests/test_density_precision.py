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
    wide_min = membership._min_dist(cand, released)
    monkeypatch.setattr(density, "FLOAT32_PAIRS", 0)  # every table counts as large
    monkeypatch.setattr(membership, "FLOAT32_PAIRS", 0)
    narrow = density.density_scores_multi(cand, released, ref, ks=(1, 5))
    narrow_min = membership._min_dist(cand, released)
    for k in (1, 5):
        np.testing.assert_allclose(narrow[k], wide[k], atol=1e-3)
        assert rank_auc(narrow[k][:300], narrow[k][300:]) == pytest.approx(
            rank_auc(wide[k][:300], wide[k][300:]), abs=1e-4)
    assert rank_auc(wide[1][:300], wide[1][300:]) > 0.9  # the attack does find them
    np.testing.assert_allclose(narrow_min, wide_min, atol=1e-3)


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
