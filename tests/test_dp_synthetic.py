"""dp-synthetic: noise scale, accounting against OpenDP, clipping, privacy unit, membership,
seeds, and that nothing secret reaches the manifest."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bioanon.anonymize.dp_synthetic import (
    DPSyntheticAnonymizer,
    bound_contributions,
    clip_records,
    noisy_statistics,
    public_basis,
    public_clip,
)
from bioanon.anonymize.registry import build_method
from bioanon.attack.membership import membership_auc, membership_scores
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.privacy import (
    PrivacyLeakWarning,
    gaussian_sigma,
    public_bounds,
    zcdp_epsilon,
    zcdp_rho,
)
from bioanon.release import manifest_path


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=20, records_per_identity=30, n_features=32,
                          random_state=3)


def _est(**kw):
    base = {"interest": "expression", "epsilon": 2.0, "bounds": (-10.0, 10.0),
            "random_state": 0}
    return DPSyntheticAnonymizer(**{**base, **kw})


# ---------------------------------------------------------------------- noise and accounting
def test_noise_scale_matches_the_gaussian_formula(table):
    est = _est(clip=0.5, mean_share=0.3).fit(table.X, table.labels)
    d = table.n_features
    c = 0.5 * math.sqrt(d)
    rho = zcdp_rho(2.0, 1.0 / table.n_records**2)
    sig_s, sig_m = est._sigmas(d)
    # σ = Δ / sqrt(2ρ_i): sums Δ = 2c (one record's features replaced), moments Δ = √2 c²
    assert sig_s == pytest.approx(2 * c / math.sqrt(2 * 0.3 * rho))
    assert sig_m == pytest.approx(math.sqrt(2) * c * c / math.sqrt(2 * 0.7 * rho))
    # the noise actually drawn has that scale: records at the box centre have zero statistics
    X = np.zeros((50, 40))
    sums, moment = noisy_statistics(X, np.arange(50) % 25, 25, -np.ones(40), np.ones(40),
                                    1.0, 3.0, 7.0, np.random.default_rng(0))
    assert sums.std() == pytest.approx(3.0, rel=0.05)
    assert moment[np.triu_indices(40)].std() == pytest.approx(7.0, rel=0.05)
    assert np.allclose(moment, moment.T)


def test_identity_unit_scales_the_sensitivity_by_m(table):
    rec = _est().fit(table.X, table.labels)
    per = _est(privacy_unit="identity", sensitive="identity", max_records_per_identity=5,
               delta=rec.delta_).fit(table.X, table.labels)
    assert np.allclose(np.array(per._sigmas(32)), 5 * np.array(rec._sigmas(32)))
    assert per.privacy_unit_ == "identity"


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-6), (2.0, 1 / 3000**2), (4.0, 1e-9),
                                       (0.3, 1e-5)])
def test_accountant_agrees_with_opendp(eps, delta):
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    rho = zcdp_rho(eps, delta)
    share = 0.4
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    meas = [dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=gaussian_sigma(1.0, r))
            for r in (share * rho, (1 - share) * rho)]
    approx = dp.c.make_zCDP_to_approxDP(dp.c.make_composition(meas))
    eps_opendp = approx.map(1.0).epsilon(delta)
    assert eps_opendp == pytest.approx(zcdp_epsilon(rho, delta), rel=1e-6)
    assert eps_opendp <= eps * (1 + 1e-9)
    assert eps_opendp == pytest.approx(eps, rel=1e-6)  # the budget is spent, not wasted


def test_estimator_records_the_accounting(table):
    est = _est(epsilon=1.5).fit(table.X, table.labels)
    assert est.delta_ == pytest.approx(1.0 / table.n_records**2)
    assert est.epsilon_ <= 1.5 + 1e-9 and est.epsilon_ == pytest.approx(1.5, rel=1e-6)
    assert zcdp_epsilon(est.rho_, est.delta_) <= 1.5 + 1e-9
    per = _est(privacy_unit="identity", sensitive="identity").fit(table.X, table.labels)
    assert per.delta_ == pytest.approx(1.0 / 20**2)  # n = identities for the identity unit


# ---------------------------------------------------------------------- clipping, unit
def test_clipping_bounds_every_norm_and_the_box():
    X = np.random.default_rng(0).normal(scale=5.0, size=(500, 8))
    lo, hi = -np.ones(8), np.ones(8)
    u = clip_records(X, lo, hi, radius=1.2)
    assert np.all(np.linalg.norm(u, axis=1) <= 1.2 + 1e-9)
    assert np.all(np.abs(u) <= 1.0 + 1e-12)
    small = clip_records(X * 1e-3, lo, hi, radius=1.2)
    np.testing.assert_allclose(small, X * 1e-3)  # inside both: untouched
    P = public_basis(X, (lo, hi), 3)
    assert np.all(np.linalg.norm(clip_records(X, lo, hi, 0.5, P), axis=1) <= 0.5 + 1e-9)


def test_the_privacy_unit_bounds_each_identitys_records():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 30, size=2000)
    for m in (1, 3, 10):
        keep = bound_contributions(ids, m, np.random.default_rng(m))
        used = np.bincount(ids[keep], minlength=30)
        have = np.bincount(ids, minlength=30)
        assert used.max() <= m
        np.testing.assert_array_equal(used, np.minimum(have, m))


def test_identity_unit_needs_the_identity_column(table):
    with pytest.raises(BioanonError, match="sensitive"):
        _est(privacy_unit="identity").fit(table.X, table.labels)


# ---------------------------------------------------------------------- release
def test_public_basis_release_lives_in_its_span(table):
    P = public_basis(table.X[:100], (-10.0, 10.0), 4)
    out = _est(basis=P, covariance="class").fit_transform(table.X, table.labels)
    u = out / 10.0  # box (-10, 10): midpoint 0, half-width 10
    np.testing.assert_allclose(u - (u @ P.T) @ P, 0.0, atol=1e-4)


def test_release_shape_seeds_and_labels(table):
    a = _est().fit_transform(table.X, table.labels)
    b = _est().fit_transform(table.X, table.labels)
    c = _est(random_state=1).fit_transform(table.X, table.labels)
    assert a.shape == table.X.shape and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    # no released record is a clear record
    assert not np.isin(a.round(4), table.X.round(4)).all(axis=1).any()


@pytest.mark.parametrize("covariance", ["lowrank", "class", "diag", "class-diag"])
def test_class_means_survive_at_a_large_budget(table, covariance):
    est = _est(epsilon=1e4, clip=1.0, bounds=(-20.0, 20.0), covariance=covariance,
               center=np.zeros(32))
    out = est.fit_transform(table.X, table.labels)
    y = table.labels["expression"].to_numpy()
    for c in np.unique(y):
        diff = out[y == c].mean(0) - table.X[y == c].mean(0)
        assert np.abs(diff).mean() < 0.15  # sampling error of ~150 fresh records only


def test_data_derived_bounds_warn_and_say_the_guarantee_is_not_strict(table):
    est = _est(bounds=None)
    with pytest.warns(PrivacyLeakWarning, match="no longer holds strictly"):
        est.fit_transform(table.X, table.labels)
    stmt = est.privacy_statement()
    assert stmt["strict"] is False and "NOT MET" in stmt["bounds"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _est().fit_transform(table.X, table.labels)  # declared bounds: no warning


def test_bad_basis_is_refused(table):
    with pytest.raises(BioanonError, match="basis"):
        _est(basis=np.ones((2, 3))).fit_transform(table.X, table.labels)
    with pytest.raises(BioanonError, match="orthonormal"):
        _est(basis=np.ones((2, 32))).fit_transform(table.X, table.labels)


def test_membership_auc_stays_near_chance_at_a_modest_epsilon():
    # record level: half of every person's records are released (members), the other half
    # kept out (non-members); bounds come from other people (auxiliary data)
    t = make_biometric(n_identities=60, records_per_identity=20, n_features=32,
                       random_state=5)
    ids = t.labels["identity"].to_numpy()
    people = np.unique(ids)
    aux = np.isin(ids, people[:10])
    rank = t.labels.groupby("identity").cumcount().to_numpy()
    member = ~aux & (rank % 2 == 0)
    outside = ~aux & (rank % 2 == 1)
    rows = np.flatnonzero(member)
    est = _est(epsilon=1.0, bounds=public_bounds(t.X[aux]), random_state=2)
    released = est.fit_transform(t.X[rows], t.labels.iloc[rows].reset_index(drop=True))
    cand = np.flatnonzero(member | outside)
    res = membership_auc(membership_scores(t.X[cand], released), member[cand], "record")
    # the strongest of three attackers (a maximum: biased a little above 0.5); the issue's
    # target is an upper 95% bound of at most 0.6
    assert res.ci[1] <= 0.6 and res.ci[0] <= 0.52, res


# ---------------------------------------------------------------------- front doors
def test_build_method_and_the_search_space():
    est = build_method("dp-synthetic", {"epsilon": "2", "bounds": "-5,5"}, interest="x",
                       random_state=0)
    assert est.epsilon == 2.0 and list(est.bounds) == [-5.0, 5.0]
    for setting in DPSyntheticAnonymizer.search_space:
        assert "epsilon" not in setting  # searched at the user's epsilon
        DPSyntheticAnonymizer(**setting).check_params()


def test_cli_manifest_states_epsilon_delta_and_holds_no_secret(tmp_path, table):
    src = tmp_path / "in.parquet"
    table.write(src)
    out = tmp_path / "rel.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        r = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(out), "--method",
                                     "dp-synthetic", "--interest", "expression",
                                     "--sensitive", "identity", "--param", "epsilon=2",
                                     "--seed", "7"])
    assert r.exit_code == 0, r.output
    text = manifest_path(out).read_text()
    man = json.loads(text)
    priv = man["params"]["privacy"]
    assert priv["epsilon"] <= 2.0 + 1e-9 and priv["delta"] == pytest.approx(
        1 / table.n_records**2)
    assert priv["privacy_unit"] == "record" and priv["strict"] is False
    assert "random_state" not in text and '"7"' not in text
    lo, hi = np.quantile(table.X, [0.01, 0.99], axis=0)  # the data-derived bounds
    for v in np.r_[lo, hi]:
        assert f"{v:.6g}"[:7] not in text
    assert man["params"]["bounds"] is None
    released = pd.read_parquet(out)
    assert len(released) == table.n_records


def test_hardened_noise_comes_from_opendp(table):
    pytest.importorskip("opendp")
    out = _est(hardened=True, covariance="diag").fit_transform(table.X, table.labels)
    assert out.shape == table.X.shape and np.all(np.isfinite(out))


def test_identity_unit_releases_every_record(table):
    est = _est(privacy_unit="identity", sensitive="identity", max_records_per_identity=2)
    out = est.fit_transform(table.X, table.labels)
    assert out.shape == table.X.shape
    assert est.privacy_statement()["max_records_per_identity"] == 2


# ---------------------------------------------------------------------- public levers
def test_public_clip_is_the_quantile_of_the_auxiliary_norms():
    rng = np.random.default_rng(0)
    aux = rng.normal(size=(300, 16))
    bounds = (-4.0, 4.0)
    norms = np.linalg.norm(clip_records(aux, -4 * np.ones(16), 4 * np.ones(16), 1e9), axis=1)
    for q in (0.5, 0.9):
        assert public_clip(aux, bounds, q) == pytest.approx(np.quantile(norms, q) / 4.0)
    # centred on the auxiliary mean and projected on a basis: the same transform as fit
    center = aux.mean(0) + 1.0
    P = public_basis(aux, bounds, 3)
    u = clip_records(aux, -4 * np.ones(16), 4 * np.ones(16), 1e9, P, center)
    assert public_clip(aux, bounds, 0.9, center, P) == pytest.approx(
        np.quantile(np.linalg.norm(u, axis=1), 0.9) / 4.0)
    with pytest.raises(BioanonError, match="quantile"):
        public_clip(aux, bounds, 0.0)


def test_pool_mixes_the_pooled_covariance_without_changing_the_noise(table):
    a = _est(covariance="class", pool=0.0).fit(table.X, table.labels)
    b = _est(covariance="class", pool=0.8).fit(table.X, table.labels)
    assert a._sigmas(32) == b._sigmas(32) and a.epsilon_ == b.epsilon_  # post-processing
    # noise-free: pool=1 gives every class the pooled within-class covariance
    from bioanon.anonymize.dp_synthetic import _class_model

    rng = np.random.default_rng(0)
    u = rng.normal(size=(600, 4)) * np.array([1.0, 2.0, 0.5, 1.0])
    s = np.repeat([0, 1, 2], 200)
    u[s == 1] *= 3.0
    sums = np.stack([u[s == k].sum(0) for k in range(3)])
    mom = np.stack([u[s == k].T @ u[s == k] for k in range(3)])
    counts = np.bincount(s).astype(float)
    means = sums / counts[:, None]
    own = _class_model(means, mom, counts, rank=4)
    pooled = _class_model(means, mom, counts, rank=4, pool=1.0)
    cov = [(V * sd**2) @ V.T + np.diag(r**2) for V, sd, r in
           zip(pooled["Vs"], pooled["sds"], pooled["resids"], strict=True)]
    np.testing.assert_allclose(cov[0], cov[1], rtol=1e-6)
    own1 = (own["Vs"][1] * own["sds"][1]**2) @ own["Vs"][1].T
    assert np.trace(own1) > 2 * np.trace(cov[1] - np.diag(pooled["resids"][1]**2))
