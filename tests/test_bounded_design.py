"""Bounded donor use: the circulant design and vp-mix's ``design="bounded"``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.anonymize import VarianceMixAnonymizer
from bioanon.anonymize.bounded_design import circulant_sets, donor_uses
from bioanon.errors import BioanonError


@pytest.mark.parametrize(("sizes", "g"), [((9, 30, 101), 8), ((65, 200), 64), ((3, 4), 2)])
def test_every_record_donates_exactly_g_times_within_its_stratum(sizes: tuple[int, ...],
                                                                 g: int) -> None:
    strat = np.random.default_rng(1).permutation(np.repeat(np.arange(len(sizes)), sizes))
    sets = circulant_sets(strat, g, np.random.default_rng(0))
    n = strat.size
    assert sets.shape == (n, g)
    assert (donor_uses(sets, n) == g).all()  # the bound c = g holds exactly
    assert (sets != np.arange(n)[:, None]).all()  # never its own donor
    assert (np.sort(sets, axis=1)[:, 1:] != np.sort(sets, axis=1)[:, :-1]).all()  # distinct
    assert (strat[sets] == strat[:, None]).all()  # donors from the record's stratum


def test_donors_are_marginally_uniform_over_the_others() -> None:
    strat = np.zeros(12, dtype=np.int64)
    counts = np.zeros((12, 12))
    for seed in range(3000):
        sets = circulant_sets(strat, 3, np.random.default_rng(seed))
        np.add.at(counts, (np.repeat(np.arange(12), 3), sets.ravel()), 1)
    off = counts[~np.eye(12, dtype=bool)]
    assert np.diag(counts).sum() == 0
    expected = 3000 * 3 / 11
    assert np.abs(off - expected).max() < 5 * np.sqrt(expected)


def test_seed_reproduces_and_differs() -> None:
    strat = np.repeat([0, 1], 40)
    a = circulant_sets(strat, 8, np.random.default_rng(5))
    assert np.array_equal(a, circulant_sets(strat, 8, np.random.default_rng(5)))
    assert not np.array_equal(a, circulant_sets(strat, 8, np.random.default_rng(6)))


def test_too_small_a_class_is_refused_with_the_fix() -> None:
    with pytest.raises(BioanonError, match="lower g"):
        circulant_sets(np.repeat([0, 1], [8, 20]), 8, np.random.default_rng(0))


def test_vp_mix_bounded_keeps_moments_and_bounds_donor_use() -> None:
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 3000)
    X = (rng.standard_normal((y.size, 4)) @ rng.standard_normal((4, 4)) + 3.0 * y[:, None])
    X = X.astype(np.float32)
    labels = pd.DataFrame({"p": y})
    est = VarianceMixAnonymizer("p", g=16, design="bounded", random_state=0)
    out, M = est.release_with_mixing(X, labels)
    uses = np.asarray((M > 0).sum(axis=0)).ravel()
    assert (uses == 16).all()
    assert M.diagonal().sum() == 0
    for c in range(3):
        a, b = X[y == c], out[y == c]
        assert np.abs(a.mean(0) - b.mean(0)).max() < 0.1 * a.std(0).min()
        ca, cb = np.cov(a.T), np.cov(b.T)
        assert np.linalg.norm(ca - cb) / np.linalg.norm(ca) < 0.1
    again = VarianceMixAnonymizer("p", g=16, design="bounded", random_state=0)
    assert np.array_equal(out, again.fit_transform(X, labels))


def test_vp_mix_bounded_needs_t_one() -> None:
    with pytest.raises(BioanonError, match="t=1"):
        VarianceMixAnonymizer("p", additional=["q"], t=0.5, design="bounded").check_params()
