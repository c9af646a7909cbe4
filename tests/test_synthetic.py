"""The synthesizer's covariance estimators: Ledoit-Wolf, factor (low rank + diagonal), pooled."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.covariance import ledoit_wolf

from bioanon.anonymize import SyntheticAnonymizer
from bioanon.anonymize.synthetic import _ledoit_wolf, class_covariances
from bioanon.errors import BioanonError


def classes(n_per: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three correlated Gaussian classes with different covariances (synthetic data)."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.standard_normal((n_per, d)) @ rng.standard_normal((d, d)) + 3 * c
                        for c in range(3)])
    return X.astype(np.float32), np.repeat(np.arange(3), n_per)


def test_ledoit_wolf_matches_scikit_learn_and_shrinks_more_with_fewer_records() -> None:
    X, _ = classes(40, 20)
    Zc = (X[:40] - X[:40].mean(0)).astype(np.float64)
    S = Zc.T @ Zc / 40
    np.testing.assert_allclose(_ledoit_wolf(Zc, S), ledoit_wolf(Zc, assume_centered=True)[0],
                               rtol=1e-6, atol=1e-8)

    def intensity(m: int) -> float:
        Zm = X[:m] - X[:m].mean(0)
        Sm = Zm.T.astype(np.float64) @ Zm / m
        shrunk = _ledoit_wolf(Zm.astype(np.float64), Sm)
        off = ~np.eye(20, dtype=bool)
        return 1 - float(np.abs(shrunk[off]).sum() / np.abs(Sm[off]).sum())

    assert 0 < intensity(40) and intensity(10) > intensity(40)


def test_factor_keeps_the_variances_and_rank_of_the_correlations() -> None:
    X, y = classes(500, 12)
    mu, cov = class_covariances(X, y, "factor", 0.0, rank=3)
    _, full = class_covariances(X, y, "full", 0.0)
    for s in range(3):
        np.testing.assert_allclose(np.diag(cov[s]), np.diag(full[s]), rtol=1e-6)
        assert np.linalg.eigvalsh(cov[s]).min() > 0  # a valid covariance
    # the model is rank 3 plus a diagonal: subtracting the diagonal residual leaves rank <= 3
    S = full[0]
    w, V = np.linalg.eigh(S)
    low3 = (V[:, -3:] * w[-3:]) @ V[:, -3:].T
    np.testing.assert_allclose(cov[0] - np.diag(np.diag(S) - np.diag(low3)), low3, atol=1e-8)
    assert np.linalg.matrix_rank(low3, tol=1e-8) == 3


def test_pooled_is_one_within_class_covariance_and_keeps_class_means() -> None:
    X, y = classes(3000, 4)
    _, cov = class_covariances(X, y, "pooled", 0.0)
    within = sum(np.cov(X[y == c].T, bias=True) * 3000 for c in range(3)) / (9000 - 3)
    for s in range(3):
        np.testing.assert_allclose(cov[s], within, rtol=1e-4, atol=1e-6)
    out = SyntheticAnonymizer("p", covariance="pooled", reg=0.0,
                              random_state=0).fit_transform(X, pd.DataFrame({"p": y}))
    for c in range(3):
        sd = np.sqrt(np.diag(within))  # the release's spread is the pooled one
        assert np.abs(out[y == c].mean(0) - X[y == c].mean(0)).max() < 0.1 * sd.min()
        assert np.linalg.norm(np.cov(out[y == c].T) - within) / np.linalg.norm(within) < 0.1


@pytest.mark.parametrize("cov", ["ledoit-wolf", "factor", "pooled"])
def test_seed_reproduces_and_no_record_is_copied(cov: str) -> None:
    X, y = classes(60, 8)
    labels = pd.DataFrame({"p": y})
    a = SyntheticAnonymizer("p", covariance=cov, rank=2, random_state=1).fit_transform(X, labels)
    b = SyntheticAnonymizer("p", covariance=cov, rank=2, random_state=1).fit_transform(X, labels)
    c = SyntheticAnonymizer("p", covariance=cov, rank=2, random_state=2).fit_transform(X, labels)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.dtype == np.float32 and a.shape == X.shape
    dist = np.sqrt(((a[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    assert dist.min() > 1e-3


def test_one_gaussian_covariances_refuse_more_components() -> None:
    with pytest.raises(BioanonError, match="n_components=1"):
        SyntheticAnonymizer("p", covariance="pooled", n_components=2).check_params()


def test_shrinkage_scales_the_correlations_and_keeps_the_variances() -> None:
    X, y = classes(400, 6)
    _, full = class_covariances(X, y, "full", 0.0)
    _, half = class_covariances(X, y, "full", 0.0, shrinkage=0.5)
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(half[:, off], 0.5 * full[:, off], rtol=1e-9)
    np.testing.assert_allclose(half[:, ~off], full[:, ~off], rtol=1e-9)
    with pytest.raises(BioanonError, match="shrinkage"):
        SyntheticAnonymizer("p", covariance="diag", shrinkage=0.5).check_params()
