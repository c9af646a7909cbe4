"""The k largest entries per row (:mod:`bioanon.attack.top_k`): what a full sort of each row
keeps, ties to the lower column, on every shape the neighbour attackers give it."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.attack.top_k import STRIDE, top_k_indices


def _by_sort(S: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-S, axis=1, kind="stable")[:, :k]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 5, 20])
def test_wide_rows_keep_what_a_full_sort_keeps(dtype, k):
    S = np.random.default_rng(k).normal(size=(60, 3000)).astype(dtype)
    assert (top_k_indices(S, k) == _by_sort(S, k)).all()


def test_ties_go_to_the_lower_column():
    # scores rounded to a few values: many ties at every row's k-th largest
    S = np.round(np.random.default_rng(1).normal(size=(40, 2000)), 1)
    assert (top_k_indices(S, 5) == _by_sort(S, 5)).all()
    # a row of one value: the first k columns
    assert top_k_indices(np.zeros((2, 500)), 3).tolist() == [[0, 1, 2], [0, 1, 2]]


def test_a_sample_that_misses_the_top_still_bounds_it():
    # the largest entries all sit off the sampled columns (every STRIDE-th): still found
    S = np.zeros((3, 50 * STRIDE))
    top = np.arange(1, 6) * STRIDE - 1
    S[:, top] = [5.0, 4.0, 3.0, 2.0, 1.0]
    assert (top_k_indices(S, 5) == top).all()


def test_narrow_rows_and_nan_rows_fall_back_to_the_whole_row():
    rng = np.random.default_rng(2)
    narrow = rng.normal(size=(5, 30))
    assert (top_k_indices(narrow, 5) == _by_sort(narrow, 5)).all()
    S = rng.normal(size=(4, 1000))
    S[1, ::STRIDE] = np.nan  # every sampled entry of one row NaN: the bound is NaN
    S[2, 7] = np.nan
    got = top_k_indices(S, 5)
    assert (got == _by_sort(S, 5)).all()  # NaN is never among a row's largest
    assert not np.isnan(np.take_along_axis(S, got, axis=1)).any()


def test_k_outside_the_row_is_an_error():
    with pytest.raises(ValueError, match="between 1 and"):
        top_k_indices(np.zeros((2, 4)), 5)
