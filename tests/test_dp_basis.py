"""dp-basis and basis-synthetic: the model in a small basis, its budget, its unit, its files."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.anonymize.basis_model import (
    BasisStats,
    add_noise,
    basis_stats,
    collapse,
    fit_model,
    random_basis,
    sample_model,
    sensitivities,
)
from bioanon.anonymize.basis_synthetic import BasisSyntheticAnonymizer
from bioanon.anonymize.dp_basis import (
    DPBasisAnonymizer,
    noisy_counts,
    public_lda,
    rank_rule,
    share_rule,
)
from bioanon.anonymize.dp_box import bound_contributions
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.privacy import PrivacyLeakWarning, gaussian, zcdp_epsilon, zcdp_rho
from bioanon.table import FeatureTable

PUBLIC_PEOPLE = ["person00", "person01"]


@pytest.fixture(scope="module")
def tables() -> tuple[FeatureTable, FeatureTable]:
    """(private, public): 10 people to release, 2 other people as public side data."""
    t = make_biometric(n_identities=12, records_per_identity=30, n_features=32,
                       random_state=0)
    public = np.isin(t.labels["identity"].to_numpy(), PUBLIC_PEOPLE)
    return t.subset(np.flatnonzero(~public)), t.subset(np.flatnonzero(public))


def _est(public: FeatureTable | None = None, **kw: Any) -> DPBasisAnonymizer:
    params: dict[str, Any] = {"epsilon": 4.0, "rank": 4, "random_state": 3}
    if public is not None:
        params["public_data"] = public.X
    params.update(kw)
    return DPBasisAnonymizer("expression", **params)


# ---------------------------------------------------------------------- the accountant
@pytest.mark.parametrize("setting, mechanisms", [
    ({"basis": "dp-lda"}, {"sums", "moments", "rsq"}),
    ({"basis": "dp-pca", "means": "basis", "basis_share": 0.2},
     {"basis", "sums", "moments", "rsq"}),
    ({"basis": "dp-lda", "means": "basis", "residual_mean": True},
     {"basis", "sums", "moments", "rsq", "rsums"}),
    ({"basis": "random"}, {"sums", "moments", "rsq"}),
])
def test_the_budget_split_adds_up_to_the_accounted_rho(tables, setting, mechanisms) -> None:
    private, public = tables
    est = _est(public, **setting).fit(private.X, private.labels)
    assert set(est.rho_split_) == mechanisms
    assert sum(est.rho_split_.values()) == pytest.approx(est.rho_)
    assert est.rho_ == pytest.approx(zcdp_rho(4.0, est.delta_))
    assert est.delta_ == pytest.approx(1.0 / private.n_records ** 2)
    assert est.epsilon_ <= 4.0 + 1e-9 and est.epsilon_ > 3.9  # the whole budget is spent
    assert zcdp_epsilon(sum(est.rho_split_.values()), est.delta_) <= 4.0 + 1e-9
    statement = est.privacy_statement()
    assert statement["rho_split"] == est.rho_split_ and statement["strict"] is True
    if setting["basis"] == "dp-pca":  # the basis's share is declared and spent
        assert est.rho_split_["basis"] == pytest.approx(0.2 * est.rho_)


def test_opendp_recomputes_the_composition(tables) -> None:
    pytest.importorskip("opendp")
    private, public = tables
    est = _est(public, basis="dp-pca", means="basis").fit(private.X, private.labels)
    assert est.accountant_.startswith("OpenDP (make_gaussian x4")
    assert est.epsilon_ == pytest.approx(4.0, rel=1e-3)


def test_shares_that_leave_nothing_for_the_moments_are_refused(tables) -> None:
    private, _ = tables
    with pytest.raises(BioanonError, match="leave nothing for the second moments"):
        _est(None, bounds=(-9.0, 9.0), mean_share=0.9, resid_share=0.1).fit(
            private.X, private.labels)
    with pytest.raises(BioanonError, match="needs public_data"):
        _est(None, basis="public").fit(private.X, private.labels)


# ---------------------------------------------------------------------- the noise in k dims
def test_sigmas_follow_the_sensitivity_formulas(tables) -> None:
    private, public = tables
    est = _est(public, basis="dp-pca", means="basis").fit(private.X, private.labels)
    c_b, c_r, c_p = 1.5, 2.5, 3.0
    sig = est.sigmas(c_b, c_r, c_p)
    rho = est.rho_split_
    assert sig["sums"] == pytest.approx(2 * c_b / math.sqrt(2 * rho["sums"]))
    assert sig["moments"] == pytest.approx(math.sqrt(2) * c_b**2 / math.sqrt(2 * rho["moments"]))
    assert sig["energy"] == pytest.approx(c_r**2 / math.sqrt(2 * rho["rsq"]))
    assert sig["basis"] == pytest.approx(math.sqrt(2) * c_p**2 / math.sqrt(2 * rho["basis"]))
    ident = _est(public, basis="dp-pca", means="basis", privacy_unit="identity",
                 sensitive="identity", max_records_per_identity=7).fit(
        private.X, private.labels)
    ratio = ident.sigmas(c_b, c_r, c_p)["sums"] / sig["sums"]
    # m = 7 records per person, at the rho of identities (delta = 1/10^2 instead of 1/300^2)
    assert ratio == pytest.approx(7 * math.sqrt(est.rho_split_["sums"]
                                                / ident.rho_split_["sums"]))


@pytest.mark.parametrize("k", [3, 8])
def test_the_noise_in_k_dimensions_has_the_stated_scale(k: int) -> None:
    """E‖noise of the sums‖² = S·k·σ² and E‖noise of a symmetric k×k moment‖_F² = k²·σ²."""
    S, d, reps = 4, 20, 400
    zero = BasisStats(np.ones(S), np.zeros((S, k)), np.zeros((S, k, k)), np.zeros((S, d)),
                      np.zeros((1, 1)))
    sig = {"sums": 0.7, "moments": 1.3, "rsq": 0.0, "energy": 0.2, "rsums": 0.0}
    rng = np.random.default_rng(0)
    sums2, mom2 = [], []
    for _ in range(reps):
        noisy = add_noise(zero, sig, rng, lambda v, s, r: gaussian(v, s, r), False)
        sums2.append(float(np.sum(noisy.sums**2)))
        mom2.append(float(np.mean(np.sum(noisy.moments**2, axis=(1, 2)))))
        assert np.allclose(noisy.moments, noisy.moments.transpose(0, 2, 1))
    assert np.mean(sums2) == pytest.approx(S * k * 0.7**2, rel=0.1)
    assert np.mean(mom2) == pytest.approx(k * k * 1.3**2, rel=0.1)


# ---------------------------------------------------------------------- the unit's bound
def test_one_identity_moves_each_sum_by_at_most_its_sensitivity() -> None:
    rng = np.random.default_rng(1)
    n, d, k, m = 300, 12, 3, 4
    ids = rng.integers(0, 30, n)
    strat = rng.integers(0, 3, n)
    X = rng.normal(size=(n, d))
    P = random_basis(k, d, rng)
    c_b, c_r = 0.8, 1.1
    keep = bound_contributions(ids, m, np.random.default_rng(2))
    assert np.bincount(ids[keep]).max() <= m
    base = basis_stats(X[keep], strat[keep], 3, P, c_b, c_r)
    sens = sensitivities(c_b, c_r, m)
    for person in range(30):  # replace every record of one person by far-away values
        Y = X.copy()
        mine = ids == person
        Y[mine] = rng.normal(scale=50.0, size=(int(mine.sum()), d))
        other = basis_stats(Y[keep], strat[keep], 3, P, c_b, c_r)
        assert np.linalg.norm(other.sums - base.sums) <= sens["sums"] + 1e-9
        assert np.linalg.norm(other.moments - base.moments) <= sens["moments"] + 1e-9
        assert np.linalg.norm(other.rsums - base.rsums) <= sens["rsums"] + 1e-9
        assert np.linalg.norm(other.rsq - base.rsq) <= sens["rsq"] + 1e-9
        assert abs(other.rsq.sum() - base.rsq.sum()) <= sens["energy"] + 1e-9
        # removing the person altogether: half the replacement bound for the sums
        gone = basis_stats(X[keep & ~mine], strat[keep & ~mine], 3, P, c_b, c_r)
        assert np.linalg.norm(gone.sums - base.sums) <= sens["sums"] / 2 + 1e-9


def test_the_identity_unit_uses_at_most_m_records_per_person(tables) -> None:
    private, public = tables
    est = _est(public, privacy_unit="identity", sensitive="identity",
               max_records_per_identity=5).fit(private.X, private.labels)
    assert est.delta_ == pytest.approx(1.0 / 10**2)  # 10 identities
    assert est.privacy_statement()["max_records_per_identity"] == 5
    with pytest.raises(BioanonError, match="sensitive"):
        _est(public, privacy_unit="identity").fit(private.X, private.labels)


# ---------------------------------------------------------------------- the model
def test_statistics_of_partitions_add_up() -> None:
    rng = np.random.default_rng(4)
    X, strat, P = rng.normal(size=(200, 10)), rng.integers(0, 3, 200), random_basis(
        4, 10, rng)
    whole = basis_stats(X, strat, 3, P, 1.0, 1.0)
    parts = basis_stats(X[:70], strat[:70], 3, P, 1.0, 1.0) + basis_stats(
        X[70:], strat[70:], 3, P, 1.0, 1.0)
    for a, b in zip(vars(whole).values(), vars(parts).values(), strict=True):
        assert np.allclose(a, b)


def test_without_noise_the_model_recovers_class_means_in_and_out_of_the_basis() -> None:
    rng = np.random.default_rng(5)
    strat = np.repeat([0, 1], 2000)
    U = rng.normal(size=(4000, 8)) * 0.1
    U[strat == 1, 0] += 1.0  # inside the basis
    U[strat == 1, 7] += 0.5  # outside it
    P = np.eye(8)[:2]
    model = fit_model(basis_stats(U, strat, 2, P), "class", 0.0, "diag", True)
    out = sample_model(model, strat, P, np.random.default_rng(6))
    assert out[strat == 1, 0].mean() == pytest.approx(1.0, abs=0.02)
    assert out[strat == 1, 7].mean() == pytest.approx(0.5, abs=0.02)
    assert out[strat == 0].std(axis=0) == pytest.approx(np.full(8, 0.1), abs=0.01)


def test_public_lda_puts_the_class_direction_first() -> None:
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1], 100)
    U = rng.normal(size=(200, 6))
    U[y == 1, 4] += 4.0
    P = public_lda(U, y, 3)
    assert abs(P[0, 4]) > 0.95 and np.allclose(P @ P.T, np.eye(3))


def test_dp_lda_without_public_data_keeps_at_most_classes_minus_one_directions(tables
                                                                                ) -> None:
    private, _ = tables
    n_classes = private.labels["expression"].nunique()
    est = _est(None, bounds=(-9.0, 9.0), rank=20)
    res = est.fit(private.X, private.labels).release_result(private.X, private.labels)
    assert res.info["rank"] == n_classes - 1


# ---------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("cls, kw", [
    (DPBasisAnonymizer, {"epsilon": 2.0, "bounds": (-9.0, 9.0), "basis": "dp-pca"}),
    (DPBasisAnonymizer, {"epsilon": 2.0, "bounds": (-9.0, 9.0), "basis": "random"}),
    (BasisSyntheticAnonymizer, {"rank": 4}),
])
def test_the_same_seed_reproduces_a_release(tables, cls, kw) -> None:
    private, _ = tables
    a = cls("expression", random_state=11, **kw).fit_transform(private.X, private.labels)
    b = cls("expression", random_state=11, **kw).fit_transform(private.X, private.labels)
    c = cls("expression", random_state=12, **kw).fit_transform(private.X, private.labels)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.dtype == np.float32 and a.shape == private.X.shape


def test_strict_with_public_data_and_a_leak_warning_without(tables) -> None:
    private, public = tables
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _est(public).fit_transform(private.X, private.labels)
    with pytest.warns(PrivacyLeakWarning):
        est = _est(None)
        est.fit_transform(private.X, private.labels)
    assert est.privacy_statement()["strict"] is False


# ---------------------------------------------------------------------- nothing private written
def _texts(values: np.ndarray) -> list[str]:
    """Each value as JSON spells it (float64 or float32 precision), 11 characters at least:
    no chance match among the thousands of figures a report holds."""
    out = []
    for v in np.ravel(values):
        for x in (float(v), float(np.float32(v))):
            text = json.dumps(x)
            if len(text) >= 11:
                out.append(text)
    return out


def test_release_writes_no_basis_no_noise_no_bound(tables, tmp_path: Path,
                                                   monkeypatch) -> None:
    private, public = tables
    seen: dict[str, list[np.ndarray]] = {"basis": [], "noise": []}
    make_basis, noise = DPBasisAnonymizer._make_basis, DPBasisAnonymizer._noise

    def spy_basis(self: Any, *a: Any, **kw: Any) -> np.ndarray:
        P = make_basis(self, *a, **kw)
        seen["basis"].append(P)
        return P

    def spy_noise(self: Any, values: Any, sigma: Any, rng: Any) -> np.ndarray:
        out = noise(self, values, sigma, rng)
        seen["noise"].append(out - np.asarray(values, dtype=np.float64))
        return out

    monkeypatch.setattr(DPBasisAnonymizer, "_make_basis", spy_basis)
    monkeypatch.setattr(DPBasisAnonymizer, "_noise", spy_noise)
    src, pub = tmp_path / "bio.parquet", tmp_path / "pub.csv"
    private.write(src)
    public.write(pub)
    out = tmp_path / "rel.parquet"
    why = "test of what is written"
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(out), "--interest", "expression", "--sensitive",
        "identity", "--identifying", "gender", "--identifying", "environment",
        "--epsilon", "4", "--public-data", str(pub), "--methods", "dp-basis", "--seed", "5",
        "--models", "knn", "--attackers", "naive,parrot", "--jobs", "1",
        "--budget-minutes", "0.000001", "--target-advantage", "0.5",
        "--level", "0.99", "--min-utility", "0",  # 300 records at epsilon 4: ~0.7 x clear
        "--accept-risk", "identity-membership", "--reason", why,
        "--accept-risk", "identity-inference", "--reason", why])
    assert res.exit_code == 0, res.output
    assert seen["basis"] and seen["noise"]
    man = json.loads((tmp_path / "rel.parquet.manifest.json").read_text())
    assert man["method"] == "dp-basis"
    assert man["params"]["public_data"].startswith("public")
    dp = man["params"]["privacy"]
    assert dp["strict"] is True and set(dp["rho_split"]) == {"sums", "moments", "rsq"}
    written = "".join(p.read_text() for p in tmp_path.rglob("*")
                      if p.is_file() and p.suffix in (".json", ".html", ".txt", ".csv")
                      and p.name != "pub.csv")
    assert "5" not in json.dumps(man.get("seed", ""))  # the seed is never written
    lo, hi = np.quantile(public.X.astype(np.float64), [0.01, 0.99], axis=0)
    secrets = [*seen["basis"], *seen["noise"], lo, hi, public.X.mean(axis=0)]
    leaked = [t for v in secrets for t in _texts(v) if t in written]
    assert not leaked, leaked[:5]


# ---------------------------------------------------------------------- partitions
def test_the_model_from_partitions_equals_the_model_in_memory(tables) -> None:
    from bioanon.anonymize.dp_box import box_scale

    private, public = tables
    est = _est(public, covariance="class", pool=0.5).fit(private.X, private.labels)
    codes = np.unique(private.labels["expression"].to_numpy(), return_inverse=True)[1]
    X = private.X
    lo, hi, mid = est._scaling(X)

    def scale(b: np.ndarray) -> np.ndarray:
        return box_scale(b, lo, hi, mid)

    def model(parts: Any) -> Any:
        return est.model_from(parts, int(codes.max()) + 1, X.shape[1], scale,
                              np.random.default_rng(1), np.random.default_rng(2))

    whole, P1 = model(lambda: [(X, codes)])
    cuts = [0, 37, 150, 151, X.shape[0]]
    split, P2 = model(lambda: [(X[a:b], codes[a:b])
                               for a, b in zip(cuts, cuts[1:], strict=False)])
    assert np.allclose(P1, P2)
    for key in whole:
        assert np.allclose(whole[key], split[key], atol=1e-8), key


def test_stream_release_samples_each_partition_with_the_declared_budget(tables) -> None:
    from bioanon.anonymize.basis_stream import stream_release

    private, public = tables
    labels = private.labels
    blocks = [(private.X[a:a + 70], labels.iloc[a:a + 70]) for a in range(0, 300, 70)]
    classes = sorted(labels["expression"].unique())
    est = _est(public)
    out = list(stream_release(est, lambda: iter(blocks), private.n_features, classes))
    assert [o.shape[0] for o in out] == [b[0].shape[0] for b in blocks]
    assert all(o.dtype == np.float32 for o in out)
    assert est.delta_ == pytest.approx(1.0 / private.n_records ** 2)
    assert est.epsilon_ <= 4.0 + 1e-9
    again = list(stream_release(_est(public), lambda: iter(blocks), private.n_features,
                                classes))
    assert all(np.array_equal(a, b) for a, b in zip(out, again, strict=True))
    with pytest.raises(BioanonError, match="public bounds"):
        list(stream_release(_est(None), lambda: iter(blocks), private.n_features, classes))
    with pytest.raises(BioanonError, match="declared classes"):
        list(stream_release(_est(public), lambda: iter(blocks), private.n_features,
                            classes[:1]))


# ---------------------------------------------------------------------- the DP peer
def test_the_dp_peer_needs_a_public_box_and_says_how_to_install(tables, monkeypatch) -> None:
    from bioanon.anonymize.peer_smartnoise import SmartNoiseAnonymizer

    private, public = tables
    with pytest.raises(BioanonError, match="public box"):
        SmartNoiseAnonymizer("expression").fit(private.X, private.labels)
    est = SmartNoiseAnonymizer("expression", public_data=public.X, random_state=0)
    assert est.public_params()["public_data"] == "given (not written)"
    monkeypatch.delenv("BIOANON_PEER_PYTHON", raising=False)
    monkeypatch.setitem(__import__("sys").modules, "snsynth", None)  # not installed here
    with pytest.raises(BioanonError, match="BIOANON_PEER_PYTHON"):
        est.fit_transform(private.X, private.labels)


# ---------------------------------------------------------------------- k and the split
def test_k_and_the_split_use_no_private_statistic() -> None:
    """Two private tables of the same shape and the same declared classes, with different
    records (values, spreads, class sizes), get the same k and the same split of rho."""
    rng = np.random.default_rng(0)
    n, d = 240, 40
    labels_a = {"y": np.repeat(np.arange(6), n // 6)}
    labels_b = {"y": rng.permutation(np.r_[np.zeros(190, int), np.arange(1, 6).repeat(10)])}
    X_a = rng.normal(size=(n, d)).astype(np.float32)
    X_b = (rng.standard_t(2, size=(n, d)) * 40.0 + 7.0).astype(np.float32)
    fits = []
    for X, lab in ((X_a, labels_a), (X_b, labels_b)):
        est = DPBasisAnonymizer("y", epsilon=2.0, bounds=(-5.0, 5.0), basis="random",
                                random_state=0).fit(X, lab)
        fits.append((est.rank_, est.rho_split_, est.privacy_statement()["composition"]))
    assert fits[0] == fits[1]
    assert fits[0][0] == rank_rule(d, 6) == 16


def test_the_rule_follows_d_and_the_classes_and_keeps_declared_shares() -> None:
    rng = np.random.default_rng(1)
    d = 400
    X = rng.normal(size=(300, d)).astype(np.float32)
    few = {"y": np.arange(300) % 3}
    many = {"y": np.arange(300) % 12}
    kw: dict[str, Any] = {"epsilon": 2.0, "bounds": (-5.0, 5.0), "basis": "random",
                          "random_state": 0}
    k_few = DPBasisAnonymizer("y", **kw).fit(X, few)
    k_many = DPBasisAnonymizer("y", **kw).fit(X, many)
    assert (k_few.rank_, k_many.rank_) == (16, 11 + 10)  # at least 16; S - 1 + sqrt(d)/2
    # sqrt of the noisy counts: S*d sums, 1 residual energy, k(k+1)/2 pooled moments
    for est, S, k in ((k_few, 3, 16), (k_many, 12, 21)):
        w = np.sqrt([S * d, 1, k * (k + 1) / 2])
        assert [est.rho_split_[m] / est.rho_ for m in ("sums", "rsq", "moments")] == \
            pytest.approx(list(w / w.sum()))
    declared = DPBasisAnonymizer("y", rank=5, mean_share=0.6, **kw).fit(X, few)
    assert declared.rank_ == 5
    assert declared.rho_split_["sums"] == pytest.approx(0.6 * declared.rho_)
    rest = np.sqrt([1, 15])  # the residual and the moments split the other 0.4
    assert declared.rho_split_["moments"] / declared.rho_ == pytest.approx(
        0.4 * rest[1] / rest.sum())
    assert noisy_counts(64, 3, 5, means="basis", basis="dp-pca", covariance="class") == {
        "sums": 15, "rsq": 1, "basis": 320, "moments": 45}
    with pytest.raises(BioanonError, match="leave nothing"):
        share_rule({"sums": 4, "moments": 4}, {"sums": 1.0})


# ---------------------------------------------------------------------- the fast paths
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_energy_and_sums_only_statistics_match_the_per_feature_ones(dtype) -> None:
    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 12)).astype(dtype)
    X_before = X.copy()
    strat, P = rng.integers(0, 4, 500), random_basis(3, 12, rng)
    full = basis_stats(X, strat, 4, P, 1.5, 2.0)
    energy = basis_stats(X, strat, 4, P, 1.5, 2.0, squares="energy")
    sums = basis_stats(X, strat, 4, P[:0], None, 2.0, squares="none")
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert energy.rsq.shape == (4, 1) and np.allclose(energy.rsq[:, 0], full.rsq.sum(1),
                                                      rtol=tol)
    assert np.allclose(energy.moments, full.moments, rtol=tol)
    for stats in (full, energy):
        assert stats.sums.dtype == np.float64 and stats.rsums.dtype == np.float64
    # no basis: the residual is the clipped record, the input left untouched
    ref = X.astype(np.float64)
    ref *= np.minimum(1.0, 2.0 / np.linalg.norm(ref, axis=1))[:, None]
    assert np.allclose(sums.rsums, [ref[strat == s].sum(0) for s in range(4)], rtol=tol,
                       atol=tol)
    assert not np.any(sums.rsq) and np.array_equal(X, X_before)
    assert collapse(energy, "pooled", "isotropic").rsq.shape == (1, 1)
    with pytest.raises(BioanonError, match="squares per feature"):
        collapse(energy, "pooled", "diag")


def test_the_sampler_maps_back_in_place_as_scale_then_shift() -> None:
    rng = np.random.default_rng(9)
    strat = np.repeat([0, 1, 2], 400)
    U = rng.normal(size=(1200, 6))
    U[strat == 1, 0] += 2.0
    P = np.eye(6)[:2]
    for cov in ("class", "pooled"):
        model = fit_model(basis_stats(U, strat, 3, P), cov, 0.0, "class-diag", True)
        plain = sample_model(model, strat, P, np.random.default_rng(3))
        mapped = sample_model(model, strat, P, np.random.default_rng(3),
                              scale=np.full(6, 2.0), shift=np.arange(6.0))
        assert mapped.dtype == np.float32
        assert np.allclose(mapped, plain * 2.0 + np.arange(6.0), atol=1e-5)
        assert plain[strat == 1, 0].mean() == pytest.approx(2.0, abs=0.15)
