"""Random sets: exact composition (size g, purity t), no repeats, secrets never leave memory."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bioanon.anonymize import random_sets
from bioanon.anonymize.mix_kernel import set_filler
from bioanon.anonymize.random_sets import assemble_sets, floyd, n_same, sample_distinct
from bioanon.errors import BioanonError


def _check_sets(sets: np.ndarray, codes: np.ndarray, g: int, t: float) -> None:
    n = codes.size
    assert sets.shape == (n, g)
    assert np.array_equal(sets[:, 0], np.arange(n))  # the record itself comes first
    same = (codes[sets] == codes[:, None]).sum(axis=1)
    assert np.all(same == n_same(g, t))  # purity exactly round(t*g)
    srt = np.sort(sets, axis=1)
    assert not np.any(srt[:, 1:] == srt[:, :-1])  # members distinct: no replacement


@settings(max_examples=40, deadline=None)
@given(n_classes=st.integers(2, 5), per_class=st.integers(5, 60), g=st.integers(1, 12),
       t_pct=st.integers(0, 100), seed=st.integers(0, 2**16))
def test_sets_have_exact_size_purity_and_no_repeats(n_classes, per_class, g, t_pct, seed):
    t = 1.0 / g + t_pct / 100 * (1.0 - 1.0 / g)
    codes = np.repeat(np.arange(n_classes), per_class)
    rng = np.random.default_rng(seed)
    k_same = n_same(g, t) - 1
    if k_same > per_class - 1 or g - 1 - k_same > per_class * (n_classes - 1):
        with pytest.raises(BioanonError):
            assemble_sets(codes, g, t, rng)
        return
    _check_sets(assemble_sets(codes, g, t, rng), codes, g, t)


def test_large_pool_draws_stay_distinct_and_skip_the_record():
    rng = np.random.default_rng(3)
    out = sample_distinct(5000, 4000, 40, rng, self_pos=np.arange(5000) % 4000)
    srt = np.sort(out, axis=1)
    assert not np.any(srt[:, 1:] == srt[:, :-1])
    assert not np.any(out == (np.arange(5000) % 4000)[:, None])
    assert out.min() >= 0 and out.max() < 4000


def test_donors_are_spread_uniformly():
    rng = np.random.default_rng(5)
    out = sample_distinct(20000, 50, 10, rng)
    counts = np.bincount(out.ravel(), minlength=50)
    expected = 20000 * 10 / 50
    assert np.abs(counts - expected).max() < 0.08 * expected


def test_too_small_class_names_class_and_size():
    codes = np.array([0] * 10 + [1] * 40)
    with pytest.raises(BioanonError, match=r"class 'rare' has 10 records.*needs 26"):
        assemble_sets(codes, 32, 0.8, np.random.default_rng(0),
                      class_names=np.array(["rare", "common"]))


def test_replacement_allowed_when_asked():
    codes = np.array([0] * 5 + [1] * 40)
    sets = assemble_sets(codes, 16, 0.75, np.random.default_rng(0), allow_replacement=True)
    same = (codes[sets] == codes[:, None]).sum(axis=1)
    assert np.all(same == 12)
    assert not np.any(sets[:5, 1:] == np.arange(5)[:, None])  # never the record itself


def test_purity_out_of_range_is_refused():
    with pytest.raises(BioanonError, match="purity"):
        assemble_sets(np.zeros(10, dtype=int), 4, 0.1, np.random.default_rng(0))


def test_sets_without_the_record_keep_size_and_purity():
    codes = np.repeat(np.arange(3), 40)
    sets = assemble_sets(codes, 10, 0.7, np.random.default_rng(2), include_self=False)
    assert sets.shape == (120, 10)
    assert not np.any(sets == np.arange(120)[:, None])  # the record is never in its own set
    assert np.all((codes[sets] == codes[:, None]).sum(axis=1) == 7)
    srt = np.sort(sets, axis=1)
    assert not np.any(srt[:, 1:] == srt[:, :-1])


def test_floyd_subsets_are_uniform():
    """Every 2-subset of 5 positions is equally likely (10 subsets, chi-square check)."""
    out = np.sort(floyd(np.random.default_rng(11).random((50_000, 2)), 5), axis=1)
    codes = out[:, 0] * 5 + out[:, 1]
    counts = np.bincount(codes, minlength=25)[[a * 5 + b for a in range(5)
                                               for b in range(a + 1, 5)]]
    assert counts.sum() == 50_000
    expected = 5_000
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 27.9  # 9 degrees of freedom, p = 0.001


@pytest.mark.skipif(set_filler() is None, reason="numba (the scale extra) is not installed")
@pytest.mark.parametrize("g,t,include_self,replace,n_classes", [
    (32, 0.8, True, False, 10), (16, 1.0, False, False, 7), (8, 0.5, True, False, 3),
    (32, 0.8, True, True, 900), (5, 0.6, False, False, 2),
])
def test_compiled_filler_gives_the_numpy_fillers_sets(monkeypatch, g, t, include_self,
                                                      replace, n_classes):
    """Same uniforms, same sets: a release does not depend on whether numba is installed."""
    codes = np.random.default_rng(1).integers(0, n_classes, 3000) * 3 + 5
    monkeypatch.setattr(random_sets, "MIN_COMPILED_ROWS", 1)
    monkeypatch.setattr(random_sets, "_UNIFORM_ROWS", 700)  # several compiled steps
    compiled = assemble_sets(codes, g, t, np.random.default_rng(7), allow_replacement=replace,
                             include_self=include_self)
    monkeypatch.setattr(random_sets, "MIN_COMPILED_ROWS", 10**9)
    plain = assemble_sets(codes, g, t, np.random.default_rng(7), allow_replacement=replace,
                          include_self=include_self)
    assert np.array_equal(compiled, plain)
    same = (codes[compiled] == codes[:, None]).sum(axis=1)
    if not replace:
        assert np.all(same == n_same(g, t))
