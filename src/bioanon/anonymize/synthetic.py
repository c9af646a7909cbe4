"""Class-conditional synthetic baseline: one Gaussian mixture per stratum, sampled.

Each interest (× additional) stratum gets a :class:`sklearn.mixture.GaussianMixture` fitted on
its standardized records; every released record is a fresh sample of its own stratum's model,
so the release has one record per input record, in input order, with the same labels. Nothing
of a particular record is kept beyond what the model learned; with one component (the default)
the model is the stratum's mean and covariance. More components fit the data more closely and
memorize more (membership inference rises).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.mixture import GaussianMixture

from ..errors import BioanonError
from ..table import FeatureTable
from .base import Anonymizer
from .params import Param
from .registry import register
from .vp_mix import strata, sums_by

COVARIANCES = ("full", "diag", "tied", "spherical")


def sample_by_stratum(X: np.ndarray, strat: np.ndarray, n_components: int, covariance: str,
                      reg: float, rng: np.random.Generator) -> np.ndarray:
    """Fit a Gaussian mixture per stratum and draw as many samples as it has records.

    Loops over strata (never over records). Features are standardized first (``reg`` is in
    standardized units).
    """
    n = X.shape[0]
    sums, _ = sums_by(X, np.zeros(n, dtype=np.int64), 1)
    loc = sums[0] / n
    sq, _ = sums_by(np.square(X - loc.astype(X.dtype)), np.zeros(n, dtype=np.int64), 1)
    scale = np.sqrt(sq[0] / n)
    scale[scale == 0] = 1.0
    out = np.empty(X.shape, dtype=np.float32)
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
        gm.fit((np.asarray(X[rows], dtype=np.float64) - loc) / scale)
        gm.random_state = int(rng.integers(2**31 - 1))
        sample, _ = gm.sample(rows.size)
        # gm.sample orders by component: shuffle, then back to the features' units
        out[rows] = sample[rng.permutation(rows.size)] * scale + loc
    return out


def _gaussian_sample(Xs: np.ndarray, loc: np.ndarray, scale: np.ndarray, reg: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Samples of N(mean, cov + reg·I) fitted to ``Xs`` in standardized units (float32 out)."""
    Z = ((np.asarray(Xs, dtype=np.float32) - loc.astype(np.float32))
         / scale.astype(np.float32))
    mean = Z.mean(axis=0, dtype=np.float64)
    Zc = Z - mean.astype(np.float32)
    cov = (Zc.T @ Zc).astype(np.float64) / Z.shape[0]
    cov[np.diag_indices_from(cov)] += reg + 1e-9
    L = np.linalg.cholesky(cov).astype(np.float32)
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
    covariance : {"full", "diag", "tied", "spherical"}, default "full"
    reg : float, default 0.01
        Added to the covariance diagonal (standardized units).
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
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    protects = ("every record: each released record is a fresh sample of its class's Gaussian "
                "model, none is a function of one person's record")
    does_not_protect = ("what the class model learned (a class of few people shows their "
                        "traits; more components memorize more); no formal guarantee; "
                        "utility only as far as a Gaussian fits the class")
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"n_components": 1}, {"n_components": 1, "covariance": "diag"},
    )

    def __init__(self, interest: str = "interest", additional: Sequence[str] | None = None,
                 n_components: int = 1, covariance: str = "full", reg: float = 0.01,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.n_components = n_components
        self.covariance = covariance
        self.reg = reg
        self.random_state = random_state

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels (each release is modelled on its own records)."""
        strata(labels, self.interest, list(self.additional or []), X.shape[0])

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray:
        """Model ``X`` per stratum and release one sample per record."""
        _, strat = strata(labels, self.interest, list(self.additional or []), X.shape[0])
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        return sample_by_stratum(X, strat, int(self.n_components), self.covariance,
                                 float(self.reg), rng)
