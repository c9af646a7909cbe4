"""Differentially private synthetic data modelled in a small basis (``dp-basis``).

The noise a Gaussian mechanism adds to a covariance grows with the dimension squared; what a
consumer's classifier needs lives in few directions. So the release is modelled in a basis
``P`` of k ≪ d orthonormal directions, and the d − k others cheaply:

1. **scale**: each feature clipped to the public box ``bounds`` and centred on the public
   ``center``, divided by the box's half-width (box units);
2. **class means** (``means="full"``, the default): the per-class sums of the records,
   clipped to an L2 radius, plus Gaussian noise (``mean_share`` of ρ), in all d dimensions;
   ``means="basis"``: the sums of the basis coordinates only;
3. **basis** (``basis=``): ``"dp-lda"`` (default) — the directions separating the noisy
   class means (at most classes − 1; post-processing of step 2, free with ``means="full"``),
   completed up to k by the public records' principal directions; ``"dp-pca"`` — the top k
   eigenvectors of the private second moment ``Σ u uᵀ`` plus symmetric Gaussian noise
   (Analyze-Gauss, Dwork, Talwar, Thakurta & Zhang 2014) at ``basis_share`` of ρ;
   ``"public"`` / ``"public-lda"`` — from the public records alone (``public_data``, people
   not in the release; free); ``"random"`` — a data-independent projection (free);
4. **in the basis**: the per-class or pooled second moments Σ b bᵀ of the clipped basis
   coordinates ``b = P u`` (Analyze-Gauss, the rest of ρ); **outside it**: the residual
   ``r = u − Pᵀ b`` (clipped) as one energy Σ‖r‖² (``residual="isotropic"``, default) or
   per-feature squares (``resid_share``);
5. **post-processing**: per-class means, covariances in the basis, the residual variance,
   then one fresh sample per record of its class (:mod:`.basis_model`).

Neighbouring datasets, the privacy unit and accounting
------------------------------------------------------
Labels, the record count and the class sizes are released and public. ``privacy_unit=
"record"``: the features of one record change; ``"identity"``: the features of all records
of one person change, each person contributing at most ``max_records_per_identity`` = m
records (extra ones dropped at random before any statistic), every sensitivity × m (see
:func:`~bioanon.anonymize.basis_model.sensitivities`). Each mechanism i gets ρ_i = share_i · ρ
and σ_i = Δ_i / sqrt(2ρ_i); Σ ρ_i = ρ, the largest ρ whose ρ-zCDP implies (ε, δ)-DP at
δ = 1/n² by default (n the records, or the identities). When OpenDP is installed it
recomputes the ε of the composition (published as ``epsilon_``).

What is chosen without the private data
---------------------------------------
k (``rank``) and the split of ρ (``mean_share``, ``resid_share``, ``basis_share``) are either
declared or, left as None (the default), set by a **stated rule** of public quantities only —
d (the number of features), S (the number of strata: the declared classes of the released
label columns, public) and the setting — never of a private statistic (:func:`rank_rule`,
:func:`share_rule`):

- **k = min(d, 32, max(16, (S − 1) + ⌈√d / 2⌉))**: S − 1 directions carry the class means
  (all a linear classifier of Gaussian classes with a shared covariance needs), and ⌈√d / 2⌉
  more the within-class shape; the covariance's noise grows as k², so k grows as √d, not d.
  At least 16 (below that the model, not the noise, loses: SP-SW-HAR at ε = 4 keeps 0.85 ×
  clear without noise at k = 8 and 0.89 at k = 16; benchmarks/dp_epsilon_sweep.py --diagnose), at
  most 32.
- **ρ_i ∝ √N_i** over the mechanisms the setting runs, N_i the count of noisy numbers
  mechanism i releases (sums: S·d with ``means="full"``, S·k with ``"basis"``; moments:
  k(k+1)/2 pooled, S·k(k+1)/2 per class; residual: 1 isotropic, d per feature, S·d per
  feature and class, S·d more for residual means; basis: k·d for ``dp-pca``, S·d (or
  S·``prebasis``) for ``dp-lda`` with ``means="basis"``). At equal sensitivities this split
  minimizes the total noise variance Σ N_i Δ² / (2ρ_i). Shares that are declared are kept;
  the rule splits what they leave among the others in the same proportions.

Two private tables of the same shape and the same declared classes get the same k and the
same split. With ``public_data`` the box (1% / 99% quantiles widened by 10%),
the centre (their mean), the public part of the basis and each clip radius (``clip_quantile``
of the public records' norms — of the whole record, of its basis coordinates, of its
residual, measured once the basis is fixed) come from the public records. Without public
data and without ``bounds`` the box comes from the released data: a
:class:`~bioanon.privacy.PrivacyLeakWarning` says the guarantee does not hold strictly.
Nothing derived from the data (basis, bounds, noise) is kept on the estimator or written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

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
from .base import Anonymizer, DPCapability, Release
from .basis_model import (
    COVARIANCES,
    RESIDUALS,
    add_noise,
    basis_stats,
    collapse,
    fit_model,
    orthonormal,
    public_lda,
    public_pca,
    random_basis,
    sample_model,
    second_moment,
    sensitivities,
    split_basis,
    symmetric_noise,
    top_eigenvectors,
)
from .dp_box import (
    NEIGHBOURING,
    UNITS,
    accounting_units,
    box_bounds,
    check_box_and_unit,
    per_feature,
    public_records,
    records_per_unit,
    release_inputs,
)
from .params import Param, epsilon_param
from .registration import register
from .release_model import ReleaseModel
from .strata import check_strata, strata

MEANS = ("full", "basis")
BASES = ("public", "public-lda", "dp-pca", "dp-lda", "random")
#: the clip radius (fraction of sqrt(d)) used without public data and without a declared one
DEFAULT_CLIP = 0.3
RANK_RULE = ("min(d, 32, max(16, (S - 1) + ceil(sqrt(d) / 2))), S the declared strata (no "
             "private data)")
SHARE_RULE = ("declared shares kept; the rest of rho split in proportion to the square root "
              "of each mechanism's count of noisy numbers (no private data)")
MECHANISM = ("box-scale to the public box and centre; Gaussian noise on the per-class sums "
             "of the clipped records; a k-dimensional basis (between the noisy class means "
             "and public principal directions, a DP PCA, public or random); Gaussian noise on "
             "the second moments of the clipped basis coordinates and on the residual's "
             "energy; zCDP composition converted to (epsilon, delta); fresh samples per class")


def between_directions(sums: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """The (at most classes − 1, at most k) directions separating the class means
    ``sums / counts`` (each class weighted by its size): post-processing of class sums."""
    present = counts > 0
    n = float(counts.sum())
    means = sums[present] / counts[present, None]
    dev = (means - sums.sum(axis=0) / n) * np.sqrt(counts[present])[:, None]
    _, sv, vt = np.linalg.svd(dev, full_matrices=False)
    keep = min(int(k), max(int(present.sum()) - 1, 1), vt.shape[0])
    return vt[:keep].copy()


def complete_basis(B: np.ndarray, U_public: np.ndarray | None, k: int) -> np.ndarray:
    """``B``'s rows, then the top principal directions of the public records outside them,
    up to k rows (orthonormal). Without public records: ``B`` alone."""
    if U_public is None or B.shape[0] >= k:
        return orthonormal(B[:k])
    W = np.asarray(U_public, dtype=np.float64)
    W = W - W.mean(axis=0)
    W = W - (W @ B.T) @ B
    _, _, wt = np.linalg.svd(W, full_matrices=False)
    return orthonormal(np.vstack([B, wt[:k - B.shape[0]]]))


#: the smallest and the largest k the rule picks
MIN_RULE_RANK, MAX_RULE_RANK = 16, 32


def rank_rule(d: int, n_strata: int) -> int:
    """k of the stated rule: ``min(d, 32, max(16, (S − 1) + ⌈√d / 2⌉))`` — public quantities
    only (d features, S declared strata), never a statistic of the private records.

    >>> rank_rule(400, 10), rank_rule(49, 5), rank_rule(400, 40), rank_rule(3, 2)
    (19, 16, 32, 3)
    """
    d, S = int(d), max(int(n_strata), 1)
    wanted = max(MIN_RULE_RANK, (S - 1) + math.ceil(math.sqrt(d) / 2.0))
    return max(1, min(d, MAX_RULE_RANK, wanted))


def noisy_counts(d: int, n_strata: int, k: int, *, means: str = "full",
                 covariance: str = "pooled", residual: str = "isotropic",
                 residual_mean: bool = False, basis: str = "dp-lda",
                 prebasis: int | None = None) -> dict[str, int]:
    """N_i, the count of noisy numbers each mechanism of a setting releases (public: a
    function of d, S, k and the setting only).

    >>> noisy_counts(400, 10, 19)
    {'sums': 4000, 'rsq': 1, 'moments': 190}
    >>> noisy_counts(400, 10, 16, means="basis", basis="dp-pca", covariance="class")
    {'sums': 160, 'rsq': 1, 'basis': 6400, 'moments': 1360}
    """
    S = max(int(n_strata), 1)
    out = {"sums": S * d if means == "full" else S * k,
           "rsq": {"isotropic": 1, "diag": d}.get(residual, S * d)}
    if residual_mean and means == "basis":
        out["rsums"] = S * d
    if basis == "dp-pca":
        out["basis"] = k * d
    elif basis == "dp-lda" and means == "basis":
        out["basis"] = S * (d if prebasis is None else min(int(prebasis), d))
    out["moments"] = k * (k + 1) // 2 * (1 if covariance == "pooled" else S)
    return out


def share_rule(counts: dict[str, int], declared: dict[str, float | None] | None = None
               ) -> dict[str, float]:
    """The split of ρ: declared shares kept, the rest of ρ split among the other mechanisms
    in proportion to √N_i (the split minimizing Σ N_i Δ² / (2ρ_i) at equal sensitivities).

    >>> {k: round(v, 3) for k, v in share_rule({"sums": 4000, "rsq": 1, "moments": 190}).items()}
    {'sums': 0.811, 'rsq': 0.013, 'moments': 0.177}
    >>> round(share_rule({"sums": 100, "rsq": 1, "moments": 100}, {"sums": 0.5})["moments"], 4)
    0.4545
    """
    fixed = {k: float(v) for k, v in (declared or {}).items() if v is not None and k in counts}
    free = [k for k in counts if k not in fixed]
    left = 1.0 - sum(fixed.values())
    if free and left <= 0:
        raise BioanonError(f"the declared budget shares {fixed} leave nothing for "
                           f"{', '.join(free)}; make them sum to less than 1")
    weights = {k: math.sqrt(counts[k]) for k in free}
    total = sum(weights.values())
    return {k: fixed[k] if k in fixed else left * weights[k] / total for k in counts}


def split_rho(rho: float, shares: dict[str, float]) -> dict[str, float]:
    """ρ per mechanism: ``shares`` (positive, summing to 1) times ``rho``.

    >>> split_rho(1.0, {"sums": 0.25, "moments": 0.75})
    {'sums': 0.25, 'moments': 0.75}
    """
    total = sum(shares.values())
    if not math.isclose(total, 1.0, rel_tol=1e-9) or min(shares.values()) <= 0:
        raise BioanonError(f"budget shares {shares} must be positive and sum to 1")
    return {k: v * rho for k, v in shares.items()}


@register("dp-basis")
class DPBasisAnonymizer(Anonymizer):
    """Differentially private class-conditional synthetic data in a small basis.

    Parameters
    ----------
    interest : str
        Label column whose classes are modelled separately.
    additional : sequence of str, optional
        Model each interest × additional stratum separately.
    epsilon : float, default 1
        The privacy budget ε (keyword-only).
    delta : float, optional
        δ; default 1/n² (n the records, or the identities), computed at fit and published.
    public_data : array (m, d), optional
        Records of people **not** in the release (auxiliary data). Gives the box, the centre,
        the ``"public"`` basis and the clip radii at no privacy cost.
    bounds : (lo, hi), optional
        Public clipping box; default from ``public_data``, else from the released data (not
        strict: :class:`~bioanon.privacy.PrivacyLeakWarning`).
    center : array (d,), optional
        Public centre; default the public records' mean, else the box's midpoint.
    public_labels : array (m,), optional
        The public records' interest labels (``basis="public-lda"``).
    basis : {"dp-lda", "dp-pca", "public", "public-lda", "random"}, default "dp-lda"
        Where the k directions come from (see the module); ``"public-lda"`` first takes the
        directions separating the public records' class means (:func:`public_lda`).
    rank : int or None, default None
        k, the dimension of the basis; None: the stated rule :func:`rank_rule`,
        ``min(d, 32, max(16, (S − 1) + ⌈√d / 2⌉))`` with S the declared strata (public
        quantities only; published as ``rank_``).
    prebasis : int or None, default None
        ``basis="dp-lda"`` with ``means="basis"`` and ``public_data``: the noisy class sums
        that give the directions between classes are taken within the public records' top
        ``prebasis`` principal directions; None: in all d dimensions.
    covariance : {"class", "pooled"}, default "pooled"
        One covariance per class in the basis, or one pooled within-class covariance.
    pool : float, default 0
        ``class``: weight of the pooled covariance mixed into each class's (post-processing).
    residual : {"isotropic", "diag", "class-diag"}, default "isotropic"
        The d − k residual dimensions: one variance, one per feature, or one per feature
        and class.
    residual_mean : bool, default False
        ``means="basis"``: release per-class residual means too (half the residual share).
    means : {"full", "basis"}, default "full"
        Class means released in all d dimensions (one mechanism at ``mean_share``), or in
        the basis only.
    clip, resid_clip : float, optional
        L2 radius of a record's basis coordinates and of its residual, as a fraction of
        sqrt(d) in box units. None: the ``clip_quantile`` of the public records' norms, or
        0.3 without public data.
    clip_quantile : float, default 0.9
        Quantile of the public norms that sets a radius left as None.
    basis_quantile : float, default 0.5
        ``dp-pca``/``dp-lda`` with public data: the quantile of the public records' norms
        that sets the clip radius of the statistics the basis is computed from (a direction
        survives clipping better than a magnitude, so a tighter radius, less noise).
    basis_share, mean_share, resid_share : float or None, default None
        Shares of ρ: a basis that spends (``dp-pca``, or ``dp-lda`` with ``means="basis"``),
        the class sums, the residual; the second moments in the basis get the rest. None:
        the stated rule :func:`share_rule` — what the declared shares leave is split in
        proportion to √ of each mechanism's count of noisy numbers (:func:`noisy_counts`:
        d, S and k only, never a private statistic).
    privacy_unit : {"record", "identity"}, default "record"
    sensitive : str, optional
        The identity column (``privacy_unit="identity"``).
    max_records_per_identity : int, default 10
        m: records used per identity under the identity unit (sensitivity × m).
    hardened : bool, default False
        OpenDP's floating-point-safe Gaussian sampler (slow, not reproducible by seed).
    random_state : int or None
        Secret key of the noise, the random basis and the samples; never published.

    Attributes
    ----------
    epsilon_, delta_, rho_ : float
        The guarantee of the release and its zCDP budget.
    rho_split_ : dict
        ρ of each mechanism (public).
    rank_ : int
        k used (declared, or the rule's; public).
    privacy_unit_ : str

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> est = DPBasisAnonymizer("expression", epsilon=2.0, bounds=(-10.0, 10.0), rank=4,
    ...                         random_state=0)
    >>> est.fit_transform(t.X, t.labels).shape
    (120, 32)
    >>> bool(est.epsilon_ <= 2.0), sorted(est.rho_split_)
    (True, ['moments', 'rsq', 'sums'])

    k and the split by the stated rule (d = 32 features, S = 4 expressions):

    >>> est = DPBasisAnonymizer("expression", epsilon=2.0, bounds=(-10.0, 10.0),
    ...                         basis="random", random_state=0).fit(t.X, t.labels)
    >>> est.rank_, {k: round(v / est.rho_, 3) for k, v in est.rho_split_.items()}
    (16, {'sums': 0.472, 'rsq': 0.042, 'moments': 0.486})
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="attribute modelled per class"),
        "additional": Param("items", none=True, role="additional",
                            help="additional attributes: one model per interest x additional"),
        "epsilon": epsilon_param(),
        "delta": Param("float", low=0, high=1, low_open=True, high_open=True, none=True,
                       help="delta; none: 1/n^2 computed at fit (published)"),
        "public_data": Param("object", none=True,
                             help="records of people not in the release (box, centre, basis, "
                                  "clips)"),
        "public_labels": Param("object", none=True,
                               help="the public records' interest labels (basis=public-lda)"),
        "bounds": Param("floats", none=True,
                        help="public clipping box lo,hi; none: from public_data, else from "
                             "the data (not strict DP)"),
        "center": Param("floats", none=True, help="public centre; none: public mean or the "
                                                  "box's midpoint"),
        "basis": Param("str", options=BASES,
                       help="public: PCA of public_data; dp-pca: Analyze-Gauss at "
                            "basis_share; random: data-independent projection"),
        "rank": Param("int", low=1, none=True,
                      help="k, the dimension of the basis; none: the rule min(d, 32, max(16, "
                           "(classes - 1) + ceil(sqrt(d)/2))) (no private data)"),
        "prebasis": Param("int", low=1, none=True,
                          help="dp-lda with public_data: class sums taken within the public "
                               "records' top prebasis directions (none: all d)"),
        "covariance": Param("str", options=COVARIANCES,
                            help="class: one covariance per class in the basis; pooled: one"),
        "pool": Param("float", low=0, high=1,
                      help="class covariances: weight of the pooled one mixed in"),
        "residual": Param("str", options=RESIDUALS,
                          help="the d-k other dimensions: one variance, per feature, or per "
                               "feature and class"),
        "residual_mean": Param("bool", help="release per-class residual means too"),
        "means": Param("str", options=MEANS,
                       help="full: class means released in all d dimensions (one mechanism; "
                            "dp-lda then takes its directions from them, free); basis: in "
                            "the k directions only"),
        "clip": Param("float", low=0, high=1, low_open=True, none=True,
                      help="L2 radius of the basis coordinates (fraction of sqrt(d)); none: "
                           "public quantile"),
        "resid_clip": Param("float", low=0, high=1, low_open=True, none=True,
                            help="L2 radius of the residual (fraction of sqrt(d)); none: "
                                 "public quantile"),
        "clip_quantile": Param("float", low=0, high=1, low_open=True,
                               help="quantile of the public norms for a clip left as none"),
        "basis_quantile": Param("float", low=0, high=1, low_open=True,
                                help="dp-pca/dp-lda: quantile of the public norms that sets "
                                     "the clip radius of the basis's own statistics"),
        "basis_share": Param("float", low=0, high=1, low_open=True, high_open=True,
                             none=True, help="share of rho for the DP PCA (basis=dp-pca); "
                                             "none: the split rule"),
        "mean_share": Param("float", low=0, high=1, low_open=True, high_open=True,
                            none=True, help="share of rho for the class sums; none: the "
                                            "split rule (rho_i ~ sqrt(noisy numbers of i))"),
        "resid_share": Param("float", low=0, high=1, low_open=True, high_open=True,
                             none=True, help="share of rho for the residual; none: the "
                                             "split rule"),
        "privacy_unit": Param("str", options=UNITS, help="what epsilon protects"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="identity column (privacy_unit=identity)"),
        "max_records_per_identity": Param("int", low=1,
                                          help="records used per identity (identity unit)"),
        "hardened": Param("bool", help="OpenDP's floating-point-safe sampler (slow)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    dp = DPCapability(
        UNITS, "Gaussian mechanisms composed in zCDP, converted to (epsilon, delta)",
        delta="1/n^2, n records or identities",
        basis="dp-lda (default: between the noisy class means, free, completed by the "
              "principal directions of the public data), dp-pca (Analyze-Gauss at "
              "basis_share of rho), public / public-lda (from the public data, free) or "
              "random (data-independent, free); k = rank, or the rule min(d, 32, "
              "max(16, (classes - 1) + ceil(sqrt(d)/2))) when rank is none (the default)",
        split="declared shares of rho, the rest in proportion to sqrt(noisy numbers per "
              "mechanism) (the default: no private statistic chooses it)")
    streamable = True  # its statistics are sums over records (basis_stream)
    protects = ("every record's features by (epsilon, delta)-differential privacy (or every "
                "person's, privacy_unit=identity, at most m records each) when the box comes "
                "from public data or is declared; the basis is public, random or itself DP")
    does_not_protect = ("the released label columns and class sizes (kept as they are); "
                        "records when the box comes from the data (PrivacyLeakWarning); "
                        "population-level facts (a class's mean is released, noisily); "
                        "utility outside the k directions (the residual is only a variance)")
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"basis": "dp-lda", "rank": 16, "clip": 0.2, "resid_clip": 0.3},
        {"basis": "dp-pca", "rank": 16, "means": "basis", "covariance": "class", "pool": 0.5,
         "mean_share": 0.4, "resid_share": 0.1, "clip": 0.2, "resid_clip": 0.3},
    )
    #: the settings ``bioanon release --epsilon E --public-data FILE`` searches; the box,
    #: centre, the public part of the basis and the clips come from the public records
    #: (``public_data="public"``, resolved by :mod:`bioanon.tuning.budget`); the first takes
    #: k and the split by the stated rule, the others declare k (their shares not declared
    #: follow the rule)
    public_search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"public_data": "public", "basis": "dp-lda"},
        {"public_data": "public", "basis": "dp-lda", "rank": 16, "covariance": "class",
         "pool": 0.5, "mean_share": 0.5, "clip_quantile": 0.7},
        {"public_data": "public", "basis": "public", "rank": 32},
    )
    #: the setting tried when public records are given without a budget (``--public-data``):
    #: the public records' top 32 principal directions, at the default epsilon
    public_basis_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"public_data": "public", "basis": "public", "rank": 32},
    )

    def __init__(self, interest: str = "interest", additional: Sequence[str] | None = None, *,
                 epsilon: float = 1.0, delta: float | None = None, public_data: Any = None,
                 public_labels: Any = None, bounds: Any = None, center: Any = None,
                 basis: str = "dp-lda", rank: int | None = None,
                 prebasis: int | None = None,
                 covariance: str = "pooled", pool: float = 0.0,
                 residual: str = "isotropic", residual_mean: bool = False,
                 means: str = "full", clip: float | None = None, resid_clip: float | None = None,
                 clip_quantile: float = 0.9, basis_quantile: float = 0.5,
                 basis_share: float | None = None, mean_share: float | None = None,
                 resid_share: float | None = None,
                 privacy_unit: str = "record", sensitive: str | None = None,
                 max_records_per_identity: int = 10, hardened: bool = False,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.epsilon = epsilon
        self.delta = delta
        self.public_data = public_data
        self.public_labels = public_labels
        self.bounds = bounds
        self.center = center
        self.basis = basis
        self.rank = rank
        self.prebasis = prebasis
        self.covariance = covariance
        self.pool = pool
        self.residual = residual
        self.residual_mean = residual_mean
        self.means = means
        self.clip = clip
        self.resid_clip = resid_clip
        self.clip_quantile = clip_quantile
        self.basis_quantile = basis_quantile
        self.basis_share = basis_share
        self.mean_share = mean_share
        self.resid_share = resid_share
        self.privacy_unit = privacy_unit
        self.sensitive = sensitive
        self.max_records_per_identity = max_records_per_identity
        self.hardened = hardened
        self.random_state = random_state

    # ------------------------------------------------------------------ checks

    def release_model(self) -> ReleaseModel:
        """A class Gaussian in k basis directions (noisy statistics) plus an isotropic or
        per-feature residual; k as declared, or the stated rule's once fitted, else the rule
        itself (:meth:`choose_rank`: d and the number of strata, public) for the attacker.

        >>> DPBasisAnonymizer("digit", rank=16).release_model().describe()
        'basis-gaussian (covariance pooled, per digit, rank 16, basis dp, noisy statistics)'
        """
        basis = {"public": "public", "public-lda": "public", "dp-pca": "dp", "dp-lda": "dp",
                 "random": "random"}[self.basis]
        rank = getattr(self, "rank_", None) or self.rank
        return ReleaseModel("basis-gaussian", self.covariance,
                            interest=self.interest, additional=tuple(self.additional or ()),
                            rank=None if rank is None else int(rank),
                            basis=basis, noisy=True,
                            rank_rule=self.choose_rank if rank is None else None)
    def _check_relations(self) -> None:
        check_box_and_unit(self)
        if self.basis.startswith("public") and self.public_data is None:
            raise BioanonError(f"basis='{self.basis}' needs public_data (records of people "
                               "not in the release); pass public_data= or use "
                               "basis='dp-pca' or 'random'")
        if self.basis == "public-lda" and self.public_labels is None:
            raise BioanonError("basis='public-lda' needs public_labels (the public records' "
                               "interest labels); pass them or use basis='public'")
        fixed = sum(float(v) for v in (self.mean_share, self.resid_share) if v is not None) + (
            float(self.basis_share) if self._basis_spends() and self.basis_share is not None
            else 0.0)
        if fixed >= 1.0:
            raise BioanonError(f"the budget shares (basis {self.basis_share}, means "
                               f"{self.mean_share}, residual {self.resid_share}) leave nothing "
                               "for the second moments; make them sum to less than 1")

    def _ignored(self) -> dict[str, str]:
        out = {}
        if not self._basis_spends():
            out["basis_share"] = ("spent only by basis='dp-pca', or 'dp-lda' with "
                                  "means='basis'")
        if self.means == "full":
            out["residual_mean"] = "implied by means='full'"
        if self.covariance != "class":
            out["pool"] = "applies to covariance='class'"
        if self.privacy_unit != "identity":
            out["max_records_per_identity"] = "applies to privacy_unit='identity'"
        return out

    def _basis_spends(self) -> bool:
        """The basis costs budget: a DP PCA, or dp-lda with means in the basis only (with
        ``means="full"`` dp-lda post-processes the released class sums: free)."""
        return self.basis == "dp-pca" or (self.basis == "dp-lda" and self.means == "basis")

    def _m(self) -> int:
        return records_per_unit(self)

    def choose_rank(self, d: int, n_strata: int) -> int:
        """k of this setting: ``rank`` when declared, else :func:`rank_rule` (d and the
        number of declared strata only); ``dp-lda`` without public records has only the
        S − 1 directions between the class means."""
        k = min(int(self.rank), d) if self.rank is not None else rank_rule(d, n_strata)
        if self.basis == "dp-lda" and self.public_data is None:
            k = min(k, max(int(n_strata) - 1, 1))
        return k

    def shares(self, d: int, n_strata: int) -> dict[str, float]:
        """The split of ρ over the mechanisms this setting runs (sums to 1): the declared
        shares, the rest by :func:`share_rule` (√ of each mechanism's count of noisy numbers,
        :func:`noisy_counts`) — public quantities only (d, the declared strata, k)."""
        k = self.choose_rank(d, n_strata)
        counts = noisy_counts(d, n_strata, k, means=self.means, covariance=self.covariance,
                              residual=self.residual, residual_mean=bool(self.residual_mean),
                              basis=self.basis if self._basis_spends() else "free",
                              prebasis=self.prebasis)
        resid = None if self.resid_share is None else float(self.resid_share)
        declared: dict[str, float | None] = {"sums": self.mean_share, "rsq": resid,
                                             "basis": self.basis_share}
        if "rsums" in counts:  # residual means and squares share the residual's part
            declared.update(rsq=None if resid is None else resid / 2.0,
                            rsums=None if resid is None else resid / 2.0)
        return share_rule(counts, declared)

    # ------------------------------------------------------------------ fit
    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels and public data; set the public accounting."""
        n = X.shape[0]
        check_strata(labels, self.interest, list(self.additional or []), n)
        if self.public_data is not None:
            self._public(X.shape[1])
        units = accounting_units(self, labels, n)
        _, strat = strata(labels, self.interest, list(self.additional or []), n)
        self.set_budget(units, X.shape[1], int(strat.max()) + 1)

    def set_budget(self, units: int, d: int, n_strata: int) -> None:
        """The public accounting for ``units`` records (or identities) of ``d`` features in
        ``n_strata`` declared strata: δ (declared, else 1/units²), ρ, k (``rank_``) and the
        split of ρ over the mechanisms (declared or the stated rule), ε of the composition,
        the unit."""
        eps = check_epsilon(self.epsilon)
        self.delta_ = (check_delta(self.delta) if self.delta is not None
                       else 1.0 / max(units, 2) ** 2)
        self.rho_ = zcdp_rho(eps, self.delta_)
        self.rank_ = self.choose_rank(d, n_strata)
        self.rho_split_ = split_rho(self.rho_, self.shares(d, n_strata))
        self.epsilon_, self.accountant_ = self._account()
        self.privacy_unit_ = str(self.privacy_unit)

    def _account(self) -> tuple[float, str]:
        """ε of the composition: OpenDP's when installed, else the zCDP conversion here."""
        try:
            from ..privacy import opendp_epsilon

            eps = opendp_epsilon([1.0 / math.sqrt(2.0 * r) for r in self.rho_split_.values()],
                                 self.delta_)
            return eps, (f"OpenDP (make_gaussian x{len(self.rho_split_)}, make_composition, "
                         "make_zCDP_to_approxDP)")
        except Exception:  # not installed, or its conversion overflows at a huge epsilon
            return (zcdp_epsilon(self.rho_, self.delta_),
                    "zCDP composition, Canonne-Kamath-Steinke conversion")

    def _public(self, d: int) -> np.ndarray:
        return public_records(self.public_data, d)

    # ------------------------------------------------------------------ the mechanism
    def _scaling(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, centre): declared, else from the public records, else from the data
        (a PrivacyLeakWarning; such values are never kept)."""
        d = X.shape[1]
        pub = None if self.public_data is None else self._public(d)
        lo, hi = box_bounds(self.bounds, pub, X, "dp-basis")
        if self.center is not None:
            mid = per_feature(self.center, d, "center")
        elif pub is not None:
            mid = pub.mean(axis=0)
        else:
            mid = (lo + hi) / 2.0
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64), mid

    def _radius(self, value: float | None, pub_norms: np.ndarray | None, d: int) -> float:
        if value is not None:
            return float(value) * math.sqrt(d)
        if pub_norms is None:
            return DEFAULT_CLIP * math.sqrt(d)
        return max(float(np.quantile(pub_norms, float(self.clip_quantile))), 1e-9)

    def _full_radius(self, pub_u: np.ndarray | None, d: int) -> float:
        """Radius of a whole record (means="full"): declared clips combined, else the
        ``clip_quantile`` of the public records' norms, else the default."""
        if self.clip is not None and self.resid_clip is not None:
            return math.hypot(float(self.clip), float(self.resid_clip)) * math.sqrt(d)
        if pub_u is None:
            return math.sqrt(2.0) * DEFAULT_CLIP * math.sqrt(d)
        norms = np.sqrt(np.einsum("ij,ij->i", pub_u, pub_u))
        return max(float(np.quantile(norms, float(self.clip_quantile))), 1e-9)

    def _pca_radius(self, pub_u: np.ndarray | None, d: int) -> float:
        if pub_u is None and self.clip is not None and self.resid_clip is not None:
            return math.hypot(float(self.clip), float(self.resid_clip)) * math.sqrt(d)
        if pub_u is None:
            return math.sqrt(2.0) * DEFAULT_CLIP * math.sqrt(d)
        norms = np.sqrt(np.einsum("ij,ij->i", pub_u, pub_u))
        return max(float(np.quantile(norms, float(self.basis_quantile))), 1e-9)

    def sigmas(self, c_basis: float, c_resid: float, c_pca: float = 0.0
               ) -> dict[str, float]:
        """σ of every mechanism for these radii (box units): Δ_i / sqrt(2ρ_i), Δ from
        :func:`~bioanon.anonymize.basis_model.sensitivities` (× m under the identity unit)."""
        sens = sensitivities(c_basis, c_resid, self._m())
        rho = self.rho_split_
        out = {"sums": gaussian_sigma(sens["sums"], rho["sums"]),
               "full_sums": gaussian_sigma(sens["rsums"], rho["sums"]),
               "moments": gaussian_sigma(sens["moments"], rho["moments"]),
               "rsq": gaussian_sigma(sens["rsq"], rho["rsq"]),
               "energy": gaussian_sigma(sens["energy"], rho["rsq"]),
               "rsums": gaussian_sigma(sens["rsums"], rho["rsums"]) if "rsums" in rho
               else 0.0}
        if "basis" in rho:
            out["basis"] = gaussian_sigma(math.sqrt(2.0) * c_pca**2 * self._m(), rho["basis"])
            out["basis_sums"] = gaussian_sigma(2.0 * c_pca * self._m(), rho["basis"])
        return out

    def _noise(self, values: Any, sigma: Any, rng: np.random.Generator) -> np.ndarray:
        return gaussian(values, sigma, rng, bool(self.hardened))

    def _make_basis(self, parts: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
                    n_strata: int, pub_u: np.ndarray | None, scale: Any,
                    noise_rng: np.random.Generator, basis_rng: np.random.Generator, k: int,
                    d: int, full_means: np.ndarray | None = None) -> np.ndarray:
        """The (k, d) orthonormal basis of this setting (DP ones spend ``basis_share``)."""
        if self.basis == "random":
            return random_basis(k, d, basis_rng)
        if self.basis == "public":
            assert pub_u is not None
            return public_pca(pub_u, k)
        if self.basis == "public-lda":
            assert pub_u is not None
            plab = np.asarray(self.public_labels)
            if plab.shape != (pub_u.shape[0],):
                raise BioanonError(f"public_labels has shape {plab.shape}; give one label per "
                                   f"public record ({pub_u.shape[0]})")
            return public_lda(pub_u, plab, k)
        if self.basis == "dp-lda" and full_means is not None:  # free: released sums
            counts = block_sum(parts, lambda X, s: np.bincount(
                s, minlength=n_strata).astype(np.float64))
            return complete_basis(between_directions(full_means, counts, k), pub_u, k)
        c_pca = self._pca_radius(pub_u, d)
        sig = self.sigmas(1.0, 1.0, c_pca)
        if self.basis == "dp-lda":  # noisy class sums -> directions between classes
            Q = np.eye(d)
            if pub_u is not None and self.prebasis is not None and int(self.prebasis) < d:
                # within the public records' top principal directions: fewer noisy numbers
                Q = public_pca(pub_u, int(self.prebasis))
                c_pca = self._pca_radius(pub_u @ Q.T, d)
                sig = self.sigmas(1.0, 1.0, c_pca)
            full = _summed(parts, n_strata, np.zeros((0, Q.shape[0])), None, c_pca,
                           lambda b: scale(b) @ Q.T, "none")
            noisy_sums = self._noise(full.rsums, sig["basis_sums"], noise_rng)
            B = between_directions(noisy_sums, full.counts, k) @ Q
            return complete_basis(B, pub_u, k)
        moment = block_sum(parts, lambda X, s: second_moment(X, c_pca, scale))
        A = symmetric_noise(moment, sig["basis"], noise_rng, self._noise)
        return top_eigenvectors(A, k)

    def model_from(self, parts: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]],
                   n_strata: int, d: int, scale: Callable[[np.ndarray], np.ndarray],
                   noise_rng: np.random.Generator, basis_rng: np.random.Generator
                   ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The noisy model and its basis from record blocks: ``parts()`` gives a fresh
        iterable of (raw records, stratum codes) each time (one list in memory, or Parquet
        partitions one at a time: every statistic is a sum over blocks). Needs the public
        accounting (``fit``, or :func:`~bioanon.anonymize.basis_stream.stream_release`)."""
        pub_u = None if self.public_data is None else scale(self._public(d))
        k = int(self.rank_)
        full_means = None
        if self.means == "full":  # noisy class sums in all d dimensions
            c_full = self._full_radius(pub_u, d)
            full = _summed(parts, n_strata, np.zeros((0, d)), None, c_full, scale, "none")
            full_means = self._noise(full.rsums, self.sigmas(1.0, c_full)["full_sums"],
                                     noise_rng)
        P = self._make_basis(parts, n_strata, pub_u, scale, noise_rng, basis_rng, k, d,
                             full_means)
        k = P.shape[0]
        bn = rn = None
        if pub_u is not None:
            b_pub, r_pub = split_basis(pub_u, P)
            bn = np.sqrt(np.einsum("ij,ij->i", b_pub, b_pub))
            rn = np.sqrt(np.einsum("ij,ij->i", r_pub, r_pub))
        c_b, c_r = self._radius(self.clip, bn, d), self._radius(self.resid_clip, rn, d)
        squares = "energy" if self.residual == "isotropic" else "feature"
        stats = collapse(_summed(parts, n_strata, P, c_b, c_r, scale, squares),
                         self.covariance, self.residual)
        resid_mean = bool(self.residual_mean) and full_means is None
        noisy = add_noise(stats, self.sigmas(c_b, c_r), noise_rng, self._noise, resid_mean)
        if full_means is not None:  # the means come from the full-d sums (post-processing)
            inside = full_means @ P.T
            noisy = replace(noisy, sums=inside, rsums=full_means - inside @ P)
            resid_mean = True
        return fit_model(noisy, self.covariance, float(self.pool), self.residual, resid_mean,
                         d - k), P

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """The noisy statistics of ``X`` in the basis, then one fresh sample per record."""
        d = X.shape[1]
        strat, (noise_seq, draw_seq, basis_seq), used, (lo, hi, mid), scale = \
            release_inputs(self, X, labels, seed)
        Xu, su = (X, strat) if used.all() else (X[used], strat[used])
        model, P = self.model_from(lambda: [(Xu, su)], int(strat.max()) + 1, d, scale,
                                   np.random.default_rng(noise_seq),
                                   np.random.default_rng(basis_seq))
        k = P.shape[0]
        out = sample_model(model, strat, P, np.random.default_rng(draw_seq),
                           scale=(hi - lo) / 2.0, shift=mid)
        return Release(out, {"epsilon": self.epsilon_, "delta": self.delta_,
                             "privacy_unit": self.privacy_unit_, "basis": self.basis,
                             "rank": k})

    # ------------------------------------------------------------------ statement
    def privacy_statement(self) -> dict[str, Any]:
        """The guarantee and its accounting (no noise, no data-derived bound or basis)."""
        fitted = hasattr(self, "epsilon_")
        strict = self.bounds is not None or self.public_data is not None
        out: dict[str, Any] = {
            "mechanism": MECHANISM,
            "epsilon": self.epsilon_ if fitted else check_epsilon(self.epsilon),
            "epsilon_requested": check_epsilon(self.epsilon),
            "delta": self.delta_ if fitted else self.delta,
            "delta_rule": "1/n^2 (n: records or identities), computed at fit"
                          if self.delta is None else "given",
            "privacy_unit": self.privacy_unit,
            "neighbouring": NEIGHBOURING.get(self.privacy_unit, ""),
            "basis": {"dp-lda": "directions between the noisy class means (post-processing), "
                                "completed by public principal directions",
                      "public": "top principal directions of the public records (no "
                                "privacy cost)",
                      "public-lda": "directions separating the public records' class means, "
                                    "then their within-class principal directions (no "
                                    "privacy cost)",
                      "dp-pca": "Analyze-Gauss: top eigenvectors of the noisy second "
                                "moment (its share of rho)",
                      "random": "data-independent random orthonormal projection (no "
                                "privacy cost)"}[self.basis],
            "rank": (int(self.rank_) if fitted else
                     int(self.rank) if self.rank is not None else RANK_RULE),
            "rank_rule": "declared" if self.rank is not None else RANK_RULE,
            "split_rule": SHARE_RULE,
            "composition": "zCDP: Gaussian mechanisms " + (", ".join(
                f"{k} {v / self.rho_:.3g}" for k, v in self.rho_split_.items()) + " of rho"
                if fitted else "split by the rule at fit"),
            "bounds": "declared (public)" if self.bounds is not None else
                      "from the public records" if self.public_data is not None else
                      "NOT MET: derived from the released data (PrivacyLeakWarning); the "
                      "guarantee does not hold strictly",
            "strict": strict,
        }
        if self.privacy_unit == "identity":
            out["max_records_per_identity"] = int(self.max_records_per_identity)
        if fitted:
            out["rho"] = self.rho_
            out["rho_split"] = dict(self.rho_split_)
            out["accountant"] = self.accountant_
        return out

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters plus the privacy statement (the public records are named,
        not written)."""
        params = super().public_params()
        params["public_data"] = None if self.public_data is None else "given (not written)"
        return {**params, "privacy": self.privacy_statement()}


def _summed(parts: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]], n_strata: int,
            P: np.ndarray, c_basis: float | None, c_resid: float | None,
            scale: Callable[[np.ndarray], np.ndarray], squares: str = "feature") -> Any:
    """:func:`~bioanon.anonymize.basis_model.basis_stats` summed over record blocks."""
    return block_sum(parts, lambda X, codes: basis_stats(X, codes, n_strata, P, c_basis,
                                                         c_resid, scale, squares))


def block_sum(parts: Any, fn: Callable[[np.ndarray, np.ndarray], Any]) -> Any:
    """Σ ``fn(X, codes)`` over the blocks of ``parts``: each block's term, folded left in the
    blocks' order (the same arithmetic wherever the terms are computed). ``parts.map(fn)``,
    when ``parts`` has it, computes the terms where the blocks live (a streamed source:
    :mod:`~bioanon.anonymize.basis_stream`); else ``parts()`` gives the blocks."""
    mapped = getattr(parts, "map", None)
    terms = mapped(fn) if mapped is not None else (fn(X, s) for X, s in parts())
    total = None
    for term in terms:
        total = term if total is None else total + term
    if total is None:
        raise BioanonError("no records to release; give a non-empty table")
    return total


__all__ = ["BASES", "DPBasisAnonymizer", "noisy_counts", "public_pca", "rank_rule",
           "share_rule", "split_rho"]
