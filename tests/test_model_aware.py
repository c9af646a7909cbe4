"""The attackers that know the method: the parametric likelihood ratio (a refit of the declared
model), the shadow-model attacker, the model-aware inference, and the registry the membership
and inference risks read. Small Gaussian populations only (fast)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.anonymize import SyntheticAnonymizer
from bioanon.anonymize.release_model import ReleaseModel
from bioanon.attack import class_models, parametric, registry, shadow
from bioanon.attack.game import Attacker, Game, run_attackers
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation.risks.base import RiskContext
from bioanon.evaluation.risks.inference import InferenceRisk
from bioanon.evaluation.risks.membership import MembershipRisk
from bioanon.evaluation.split import split_table
from bioanon.metrics.advantage import crossfit_advantage


def _population(rng: np.random.Generator, n_per: int, d: int = 60, classes: int = 3
                ) -> tuple[np.ndarray, np.ndarray]:
    means = np.random.default_rng(99).normal(size=(classes, d))
    y = np.repeat(np.arange(classes), n_per)
    return means[y] + rng.normal(size=(y.size, d)), y.astype(str)


def _diag_release(X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One fresh draw per record from its class's diagonal Gaussian fitted on ``X``."""
    out = np.empty_like(X)
    for c in np.unique(y):
        rows = y == c
        out[rows] = X[rows].mean(0) + rng.normal(size=(rows.sum(), X.shape[1])) * X[rows].std(0)
    return out


def _lr_advantage(release_of_members: bool, seed: int) -> tuple[float, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    Xm, ym = _population(rng, 40)
    Xo, yo = _population(rng, 40)
    Xr, yr = _population(rng, 120)
    if release_of_members:
        rel = _diag_release(Xm, ym, rng)
    else:  # moments from other records: nothing of a member in it
        Xh, yh = _population(rng, 40)
        rel = _diag_release(Xh, yh, rng)
    ref = np.vstack([Xo, Xr])
    cand = np.vstack([Xm, Xo])
    in_ref = np.r_[-np.ones(len(Xm), int), np.arange(len(Xo))]
    s = parametric.likelihood_ratios(cand, np.r_[ym, yo], rel, ym, ref, np.r_[yo, yr],
                                     parametric.GENERIC, in_reference=in_ref)
    member = np.r_[np.ones(len(Xm), bool), np.zeros(len(Xo), bool)]
    r = crossfit_advantage(s, member, rng=np.random.default_rng(seed))
    return r.value, r.ci


def test_parametric_reads_a_model_fitted_on_the_members() -> None:
    """A per-class diagonal Gaussian fitted on 40 records per class in 60 features and sampled
    carries its members back out: the refit's likelihood ratio reads it clearly."""
    value, ci = _lr_advantage(True, 0)
    assert value > 0.3 and ci[0] > 0.1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_parametric_reads_nothing_where_nothing_leaks(seed: int) -> None:
    """Moments from held-out records: the interval covers zero (cross-fitting keeps a
    non-member out of the reference model that scores it)."""
    value, ci = _lr_advantage(False, seed)
    assert ci[0] <= 0.0 <= ci[1]


def test_reference_folds_never_score_a_candidate_with_itself_or_its_person() -> None:
    ids = np.repeat([f"p{i}" for i in range(25)], 4)
    cand_ids = np.r_[ids[:10], np.array(["p3", "p24", "stranger"])]
    in_ref = np.r_[np.arange(10), -1, -1, -1]
    f_ref, f_cand = parametric.reference_folds(ids, cand_ids, in_ref,
                                               np.random.default_rng(0))
    assert (f_cand[:10] == f_ref[:10]).all()  # a non-member: its own row's fold
    for i, person in enumerate(cand_ids[:12]):  # the model of the other folds lacks them
        assert not ((f_ref != f_cand[i]) & (ids == person)).any()
    # few people: folds by record, a member in a random fold
    f_ref2, f_cand2 = parametric.reference_folds(ids[:40], ids[:5], np.arange(5),
                                                 np.random.default_rng(0))
    assert (f_cand2 == f_ref2[:5]).all() and len(set(f_ref2[ids[:40] == "p0"])) > 1


def test_families_follow_the_declaration() -> None:
    names = [f.name for f in parametric.families(None, 64)]
    assert names == [f.name for f in parametric.GENERIC]
    diag = parametric.families(ReleaseModel("class-gaussian", "diag", interest="x"), 64)
    assert len(diag) == len(parametric.GENERIC)  # the declared diag family is generic
    basis = parametric.families(ReleaseModel("basis-gaussian", "class", rank=8), 64)
    assert [f.name for f in basis][-2:] == ["model-aware LR (class, top 8 directions)",
                                             "model-aware LR (class, top 8 directions "
                                             "+ residual)"]
    wide = parametric.families(ReleaseModel("basis-gaussian", "pooled", rank=90), 64)
    assert all(f.rank is None or f.rank < 64 for f in wide)


def test_release_model_declarations() -> None:
    m = SyntheticAnonymizer("digit", covariance="factor", rank=4).release_model()
    assert (m.family, m.covariance, m.rank, m.interest) == ("class-gaussian", "factor", 4,
                                                             "digit")
    assert SyntheticAnonymizer("digit", n_components=3).release_model().family == "mixture"
    with pytest.raises(BioanonError, match="family"):
        ReleaseModel("gan", "diag")


# ---------------------------------------------------------------------- the game and registry
def _ctx(anonymizer: object, n_id: int = 24, per: int = 10, d: int = 32,
         release: np.ndarray | None = None) -> RiskContext:
    t = make_biometric(n_identities=n_id, records_per_identity=per, n_features=d,
                       random_state=3)
    tr, te = split_table(t, "expression", "identity", 0.25, 0)
    train, test = t.subset(tr), t.subset(te)
    if release is None:
        out = anonymizer.fit_transform(test, test.labels)  # type: ignore[attr-defined]
        release = np.asarray(getattr(out, "X", out))
    X = release
    return RiskContext(train, test, np.asarray(X, np.float32), anonymizer, "expression",
                       "identity", ["expression"], None, 0)


def test_every_registered_attacker_scores_every_unit() -> None:
    ctx = _ctx(SyntheticAnonymizer("expression", covariance="diag", random_state=0))
    from bioanon.evaluation.risks.membership import game_of

    mem, non, rows = ctx.candidates()
    cand = np.vstack([mem.X, non.X])
    lab = {"expression": np.r_[mem.labels["expression"].astype(str).to_numpy(),
                               non.labels["expression"].astype(str).to_numpy()]}
    ids = np.r_[mem.labels["identity"].astype(str).to_numpy(),
                non.labels["identity"].astype(str).to_numpy()]
    game = game_of(ctx, cand, lab, ids, ctx.anon_test, ctx.test.labels,
                   np.r_[-np.ones(mem.n_records, int), rows], None, "record")
    for a in registry.MEMBERSHIP:
        assert isinstance(a, Attacker) and a.risk == "membership" and a.knows
        for v in a.run(game).values():
            assert np.asarray(v).shape == (len(cand),) and np.isfinite(v).all()
    names = run_attackers(registry.MEMBERSHIP, game)
    assert any(k.startswith(parametric.PREFIX) for k in names)
    assert shadow.NAME not in names  # a declared model: the parametric attacker's job
    game.targets = ("expression",)
    guesses = run_attackers(registry.INFERENCE, game)
    assert all(k.endswith("'expression'") for k in guesses)
    assert any(k.startswith(parametric.PREFIX) for k in guesses)


def test_membership_risk_judges_the_model_aware_attacker() -> None:
    """A diagonal class Gaussian fitted on its members: the record level's figure is the
    model-aware attacker's, and it fails a 0.10 target."""
    t = make_biometric(n_identities=30, records_per_identity=16, n_features=64, random_state=2)
    tr, te = split_table(t, "expression", "identity", 0.5, 0)
    train, test = t.subset(tr), t.subset(te)
    anon = SyntheticAnonymizer("expression", covariance="diag", random_state=0)
    X = anon.fit_transform(test.X, test.labels)
    ctx = RiskContext(train, test, X, anon, "expression", "identity", ["expression"], None, 0)
    rec = MembershipRisk(ctx, 0.1).evaluate().results()[0]
    assert rec.level == "record" and parametric.PREFIX in rec.attacker
    assert rec.value > 0.1 and rec.status == "not met"
    assert any(k.startswith(parametric.PREFIX) for k in rec.extras["per_attacker_auc"])


class _Mean:
    """A stand-in method without a closed form: each record → the mean of its class's
    records and itself (a g-record average, as the mixes release)."""

    def __init__(self, random_state: int | None = None) -> None:
        self.random_state = random_state

    def get_params(self, deep: bool = False) -> dict[str, object]:
        return {"random_state": self.random_state}

    def set_params(self, **p: object) -> _Mean:
        self.random_state = p.get("random_state", self.random_state)  # type: ignore[assignment]
        return self

    def fit_transform(self, X: object, y: object = None) -> np.ndarray:
        A = np.asarray(X.X, np.float64)  # type: ignore[attr-defined]
        lab = X.labels["expression"].astype(str).to_numpy()  # type: ignore[attr-defined]
        rng = np.random.default_rng(self.random_state)
        out = np.empty_like(A)
        for c in np.unique(lab):
            rows = np.flatnonzero(lab == c)
            donors = rng.choice(rows, (rows.size, 3))
            out[rows] = (A[rows] + A[donors].sum(1)) / 4
        return out.astype(np.float32)


def test_shadow_attacker_learns_on_releases_it_makes() -> None:
    """A method without a declared model: the shadow attacker releases parts of its reference
    with the method (fresh seeds), learns a score, and it separates the members of a
    4-record average."""
    anon = _Mean(random_state=0)
    ctx = _ctx(anon, n_id=30, per=12, d=32)
    res = MembershipRisk(ctx, 0.1).evaluate()
    rec, ident = res.results()
    assert shadow.NAME in rec.extras["per_attacker_auc"]
    assert rec.extras["per_attacker_auc"][shadow.NAME] > 0.7
    assert shadow.NAME in ident.extras["per_attacker_auc"]  # identity level: its own shadows


def test_shadow_attacker_states_its_cost() -> None:
    assert shadow.SHADOWS == 2 and "cost" in (shadow.__doc__ or "").lower()


def test_inference_risk_runs_the_registry() -> None:
    ctx = _ctx(SyntheticAnonymizer("expression", covariance="diag", random_state=0))
    rec = InferenceRisk(ctx, 0.1).evaluate().results()[0]
    assert rec.level == "record" and np.isfinite(rec.value)
    assert "columns_judged" in rec.extras


def test_a_new_attacker_is_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """An attacker appended to the registry is judged with the others (and can win)."""
    def oracle(game: Game) -> dict[str, np.ndarray]:
        # an attacker that (in a test only) is told who is in: it must be the one chosen
        return {"oracle": game.per_unit(game.in_reference < 0)}

    monkeypatch.setattr(registry, "MEMBERSHIP",
                        [*registry.MEMBERSHIP, Attacker("oracle", "membership", "all", oracle)])
    ctx = _ctx(SyntheticAnonymizer("expression", covariance="pooled", random_state=0))
    rec = MembershipRisk(ctx, 0.1).evaluate().results()[0]
    assert rec.attacker == "oracle" and rec.value == pytest.approx(1.0)


def test_a_release_without_spread_is_scored_not_refused() -> None:
    """A release that repeats its class means (e.g. a DP release whose noisy covariance was
    clipped to zero) has a singular covariance: the attacker still scores every candidate."""
    rng = np.random.default_rng(4)
    X, y = _population(rng, 30)
    means = np.stack([X[y == c].mean(0) for c in np.unique(y)])
    release = means[np.searchsorted(np.unique(y), y)]
    s = parametric.likelihood_ratios(X, y, release, y, X[::-1], y[::-1], parametric.GENERIC)
    assert all(np.isfinite(v).all() for v in s.values())


# ---------------------------------------------------------------------- a stated public basis
#: 16 trajectories of 10 time steps, named as the voice extractor names its tracks
_TRAJ, _STEPS, _KEEP = 16, 10, 4
_NAMES = [f"c{j}_t{t}" for j in range(_TRAJ) for t in range(_STEPS)]


def _trajectories(rng: np.random.Generator, n_per: int, classes: int = 3
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Class means plus noise correlated along each trajectory (a random walk)."""
    d = _TRAJ * _STEPS
    means = np.random.default_rng(99).normal(size=(classes, d)) * 0.7
    y = np.repeat(np.arange(classes), n_per)
    walk = np.cumsum(rng.normal(size=(y.size, _TRAJ, _STEPS)), axis=2)
    return means[y] + (walk / np.sqrt(np.arange(1, _STEPS + 1))).reshape(y.size, d), y.astype(str)


def _dct_release(X: np.ndarray, y: np.ndarray, P: np.ndarray, rng: np.random.Generator
                 ) -> np.ndarray:
    """A noise-free per-class diagonal Gaussian in the kept DCT coordinates fitted on ``X``
    (means and variances), plus an isotropic residual outside them (as dp-cells releases)."""
    k, d = P.shape
    C = X @ P.T
    resid = float(np.sum((X - C @ P) ** 2)) / (len(X) * (d - k))
    out = np.empty_like(X)
    for c in np.unique(y):
        rows = y == c
        coords = C[rows].mean(0) + rng.normal(size=(rows.sum(), k)) * C[rows].std(0)
        E = rng.normal(size=(rows.sum(), d)) * np.sqrt(resid)
        out[rows] = coords @ P + E - (E @ P.T) @ P
    return out


def _dct_model() -> ReleaseModel:
    import functools

    from bioanon.anonymize.release_model import PublicBasis
    from bioanon.layout import public_dct_basis

    return ReleaseModel("basis-gaussian", "diag", basis="structured",
                        public_basis=PublicBasis("temporal DCT", functools.partial(
                            public_dct_basis, keep=_KEEP), scale="none"))


def _stated_advantages(seed: int, of_members: bool) -> dict[str, tuple[float, tuple[float,
                                                                               float]]]:
    rng = np.random.default_rng(seed)
    Xm, ym = _trajectories(rng, 30)
    Xo, yo = _trajectories(rng, 30)
    Xr, yr = _trajectories(rng, 90)
    src = (Xm, ym) if of_members else _trajectories(rng, 30)  # held-out: nothing of a member
    model = _dct_model()
    assert model.public_basis is not None
    P = model.public_basis.build(_NAMES, Xm.shape[1])  # what the attacker rebuilds
    rel = _dct_release(src[0], src[1], P, rng)
    fams = parametric.families(model, Xm.shape[1], 3)
    s = parametric.likelihood_ratios(np.vstack([Xm, Xo]), np.r_[ym, yo], rel, src[1],
                                     np.vstack([Xo, Xr]), np.r_[yo, yr], fams,
                                     in_reference=np.r_[-np.ones(len(Xm), int),
                                                        np.arange(len(Xo))],
                                     stated=P, scale="none")
    member = np.r_[np.ones(len(Xm), bool), np.zeros(len(Xo), bool)]
    out = {}
    for name, keys in (("raw diag", ["model-aware LR (diag, all d)"]),
                       ("stated", [k for k in s if "stated basis" in k])):
        r = crossfit_advantage({k: s[k] for k in keys}, member,
                               rng=np.random.default_rng(seed))
        out[name] = (r.value, r.ci)
    return out


def test_stated_basis_family_reads_a_model_diagonal_in_the_dct_basis() -> None:
    """A per-class diagonal Gaussian in the temporal DCT coordinates (4 of 10 per trajectory,
    64 of 160 features) fitted on 30 members per class: refitted in the basis the method
    states, it reads its members clearly more than the same diagonal family in the raw
    features (which spreads 160 means and variances per class over the same signal)."""
    got = [_stated_advantages(seed, True) for seed in (0, 2)]
    margins = [g["stated"][0] - g["raw diag"][0] for g in got]
    assert all(g["stated"][1][0] > 0.1 for g in got), got
    assert float(np.mean(margins)) > 0.2, got


@pytest.mark.parametrize("seed", [1, 3])
def test_stated_basis_family_reads_nothing_where_nothing_leaks(seed: int) -> None:
    """The same release with its moments from held-out records: the stated families'
    interval covers zero."""
    value, ci = _stated_advantages(seed, False)["stated"]
    assert ci[0] <= 0.0 <= ci[1] and value < 0.15


def test_families_in_a_declared_public_basis() -> None:
    from bioanon.anonymize.dp_basis import DPBasisAnonymizer
    from bioanon.anonymize.dp_cells import DPCellsAnonymizer

    names = [f.name for f in parametric.families(DPCellsAnonymizer(cells=3, keep=4)
                                                 .release_model(), 400, 10)]
    assert names[-4:] == ["model-aware LR (tied, stated basis)",
                          "model-aware LR (diag, stated basis)",
                          "model-aware LR (tied, stated basis + residual)",
                          "model-aware LR (mixture of 8 tied, stated basis)"]
    # a basis drawn from a secret seed has no rule: the generic families and the mixture in
    # all d features only
    secret = DPCellsAnonymizer(cells=2, basis="random").release_model()
    assert secret.public_basis is None
    assert [f.name for f in parametric.families(secret, 400, 10)][-1] == \
        "model-aware LR (mixture of 4 tied, all d)"
    assert not any(f.stated for f in parametric.families(secret, 400, 10))
    # dp-basis without a rank: the attacker uses the k its stated rule picks (d and classes)
    model = DPBasisAnonymizer("digit", basis="dp-pca").release_model()
    assert model.rank is None and model.rank_rule is not None
    ranks = {f.rank for f in parametric.families(model, 400, 10)} - {None}
    assert ranks == {16, model.rank_rule(400, 10)} and model.rank_rule(400, 10) == 19


def test_the_attacker_rebuilds_dp_cells_basis_from_the_names() -> None:
    """The rule the declaration carries gives the very basis dp-cells releases in (fitted on
    a table whose feature names lay out trajectories), without the data or the seed."""
    from bioanon.anonymize.dp_cells import DPCellsAnonymizer
    from bioanon.table import FeatureTable

    rng = np.random.default_rng(0)
    X, y = _trajectories(rng, 20)
    t = FeatureTable(X, pd.DataFrame({"c": y}), feature_names=_NAMES)
    est = DPCellsAnonymizer("c", cells=1, keep=3, mu=4.0, bounds=(-20.0, 20.0),
                            random_state=0).fit(t, t.labels)
    model = DPCellsAnonymizer("c", cells=1, keep=3).release_model()
    assert model.public_basis is not None
    P = model.public_basis.build(_NAMES, X.shape[1])
    assert np.allclose(P, est.stated_basis(X.shape[1])) and P.shape == (_TRAJ * 3, X.shape[1])


def test_mixture_family_recovers_cells() -> None:
    """The mixture family's EM (deterministic start from the sign split) finds two cells per
    class, split along a direction that mixes the coordinates (as a cells method splits)."""
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(2), 200)
    side = np.tile([-1.0, 1.0], 200)
    u = np.ones(6) / np.sqrt(6.0)
    Y = rng.normal(size=(400, 6)) * 0.5 + np.outer(1.5 * side, u)
    Y[:, 0] += 10.0 * y
    m = class_models.fit_mixture(Y, y, 2, 2, None)
    got = np.sort((m.means - m.means.mean(axis=1, keepdims=True)) @ u, axis=1)
    assert np.allclose(got, [[-1.5, 1.5], [-1.5, 1.5]], atol=0.2), got
    assert np.allclose(np.exp(m.logw), 0.5, atol=0.05) and np.all(m.var < 0.35)


def test_game_scores_in_the_stated_basis() -> None:
    """Through the registry's game: a dp-cells release on a table with trajectory names is
    scored by the families in the rebuilt DCT basis and by the mixture family."""
    from bioanon.anonymize.dp_cells import DPCellsAnonymizer
    from bioanon.table import FeatureTable

    rng = np.random.default_rng(1)
    Xm, ym = _trajectories(rng, 30)
    Xr, yr = _trajectories(rng, 60)
    tab = FeatureTable(Xr, pd.DataFrame({"c": yr}), feature_names=_NAMES)
    anon = DPCellsAnonymizer("c", cells=2, keep=4, mu=8.0, random_state=0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the box from the data: not strict
        rel = np.asarray(anon.fit_transform(FeatureTable(Xm, pd.DataFrame({"c": ym}),
                                                         feature_names=_NAMES),
                                            pd.DataFrame({"c": ym})).X)
    game = Game(np.vstack([Xm, Xr[:90]]), {"c": np.r_[ym, yr[:90]]}, rel, {"c": ym}, Xr,
                {"c": yr}, np.arange(len(Xr)).astype(str),
                np.r_[[f"m{i}" for i in range(90)], np.arange(90).astype(str)],
                np.r_[-np.ones(90, int), np.arange(90)], "c", anonymizer=anon,
                reference_table=tab)
    s = parametric.parametric_scores(game)
    assert {"model-aware LR (diag, stated basis)", "model-aware LR (tied, stated basis)",
            "model-aware LR (mixture of 4 tied, stated basis)"} <= set(s)
    assert all(np.isfinite(v).all() and v.shape == (180,) for v in s.values())
    guesses = parametric.parametric_labels(Game(**{**game.__dict__, "targets": ("c",),
                                                   "candidate_labels": {}}))
    assert "model-aware LR (tied, stated basis), release model's best class, 'c'" in guesses
    # without trajectory names the stated basis is the identity: only the mixture is new
    plain = parametric.parametric_scores(Game(**{**game.__dict__, "reference_table": None,
                                                 "cache": {}}))
    assert "model-aware LR (mixture of 4 tied, all d)" in plain
    assert not any("stated basis" in k for k in plain)


def test_the_reference_side_is_fitted_once_per_split_and_gives_the_same_scores(monkeypatch
                                                                              ) -> None:
    """The reference models of the families in all d features depend on no release: a second
    release judged on the same candidates and reference (a search's next setting) fits none
    of them again, and its scores are those a fresh process (an empty cache) gives."""
    rng = np.random.default_rng(5)
    Xm, ym = _population(rng, 40)
    Xo, yo = _population(rng, 40)
    ref, y_ref = _population(rng, 120)
    cand, y_cand = np.vstack([Xm, Xo]), np.r_[ym, yo]
    fams = [parametric.Family("diag"), parametric.Family("pooled"),
            parametric.Family("pooled", 8)]  # the last one's basis is the release's own
    fits: list[int] = []
    fitted = parametric.fitted_family
    monkeypatch.setattr(parametric, "fitted_family",
                        lambda Z, c, n, fam, B, g, k: fits.append(k) or fitted(Z, c, n, fam, B,
                                                                               g, k))

    def scores(release: np.ndarray) -> dict[str, np.ndarray]:
        return parametric.likelihood_ratios(cand, y_cand, release, ym, ref, y_ref, fams,
                                            rng=np.random.default_rng(0))

    parametric._REFERENCE_SIDE.clear()
    first = scores(_diag_release(Xm, ym, rng))
    assert fits.count(parametric.FOLDS) == 3  # each family's reference models, once
    second_release = _diag_release(Xm, ym, rng)
    fits.clear()
    second = scores(second_release)
    # the release's own fits, and the reference of the one family in the release's basis
    assert fits.count(parametric.FOLDS) == 1 and fits.count(1) == 3
    parametric._REFERENCE_SIDE.clear()
    fresh = scores(second_release)
    assert set(second) == set(fresh) == set(first)
    for name in fresh:
        assert np.array_equal(second[name], fresh[name])
