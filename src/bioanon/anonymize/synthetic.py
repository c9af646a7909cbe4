"""Class-conditional synthetic baseline: one Gaussian mixture per stratum, sampled.

Each interest (× additional) stratum gets a :class:`sklearn.mixture.GaussianMixture` fitted on
its standardized records; every released record is a fresh sample of its own stratum's model,
so the release has one record per input record, in input order, with the same labels. Nothing
of a particular record is kept beyond what the model learned; with one component (the default)
the model is the stratum's mean and covariance. More components fit the data more closely and
memorize more (membership inference rises).

A full covariance per class has ``d(d+1)/2`` parameters fitted on that class's records alone:
with few records per class it memorizes them (its eigenvectors point at single records), which
membership and tracing attackers read. Three estimators trade that off (one component):

- ``"ledoit-wolf"``: each class's covariance shrunk towards ``mean variance × I`` with the
  Ledoit-Wolf intensity (closed form, data-driven);
- ``"factor"``: each class's ``rank`` leading eigen-directions plus a diagonal residual
  (a low-rank-plus-diagonal, factor-analysis-style model: ``d·rank + d`` parameters);
- ``"pooled"``: one within-class covariance pooled over every stratum (each record weighs
  ``1/n`` in it, not ``1/n_c``) plus each class's own mean — the model of linear discriminant
  analysis, and the least memorizing: a class contributes only its mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.mixture import GaussianMixture

from ..errors import BioanonError
from ..table import FeatureTable
from .base import Anonymizer, SettingError
from .params import Param
from .registration import register
from .release_model import ReleaseModel
from .strata import check_strata, strata, sums_by

COVARIANCES = ("full", "diag", "tied", "spherical", "ledoit-wolf", "factor", "pooled")
#: covariances with a closed form (one component, no EM)
CLOSED_FORM = ("full", "ledoit-wolf", "factor", "pooled")


def sample_by_stratum(X: np.ndarray, strat: np.ndarray, n_components: int, covariance: str,
                      reg: float, rng: np.random.Generator, rank: int = 8,
                      shrinkage: float = 0.0) -> np.ndarray:
    """Fit a Gaussian mixture per stratum and draw as many samples as it has records.

    Loops over strata (never over records). Features are standardized first (``reg`` is in
    standardized units). ``rank`` is the number of factors of ``covariance="factor"``;
    ``shrinkage`` scales the correlations of the closed-form covariances by ``1 − shrinkage``.
    """
    n = X.shape[0]
    sums, _ = sums_by(X, np.zeros(n, dtype=np.int64), 1)
    loc = sums[0] / n
    sq, _ = sums_by(np.square(X - loc.astype(X.dtype)), np.zeros(n, dtype=np.int64), 1)
    scale = np.sqrt(sq[0] / n)
    scale[scale == 0] = 1.0
    out = np.empty(X.shape, dtype=np.float32)
    if covariance in CLOSED_FORM[1:] or (covariance == "full" and n_components == 1):
        # (shrinkage applies to these closed forms only; _check_relations refuses the rest)
        if np.bincount(strat).min() < 2:
            raise BioanonError("a class has a single record: no model can be fitted to it; "
                               "drop or merge it")
        return gaussian_release(X, strat, loc, scale, covariance, reg, rank, rng, shrinkage)
    for s in np.unique(strat):  # one model per stratum, each on its rows only
        rows = np.flatnonzero(strat == s)
        k = int(min(n_components, max(1, rows.size // 2)))
        if k == 1 and covariance == "full":  # one Gaussian: closed form, no EM
            out[rows] = _gaussian_sample(X[rows], loc, scale, reg, rng)
            continue
        gm = GaussianMixture(k, covariance_type=covariance, reg_covar=reg,
                             random_state=int(rng.integers(2**31 - 1)))
        if rows.size < 2:
            raise BioanonError("a class has a single record: no model can be fitted to it; "
                               "drop or merge it")
        try:
            gm.fit((np.asarray(X[rows], dtype=np.float64) - loc) / scale)
        except ValueError as exc:  # scikit-learn's "ill-defined empirical covariance"
            if "ill-defined" not in str(exc):
                raise
            raise _singular(rows.size, X.shape[1], reg) from None
        gm.random_state = int(rng.integers(2**31 - 1))
        sample, _ = gm.sample(rows.size)
        # gm.sample orders by component: shuffle, then back to the features' units
        out[rows] = sample[rng.permutation(rows.size)] * scale + loc
    return out


def class_covariances(Z: np.ndarray, strat: np.ndarray, covariance: str, reg: float,
                      rank: int = 8, shrinkage: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Means ``(S, d)`` and covariances ``(S, d, d)`` of standardized records ``Z`` per stratum.

    ``covariance`` is ``"full"`` (the sample covariance), ``"ledoit-wolf"``, ``"factor"`` (top
    ``rank`` eigenpairs plus a diagonal residual) or ``"pooled"`` (one within-class covariance
    for every stratum). ``shrinkage`` λ then moves each towards its own diagonal,
    ``(1 − λ)·Σ + λ·diag(Σ)`` (variances kept, correlations scaled by ``1 − λ``); ``reg`` is
    added to every diagonal. Loops over strata only.

    Examples
    --------
    >>> Z = np.random.default_rng(0).standard_normal((40, 3))
    >>> mu, cov = class_covariances(Z, np.repeat([0, 1], 20), "pooled", 0.0)
    >>> mu.shape, cov.shape, bool(np.allclose(cov[0], cov[1]))
    ((2, 3), (2, 3, 3), True)
    """
    n_strata = int(strat.max()) + 1
    d = Z.shape[1]
    count = np.bincount(strat, minlength=n_strata).astype(np.float64)
    sums, _ = sums_by(Z, strat, n_strata)
    mu = sums / count[:, None]
    scatter = np.empty((n_strata, d, d))
    for s in range(n_strata):  # d×d scatter of each stratum (a matrix product, no record loop)
        Zc = np.asarray(Z[strat == s], dtype=np.float32) - mu[s].astype(np.float32)
        scatter[s] = (Zc.T @ Zc).astype(np.float64)
        if covariance == "ledoit-wolf":
            scatter[s] = _ledoit_wolf(Zc, scatter[s] / count[s]) * count[s]
    cov = scatter / count[:, None, None]
    if covariance == "pooled":
        pooled = scatter.sum(axis=0) / max(Z.shape[0] - n_strata, 1)
        cov = np.broadcast_to(pooled, cov.shape).copy()
    elif covariance == "factor":
        cov = np.stack([_factor(c, rank) for c in cov])
    if shrinkage:
        diag = cov[:, np.arange(d), np.arange(d)].copy()
        cov *= 1.0 - shrinkage
        cov[:, np.arange(d), np.arange(d)] = diag
    cov[:, np.arange(d), np.arange(d)] += reg + 1e-9
    return mu, cov


def _ledoit_wolf(Zc: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Ledoit-Wolf shrinkage of the covariance ``S`` of the centred rows ``Zc`` towards
    ``(tr S / d)·I`` (the intensity of Ledoit & Wolf 2004, capped at 1)."""
    n, d = Zc.shape
    target = np.trace(S) / d
    delta = np.sum(np.square(S - target * np.eye(d)))
    sq = np.einsum("ij,ij->i", Zc, Zc).astype(np.float64)
    # Σ_i ||z_i z_iᵀ − S||²_F = Σ_i ||z_i||⁴ − n ||S||²_F
    beta = max((np.sum(sq * sq) - n * np.sum(S * S)) / n**2, 0.0)
    shrink = 1.0 if delta <= 0 else min(beta / delta, 1.0)
    return (1.0 - shrink) * S + shrink * target * np.eye(d)


def _factor(S: np.ndarray, rank: int) -> np.ndarray:
    """Low rank plus diagonal: the ``rank`` leading eigenpairs of ``S`` and the residual
    variance of each feature (never negative)."""
    vals, vecs = np.linalg.eigh(S)
    r = min(rank, S.shape[0])
    V, lam = vecs[:, -r:], np.maximum(vals[-r:], 0.0)
    low = (V * lam) @ V.T
    psi = np.maximum(np.diag(S) - np.diag(low), 0.0)
    return low + np.diag(psi)


def gaussian_release(X: np.ndarray, strat: np.ndarray, loc: np.ndarray, scale: np.ndarray,
                     covariance: str, reg: float, rank: int,
                     rng: np.random.Generator, shrinkage: float = 0.0) -> np.ndarray:
    """One fresh sample of its stratum's Gaussian per record (float32, input order)."""
    Z = ((np.asarray(X, dtype=np.float32) - loc.astype(np.float32))
         / scale.astype(np.float32))
    mu, cov = class_covariances(Z, strat, covariance, reg, rank, shrinkage)
    out = np.empty(X.shape, dtype=np.float32)
    for s in range(mu.shape[0]):  # a matrix product per stratum
        rows = np.flatnonzero(strat == s)
        L = _cholesky(cov[s], rows.size, reg)
        E = rng.standard_normal((rows.size, X.shape[1]), dtype=np.float32)
        out[rows] = E @ L.T + mu[s].astype(np.float32)
    out *= scale.astype(np.float32)
    out += loc.astype(np.float32)
    return out


def _singular(n: int, d: int, reg: float) -> SettingError:
    return SettingError(
        f"the covariance of a class of {n} records over {d} features is singular: reg={reg:g} "
        "is too small to make it positive definite; raise reg (the default is 0.01) or use "
        "covariance='ledoit-wolf'")


def _cholesky(cov: np.ndarray, n: int, reg: float) -> np.ndarray:
    """The Cholesky factor (float32) of one class's covariance; a singular one (``reg=0``
    on a class of fewer records than features) is refused naming ``reg``: NumPy's "Matrix is
    not positive definite" was an internal error."""
    try:
        return np.linalg.cholesky(cov).astype(np.float32)
    except np.linalg.LinAlgError:
        raise _singular(n, cov.shape[0], reg) from None


def _gaussian_sample(Xs: np.ndarray, loc: np.ndarray, scale: np.ndarray, reg: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Samples of N(mean, cov + reg·I) fitted to ``Xs`` in standardized units (float32 out)."""
    Z = ((np.asarray(Xs, dtype=np.float32) - loc.astype(np.float32))
         / scale.astype(np.float32))
    mean = Z.mean(axis=0, dtype=np.float64)
    Zc = Z - mean.astype(np.float32)
    cov = (Zc.T @ Zc).astype(np.float64) / Z.shape[0]
    cov[np.diag_indices_from(cov)] += reg + 1e-9
    L = _cholesky(cov, Z.shape[0], reg)
    E = rng.standard_normal(Z.shape, dtype=np.float32)
    return (E @ L.T + mean.astype(np.float32)) * scale.astype(np.float32) + loc.astype(np.float32)


@register("synthetic")
class SyntheticAnonymizer(Anonymizer):
    """Class-conditional synthetic data, one Gaussian per class: a baseline, not a mix.

    Parameters
    ----------
    interest : str
        Label column whose classes are modelled separately.
    additional : sequence of str, optional
        Model each interest × additional stratum separately.
    n_components : int, default 1
        Gaussian components per stratum (capped at half its records).
    covariance : {"full", "diag", "tied", "spherical", "ledoit-wolf", "factor", "pooled"}, \
default "full"
        Covariance of each component; the last three (one component) shrink what a class's
        model memorizes of its records: Ledoit-Wolf shrinkage, ``rank`` factors plus a diagonal,
        or one within-class covariance pooled over all classes (see the module docstring).
    reg : float, default 0.01
        Added to the covariance diagonal (standardized units).
    rank : int, default 8
        Factors per class of ``covariance="factor"``.
    shrinkage : float, default 0
        Share λ of every correlation removed (one component, closed-form covariances):
        ``(1 − λ)·Σ + λ·diag(Σ)``; 1 is the diagonal model.
    random_state : int or None
        Secret key of the draw; never published.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> SyntheticAnonymizer("expression", random_state=0).fit_transform(t.X, t.labels).shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="attribute modelled per class"),
        "additional": Param("items", none=True, role="additional",
                            help="additional attributes: one model per interest x additional"),
        "n_components": Param("int", low=1, help="Gaussian components per stratum"),
        "covariance": Param("str", options=COVARIANCES, help="covariance of each component"),
        "reg": Param("float", low=0, help="added to the covariance diagonal (standardized)"),
        "rank": Param("int", low=1, help="factors per class of covariance=factor"),
        "shrinkage": Param("float", low=0, high=1,
                           help="share of the correlations removed (closed-form covariances)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    protects = ("every record: each released record is a fresh sample of its class's Gaussian "
                "model, none is a function of one person's record")
    does_not_protect = ("what the class model learned (a class of few people shows their "
                        "traits; more components memorize more); no formal guarantee; "
                        "utility only as far as a Gaussian fits the class")
    #: issue 20's runs (synthetic-300, FSDD): few factors or Ledoit-Wolf shrinkage memorize
    #: less than the full covariance at little CAS cost; pooling did not (not searched)
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"n_components": 1}, {"n_components": 1, "covariance": "diag"},
        {"covariance": "ledoit-wolf"}, {"covariance": "factor", "rank": 2},
        {"covariance": "factor", "rank": 4},
    )

    def __init__(self, interest: str = "interest", additional: Sequence[str] | None = None,
                 n_components: int = 1, covariance: str = "full", reg: float = 0.01,
                 rank: int = 8, shrinkage: float = 0.0,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.n_components = n_components
        self.covariance = covariance
        self.reg = reg
        self.rank = rank
        self.shrinkage = shrinkage
        self.random_state = random_state

    def _check_relations(self) -> None:
        if self.covariance in CLOSED_FORM[1:] and self.n_components != 1:
            raise BioanonError(f"covariance={self.covariance} fits one Gaussian per class; "
                               "set n_components=1 or pick full, diag, tied or spherical")
        if self.shrinkage and (self.covariance not in CLOSED_FORM or self.n_components != 1):
            raise BioanonError("shrinkage applies to one Gaussian per class with covariance "
                               "full, ledoit-wolf, factor or pooled; set n_components=1 or "
                               "shrinkage=0")

    # ------------------------------------------------------------------ release model
    def release_model(self) -> ReleaseModel:
        """One Gaussian (or a mixture) per interest (× additional) class, fitted on the
        released records, in all d features.

        >>> SyntheticAnonymizer("digit", covariance="diag").release_model().describe()
        'class-gaussian (covariance diag, per digit)'
        """
        cov = {"full": "full", "diag": "diag", "tied": "pooled", "spherical": "spherical",
               "ledoit-wolf": "full", "factor": "factor", "pooled": "pooled"}[self.covariance]
        family = "mixture" if int(self.n_components) > 1 else "class-gaussian"
        return ReleaseModel(family, cov, interest=self.interest,
                            additional=tuple(self.additional or ()),
                            rank=int(self.rank) if cov == "factor" else None,
                            components=int(self.n_components))

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels (each release is modelled on its own records)."""
        check_strata(labels, self.interest, list(self.additional or []), X.shape[0])

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray:
        """Model ``X`` per stratum and release one sample per record."""
        _, strat = strata(labels, self.interest, list(self.additional or []), X.shape[0])
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        return sample_by_stratum(X, strat, int(self.n_components), self.covariance,
                                 float(self.reg), rng, int(self.rank), float(self.shrinkage))
