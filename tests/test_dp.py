"""The DP mechanisms: noise scales match ε over many draws; the budget split is 0.3 / 0.7."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.anonymize.sanitizer import (
    RonGaussSampler,
    dp_obfuscate,
    laplace_mechanism,
    os_rng,
    random_orthonormal,
    suppress,
)
from bioanon.errors import BioanonError

# E|Laplace(0, b)| = b; over N draws the mean absolute value has relative sd 1/sqrt(N)
DRAWS = 40_000


def test_laplace_mechanism_scale_is_sensitivity_over_epsilon() -> None:
    for sensitivity, eps in [(1.0, 1.0), (2.0, 0.5), (0.3, 4.0)]:
        noise = laplace_mechanism(np.zeros(DRAWS), sensitivity, eps, os_rng())
        assert np.mean(np.abs(noise)) == pytest.approx(sensitivity / eps, rel=0.03)
        assert abs(np.mean(noise)) < 0.05 * sensitivity / eps


def test_os_rng_is_fresh_on_every_call() -> None:
    assert not np.array_equal(os_rng().random(8), os_rng().random(8))


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "x"])
def test_bad_epsilon_is_a_user_error(bad: object) -> None:
    with pytest.raises(BioanonError, match="epsilon"):
        laplace_mechanism(np.zeros(3), 1.0, bad, os_rng())  # type: ignore[arg-type]


def test_obfuscation_noise_scale_is_l1_width_over_epsilon() -> None:
    low, high = np.array([-1.0, -2.0, 0.0]), np.array([1.0, 2.0, 0.5])
    z = np.zeros((DRAWS // 3, 3))
    eps = 2.0
    noisy = dp_obfuscate(z, low, high, eps, os_rng(), clip_output=False)
    width = float(np.sum(high - low))  # ||b - a||_1 = 6.5
    assert np.mean(np.abs(noisy)) == pytest.approx(width / eps, rel=0.03)


def test_obfuscation_clips_into_the_box_before_and_after() -> None:
    z = np.array([[50.0, -50.0]])
    rng = os_rng()
    # huge epsilon: almost no noise, so the output is the clipped input
    out = dp_obfuscate(z, [-1, -1], [1, 1], 1e6, rng, clip_output=False)  # the largest ε
    assert out == pytest.approx(np.array([[1.0, -1.0]]), abs=1e-3)
    out = dp_obfuscate(np.zeros((1000, 2)), [-1, -1], [1, 1], 0.1, rng)
    assert out.min() >= -1 and out.max() <= 1


def test_suppress_gives_zeros() -> None:
    assert not suppress(np.ones((4, 3))).any()


def test_random_orthonormal_rows() -> None:
    w = random_orthonormal(3, 8, os_rng())
    assert w.shape == (3, 8)
    assert w @ w.T == pytest.approx(np.eye(3), abs=1e-10)


def _class_data(n: int = 600, k: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.choice(np.array(["a", "b", "c"]), size=n, p=[0.5, 0.3, 0.2])
    shift = {"a": 0.0, "b": 1.0, "c": -1.0}
    z = rng.normal(scale=0.3, size=(n, k)) + np.vectorize(shift.get)(y)[:, None]
    return z, y


def test_rongauss_noise_scales_match_the_epsilon_split() -> None:
    z, y = _class_data()
    eps, p = 1.0, 4
    fits = 1000  # tolerances below are about 5 standard errors of each mean
    sampler = RonGaussSampler(eps, p, center=np.zeros(6), radius=3.0)
    dev_sum, dev_count, dev_second = [], [], []
    for _ in range(fits):  # many independent fits of the same data
        rng = os_rng()
        s = sampler.fit(z, y, rng)
        u = (z @ s.W_.T) / 3.0
        u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1.0)
        onehot = (y[:, None] == s.classes_[None, :]).astype(float)
        iu = np.triu_indices(p)
        second = np.einsum("nc,ni,nj->cij", onehot, u, u)[:, iu[0], iu[1]]
        dev_sum.append(np.abs(s.noisy_sums_ - onehot.T @ u).ravel())
        dev_count.append(np.abs(s.noisy_counts_ - onehot.sum(0)))
        dev_second.append(np.abs(s.noisy_second_ - second).ravel())
    mean_scale = (np.sqrt(p) + 1.0) / (0.3 * eps)
    cov_scale = (p + 1.0) / 2.0 / (0.7 * eps)
    assert np.mean(dev_sum) == pytest.approx(mean_scale, rel=0.05)
    assert np.mean(dev_count) == pytest.approx(mean_scale, rel=0.09)
    assert np.mean(dev_second) == pytest.approx(cov_scale, rel=0.05)
    acc = sampler.accounting()
    assert acc["epsilon_mean"] + acc["epsilon_covariance"] == pytest.approx(eps)
    assert acc["split"] == {"mean_and_class_sizes": 0.3, "covariance": pytest.approx(0.7)}
    assert "not the whole record" in acc["protects"]


def test_rongauss_per_record_contributions_respect_the_sensitivity_bounds() -> None:
    z, y = _class_data()
    z[:5] *= 100.0  # outliers get clipped to the unit ball
    s = RonGaussSampler(1.0, 4, center=np.zeros(6), radius=1.0).fit(z, y, os_rng())
    u = z @ s.W_.T
    u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1.0)
    l1 = np.abs(u).sum(1)
    assert np.all(l1 + 1.0 <= np.sqrt(4) + 1.0 + 1e-9)
    upper = (l1 ** 2 + (u ** 2).sum(1)) / 2.0  # sum over i <= j of |u_i u_j|
    assert np.all(upper <= (4 + 1) / 2 + 1e-9)
    assert s.clipped_share_ > 0


def test_rongauss_samples_follow_the_classes_at_large_epsilon() -> None:
    z, y = _class_data(n=3000, seed=1)
    rng = os_rng()
    s = RonGaussSampler(1000.0, 6, center=np.zeros(6), radius=3.0).fit(z, y, rng)
    z_new, y_new = s.sample(20_000, rng)
    assert z_new.shape == (20_000, 6)
    for c in ("a", "b", "c"):
        assert np.mean(y_new == c) == pytest.approx(np.mean(y == c), abs=0.02)
        assert z_new[y_new == c].mean(0) == pytest.approx(z[y == c].mean(0), abs=0.05)


def test_rongauss_labels_must_be_in_the_declared_domain() -> None:
    z, y = _class_data()
    with pytest.raises(BioanonError, match="declared classes"):
        RonGaussSampler(1.0, 2, np.zeros(6), 1.0, classes=["a", "b"]).fit(z, y, os_rng())
