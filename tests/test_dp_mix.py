"""The DP mix: its sensitivity, the analytic Gaussian mechanism's calibration, the noise."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from bioanon.anonymize.bounded_design import circulant_sets
from bioanon.anonymize.dp_mix import (
    DPMixAnonymizer,
    clip_rows,
    mix_sensitivity,
)
from bioanon.anonymize.row_blocks import mixing_matrix
from bioanon.errors import BioanonError
from bioanon.privacy import analytic_gaussian_epsilon as epsilon_for
from bioanon.privacy import analytic_gaussian_sigma as gaussian_sigma


@pytest.mark.parametrize(("eps", "delta"), [(0.5, 1e-5), (1.0, 1e-6), (10.0, 1e-6),
                                            (1000.0, 1e-6)])
def test_sigma_is_the_least_that_meets_delta(eps: float, delta: float) -> None:
    sigma = gaussian_sigma(eps, delta, 2.0)

    def achieved(s: float) -> float:  # Balle & Wang (2018), Theorem 8, written out here
        a, b = 2.0 / (2 * s), eps * s / 2.0
        return float(norm.cdf(a - b) - np.exp(eps + norm.logcdf(-a - b)))

    assert achieved(sigma) <= delta * (1 + 1e-6)
    assert achieved(sigma * 0.99) > delta
    if eps <= 1:  # never above the classical calibration
        assert sigma <= 2.0 * math.sqrt(2 * math.log(1.25 / delta)) / eps


def test_epsilon_for_inverts_the_calibration_and_grows_with_sensitivity() -> None:
    s = gaussian_sigma(3.0, 1e-6, 1.0)
    assert epsilon_for(s, 1e-6, 1.0) == pytest.approx(3.0, rel=1e-6)
    assert epsilon_for(s, 1e-6, 4.0) > 3.0


def test_replacing_one_record_moves_the_mix_by_at_most_the_sensitivity() -> None:
    rng = np.random.default_rng(0)
    strat = np.repeat([0, 1], 50)
    g, clip = 8, 3.0
    M = mixing_matrix(circulant_sets(strat, g, rng))
    Z = clip_rows(rng.standard_normal((100, 6)) * 4, clip)
    assert np.linalg.norm(Z, axis=1).max() <= clip * (1 + 1e-9)
    for j in (0, 57, 99):
        Z2 = Z.copy()
        Z2[j] = -Z[j]  # the farthest replacement within the clip ball
        diff = np.linalg.norm(M @ Z - M @ Z2)
        assert diff <= mix_sensitivity(g, clip) * (1 + 1e-5)
        assert diff >= 0.99 * mix_sensitivity(g, clip) * np.linalg.norm(Z[j]) / clip


def test_noise_scale_matches_the_formula() -> None:
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 2000)
    X = np.where(y[:, None] == 0, 1.0, -1.0) * np.ones((1, 16))  # identical within a class
    X = (X + 0.0 * rng.standard_normal(X.shape)).astype(np.float32)
    est = DPMixAnonymizer("p", g=16, epsilon=5.0, delta=1e-6, random_state=0)
    res = est.fit(X, pd.DataFrame({"p": y})).release_result(X, pd.DataFrame({"p": y}))
    sigma = gaussian_sigma(5.0, 1e-6, mix_sensitivity(16, math.sqrt(16)))
    assert res.info["sigma_standardized"] == pytest.approx(sigma)
    resid = (res.X - X) / X.std(axis=0)  # the mix of identical records is the record
    assert resid.std() == pytest.approx(sigma, rel=0.03)
    assert abs(resid.mean()) < 0.05 * sigma


def test_seed_reproduces_and_identity_epsilon_is_larger() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((240, 8)).astype(np.float32)
    labels = pd.DataFrame({"p": np.repeat([0, 1, 2], 80), "id": np.tile(np.arange(40), 6)})
    est = DPMixAnonymizer("p", sensitive="id", g=8, epsilon=20.0, random_state=3)
    a = est.fit(X, labels).release_result(X, labels)
    b = DPMixAnonymizer("p", sensitive="id", g=8, epsilon=20.0,
                        random_state=3).fit_transform(X, labels)
    assert np.array_equal(a.X, b)
    assert a.info["identity_records_max"] == 6
    assert a.info["epsilon_identity"] > a.info["epsilon"] == 20.0
    c = DPMixAnonymizer("p", g=8, epsilon=20.0, random_state=4).fit_transform(X, labels)
    assert not np.array_equal(a.X, c)


def test_bad_settings_name_the_fix() -> None:
    X = np.zeros((20, 3), dtype=np.float32)
    with pytest.raises(BioanonError, match="epsilon"):
        DPMixAnonymizer("p", epsilon=0.0).fit(X, pd.DataFrame({"p": [0, 1] * 10}))
    with pytest.raises(BioanonError, match="lower g"):
        DPMixAnonymizer("p", g=16).fit_transform(X, pd.DataFrame({"p": [0, 1] * 10}))
