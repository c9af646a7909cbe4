"""dp-cells: the stated basis, the accounting (μ-GDP), the cells, the release, the unit."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from bioanon.anonymize.dp_cells import DPCellsAnonymizer, within_cells
from bioanon.anonymize.registry import build_method, describe, get_method
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.layout import dct_basis, trajectory_length
from bioanon.privacy import PrivacyLeakWarning, zcdp_epsilon, zcdp_rho
from bioanon.privacy_bounds import advantage_bound_gdp, guarantee_of
from bioanon.table import FeatureTable


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    """12 people × 30 records, 32 features (4 trajectories of 8 steps), 4 expressions."""
    return make_biometric(n_identities=12, records_per_identity=30, n_features=32,
                          random_state=0)


def _est(**kw: Any) -> DPCellsAnonymizer:
    params: dict[str, Any] = {"mu": 8.0, "cells": 1, "block": 8, "keep": 4,
                              "bounds": (-10.0, 10.0), "random_state": 3}
    params.update(kw)
    return DPCellsAnonymizer("expression", **params)


# ---------------------------------------------------------------------- the stated basis
def test_dct_basis_is_orthonormal_and_per_trajectory() -> None:
    P = dct_basis(12, block=4, keep=3)
    assert P.shape == (9, 12)
    assert np.allclose(P @ P.T, np.eye(9))
    # each row lives on one trajectory of 4 consecutive features
    support = [set(np.flatnonzero(np.abs(r) > 1e-12) // 4) for r in P]
    assert all(len(s) == 1 for s in support)
    # the first coefficient of a trajectory is its (scaled) mean: constant over the block
    assert np.allclose(P[0, :4], 0.5)
    full = dct_basis(12, block=4)
    assert np.allclose(full.T @ full, np.eye(12))  # all kept: a rotation of the features


def test_dct_basis_refuses_a_block_that_does_not_divide() -> None:
    with pytest.raises(BioanonError, match="block=5 does not divide the 12 features"):
        dct_basis(12, block=5)


def test_trajectories_come_from_the_feature_names(table: FeatureTable) -> None:
    names = [f"c{c}_t{s}" for c in range(4) for s in range(8)]
    assert trajectory_length(names) == 8
    assert trajectory_length(names[:-1]) is None           # a run cut short
    assert trajectory_length([*names[:8], *names[8:16][::-1]]) is None  # steps out of order
    named = FeatureTable(table.X, table.labels, names)
    est = DPCellsAnonymizer("expression", keep=3, bounds=(-10.0, 10.0), random_state=0)
    est.fit(named, named.labels)
    assert est.trajectories(32).text == "4x8"
    assert est.stated_basis(32).shape == (12, 32)
    assert np.allclose(est.stated_basis(32), dct_basis(32, 8, 3))
    plain = DPCellsAnonymizer("expression", keep=3, bounds=(-10.0, 10.0)).fit(
        table.X, table.labels)  # no names: the features as they are
    assert plain.trajectories(32) is None and np.allclose(plain.stated_basis(32), np.eye(32))


# ---------------------------------------------------------------------- the accounting
def test_mu_sets_rho_and_the_split_sums_to_it(table: FeatureTable) -> None:
    est = _est(mu=2.0).fit(table.X, table.labels)
    assert est.rho_ == pytest.approx(2.0)
    assert est.mu_ == pytest.approx(2.0)
    assert sum(est.rho_split_.values()) == pytest.approx(est.rho_)
    assert set(est.rho_split_) == {"variance", "directions", "counts", "resid", "sums"}
    assert est.delta_ == pytest.approx(1.0 / table.n_records ** 2)
    assert est.epsilon_ == pytest.approx(zcdp_epsilon(2.0, est.delta_))


def test_epsilon_gives_rho_and_mu_is_ignored(table: FeatureTable) -> None:
    est = _est(epsilon=1.0, delta=1e-6).fit(table.X, table.labels)
    assert est.rho_ == pytest.approx(zcdp_rho(1.0, 1e-6))
    assert est.epsilon_ <= 1.0 + 1e-6
    assert "mu" in est.ignored_params()


def test_mechanisms_not_run_spend_nothing(table: FeatureTable) -> None:
    est = _est(cells=0, keep=None).fit(table.X, table.labels)
    assert set(est.rho_split_) == {"variance", "sums"}  # no cells, no residual (k = d)
    assert est.rho_split_["sums"] == pytest.approx(0.7 * est.rho_)
    cov = _est(cells=0, covariance="pooled").fit(table.X, table.labels)
    assert "covariance" in cov.rho_split_


def test_shares_that_leave_nothing_are_refused() -> None:
    with pytest.raises(BioanonError, match="leave nothing for the cell sums"):
        _est(variance_share=0.5, direction_share=0.5).check_params()


def test_sigmas_scale_with_the_identity_unit(table: FeatureTable) -> None:
    rec = _est().fit(table.X, table.labels)
    ids = _est(privacy_unit="identity", sensitive="identity",
               max_records_per_identity=5).fit(table.X, table.labels)
    # same rho split shares; delta differs (identities), sensitivities x 5
    assert ids.sigmas(16, 32)["sums"] == pytest.approx(5 * rec.sigmas(16, 32)["sums"])
    assert ids.sigmas(16, 32)["counts"] == pytest.approx(5 * rec.sigmas(16, 32)["counts"])


def test_identity_unit_needs_the_identity_column() -> None:
    with pytest.raises(BioanonError, match="needs the identity column"):
        _est(privacy_unit="identity").check_params()


def test_the_statement_gives_the_gdp_bound(table: FeatureTable) -> None:
    est = _est(mu=0.25)
    rel = est.fit(table.X, table.labels).release_result(table.X, table.labels)
    g = guarantee_of({**rel.info, "strict": est.privacy_statement()["strict"]})
    assert g is not None and g.mu == pytest.approx(0.25)
    assert g.advantage_bound() == pytest.approx(advantage_bound_gdp(0.25))
    assert g.advantage_bound() < 0.10  # the standard level's record target, by proof
    assert est.privacy_statement()["strict"] is True


def test_bounds_from_the_data_warn_and_are_not_strict(table: FeatureTable) -> None:
    est = _est(bounds=None)
    with pytest.warns(PrivacyLeakWarning, match="bounds come from the data"):
        est.fit_transform(table.X, table.labels)
    assert est.privacy_statement()["strict"] is False
    assert "NOT MET" in est.privacy_statement()["bounds"]


def test_public_data_gives_the_box_without_warning(table: FeatureTable) -> None:
    pub = make_biometric(n_identities=3, records_per_identity=20, n_features=32,
                         random_state=9).X
    est = _est(bounds=None, public_data=pub, basis="public", rank=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        out = est.fit_transform(table.X, table.labels)
    assert out.shape == table.X.shape
    assert est.public_params()["public_data"] == "given (not written)"


# ---------------------------------------------------------------------- the cells
def test_within_cells_codes_by_class_and_sign() -> None:
    W = np.array([[1.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    cls = np.array([0, 0, 1, 1])
    V = np.array([[1.0, 0.0]])
    cells = within_cells(W, cls, V, 2, np.zeros((2, 2)))
    assert cells.tolist() == [1, 0, 3, 2]


# ---------------------------------------------------------------------- the release
def test_release_shape_dtype_and_seed(table: FeatureTable) -> None:
    a = _est().fit_transform(table.X, table.labels)
    b = _est().fit_transform(table.X, table.labels)
    c = _est(random_state=4).fit_transform(table.X, table.labels)
    assert a.shape == table.X.shape and a.dtype == np.float32
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.all(np.isfinite(a))


def test_a_covariance_per_class_samples_without_a_matrix_per_record() -> None:
    """With a covariance per class, each record's Gaussian draw is its class's product,
    computed a class at a time: never a k × k matrix per record (n × k × k numbers, 600 MB
    at FSDD's 3,000 records and 160 coordinates; here 2,400 × 64 × 64 × 8 bytes = 79 MB)."""
    import tracemalloc

    t = make_biometric(n_identities=40, records_per_identity=60, n_features=64,
                       random_state=0)
    est = _est(covariance="class", pool=0.0, keep=None, block=None, bounds=(-10.0, 10.0))
    est.fit(t.X, t.labels)
    tracemalloc.start()
    try:
        out = est.transform(t.X, t.labels)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == t.X.shape and np.all(np.isfinite(out))
    assert peak < 40e6, f"sampling peaked at {peak / 1e6:.0f} MB"


def test_no_released_record_is_its_input(table: FeatureTable) -> None:
    out = _est(mu=1000.0).fit_transform(table.X, table.labels)
    d = np.sqrt(((out[:, None, :] - table.X[None, :, :]) ** 2).sum(-1))
    assert float(d.min()) > 1e-3  # fresh samples, never a copy of a record


def test_classes_survive_at_low_noise_and_fade_at_high(table: FeatureTable) -> None:
    """A classifier trained on the release scores clear records well at little noise, near
    chance at a great deal of it (the noise is real)."""
    y = table.labels["expression"].to_numpy()

    def cas(mu: float) -> float:
        rel = _est(mu=mu, cells=0, keep=None).fit_transform(table.X, table.labels)
        return float(LinearDiscriminantAnalysis().fit(rel, y).score(table.X, y))

    clear = float(LinearDiscriminantAnalysis().fit(table.X, y).score(table.X, y))
    assert cas(200.0) > 0.8 * clear
    assert cas(0.05) < 0.6 * clear


def test_covariances_run_and_keep_the_shape(table: FeatureTable) -> None:
    for cov in ("pooled", "class"):
        out = _est(covariance=cov, keep=None, block=None).fit_transform(table.X, table.labels)
        assert out.shape == table.X.shape and np.all(np.isfinite(out))


def test_random_basis_has_no_stated_form() -> None:
    with pytest.raises(BioanonError, match="no stated form"):
        _est(basis="random").stated_basis(32)


# ---------------------------------------------------------------------- declarations
def test_release_model_declared() -> None:
    m = _est(cells=3).release_model()
    assert m is not None and (m.family, m.components, m.noisy, m.basis) == (
        "mixture", 8, True, "structured")
    one = _est(cells=0, basis="identity").release_model()
    assert one is not None and one.family == "class-gaussian" and one.basis == "none"


def test_registered_and_described() -> None:
    assert get_method("dp-cells") is DPCellsAnonymizer
    info = describe(DPCellsAnonymizer)
    assert info["params"]["cells"]["range"] == "integer in [0, 6]"
    assert DPCellsAnonymizer.dp is not None and "identity" in DPCellsAnonymizer.dp.units
    est = build_method("dp-cells", {"mu": "4", "block": "8"}, interest="expression")
    assert (est.mu, est.block) == (4.0, 8)
    assert math.isclose(est.mu, 4.0)
