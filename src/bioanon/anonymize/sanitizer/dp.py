"""Local samplers for the sensitive latents z_S (section 3.2 of the sanitizer paper).

- :func:`suppress`: z_S := 0 (no randomness, no ε; the distribution of z_S is lost).
- :func:`dp_obfuscate`: clip each z_S to the box [a, b] and add Laplace noise of scale
  ‖b − a‖₁ / ε to every coordinate: ε-differential privacy for each record's z_S on its own
  (local DP; neighbouring inputs are any two z_S in the box).
- :class:`RonGaussSampler`: DP sampling after RON-Gauss (Chanyaswad et al. 2019). A random
  orthonormal projection to p dimensions, one differentially private Gaussian per sensitive
  class, ε split 0.3 (mean, with the class sizes) / 0.7 (covariance) as in section 4.3 of the
  paper, then fresh samples (z̃_S, ỹ_S) projected back. The samples depend on the owner's data
  only through the noisy statistics, so by post-processing the whole set of synthetic
  sensitive latents is ε-DP with respect to adding or removing one owner record.

What is and is not protected
----------------------------
The guarantee covers the sensitive latents z_S (and labels y_S) only. The non-sensitive
latents z_NS are released as they are; whatever they still reveal about the sensitive
attribute is not covered by ε and is measured empirically by the attackers of the evaluation.

Noise source
------------
Noise comes from :func:`bioanon.privacy.os_rng`, NumPy's PCG64 generator seeded from the
operating system's entropy on every call; the estimator never accepts a seed for it. All
Laplace noise goes through :func:`bioanon.privacy.laplace` (see there why OpenDP's hardened
sampler is available but not the default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import BioanonError
from ...privacy import check_epsilon, laplace, os_rng

__all__ = ["MEAN_SHARE", "PROTECTS", "RonGaussSampler", "check_epsilon", "dp_obfuscate",
           "laplace_mechanism", "os_rng", "random_orthonormal", "suppress"]

#: Share of ε spent on the means (and class sizes); the rest goes to the covariances.
MEAN_SHARE = 0.3
PROTECTS = ("the sensitive latents z_S (and the sensitive labels used to sample them), not the "
            "whole record: the non-sensitive latents z_NS are released without DP noise")


def laplace_mechanism(values: Any, sensitivity: float, epsilon: float,
                      rng: np.random.Generator) -> np.ndarray:
    """``values + Laplace(0, sensitivity / ε)`` elementwise (ε-DP for L1 ``sensitivity``)."""
    return laplace(values, float(sensitivity) / check_epsilon(epsilon), rng)


def suppress(z_s: np.ndarray) -> np.ndarray:
    """Replace every sensitive latent by the zero vector."""
    return np.zeros_like(np.asarray(z_s, dtype=np.float64))


def dp_obfuscate(z_s: np.ndarray, low: Any, high: Any, epsilon: float,
                 rng: np.random.Generator, clip_output: bool = True) -> np.ndarray:
    """Clip each row to the box [low, high], add Laplace noise of scale ‖high − low‖₁ / ε.

    Parameters
    ----------
    z_s : array (n, k)
    low, high : arrays (k,) or scalars
        The public box; it must not be computed from ``z_s`` (the decoupler takes it from the
        auxiliary data).
    epsilon : float
        Budget per record.
    rng : Generator
        Use :func:`os_rng` for a release.
    clip_output : bool, default True
        Clip the noisy result back into the box (post-processing: costs no privacy and keeps
        the decoder on the latents it was trained on).
    """
    z_s = np.asarray(z_s, dtype=np.float64)
    low = np.broadcast_to(np.asarray(low, dtype=np.float64), z_s.shape[1:])
    high = np.broadcast_to(np.asarray(high, dtype=np.float64), z_s.shape[1:])
    if np.any(high <= low):
        raise BioanonError("the obfuscation box needs high > low in every coordinate")
    sensitivity = float(np.sum(high - low))
    noisy = laplace_mechanism(np.clip(z_s, low, high), sensitivity, epsilon, rng)
    return np.clip(noisy, low, high) if clip_output else noisy


def random_orthonormal(p: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A (p, k) matrix with orthonormal rows drawn uniformly (QR of a Gaussian matrix)."""
    if not 1 <= p <= k:
        raise BioanonError(f"projection dimension {p} must lie in [1, {k}]")
    q, r = np.linalg.qr(rng.normal(size=(k, p)))
    return (q * np.sign(np.diag(r))).T


def _upper(p: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(p)


class RonGaussSampler:
    """Differentially private class-conditional Gaussian model of the sensitive latents.

    Not a scikit-learn estimator: an internal building block of the sanitizer, fitted afresh on
    each release.

    Parameters
    ----------
    epsilon : float
        Total budget ε; ``mean_share · ε`` goes to the class sums and sizes, the rest to the
        second moments (basic composition).
    projection_dim : int
        p, the dimension of the random orthonormal projection (p ≤ k).
    center, radius : array (k,), float
        Public centring and scale (from the auxiliary data). Each projected, centred latent is
        divided by ``radius`` and clipped to the unit ball, which bounds the sensitivities.
    classes : sequence, optional
        The public domain of sensitive values. Default: the values present in the data (then
        the *set* of class names is treated as public; counts and statistics stay private).
    mean_share : float, default 0.3

    Sensitivities (add/remove one record, which touches one class only)
    -------------------------------------------------------------------
    - class sums and sizes (S_c, n_c): ‖u‖₁ + 1 ≤ √p + 1;
    - upper triangles of the second moments C_c = Σ u uᵀ: Σ_{i≤j} |u_i u_j| ≤ (p + 1) / 2.
    """

    def __init__(self, epsilon: float, projection_dim: int, center: Any, radius: float,
                 classes: Sequence[Any] | None = None, mean_share: float = MEAN_SHARE) -> None:
        self.epsilon = epsilon
        self.projection_dim = projection_dim
        self.center = center
        self.radius = radius
        self.classes = classes
        self.mean_share = mean_share

    # -------------------------------------------------------------------------------------
    def accounting(self) -> dict[str, Any]:
        """The privacy budget and how it is split (safe to publish)."""
        eps = check_epsilon(self.epsilon)
        return {"mechanism": "RON-Gauss DP sampling (Laplace)", "epsilon": eps,
                "epsilon_mean": self.mean_share * eps,
                "epsilon_covariance": (1.0 - self.mean_share) * eps,
                "split": {"mean_and_class_sizes": self.mean_share,
                          "covariance": 1.0 - self.mean_share},
                "composition": "basic (sequential) composition",
                "neighbouring": "add or remove one record of the owner's dataset",
                "projection_dim": int(self.projection_dim),
                "protects": PROTECTS}

    def fit(self, z_s: np.ndarray, y: Any, rng: np.random.Generator) -> RonGaussSampler:
        """Learn the noisy per-class means, covariances and sizes."""
        eps = check_epsilon(self.epsilon)
        if not 0.0 < self.mean_share < 1.0:
            raise BioanonError(f"mean_share={self.mean_share} must lie strictly in (0, 1)")
        z_s = np.asarray(z_s, dtype=np.float64)
        y = np.asarray(y)
        n, k = z_s.shape
        if y.shape[0] != n:
            raise BioanonError(f"{y.shape[0]} sensitive labels for {n} records; one per record")
        p = int(self.projection_dim)
        radius = float(self.radius)
        if not radius > 0:
            raise BioanonError(f"clipping radius {radius} must be positive")
        classes = np.unique(y) if self.classes is None else np.asarray(list(self.classes))
        unknown = np.setdiff1d(np.unique(y), classes)
        if unknown.size:
            raise BioanonError(f"sensitive values {unknown[:5].tolist()} are not in the declared "
                               "classes; add them to the class list")
        self.classes_ = classes
        self.W_ = random_orthonormal(p, k, rng)  # data-independent
        u = (z_s - np.asarray(self.center, dtype=np.float64)) @ self.W_.T / radius
        norms = np.linalg.norm(u, axis=1, keepdims=True)
        u = u / np.maximum(norms, 1.0)
        self.clipped_share_ = float(np.mean(norms > 1.0))  # diagnostic, not released

        eps_m, eps_v = self.mean_share * eps, (1.0 - self.mean_share) * eps
        self.mean_scale_ = (np.sqrt(p) + 1.0) / eps_m
        self.cov_scale_ = (p + 1.0) / 2.0 / eps_v
        onehot = (y[:, None] == classes[None, :]).astype(np.float64)  # (n, C)
        sums = onehot.T @ u  # (C, p)
        counts = onehot.sum(axis=0)  # (C,)
        iu = _upper(p)
        second = np.einsum("nc,ni,nj->cij", onehot, u, u)[:, iu[0], iu[1]]  # (C, p(p+1)/2)
        self.noisy_sums_ = laplace(sums, self.mean_scale_, rng)
        self.noisy_counts_ = laplace(counts, self.mean_scale_, rng)
        self.noisy_second_ = laplace(second, self.cov_scale_, rng)

        # ---- post-processing only from here on
        size = np.maximum(self.noisy_counts_, 1.0)
        self.means_ = self.noisy_sums_ / size[:, None]
        m2 = np.zeros((classes.size, p, p))
        m2[:, iu[0], iu[1]] = self.noisy_second_
        m2 = m2 + np.triu(m2, 1).transpose(0, 2, 1)
        cov = m2 / size[:, None, None] - np.einsum("ci,cj->cij", self.means_, self.means_)
        vals, vecs = np.linalg.eigh(cov)
        vals = np.clip(vals, 1e-6, 1.0)  # ‖u‖ ≤ 1 bounds every variance by 1
        self.covariances_ = np.einsum("cij,cj,ckj->cik", vecs, vals, vecs)
        weights = np.clip(self.noisy_counts_, 0.0, None)
        self.weights_ = (weights / weights.sum() if weights.sum() > 0
                         else np.full(classes.size, 1.0 / classes.size))
        self.n_features_ = k
        return self

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` synthetic pairs (z̃_S (n, k), ỹ_S (n,))."""
        codes = rng.choice(self.classes_.size, size=n, p=self.weights_)
        chol = np.linalg.cholesky(self.covariances_)  # (C, p, p)
        xi = rng.standard_normal((n, self.W_.shape[0]))
        u = self.means_[codes] + np.einsum("nij,nj->ni", chol[codes], xi)
        z = np.asarray(self.center, dtype=np.float64) + float(self.radius) * (u @ self.W_)
        return z, self.classes_[codes]
