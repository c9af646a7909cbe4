"""Frontier methods: variance-preserving mix, LEACE erasure, synthetic baseline, composition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from bioanon.anonymize import (
    ComposedAnonymizer,
    LeaceAnonymizer,
    SyntheticAnonymizer,
    VarianceMixAnonymizer,
)
from bioanon.anonymize.erasure import leace_fit
from bioanon.anonymize.vp_mix import donor_sets
from bioanon.errors import BioanonError
from bioanon.methods import MethodOptions, build_method


def gaussian_classes(n_per: int = 4000, d: int = 4, seed: int = 0
                     ) -> tuple[np.ndarray, pd.DataFrame]:
    """Three Gaussian classes with different means and covariances (synthetic data)."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(3):
        A = rng.standard_normal((d, d))
        X.append(rng.standard_normal((n_per, d)) @ A + 4.0 * c)
        y.append(np.full(n_per, c))
    labels = pd.DataFrame({"p": np.concatenate(y), "id": rng.integers(0, 2, 3 * n_per)})
    return np.concatenate(X).astype(np.float32), labels


def moments_error(X: np.ndarray, out: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Largest mean gap (in class standard deviations) and relative covariance gap."""
    mean_gap, cov_gap = 0.0, 0.0
    for c in np.unique(y):
        a, b = X[y == c].astype(np.float64), out[y == c].astype(np.float64)
        mean_gap = max(mean_gap, float((np.abs(a.mean(0) - b.mean(0)) / a.std(0)).max()))
        ca, cb = np.cov(a.T), np.cov(b.T)
        cov_gap = max(cov_gap, float(np.linalg.norm(ca - cb) / np.linalg.norm(ca)))
    return mean_gap, cov_gap


@pytest.mark.parametrize("g", [8, 32])
def test_vp_mix_keeps_class_means_and_covariances(g: int) -> None:
    X, labels = gaussian_classes()
    out = VarianceMixAnonymizer("p", g=g, random_state=1).fit_transform(X, labels)
    mean_gap, cov_gap = moments_error(X, out, labels["p"].to_numpy())
    # 4000 records per class: sampling error of a mean ~0.016 sd, of a covariance ~2-3%
    assert mean_gap < 0.06
    assert cov_gap < 0.10
    # the same check fails for the plain mean of the donors (spread shrinks by about g)
    plain = VarianceMixAnonymizer("p", g=g, restoration=0.0, random_state=1)
    assert moments_error(X, plain.fit_transform(X, labels), labels["p"].to_numpy())[1] > 0.8


def test_vp_mix_small_class_population_correction() -> None:
    # classes of 20 records, 15 donors: without the finite-population correction the spread
    # would be restored only to (N − g)/(N − 1) ≈ 0.22 of the class's
    X, labels = gaussian_classes(n_per=20, d=3, seed=3)
    vs = []
    for seed in range(60):
        out = VarianceMixAnonymizer("p", g=15, random_state=seed).fit_transform(X, labels)
        vs.append(out[labels["p"].to_numpy() == 0].var(axis=0).sum())
    clear = X[labels["p"].to_numpy() == 0].var(axis=0).sum()
    assert 0.8 < np.mean(vs) / clear < 1.2


def test_vp_mix_record_has_no_own_weight() -> None:
    X, labels = gaussian_classes(n_per=200, d=5)
    est = VarianceMixAnonymizer("p", g=16, random_state=7)
    before = est.fit_transform(X, labels)
    X2 = X.copy()
    X2[10] += 100.0  # change one record: its own released row must not move
    after = clone(est).fit_transform(X2, labels)
    assert np.allclose(before[10], after[10], atol=1e-3)
    assert not np.allclose(before, after, atol=1e-3)  # it is a donor of other rows


def test_donors_drawn_without_regard_to_identity() -> None:
    """Two identities, each half of every class: about half of a record's donors share its
    identity; a parrot logistic regression on the release names the identity at chance."""
    rng = np.random.default_rng(0)
    n = 2000
    p = rng.integers(0, 2, n)
    ident = rng.integers(0, 2, n)
    X = (rng.standard_normal((n, 6)) + 3.0 * p[:, None] + 1.5 * ident[:, None]).astype(
        np.float32)
    sets = donor_sets(p, p, 16, 1.0, np.random.default_rng(1))
    same = (ident[sets] == ident[:, None]).mean()
    assert abs(same - 0.5) < 0.02  # leaving the own identity out would give 0
    assert (sets != np.arange(n)[:, None]).all()  # never the record itself
    labels = pd.DataFrame({"p": p, "id": ident})
    out = VarianceMixAnonymizer("p", g=16, random_state=2).fit_transform(X, labels)
    clear_acc = cross_val_score(LogisticRegression(), np.c_[X, p], ident, cv=4).mean()
    parrot = cross_val_score(LogisticRegression(), np.c_[out, p], ident, cv=4).mean()
    assert clear_acc > 0.8
    assert parrot < 0.57


def test_vp_mix_additional_strata_keep_the_additional_attribute() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    p, q = rng.integers(0, 2, n), rng.integers(0, 2, n)
    X = (rng.standard_normal((n, 4)) + 2 * p[:, None] + 2 * q[:, None] * [1, -1, 0, 0]).astype(
        np.float32)
    labels = pd.DataFrame({"p": p, "q": q})
    out = VarianceMixAnonymizer("p", additional=["q"], g=16, t=1.0,
                                random_state=0).fit_transform(X, labels)
    for s in range(2):
        gap = np.abs(X[q == s].mean(0) - out[q == s].mean(0)).max()
        assert gap < 0.1


def test_vp_mix_errors_name_the_fix() -> None:
    X, labels = gaussian_classes(n_per=10, d=3)
    with pytest.raises(BioanonError, match="lower g"):
        VarianceMixAnonymizer("p", g=9, random_state=0).fit_transform(X, labels)
    out = VarianceMixAnonymizer("p", g=9, allow_replacement=True,
                                random_state=0).fit_transform(X, labels)
    assert np.isfinite(out).all()
    with pytest.raises(BioanonError, match="restoration"):
        VarianceMixAnonymizer("p", restoration=2.0).fit(X, labels)


def test_leace_leaves_no_linear_trace() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    z = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 10)) + np.eye(3, 10)[z] * 3 + 0.5 * rng.standard_normal((n, 1))
    X = X.astype(np.float32)
    labels = pd.DataFrame({"id": z})
    probe = LogisticRegression(max_iter=1000)
    assert cross_val_score(probe, X, z, cv=3).mean() > 0.9
    out = LeaceAnonymizer("id").fit_transform(X, labels)
    acc = cross_val_score(probe, out, z, cv=3).mean()
    chance = np.bincount(z).max() / n
    assert acc < chance + 0.03
    # the class means coincide: the cross-covariance with the labels is zero
    means = np.stack([out[z == k].mean(0) for k in range(3)])
    assert np.abs(means - means.mean(0)).max() < 1e-3
    # and directions unrelated to the labels are kept
    assert np.corrcoef(out[:, 9], X[:, 9])[0, 1] > 0.99


def test_leace_fit_handles_rank_deficient_covariance() -> None:
    rng = np.random.default_rng(1)
    z = rng.integers(0, 2, 20)
    X = rng.standard_normal((20, 50)) + z[:, None]  # n < d
    mu, U, V = leace_fit(X, z)
    R = X - ((X - mu) @ V) @ U.T
    assert np.abs(R[z == 0].mean(0) - R[z == 1].mean(0)).max() < 1e-6


def test_synthetic_keeps_class_moments_and_copies_no_record() -> None:
    X, labels = gaussian_classes(n_per=1500, d=4)
    out = SyntheticAnonymizer("p", random_state=0).fit_transform(X, labels)
    mean_gap, cov_gap = moments_error(X, out, labels["p"].to_numpy())
    assert mean_gap < 0.1 and cov_gap < 0.15
    assert not (np.isclose(out[:, None, :], X[None, :50, :]).all(axis=2)).any()


def test_composition_is_one_estimator_from_the_registry() -> None:
    X, labels = gaussian_classes(n_per=300, d=6)
    est = build_method(MethodOptions(method="vp-mix+leace", interest="p", sensitive="id",
                                     g=8, seed=0, extra={"restoration": "0.5"}))
    assert isinstance(est, ComposedAnonymizer)
    assert est.get_params()["method__g"] == 8
    c = clone(est).set_params(method__g=4)
    out = c.fit_transform(X, labels)
    assert out.shape == X.shape
    assert c.public_params()["post"] == "LeaceAnonymizer"
    assert "random_state" not in c.public_params()["method_params"]
    for bad, match in [("vp-mix+blur", "not a post-step"), ("vp-mix+", "METHOD\\+POST")]:
        with pytest.raises(BioanonError, match=match):
            build_method(MethodOptions(method=bad, interest="p", sensitive="id"))
    with pytest.raises(BioanonError, match="needs --sensitive"):
        build_method(MethodOptions(method="vp-mix+leace", interest="p"))
    with pytest.raises(BioanonError, match="no parameter"):
        build_method(MethodOptions(method="vp-mix+leace", interest="p", sensitive="id",
                                   extra={"leace.k": "1"}))


def test_vp_mix_registry_retains_nothing_by_default() -> None:
    est = build_method(MethodOptions(method="vp-mix", interest="p", g=8))
    assert est.r_p == 0.0 and est.t == 1.0 and est.restoration == 0.5
    est = build_method(MethodOptions(method="synthetic", interest="p",
                                     extra={"n_components": "2"}))
    assert est.n_components == 2


def test_vp_mix_shrinkage_keeps_means_and_variances_and_halves_correlations() -> None:
    X, labels = gaussian_classes(n_per=3000, d=4, seed=5)
    y = labels["p"].to_numpy()
    out = VarianceMixAnonymizer("p", g=16, shrinkage=0.5, random_state=0).fit_transform(X, labels)
    for c in range(3):
        a, b = X[y == c].astype(np.float64), out[y == c].astype(np.float64)
        assert (np.abs(a.mean(0) - b.mean(0)) / a.std(0)).max() < 0.06
        assert np.allclose(b.var(0) / a.var(0), 1.0, atol=0.1)
        ca, cb = np.cov(a.T), np.cov(b.T)
        off = ~np.eye(4, dtype=bool)
        assert np.allclose(cb[off], 0.5 * ca[off], atol=0.1 * np.abs(ca).max())
