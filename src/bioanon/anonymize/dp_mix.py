"""A differentially private class-conditional mix: bounded donor use + the Gaussian mechanism.

Each record is standardized (per-feature mean and scale of the batch), clipped to L2 norm
``clip`` and released as the mean of ``g`` donors of its stratum (never itself) drawn by the
circulant design of :mod:`bioanon.anonymize.bounded_design`, plus Gaussian noise::

    y_i = (1/g) Σ_{j ∈ D_i} clip(z_j) + N(0, σ² I),      then back to the features' units.

Privacy accounting (record level). Every record donates to exactly ``g`` released records,
each with weight ``1/g``, so replacing one record's features moves the whole release (an
``n × d`` vector) by at most ``Δ = √g · 2·clip / g = 2·clip / √g`` in L2 norm. ``σ`` is the
smallest noise of the *analytic* Gaussian mechanism (Balle & Wang, 2018) that is
``(ε, δ)``-DP for that sensitivity. What the guarantee covers, stated honestly:

- **unit**: one record's feature vector, replace-one neighbours; the labels (which define the
  strata and are released anyway) and the donor design (drawn independently of the features)
  are public;
- **not covered**: the standardization (per-feature mean and scale of the batch, released
  implicitly by the de-standardization) is computed from the data and not privatised, unless
  a public ``center`` and ``scale`` are given (e.g. the mean and standard deviation of
  auxiliary records, people not in the release): then the guarantee holds strictly;
- **identity level**: a person with ``r`` records is protected by group privacy at
  ``Δ_id = r·Δ`` (no tighter bound is claimed);
  :func:`~bioanon.privacy.analytic_gaussian_epsilon` gives the ε of that sensitivity at the
  same σ and δ.

The release keeps each class's mean (up to clipping) and spreads it by ``S/g + σ² I``: a
classifier trained on it sees the class means under isotropic noise. For utility the ε needed is
large (see the issue 20 benchmark); a small ε buries the class means in noise.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ..errors import BioanonError
from ..privacy import analytic_gaussian_epsilon, analytic_gaussian_sigma
from ..table import FeatureTable
from .base import Anonymizer, DPCapability, Release, SettingError, label_values
from .bounded_design import circulant_sets
from .dp_box import per_feature
from .params import Param, epsilon_param
from .registration import register
from .row_blocks import apply_vp_mix, mixing_matrix
from .strata import check_strata, strata, sums_by


# ---------------------------------------------------------------------- the accounting
def mix_sensitivity(g: int, clip: float) -> float:
    """L2 sensitivity of the whole release to replacing one record: ``2·clip/√g`` (it donates
    to exactly ``g`` released records with weight ``1/g`` each).

    Examples
    --------
    >>> mix_sensitivity(64, 4.0)
    1.0
    """
    return 2.0 * clip / math.sqrt(g)


def clip_rows(Z: np.ndarray, clip: float) -> np.ndarray:
    """Scale each row of ``Z`` down to L2 norm at most ``clip`` (in place; returns ``Z``).

    Examples
    --------
    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4]]
    """
    # the ratio in float64: a clip past float32's range (clip=1e300) scales nothing, where
    # float32 arithmetic printed NumPy's overflow warning before any refusal
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z, dtype=np.float64))
    Z *= np.minimum(1.0, float(clip) / np.maximum(norms, 1e-30))[:, None].astype(Z.dtype)
    return Z


# ---------------------------------------------------------------------- the estimator
@register("dp-mix")
class DPMixAnonymizer(Anonymizer):
    """Mean of ``g`` clipped donors (each record used exactly ``g`` times) plus Gaussian noise
    calibrated to (ε, δ): a differentially private class-conditional mix (record level).

    Parameters
    ----------
    interest : str
        Label column whose classes the donors share.
    sensitive : str, optional
        Identity column: when given, the release's ``info`` also states the identity-level ε
        (group privacy over the most records one identity has).
    g : int, default 64
        Donors per released record; every record donates to exactly ``g`` released records.
    epsilon : float, default 10
        Privacy loss of the release (record level, replace-one).
    delta : float, default 1e-6
    clip : float or None, default None
        L2 norm bound of a standardized record; None: ``√d`` (the norm of a typical
        standardized record; data-independent).
    center, scale : array-like of shape (d,) or None
        Public standardization (location, scale per feature), e.g. the mean and standard
        deviation of auxiliary records; None: the batch's own (not privatised, so the
        guarantee does not hold strictly).
    random_state : int or None
        Secret key of the design and the noise; never published.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> est = DPMixAnonymizer("expression", g=8, epsilon=50.0, random_state=0)
    >>> est.fit_transform(t.X, t.labels).shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="attribute whose classes mix"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="identity column (for the identity-level epsilon only)"),
        "g": Param("int", low=2, help="donors per record; each record donates exactly g times"),
        "epsilon": epsilon_param("record-level privacy loss (replace-one)"),
        "delta": Param("float", low=0, high=1, low_open=True, high_open=True,
                       help="delta of the Gaussian mechanism"),
        "clip": Param("float", low=0, low_open=True, none=True,
                      help="L2 bound of a standardized record (none: sqrt(d))"),
        "center": Param("floats", none=True,
                        help="public per-feature location (none: the batch mean, not "
                             "privatised)"),
        "scale": Param("floats", none=True,
                       help="public per-feature scale (none: the batch's, not privatised)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    dp = DPCapability(("record",), "the analytic Gaussian mechanism (Balle & Wang 2018)")
    protects = ("every record, formally: (epsilon, delta)-DP at record level (replace one "
                "record's features; labels, donor design public); each record's influence "
                "bounded by exact donor use g and clipping")
    does_not_protect = ("the standardization (batch mean and scale, not privatised); a "
                        "person with r records only at r times the sensitivity; utility needs "
                        "a large epsilon")
    #: issue 20's runs: noise of about the class spread (σ ≈ 1–1.5 standardized) trains the
    #: best classifiers; less noise leaves the caricature of a mean of g (CAS falls again)
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"g": 64, "epsilon": 10.0}, {"g": 64, "epsilon": 30.0}, {"g": 64, "epsilon": 100.0},
    )
    #: the settings ``bioanon release --epsilon E --public-data FILE`` searches (at E): the
    #: standardization from the public records (people not in the release), so the
    #: guarantee holds strictly (:mod:`bioanon.certification.dp_budget` resolves "public")
    public_search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"g": 64, "center": "public", "scale": "public"},
    )

    def __init__(self, interest: str = "interest", sensitive: str | None = None, g: int = 64,
                 epsilon: float = 10.0, delta: float = 1e-6, clip: float | None = None,
                 center: Any = None, scale: Any = None,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.sensitive = sensitive
        self.g = g
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.center = center
        self.scale = scale
        self.random_state = random_state

    @property
    def strict(self) -> bool:
        """True when the standardization is public (``center`` and ``scale`` given)."""
        return self.center is not None and self.scale is not None

    def _ignored(self) -> dict[str, str]:
        # the public standardization takes both: one alone was dropped without a word
        both = "applies with {}: the public standardization takes both (e.g. the mean and "\
               "standard deviation of auxiliary records)"
        out = {}
        if self.center is not None and self.scale is None:
            out["center"] = both.format("scale")
        if self.scale is not None and self.center is None:
            out["scale"] = both.format("center")
        return out

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels (each release is computed from its own records) and the public
        standardization's length (one value, or one per feature)."""
        check_strata(labels, self.interest, [], X.shape[0])
        if self.strict:
            for name in ("center", "scale"):
                per_feature(getattr(self, name), X.shape[1], name)

    def noise_scale(self, d: int) -> float:
        """σ (standardized units) for ``d`` features: the analytic Gaussian mechanism at this
        estimator's ε, δ and the sensitivity :func:`mix_sensitivity`."""
        clip = math.sqrt(d) if self.clip is None else float(self.clip)
        return analytic_gaussian_sigma(float(self.epsilon), float(self.delta),
                              mix_sensitivity(int(self.g), clip))

    def _check_noise(self, sigma: float, clip: float, d: int) -> None:
        """Refuse, before computing, noise past float32's range (``clip=1e300``): NumPy's
        overflow warning was printed, then the release came out NaN/inf."""
        if sigma < float(np.finfo(np.float32).max) / 1e6:
            return
        raise SettingError(
            f"dp-mix's noise (sd {sigma:.3g} per standardized feature, from clip={clip:g}, "
            f"epsilon={float(self.epsilon):g}, g={int(self.g)}) overflows float32: this "
            "setting is unusable (the input is fine); lower clip (the default, none, is "
            f"sqrt(d) = {math.sqrt(d):.3g} for {d} features) or raise epsilon")

    def _standardization(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(location, scale) per feature: the public ones when given, else the batch's."""
        n, d = X.shape
        if self.strict:
            loc, scale = (np.broadcast_to(np.asarray(v, dtype=np.float64), (d,)).copy()
                          for v in (self.center, self.scale))
            if not (np.all(np.isfinite(loc)) and np.all(np.isfinite(scale))
                    and np.all(scale >= 0)):
                raise BioanonError("center and scale must be finite (scale >= 0) per "
                                   "feature; e.g. the mean and standard deviation of "
                                   "auxiliary records")
            scale[scale == 0] = 1.0
            return loc, scale
        zeros = np.zeros(n, dtype=np.int64)
        sums, _ = sums_by(X, zeros, 1)
        loc = sums[0] / n
        sq, _ = sums_by(np.square(np.asarray(X, dtype=np.float32) - loc.astype(np.float32)),
                        zeros, 1)
        scale = np.sqrt(sq[0] / n)
        scale[scale == 0] = 1.0
        return loc, scale

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        n, d = X.shape
        _, strat = strata(labels, self.interest, [], n)
        g = int(self.g)
        clip = math.sqrt(d) if self.clip is None else float(self.clip)
        loc, scale = self._standardization(X)
        Z = (np.asarray(X, dtype=np.float32) - loc.astype(np.float32)) / scale.astype(np.float32)
        clip_rows(Z, clip)
        s_design, s_noise = np.random.SeedSequence(seed).spawn(2)
        M = mixing_matrix(circulant_sets(strat, g, np.random.default_rng(s_design)))
        sigma = self.noise_scale(d)
        self._check_noise(sigma, clip, d)
        one = np.zeros(1)
        out = apply_vp_mix(Z, M, np.zeros(n, dtype=np.int64), one + 1.0, one,
                           np.zeros((1, d)), noise_sd=np.full((1, d), sigma),
                           noise_seed=s_noise)
        out *= scale.astype(np.float32)
        out += loc.astype(np.float32)
        info: dict[str, Any] = {"epsilon": float(self.epsilon), "delta": float(self.delta),
                                "unit": "record (replace-one; labels and design public; "
                                + ("public standardization)" if self.strict else
                                   "standardization not privatised)"),
                                "strict": self.strict,
                                "sigma_standardized": sigma, "clip": clip}
        if self.sensitive is not None:
            ids = label_values(labels, self.sensitive, n)
            r = int(np.unique(ids, return_counts=True)[1].max())
            info["epsilon_identity"] = analytic_gaussian_epsilon(sigma, float(self.delta),
                                                   r * mix_sensitivity(g, clip))
            info["identity_records_max"] = r
        return Release(out, info=info, mixing=M)
