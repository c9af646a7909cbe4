"""Differentially private class-conditional synthetic data (``dp-synthetic``).

The release depends on the owner's features only through three noisy statistics, so every
released record (a fresh sample per input record, with its labels) is (ε, δ)-DP by
post-processing:

1. **clip**: each feature to the public box ``bounds`` = (lo, hi), rescaled to [−1, 1]; then
   the record to the L2 ball of radius ``c = clip · sqrt(d)`` (c is declared, not learned);
2. **Gaussian mechanisms** (zCDP, ρ split by ``mean_share``): the per-stratum sums
   ``S_s = Σ u`` (stratum = interest × additional values) and the second-moment matrix
   ``A = Σ u uᵀ`` (its upper triangle, symmetric noise: the Analyze-Gauss mechanism of
   Dwork, Talwar, Thakurta & Zhang 2014);
3. **post-processing** (no privacy cost): the means ``μ_s = S_s / n_s`` and the
   within-stratum covariance ``A / n − Σ_s (n_s/n) μ_s μ_sᵀ`` (``covariance="lowrank"``), its
   top ``rank`` eigenvectors V with their variances Λ, and the per-feature variance r left
   outside them (low rank plus diagonal). Each record is released as
   ``μ_s + V Λ^½ ξ + sqrt(r) ζ``, back in feature units. ``covariance="class"`` releases
   ``A_s`` per stratum instead (each record touches one, so the sensitivity is unchanged)
   and fits one such model per stratum; ``diag``/``class-diag`` release only the diagonals.
   With a public ``basis`` (k, d) (:func:`public_basis` on auxiliary records) everything
   happens in its span.

Neighbouring datasets and what is public
----------------------------------------
The release keeps every record's label columns (``bioanon release`` drops the sensitive one):
they, the number of records and the stratum sizes are treated as public. Neighbouring
datasets differ in the **features** of one record (``privacy_unit="record"``), or of every
record of one person (``privacy_unit="identity"``: each identity contributes at most
``max_records_per_identity`` = m records; extra ones are dropped at random before the
statistics are computed). Replacing u by u' moves a stratum sum by ``‖u − u'‖ ≤ 2c`` and the
upper triangle of ``A`` by ``‖uuᵀ − u'u'ᵀ‖_F ≤ sqrt(2) c²``; for a person, m times that.

Accounting
----------
The owner gives ε and δ (default δ = 1/n², n the records, or the identities for
``privacy_unit="identity"``, computed at fit and published). The largest ρ with ρ-zCDP ⇒
(ε, δ)-DP is found with :func:`bioanon.privacy.zcdp_rho`; ``mean_share · ρ`` goes to the sums,
the rest to ``A``; σ = Δ / sqrt(2ρ_i) for each. When OpenDP is installed, the ε of the
composition is recomputed by OpenDP (``make_gaussian`` ×2, ``make_composition``,
``make_zCDP_to_approxDP``) and that figure is published as ``epsilon_``.

Bounds
------
``bounds`` must be fixed in advance (public knowledge, or auxiliary data through
:func:`bioanon.privacy.public_bounds`). Without them, the ``clip_quantile`` quantiles of the
released data are used, a :class:`~bioanon.privacy.PrivacyLeakWarning` is raised and the
privacy statement says the guarantee does not hold strictly; such bounds are never kept on
the estimator or written anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..errors import BioanonError
from ..privacy import (
    check_delta,
    check_epsilon,
    gaussian,
    gaussian_sigma,
    zcdp_epsilon,
    zcdp_rho,
)
from ..table import FeatureTable
from .base import Anonymizer, DPCapability, Release, label_values
from .dp_box import (
    NEIGHBOURING,
    UNITS,
    accounting_units,
    bound_contributions,
    box_bounds,
    box_scale,
    check_box_and_unit,
    declared_box,
    per_feature,
    records_per_unit,
)
from .params import Param, epsilon_param
from .registration import register
from .release_model import ReleaseModel
from .strata import check_strata, strata

COVARIANCES = ("lowrank", "class", "diag", "class-diag")
MECHANISM = ("clip to the public box and an L2 ball of radius clip*sqrt(d); Gaussian noise on "
             "the per-stratum sums and on the second moments (Analyze-Gauss; pooled or per "
             "stratum); zCDP composition converted to (epsilon, delta); fresh samples from "
             "the noisy class means and a low-rank-plus-diagonal (or diagonal) covariance")
_BLOCK = 1 << 16


def public_basis(X_public: Any, bounds: Any, rank: int) -> np.ndarray:
    """A (rank, d) orthonormal basis from **public or auxiliary** records (never the private
    set): the top principal directions of the box-scaled records. Pass it as ``basis=``.

    >>> P = public_basis(np.random.default_rng(0).normal(size=(50, 6)), (-3.0, 3.0), 2)
    >>> P.shape, bool(np.allclose(P @ P.T, np.eye(2)))
    ((2, 6), True)
    """
    X = np.asarray(X_public, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise BioanonError("a public basis needs a 2-D array of at least 2 public records")
    lo, hi = declared_box(bounds, X.shape[1])
    u = box_scale(X, lo, hi)
    u -= u.mean(axis=0)
    _, _, vt = np.linalg.svd(u, full_matrices=False)
    return vt[:min(int(rank), vt.shape[0])]


def public_clip(X_public: Any, bounds: Any, quantile: float = 0.9, center: Any = None,
                basis: Any = None) -> float:
    """A ``clip`` for :class:`DPSyntheticAnonymizer` from **public or auxiliary** records:
    the ``quantile`` of their L2 norms after the same box scaling, centring and projection
    the estimator applies, as a fraction of sqrt(d) (d the feature count). Costs no budget;
    computed on the private records instead it would leak (their norm distribution).

    >>> X = np.random.default_rng(0).normal(size=(400, 16))
    >>> c = public_clip(X, (-4.0, 4.0), quantile=0.5)
    >>> bool(0.2 < c < 0.3)  # median norm of N(0, I/16) scaled rows: about 1 = 0.25 * 4
    True
    """
    X = np.asarray(X_public, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise BioanonError("a public clip needs a 2-D array of at least 2 public records")
    if not 0.0 < quantile <= 1.0:
        raise BioanonError(f"quantile={quantile} must lie in (0, 1]; e.g. quantile=0.9")
    d = X.shape[1]
    lo, hi = declared_box(bounds, d)
    mid = None if center is None else per_feature(center, d, "center")
    u = box_scale(X, lo, hi, mid)
    if basis is not None:
        u = u @ np.asarray(basis, dtype=np.float64).T
    q = float(np.quantile(np.sqrt(np.einsum("ij,ij->i", u, u)), quantile))
    return float(min(max(q / math.sqrt(d), 1e-6), 1.0))


def clip_records(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, radius: float,
                 basis: np.ndarray | None = None, center: np.ndarray | None = None
                 ) -> np.ndarray:
    """Box-clip to [lo, hi], rescale to [−1, 1] per feature, project onto the public
    ``basis`` (k, d) when given, then clip each row's L2 norm to ``radius`` (float64 out).

    >>> u = clip_records(np.array([[10.0, 0.0]]), np.array([-1.0, -1.0]), np.ones(2), 0.5)
    >>> u.round(3).tolist()
    [[0.5, 0.0]]
    """
    u = box_scale(X, lo, hi, center)
    if basis is not None:
        u = u @ basis.T
    norms = np.sqrt(np.einsum("ij,ij->i", u, u))
    u *= (radius / np.maximum(norms, radius))[:, None]
    return u


def noisy_statistics(X: np.ndarray, strat: np.ndarray, n_strata: int, lo: np.ndarray,
                     hi: np.ndarray, radius: float, sigma_sums: float, sigma_moment: float,
                     rng: np.random.Generator, hardened: bool = False, full: bool = True,
                     basis: np.ndarray | None = None, per_stratum: bool = False,
                     center: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The two Gaussian mechanisms: noisy per-stratum sums (S, d) and the noisy second
    moments of the clipped records: the symmetric matrix (d, d) with ``full``, else its
    diagonal (d,); with ``per_stratum`` one matrix per stratum (S, d, d) (each record touches
    one, so the sensitivity is the same). Row blocks, float64 sums."""
    d = X.shape[1] if basis is None else basis.shape[0]
    sums = np.zeros((n_strata, d))
    if per_stratum:
        return _per_stratum(X, strat, n_strata, lo, hi, radius, sigma_sums, sigma_moment,
                            rng, hardened, basis, d, center, full)
    moment = np.zeros((d, d)) if full else np.zeros(d)
    for start in range(0, X.shape[0], _BLOCK):
        u = clip_records(X[start:start + _BLOCK], lo, hi, radius, basis, center)
        s = strat[start:start + _BLOCK]
        onehot = sp.csr_matrix((np.ones(s.size), (s, np.arange(s.size))),
                               shape=(n_strata, s.size))
        sums += onehot @ u
        if full:  # float32 product (twice as fast), float64 sum across blocks
            u32 = u.astype(np.float32)
            moment += u32.T @ u32
        else:
            moment += np.einsum("ij,ij->j", u, u)
    if not full:
        return gaussian(sums, sigma_sums, rng, hardened), gaussian(moment, sigma_moment, rng,
                                                                   hardened)
    iu = np.triu_indices(d)
    upper = gaussian(moment[iu], sigma_moment, rng, hardened)
    noisy = np.zeros((d, d))
    noisy[iu] = upper
    noisy = noisy + np.triu(noisy, 1).T
    return gaussian(sums, sigma_sums, rng, hardened), noisy


def _per_stratum(X: np.ndarray, strat: np.ndarray, n_strata: int, lo: np.ndarray,
                 hi: np.ndarray, radius: float, sigma_sums: float, sigma_moment: float,
                 rng: np.random.Generator, hardened: bool, basis: np.ndarray | None, d: int,
                 center: np.ndarray | None, full: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
    sums = np.zeros((n_strata, d))
    moment = np.zeros((n_strata, d, d)) if full else np.zeros((n_strata, d))
    for start in range(0, X.shape[0], _BLOCK):
        u = clip_records(X[start:start + _BLOCK], lo, hi, radius, basis,
                         center).astype(np.float32)
        s = strat[start:start + _BLOCK]
        for k in np.unique(s):  # a loop over strata, never over records
            part = u[s == k]
            sums[k] += part.sum(axis=0, dtype=np.float64)
            moment[k] += part.T @ part if full else np.einsum("ij,ij->j", part, part)
    if not full:
        return (gaussian(sums, sigma_sums, rng, hardened),
                gaussian(moment, sigma_moment, rng, hardened))
    iu = np.triu_indices(d)
    upper = gaussian(moment[:, iu[0], iu[1]], sigma_moment, rng, hardened)
    noisy = np.zeros_like(moment)
    noisy[:, iu[0], iu[1]] = upper
    noisy = noisy + np.triu(noisy, 1).transpose(0, 2, 1)
    return gaussian(sums, sigma_sums, rng, hardened), noisy


@register("dp-synthetic")
class DPSyntheticAnonymizer(Anonymizer):
    """Differentially private class-conditional synthetic data: (ε, δ)-DP per record or person.

    Parameters
    ----------
    interest : str
        Label column whose classes are modelled separately.
    additional : sequence of str, optional
        Model each interest × additional stratum separately.
    epsilon : float, default 1
        The privacy budget ε (keyword-only).
    delta : float, optional
        δ; default 1/n² with n the records (or identities), computed at fit and published.
    bounds : (lo, hi) scalars or arrays, optional
        Public per-feature clipping box (:func:`bioanon.privacy.public_bounds` derives one
        from auxiliary data). None: quantiles of the released data, with a
        :class:`~bioanon.privacy.PrivacyLeakWarning` (the guarantee no longer holds strictly).
    center : scalar or array (d,), optional
        Public centre of the clipping (e.g. the mean of auxiliary records); default the
        box's midpoint.
    clip : float, default 0.3
        L2 clipping radius of a box-scaled record, as a fraction of the box's half-diagonal
        sqrt(d) (declared, never learned).
    basis : array (k, d), optional
        Public orthonormal basis (:func:`public_basis` on auxiliary records): the statistics
        and the samples live in its span (fewer dimensions, less noise per record).
    covariance : {"lowrank", "class", "diag", "class-diag"}, default "lowrank"
        The covariance model, all from the noisy second moments: ``lowrank`` pools the
        strata (top-``rank`` eigenvectors plus a diagonal); ``class`` is one such model per
        stratum (the second moments are then released per stratum, same sensitivity);
        ``diag`` and ``class-diag`` release and use only the diagonal.
    rank : int, default 8
        Rank of the low-rank part (capped at the feature count).
    pool : float, default 0
        ``class``/``class-diag`` only: each stratum's covariance is ``(1 − pool)`` times its
        own plus ``pool`` times the pooled within-stratum covariance (the sum of the noisy
        per-stratum moments, whose relative noise is about sqrt(S) times smaller for S
        strata). Post-processing: no privacy cost.
    mean_share : float, default 0.5
        Share of ρ spent on the stratum sums; the rest goes to the second moments.
    privacy_unit : {"record", "identity"}, default "record"
    sensitive : str, optional
        The identity column; needed for ``privacy_unit="identity"``.
    max_records_per_identity : int, default 10
        m: records used per identity with ``privacy_unit="identity"`` (sensitivity × m).
    clip_quantile : float, default 0.01
        Quantile of the data-derived bounds when ``bounds`` is None.
    hardened : bool, default False
        Sample the noise with OpenDP (floating-point safe, slow, not reproducible by seed).
    random_state : int or None
        Secret key of the noise and of the samples; never published.

    Attributes
    ----------
    epsilon_, delta_ : float
        The (ε, δ) the release satisfies (OpenDP's ε of the composition when installed).
    rho_ : float
        The zCDP budget of the composition.
    privacy_unit_ : str

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> est = DPSyntheticAnonymizer("expression", epsilon=2.0, bounds=(-10.0, 10.0),
    ...                             random_state=0)
    >>> est.fit_transform(t.X, t.labels).shape
    (120, 32)
    >>> bool(est.epsilon_ <= 2.0), est.privacy_unit_
    (True, 'record')
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="attribute modelled per class"),
        "additional": Param("items", none=True, role="additional",
                            help="additional attributes: one model per interest x additional"),
        "epsilon": epsilon_param(),
        "delta": Param("float", low=0, high=1, low_open=True, high_open=True, none=True,
                       help="delta; none: 1/n^2 computed at fit (published)"),
        "bounds": Param("floats", none=True,
                        help="public clipping box lo,hi; none: from the data (not strict DP)"),
        "clip": Param("float", low=0, high=1, low_open=True,
                      help="L2 clipping radius as a fraction of sqrt(d) (box units)"),
        "center": Param("floats", none=True,
                        help="public centre of the clipping (e.g. the auxiliary mean); "
                             "none: the box's midpoint"),
        "basis": Param("object", none=True,
                       help="public (k, d) orthonormal basis (public_basis on auxiliary data)"),
        "covariance": Param("str", options=COVARIANCES,
                            help="lowrank: pooled rank-k plus diagonal; class: one per "
                                 "class; diag: pooled diagonal; class-diag: one diagonal "
                                 "per class"),
        "rank": Param("int", low=1, help="dimension of the private basis (lowrank)"),
        "pool": Param("float", low=0, high=1,
                      help="class covariances: weight of the pooled one mixed in (0: none)"),
        "mean_share": Param("float", low=0, high=1, low_open=True, high_open=True,
                            help="share of the budget spent on the class sums"),
        "privacy_unit": Param("str", options=UNITS, help="what epsilon protects"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="identity column (privacy_unit=identity)"),
        "max_records_per_identity": Param("int", low=1,
                                          help="records used per identity (identity unit)"),
        "clip_quantile": Param("float", low=0, high=0.5, high_open=True,
                               help="quantile of data-derived bounds (not strict DP)"),
        "hardened": Param("bool", help="OpenDP's floating-point-safe sampler (slow)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    dp = DPCapability(UNITS, "Gaussian mechanisms composed in zCDP, converted to (epsilon, "
                           "delta)", delta="1/n^2, n records or identities")
    protects = ("every record's features by (epsilon, delta)-differential privacy (or every "
                "person's, privacy_unit=identity) when bounds are fixed in advance")
    does_not_protect = ("the released label columns (kept as they are); records when bounds "
                        "come from the data (PrivacyLeakWarning); utility only as far as a "
                        "Gaussian per class fits")
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"covariance": "lowrank", "rank": 32, "clip": 0.3},
        {"covariance": "class", "rank": 8, "clip": 0.3},
        {"covariance": "lowrank", "rank": 8, "clip": 0.3},
    )
    #: the settings ``bioanon release --epsilon E --public-data FILE`` searches (at E), tuned
    #: on public information only (benchmarks/dp_epsilon_sweep.py): "public" takes the box
    #: (:func:`~bioanon.privacy.public_bounds`) and the centre (their mean) from the public
    #: records, "public:q" the clip as the q-quantile of their norms (:func:`public_clip`);
    #: resolved by :mod:`bioanon.certification.dp_budget`, at no privacy cost
    public_search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"covariance": "lowrank", "rank": 32, "bounds": "public", "center": "public",
         "clip": "public:0.9", "mean_share": 0.7},
        {"covariance": "class", "rank": 8, "bounds": "public", "center": "public",
         "clip": "public:0.5", "pool": 0.8, "mean_share": 0.3},
        {"covariance": "lowrank", "rank": 8, "bounds": "public", "center": "public",
         "clip": "public:0.9"},
    )

    def __init__(self, interest: str = "interest", additional: Sequence[str] | None = None, *,
                 epsilon: float = 1.0, delta: float | None = None, bounds: Any = None,
                 clip: float = 0.3, center: Any = None, basis: Any = None,
                 covariance: str = "lowrank", rank: int = 8, pool: float = 0.0,
                 mean_share: float = 0.5,
                 privacy_unit: str = "record", sensitive: str | None = None,
                 max_records_per_identity: int = 10, clip_quantile: float = 0.01,
                 hardened: bool = False, random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.clip = clip
        self.center = center
        self.basis = basis
        self.covariance = covariance
        self.rank = rank
        self.pool = pool
        self.mean_share = mean_share
        self.privacy_unit = privacy_unit
        self.sensitive = sensitive
        self.max_records_per_identity = max_records_per_identity
        self.clip_quantile = clip_quantile
        self.hardened = hardened
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def release_model(self) -> ReleaseModel:
        """Noisy class means with a pooled low-rank-plus-diagonal covariance (``lowrank``),
        one per class (``class``) or diagonals; in a public basis when one is given.

        >>> DPSyntheticAnonymizer("digit").release_model().describe()
        'class-gaussian (covariance pooled, per digit, rank 8, noisy statistics)'
        """
        cov = {"lowrank": "pooled", "class": "factor", "diag": "diag",
               "class-diag": "diag"}[self.covariance]
        rank = int(self.rank) if self.covariance in ("lowrank", "class") else None
        interest, additional = self.interest, tuple(self.additional or ())
        if self.basis is not None:
            k = int(np.asarray(self.basis).shape[0])
            return ReleaseModel("basis-gaussian", "class" if cov == "factor" else cov,
                                interest=interest, additional=additional, rank=k,
                                basis="public", noisy=True)
        return ReleaseModel("class-gaussian", cov, interest=interest, additional=additional,
                            rank=rank, noisy=True)

    def _check_relations(self) -> None:
        check_box_and_unit(self)

    def _sigmas(self, d: int) -> tuple[float, float]:
        """σ of the sums and of the second moments for ``d`` features (public)."""
        c = float(self.clip) * math.sqrt(d)
        m = records_per_unit(self)
        rho_sums = float(self.mean_share) * self.rho_
        rho_moment = (1.0 - float(self.mean_share)) * self.rho_
        return (gaussian_sigma(2.0 * c * m, rho_sums),
                gaussian_sigma(math.sqrt(2.0) * c * c * m, rho_moment))

    # ------------------------------------------------------------------ fit
    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels; set the public accounting (ε, δ, ρ, privacy unit)."""
        n = X.shape[0]
        check_strata(labels, self.interest, list(self.additional or []), n)
        eps = check_epsilon(self.epsilon)
        units = accounting_units(self, labels, n)
        self.delta_ = (check_delta(self.delta) if self.delta is not None
                       else 1.0 / max(units, 2) ** 2)
        self.rho_ = zcdp_rho(eps, self.delta_)
        self.epsilon_, self.accountant_ = self._account(self.rho_, self.delta_)
        self.privacy_unit_ = str(self.privacy_unit)

    def _account(self, rho: float, delta: float) -> tuple[float, str]:
        """ε of the composition: OpenDP's when installed, else the same formula here."""
        try:
            from ..privacy import opendp_epsilon

            share = float(self.mean_share)
            eps = opendp_epsilon([1.0 / math.sqrt(2.0 * share * rho),
                                  1.0 / math.sqrt(2.0 * (1.0 - share) * rho)], delta)
            return eps, "OpenDP (make_gaussian x2, make_composition, make_zCDP_to_approxDP)"
        except Exception:  # not installed, or its conversion overflows at a huge epsilon
            return zcdp_epsilon(rho, delta), "zCDP composition, Canonne-Kamath-Steinke conversion"

    # ------------------------------------------------------------------ release
    def _basis(self, d: int) -> np.ndarray | None:
        if self.basis is None:
            return None
        P = np.asarray(self.basis, dtype=np.float64)
        if P.ndim != 2 or P.shape[1] != d or not np.all(np.isfinite(P)):
            raise BioanonError(f"basis has shape {P.shape}; it must be (k, {d}) with "
                               "orthonormal rows, e.g. public_basis(X_aux, bounds, k)")
        if not np.allclose(P @ P.T, np.eye(P.shape[0]), atol=1e-6):
            raise BioanonError("basis rows must be orthonormal; build it with "
                               "bioanon.anonymize.dp_synthetic.public_basis")
        return P

    def _bounds(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return box_bounds(self.bounds, None, X, "dp-synthetic",
                          quantile=float(self.clip_quantile),
                          hint="pass public bounds (bounds=(lo, hi), e.g. from "
                               "bioanon.privacy.public_bounds on auxiliary data)")

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """Noisy statistics of ``X``, then one fresh sample per record of its stratum."""
        n, d = X.shape
        _, strat = strata(labels, self.interest, list(self.additional or []), n)
        noise_seq, draw_seq, drop_seq = np.random.SeedSequence(seed).spawn(3)
        used = np.ones(n, dtype=bool)
        if self.privacy_unit == "identity":
            assert self.sensitive is not None
            ids = label_values(labels, self.sensitive, n)
            used = bound_contributions(ids, int(self.max_records_per_identity),
                                       np.random.default_rng(drop_seq))
        lo, hi = self._bounds(X)
        n_strata = int(strat.max()) + 1
        Xu, su = (X, strat) if used.all() else (X[used], strat[used])
        sigma_sums, sigma_moment = self._sigmas(d)
        basis = self._basis(d)
        center = None
        if self.center is not None:
            center = per_feature(self.center, d, "center")
        sums, moment = noisy_statistics(Xu, su, n_strata, lo, hi, float(self.clip) * math.sqrt(d),
                                        sigma_sums, sigma_moment,
                                        np.random.default_rng(noise_seq), bool(self.hardened),
                                        full=self.covariance in ("lowrank", "class"),
                                        basis=basis,
                                        per_stratum=self.covariance.startswith("class"),
                                        center=center)
        counts = np.bincount(su, minlength=n_strata).astype(np.float64)
        model = _model(sums, moment, counts, int(self.rank),
                       self.covariance.startswith("class"), float(self.pool))
        out = _sample(model, strat, lo, hi, np.random.default_rng(draw_seq), basis, center)
        return Release(out, {"epsilon": self.epsilon_, "delta": self.delta_,
                             "privacy_unit": self.privacy_unit_})

    # ------------------------------------------------------------------ statement
    def privacy_statement(self) -> dict[str, Any]:
        """The guarantee and its accounting (safe to publish: no noise, no data-derived
        bound)."""
        fitted = hasattr(self, "epsilon_")
        out: dict[str, Any] = {
            "mechanism": MECHANISM,
            "epsilon": self.epsilon_ if fitted else check_epsilon(self.epsilon),
            "epsilon_requested": check_epsilon(self.epsilon),
            "delta": self.delta_ if fitted else self.delta,
            "delta_rule": "1/n^2 (n: records or identities), computed at fit"
                          if self.delta is None else "given",
            "privacy_unit": self.privacy_unit,
            "neighbouring": NEIGHBOURING.get(self.privacy_unit, ""),
            "composition": "zCDP: two Gaussian mechanisms (stratum sums, second moments), "
                           f"rho split {self.mean_share:g} / {1 - float(self.mean_share):g}",
            "clip_radius": f"{self.clip:g} * sqrt(d) in box units",
            "bounds": "declared (public)" if self.bounds is not None else
                      "NOT MET: derived from the released data (PrivacyLeakWarning); the "
                      "guarantee does not hold strictly",
            "strict": self.bounds is not None,
        }
        if self.privacy_unit == "identity":
            out["max_records_per_identity"] = int(self.max_records_per_identity)
        if fitted:
            out["rho"] = self.rho_
            out["accountant"] = self.accountant_
        return out

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters plus the privacy statement."""
        return {**super().public_params(), "privacy": self.privacy_statement()}


def _model(sums: np.ndarray, moment: np.ndarray, counts: np.ndarray, rank: int,
           per_stratum: bool = False, pool: float = 0.0) -> dict[str, np.ndarray]:
    """Post-processing: stratum means; the pooled within-stratum covariance as a rank-``rank``
    part in the private basis (top eigenvectors of the noisy covariance) plus a diagonal, or
    (a 1-D ``moment``) as a diagonal only."""
    n = counts.sum()
    present = counts > 0
    mean_all = sums.sum(axis=0) / n
    means = np.where(present[:, None], sums / np.maximum(counts, 1.0)[:, None], mean_all)
    dev = means - mean_all
    w = counts / n
    if moment.ndim == 1:
        within_diag = moment / n - mean_all**2 - np.einsum("s,sj,sj->j", w, dev, dev)
        floor = 1e-3 * max(float(np.mean(np.clip(within_diag, 0, None))), 1e-12)
        d = moment.size
        return {"means": means, "V": np.zeros((d, 0)), "chol": np.zeros((0, 0)),
                "resid_sd": np.sqrt(np.clip(within_diag, floor, None))}
    if moment.ndim == 3:
        return _class_model(means, moment, counts, rank, pool)
    if per_stratum:  # one diagonal per stratum (S, d)
        var = moment / np.maximum(counts, 1.0)[:, None] - means**2
        pooled = (moment.sum(axis=0) - np.einsum("s,sj,sj->j", counts, means, means)) / n
        var = np.where(present[:, None], var, pooled)
        if pool > 0:
            var = (1.0 - pool) * var + pool * pooled[None, :]
        floor = 1e-3 * max(float(np.mean(np.clip(pooled, 0, None))), 1e-12)
        d = means.shape[1]
        sds = np.sqrt(np.clip(var, floor, None))
        return {"means": means, "Vs": np.zeros((counts.size, d, 0)),
                "sds": np.zeros((counts.size, 0)), "resids": sds}
    cov = moment / n - np.outer(mean_all, mean_all)
    within = cov - (dev * w[:, None]).T @ dev
    within = (within + within.T) / 2.0
    vals, vecs = np.linalg.eigh(within)
    k = min(rank, cov.shape[0])
    top = np.argsort(vals)[::-1][:k]
    V, lam = vecs[:, top], np.clip(vals[top], 0.0, None)
    floor = 1e-3 * max(float(np.trace(within)) / within.shape[0], 1e-12)
    resid = np.diag(within) - np.einsum("ij,j,ij->i", V, lam, V)
    return {"means": means, "V": V, "chol": np.diag(np.sqrt(np.maximum(lam, floor))),
            "resid_sd": np.sqrt(np.clip(resid, floor, None))}


def _low_rank(cov: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-``rank`` eigenvectors, their standard deviations, and the residual diagonal sd."""
    cov = (cov + cov.T) / 2.0
    vals, vecs = np.linalg.eigh(cov)
    top = np.argsort(vals)[::-1][:min(rank, cov.shape[0])]
    V, lam = vecs[:, top], np.clip(vals[top], 0.0, None)
    floor = 1e-3 * max(float(np.trace(cov)) / cov.shape[0], 1e-12)
    resid = np.diag(cov) - np.einsum("ij,j,ij->i", V, lam, V)
    return V, np.sqrt(np.maximum(lam, floor)), np.sqrt(np.clip(resid, floor, None))


def _class_model(means: np.ndarray, moment: np.ndarray, counts: np.ndarray, rank: int,
                 pool: float = 0.0) -> dict[str, np.ndarray]:
    """One low-rank-plus-diagonal covariance per stratum (the pooled one for an empty
    stratum), each shrunk by ``pool`` towards the pooled within-stratum covariance (the sum
    of the noisy per-stratum moments: post-processing, no privacy cost)."""
    n = counts.sum()
    pooled = (moment.sum(axis=0) - np.einsum("s,si,sj->ij", counts, means, means)) / n
    Vs, sds, resids = [], [], []
    for k in range(counts.size):  # a loop over strata
        cov = (moment[k] / counts[k] - np.outer(means[k], means[k]) if counts[k] > 0
               else pooled)
        if pool > 0:
            cov = (1.0 - pool) * cov + pool * pooled
        V, sd, resid = _low_rank(cov, rank)
        Vs.append(V)
        sds.append(sd)
        resids.append(resid)
    return {"means": means, "Vs": np.stack(Vs), "sds": np.stack(sds),
            "resids": np.stack(resids)}


def _sample(model: dict[str, np.ndarray], strat: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            rng: np.random.Generator, basis: np.ndarray | None = None,
            center: np.ndarray | None = None) -> np.ndarray:
    """One fresh sample per record of its stratum's model, in feature units (float32)."""
    n, d = strat.size, model["means"].shape[1]
    mid = ((lo + hi) / 2.0 if center is None else center).astype(np.float32)
    half = ((hi - lo) / 2.0).astype(np.float32)
    P = None if basis is None else basis.astype(np.float32)
    out = np.empty((n, lo.size), dtype=np.float32)
    if "Vs" in model:
        return _sample_by_class(model, strat, mid, half, rng, P, out)
    V = model["V"].astype(np.float32)
    chol = model["chol"].astype(np.float32)
    means = model["means"].astype(np.float32)
    resid = model["resid_sd"].astype(np.float32)
    for start in range(0, n, _BLOCK):
        s = strat[start:start + _BLOCK]
        u = rng.standard_normal((s.size, d), dtype=np.float32) * resid
        u += means[s]
        if V.shape[1]:
            u += (rng.standard_normal((s.size, V.shape[1]), dtype=np.float32) @ chol) @ V.T
        if P is not None:
            u = u @ P
        out[start:start + _BLOCK] = u * half + mid
    return out


def _sample_by_class(model: dict[str, np.ndarray], strat: np.ndarray, mid: np.ndarray,
                     half: np.ndarray, rng: np.random.Generator, P: np.ndarray | None,
                     out: np.ndarray) -> np.ndarray:
    for k in np.unique(strat):  # a loop over strata, never over records
        rows = np.flatnonzero(strat == k)
        V = model["Vs"][k].astype(np.float32)
        z = rng.standard_normal((rows.size, V.shape[1]), dtype=np.float32)
        z *= model["sds"][k].astype(np.float32)
        u = z @ V.T
        u += rng.standard_normal((rows.size, V.shape[0]), dtype=np.float32) * \
            model["resids"][k].astype(np.float32)
        u += model["means"][k].astype(np.float32)
        out[rows] = (u if P is None else u @ P) * half + mid
    return out
