"""LEACE linear concept erasure (Belrose et al., 2023) in closed form, NumPy only.

With ``Z`` the one-hot sensitive labels, ``Σ_XX`` the features' covariance, ``W = Σ_XX^{-1/2}``
(whitening, on its range) and ``P`` the orthogonal projection onto the column space of
``W Σ_XZ``, the least-squares-optimal eraser is::

    r(x) = x − W⁺ P W (x − μ)

After it, ``Cov(r(X), Z) = 0``: every linear classifier of the sensitive attribute does no
better than a constant predictor on the data it was fitted on. Non-linear attackers (forests,
kNN) are not stopped, which is why bioanon offers it as a post-step after a method
(``--method vp-mix+leace``) and as a method of its own.

Written in NumPy (about 20 lines) rather than with the ``concept-erasure`` package, which
needs torch: bioanon keeps torch an optional extra, and the closed form is all that is used.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable
from .base import Anonymizer, label_values
from .params import Param
from .registration import register
from .strata import sums_by


def leace_fit(X: np.ndarray, z: np.ndarray, rtol: float = 1e-8, block: int = 1 << 16
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit the LEACE eraser of the classes ``z`` from ``X``.

    Returns ``(mu, U, V)`` with the eraser ``r(x) = x − ((x − mu) V) Uᵀ`` (``U = W⁺Q``,
    ``V = WQ``, ``Q`` an orthonormal basis of the range of ``W Σ_XZ``; rank < number of classes).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.integers(0, 2, 500)
    >>> X = rng.standard_normal((500, 4)) + z[:, None]
    >>> mu, U, V = leace_fit(X, z)
    >>> R = X - ((X - mu) @ V) @ U.T
    >>> bool(np.abs(R[z == 1].mean(0) - R[z == 0].mean(0)).max() < 1e-8)
    True
    """
    _, codes = np.unique(np.asarray(z), return_inverse=True)
    n, d = X.shape
    k = int(codes.max()) + 1
    class_sums, _ = sums_by(X, codes, k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    mu = class_sums.sum(axis=0) / n
    gram = np.zeros((d, d))
    mu32 = mu.astype(np.float32)
    for start in range(0, n, block):  # float32 products per block, summed in float64
        part = np.asarray(X[start:start + block], dtype=np.float32) - mu32
        gram += part.T @ part
    sigma_xx = gram / n
    sigma_xz = (class_sums - counts[:, None] * mu).T / n  # Cov(X, one-hot Z)
    evals, evecs = np.linalg.eigh(sigma_xx)
    keep = evals > rtol * max(float(evals.max()), 1e-300)
    E, lam = evecs[:, keep], evals[keep]
    W = (E / np.sqrt(lam)) @ E.T
    W_pinv = (E * np.sqrt(lam)) @ E.T
    A = W @ sigma_xz
    u, s, _ = np.linalg.svd(A, full_matrices=False)
    Q = u[:, s > rtol * max(float(s.max(initial=0.0)), 1e-300)]
    return mu, W_pinv @ Q, W @ Q


def leace_apply(X: np.ndarray, mu: np.ndarray, U: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Apply a fitted eraser to ``X`` (float32 out); a rank-r update, O(n·d·r)."""
    X = np.asarray(X, dtype=np.float32)
    return (X - ((X - mu.astype(np.float32)) @ V.astype(np.float32)) @ U.T.astype(np.float32))


@register("leace", required=("sensitive",), post_step=True)
class LeaceAnonymizer(Anonymizer):
    """Erase every linear trace of the sensitive attribute (LEACE); a post-step: A+leace.

    Fitted on the records it releases (the owner knows their sensitive labels); releasing
    other records applies the fitted eraser. Stops linear attackers (linear SVM, logistic
    regression) on the fitted records; does not stop non-linear ones, so use it after a mixing
    method: ``vp-mix+leace``.

    Parameters
    ----------
    sensitive : str
        Label column to erase.

    Attributes
    ----------
    mean_, U_, V_ : arrays
        The eraser ``r(x) = x − ((x − mean_) V_) U_ᵀ``.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> LeaceAnonymizer("identity").fit_transform(t.X, t.labels).shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "sensitive": Param("column", role="sensitive", help="label column to erase"),
    }
    needs_labels = True
    labels_at_release: ClassVar[bool] = False  # labels fit the eraser; releasing reads none
    batch_dependent = False  # fitted once; the release of a record is a fixed linear map
    protects = ("the sensitive attribute against linear attackers (no linear classifier beats "
                "a constant on the records it was fitted on)")
    does_not_protect = ("the sensitive attribute against non-linear attackers (forest, kNN): "
                        "use it after a mixing method, e.g. vp-mix+leace")
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({},)

    def __init__(self, sensitive: str = "identity") -> None:
        self.sensitive = sensitive

    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Fit the eraser on ``X`` and its sensitive labels."""
        z = label_values(labels, self.sensitive, X.shape[0])
        if pd.unique(z).size < 2:
            raise BioanonError(f"sensitive column '{self.sensitive}' has one class; "
                               "there is nothing to erase; it needs at least two")
        self.mean_, self.U_, self.V_ = leace_fit(X, z)

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray:
        """Erase with the fitted eraser (labels are not read)."""
        return leace_apply(X, self.mean_, self.U_, self.V_)
