"""Distance correlation: 0 for independent samples, 1 for a variable with itself."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.anonymize.sanitizer import distance_correlation
from bioanon.errors import BioanonError


def test_independent_samples_near_zero() -> None:
    # the sample statistic (V-statistic) has a positive bias shrinking like 1/sqrt(n)
    rng = np.random.default_rng(0)
    small = distance_correlation(rng.normal(size=(300, 3)), rng.normal(size=(300, 5)))
    x, y = rng.normal(size=(3000, 3)), rng.normal(size=(3000, 5))
    large = distance_correlation(x, y)
    assert large < 0.08
    assert large < small
    assert distance_correlation(x, y + 0.5 * x[:, :1]) > 3 * large


def test_variable_with_itself_is_one_and_invariant_to_affine_maps() -> None:
    x = np.random.default_rng(1).normal(size=(300, 4))
    assert distance_correlation(x, x) == pytest.approx(1.0)
    assert distance_correlation(x, 3.0 * x - 7.0) == pytest.approx(1.0)


def test_detects_nonlinear_dependence_that_correlation_misses() -> None:
    x = np.random.default_rng(2).normal(size=1000)
    y = x ** 2
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.1
    assert distance_correlation(x, y) > 0.4


def test_constant_variable_gives_zero() -> None:
    x = np.random.default_rng(3).normal(size=(50, 2))
    assert distance_correlation(x, np.ones(50)) == 0.0


def test_mismatched_lengths_are_a_user_error() -> None:
    with pytest.raises(BioanonError, match="pair them"):
        distance_correlation(np.zeros((5, 2)), np.zeros((6, 2)))


def test_torch_version_matches_numpy_and_has_finite_gradients() -> None:
    torch = pytest.importorskip("torch")
    from bioanon.anonymize.sanitizer import distance_correlation_torch

    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 3))
    y = np.tanh(x[:, :2]) + 0.5 * rng.normal(size=(200, 2))
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.tensor(y)
    value = distance_correlation_torch(xt, yt)
    assert float(value.detach()) == pytest.approx(distance_correlation(x, y), abs=1e-4)
    squared = distance_correlation_torch(xt, yt, squared=True)
    assert float(squared.detach()) == pytest.approx(distance_correlation(x, y) ** 2, abs=1e-4)
    squared.backward()
    assert torch.isfinite(xt.grad).all()
    assert float(xt.grad.abs().sum()) > 0
