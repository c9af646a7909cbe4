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
from bioanon.anonymize.registry import build_method, describe, get_method, methods
from bioanon.anonymize.vp_mix import donor_sets
from bioanon.errors import BioanonError
from bioanon.tuning.grid_search import parse_grid


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
    est = build_method("vp-mix+leace", {"g": "8", "restoration": "0.5"}, interest="p",
                       sensitive="id", random_state=0)
    assert isinstance(est, ComposedAnonymizer)
    assert get_method("vp-mix+leace") is ComposedAnonymizer
    assert est.method_name == "vp-mix+leace"
    assert est.get_params()["method__g"] == 8 and est.post.sensitive == "id"
    c = clone(est).set_params(method__g=4)
    out = c.fit_transform(X, labels)
    assert out.shape == X.shape
    assert c.public_params()["post"] == "leace"
    assert "random_state" not in c.public_params()["method_params"]
    # the same seed gives the same release; the composition's seed reaches the mix
    assert np.array_equal(out, clone(c).fit_transform(X, labels))
    assert not np.array_equal(out, clone(c).set_params(random_state=1).fit_transform(X, labels))
    # the mix's secret matrix reaches the evaluator's contributor disclosure
    released, M = clone(c).release_with_mixing(X, labels)
    assert M is not None and M.shape == (X.shape[0], X.shape[0])
    assert (M.getnnz(axis=1) == 4).all() and M.diagonal().sum() == 0
    assert np.array_equal(released, out)
    for bad, match in [("vp-mix+blur", "cannot follow"), ("vp-mix+", "METHOD\\+POST"),
                       ("vp-mx+leace", "unknown method")]:
        with pytest.raises(BioanonError, match=match):
            build_method(bad, {}, interest="p", sensitive="id")
    with pytest.raises(BioanonError, match="needs sensitive"):
        build_method("vp-mix+leace", {}, interest="p")
    with pytest.raises(BioanonError, match="no parameter"):
        build_method("vp-mix+leace", {"leace.k": "1"}, interest="p", sensitive="id")
    with pytest.raises(BioanonError, match="not a step"):
        build_method("vp-mix+leace", {"blur.k": "1"}, interest="p", sensitive="id")
    # tune grids: KEY goes to the method, leace.KEY to the post-step, converted and checked
    assert parse_grid(["g=4,8", "leace.sensitive=p"], est) == {
        "method__g": [4, 8], "post__sensitive": ["p"]}
    with pytest.raises(BioanonError, match="g"):
        parse_grid(["g=1"], est)


def test_vp_mix_release_carries_its_mixing_matrix() -> None:
    X, labels = gaussian_classes(n_per=50, d=3)
    est = VarianceMixAnonymizer("p", g=8, random_state=0)
    released, M = est.release_with_mixing(X, labels)
    y = labels["p"].to_numpy()
    rows, cols = M.nonzero()
    assert (M.getnnz(axis=1) == 8).all() and (rows != cols).all()
    assert (y[rows] == y[cols]).all()  # donors share the interest class
    assert np.array_equal(released, clone(est).fit_transform(X, labels))


def test_vp_mix_registry_retains_nothing_by_default() -> None:
    est = build_method("vp-mix", {"g": "8"}, interest="p")
    assert est.r_p == 0.0 and est.t == 1.0 and est.restoration == 0.5
    est = build_method("synthetic", {"n_components": "2"}, interest="p")
    assert est.n_components == 2
    for name, params, match in [("vp-mix", {"g": "1"}, "g"), ("vp-mix", {"t": "0"}, "t"),
                                ("vp-mix", {"shrinkage": "1"}, "shrinkage"),
                                ("synthetic", {"n_components": "0"}, "n_components"),
                                ("synthetic", {"covariance": "fll"}, "covariance")]:
        with pytest.raises(BioanonError, match=match):
            build_method(name, params, interest="p")


def test_new_methods_are_listed_with_search_spaces() -> None:
    found = methods()
    for name in ("vp-mix", "leace", "synthetic"):
        doc = describe(found[name])
        assert doc["protects"] and doc["does_not_protect"]
        for point in found[name].search_space:  # every candidate is a valid setting
            found[name](**point).check_params()
    assert describe(found["leace"])["post_step"] and not describe(found["vp-mix"])["post_step"]
    est = build_method("vp-mix+leace", {}, interest="p", sensitive="id")
    assert est.search_space and all(k.startswith("method__") for p in est.search_space
                                    for k in p)
    for point in est.search_space:
        clone(est).set_params(**point).check_params()


def test_composition_passes_sklearn_checks() -> None:
    from sklearn.utils.estimator_checks import check_estimator
    from test_estimator_checks import expected_failed_checks

    est = ComposedAnonymizer(VarianceMixAnonymizer("y", g=2), LeaceAnonymizer("y"),
                             random_state=0)
    check_estimator(est, expected_failed_checks=expected_failed_checks(est))


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
