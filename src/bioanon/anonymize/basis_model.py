"""A class-conditional Gaussian model in a small basis: its statistics (sums), its fit and
its sampler, shared by ``dp-basis`` and ``basis-synthetic``.

Records ``u`` (already scaled: box-scaled and centred, or standardized) are split by an
orthonormal basis ``P`` (k, d) into their coordinates ``b = P u`` (k dimensions: what a
consumer's classifier needs lives in few directions) and their residual
``r = u − Pᵀ b`` (the d − k other dimensions, modelled cheaply). Optionally each part is
clipped to an L2 radius (``c_basis``, ``c_resid``). Every statistic is a **sum over records**
per stratum, so partitions (row blocks, Parquet files) add up:

- ``counts`` (S,): records per stratum (public: labels are released);
- ``sums`` (S, k): Σ b;   ``moments`` (S, k, k): Σ b bᵀ;
- ``rsums`` (S, d): Σ r;  ``rsq`` (S, d): Σ r² (per feature).

:func:`fit_model` post-processes (possibly noisy) statistics into per-stratum means and a
per-stratum or pooled covariance in the basis (eigen-decomposed, negative eigenvalues
floored) and a residual variance (isotropic, per feature, or per feature and stratum), with
or without per-stratum residual means; :func:`sample_model` draws one fresh record per
requested stratum label (float32, a loop over strata, never over records).

Examples
--------
>>> rng = np.random.default_rng(0)
>>> U = rng.normal(size=(200, 6)); strat = np.repeat([0, 1], 100); U[strat == 1, 0] += 3
>>> P = np.eye(6)[:2]
>>> st = basis_stats(U, strat, 2, P)
>>> st.counts.tolist(), st.sums.shape, st.moments.shape, st.rsq.shape
([100.0, 100.0], (2, 2), (2, 2, 2), (2, 6))
>>> model = fit_model(st, "class", 0.0, "diag", False)
>>> out = sample_model(model, strat, P, np.random.default_rng(1))
>>> out.shape, bool(out[strat == 1, 0].mean() > 2)
((200, 6), True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import BioanonError

#: covariance models in the basis
COVARIANCES = ("class", "pooled")
#: residual models outside the basis
RESIDUALS = ("isotropic", "diag", "class-diag")
_BLOCK = 1 << 15


@dataclass(frozen=True)
class BasisStats:
    """Sums per stratum of the basis coordinates and of the residual (see the module)."""

    counts: np.ndarray
    sums: np.ndarray
    moments: np.ndarray
    rsums: np.ndarray
    rsq: np.ndarray

    def __add__(self, other: BasisStats) -> BasisStats:
        """Statistics of two disjoint sets of records (partitions) add up."""
        return BasisStats(self.counts + other.counts, self.sums + other.sums,
                          self.moments + other.moments, self.rsums + other.rsums,
                          self.rsq + other.rsq)


def clip_rows(V: np.ndarray, radius: float | None) -> np.ndarray:
    """Scale each row of ``V`` (in place) to an L2 norm of at most ``radius`` (None: keep).

    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0).round(2).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    if radius is None:
        return V
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    V *= (radius / np.maximum(norms, radius))[:, None]
    return V


def public_lda(U_public: np.ndarray, labels: Any, k: int) -> np.ndarray:
    """A (k, d) basis from labelled **public** records: first the directions that separate
    their class means (at most classes − 1; each class weighted by its size), then the top
    principal directions of their within-class scatter outside those.

    >>> rng = np.random.default_rng(0)
    >>> U = rng.normal(size=(60, 5)); y = np.repeat([0, 1, 2], 20); U[y == 1, 3] += 5
    >>> P = public_lda(U, y, 3)
    >>> P.shape, bool(abs(P[0, 3]) > 0.9)
    ((3, 5), True)
    """
    U = np.asarray(U_public, dtype=np.float64)
    _, codes = np.unique(np.asarray(labels), return_inverse=True)
    counts = np.bincount(codes).astype(np.float64)
    onehot = np.zeros((codes.size, counts.size))
    onehot[np.arange(codes.size), codes] = 1.0
    means = (onehot.T @ U) / counts[:, None]
    dev = (means - U.mean(axis=0)) * np.sqrt(counts)[:, None]
    _, sv, vt = np.linalg.svd(dev, full_matrices=False)
    keep = min(int(k), int(np.sum(sv > 1e-9 * max(float(sv.max()), 1e-300))))
    B = vt[:keep]
    W = U - means[codes]
    W = W - (W @ B.T) @ B
    _, _, wt = np.linalg.svd(W, full_matrices=False)
    return orthonormal(np.vstack([B, wt[:max(int(k) - keep, 0)]]))


def public_pca(U_public: np.ndarray, k: int) -> np.ndarray:
    """The top-``k`` principal directions (k, d) of scaled **public** records (about their
    mean), orthonormal rows.

    >>> P = public_pca(np.random.default_rng(0).normal(size=(40, 5)), 2)
    >>> P.shape, bool(np.allclose(P @ P.T, np.eye(2)))
    ((2, 5), True)
    """
    U = np.asarray(U_public, dtype=np.float64)
    U = U - U.mean(axis=0)
    _, _, vt = np.linalg.svd(U, full_matrices=False)
    return vt[:min(int(k), vt.shape[0])].copy()


def split_basis(U: np.ndarray, P: np.ndarray, c_basis: float | None = None,
                c_resid: float | None = None, overwrite: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates ``b = U Pᵀ`` clipped to ``c_basis``, residual ``U − b Pᵀ`` clipped to
    ``c_resid``), in ``U``'s float precision (float32 records stay float32: the sums are
    accumulated in float64). The residual is computed from the unclipped coordinates, so it
    is orthogonal to the basis whatever the clipping. ``overwrite``: ``U`` is a scratch copy
    (the residual of an empty basis is then ``U`` itself, clipped in place)."""
    U = np.asarray(U)
    if U.dtype not in (np.float32, np.float64):
        U = U.astype(np.float64)
    P = P.astype(U.dtype, copy=False)
    b = U @ P.T
    if P.shape[0] == 0:  # no basis: the residual is the record (a copy: clipped in place)
        return b, clip_rows(U if overwrite else U.copy(), c_resid)
    r = b @ P
    np.subtract(U, r, out=r)
    return clip_rows(b, c_basis), clip_rows(r, c_resid)


def _stratum_sums(s: np.ndarray, n_strata: int, V: np.ndarray) -> np.ndarray:
    """Σ of the rows of ``V`` per stratum code ``s`` (float64 result): a sparse indicator
    product in ``V``'s precision (no float64 copy of a block), summed in float64 across
    blocks by the caller."""
    onehot = sp.csr_matrix((np.ones(s.size, dtype=V.dtype), (s, np.arange(s.size))),
                           shape=(n_strata, s.size))
    return np.asarray(onehot @ V, dtype=np.float64)


def basis_stats(U: np.ndarray, strat: np.ndarray, n_strata: int, P: np.ndarray,
                c_basis: float | None = None, c_resid: float | None = None,
                scale: Callable[[np.ndarray], np.ndarray] | None = None,
                squares: str = "feature") -> BasisStats:
    """The sums of :class:`BasisStats` over the records ``U`` (n, d) in row blocks (float64
    across blocks; within a block in the records' precision); ``scale`` maps each block of
    raw records to the model's units first (e.g. box scaling; it returns a new array, which
    is used as scratch). ``squares``: ``"feature"``
    (``rsq`` per stratum and feature, (S, d)), ``"energy"`` (Σ‖r‖² per stratum, (S, 1):
    all an isotropic residual needs) or ``"none"`` (zeros, (S, 1): the sums only).

    One record of stratum s moves ``sums[s]`` by at most ``c_basis``, ``moments[s]`` by at
    most ``c_basis²`` (Frobenius), ``rsums[s]`` by ``c_resid`` and ``rsq[s]`` by ``c_resid²``
    (L2): the sensitivities of :func:`sensitivities` follow.
    """
    if squares not in ("feature", "energy", "none"):
        raise BioanonError(f"squares={squares!r}: use 'feature', 'energy' or 'none'")
    n = U.shape[0]
    k, d = P.shape
    counts = np.bincount(strat, minlength=n_strata).astype(np.float64)
    sums, moments = np.zeros((n_strata, k)), np.zeros((n_strata, k, k))
    rsums = np.zeros((n_strata, d))
    rsq = np.zeros((n_strata, d if squares == "feature" else 1))
    for start in range(0, n, _BLOCK):
        block = U[start:start + _BLOCK]
        b, r = split_basis(block if scale is None else scale(block), P, c_basis, c_resid,
                           overwrite=scale is not None)
        s = strat[start:start + _BLOCK]
        rsums += _stratum_sums(s, n_strata, r)
        if squares == "feature":
            rsq += _stratum_sums(s, n_strata, np.square(r, out=r))  # r is not used again
        elif squares == "energy":
            rsq[:, 0] += np.bincount(s, weights=np.einsum("ij,ij->i", r, r),
                                     minlength=n_strata)
        if k == 0:
            continue
        sums += _stratum_sums(s, n_strata, b)
        b64 = b.astype(np.float64)
        for g in np.unique(s):  # a loop over strata, never over records
            part = b64[s == g]
            moments[g] += part.T @ part
    return BasisStats(counts, sums, moments, rsums, rsq)


def sensitivities(c_basis: float, c_resid: float, m: int = 1) -> dict[str, float]:
    """L2 sensitivity of each released statistic when the features of ``m`` records (one
    record, or the at most m records of one identity) are replaced, labels kept.

    A replaced record moves its stratum's sum by ``‖b − b'‖ ≤ 2 c_basis``, its second moment
    by ``‖bbᵀ − b'b'ᵀ‖_F ≤ sqrt(2) c_basis²``, the residual sums by ``2 c_resid``, the
    residual squares by ``‖r² − r'²‖ ≤ sqrt(2) c_resid²`` (non-negative entries) and the
    residual energy ``Σ‖r‖²`` by ``c_resid²``; m records, m times that (triangle inequality,
    whichever strata they fall in).

    >>> sensitivities(1.0, 0.5, m=2)["sums"]
    4.0
    """
    return {"sums": 2.0 * c_basis * m, "moments": np.sqrt(2.0) * c_basis**2 * m,
            "rsums": 2.0 * c_resid * m, "rsq": np.sqrt(2.0) * c_resid**2 * m,
            "energy": c_resid**2 * m}


def collapse(stats: BasisStats, covariance: str, residual: str) -> BasisStats:
    """The statistics a model releases: pooled second moments (1, k, k) for
    ``covariance="pooled"``; pooled residual squares (1, d) for ``"diag"``, the pooled
    residual energy (1, 1) for ``"isotropic"``. A pooled sum has the sensitivity of one
    stratum's (each record is in one stratum) and far less relative noise."""
    moments = stats.moments.sum(axis=0, keepdims=True) if covariance == "pooled" \
        else stats.moments
    if residual == "isotropic":
        rsq = stats.rsq.sum(axis=(0, 1), keepdims=True).reshape(1, 1)
    elif stats.rsq.shape[1] == 1:
        raise BioanonError(f"residual={residual!r} needs the squares per feature: compute "
                           "the statistics with squares='feature'")
    elif residual == "diag":
        rsq = stats.rsq.sum(axis=0, keepdims=True)
    else:
        rsq = stats.rsq
    return replace(stats, moments=moments, rsq=rsq)


def add_noise(stats: BasisStats, sigmas: dict[str, float], rng: np.random.Generator,
              gaussian: Any, residual_mean: bool) -> BasisStats:
    """Gaussian noise on every released statistic (``sigmas`` by statistic; the moments'
    noise is symmetric: the upper triangle drawn, mirrored — Analyze-Gauss); counts are
    public and stay exact. ``gaussian(values, sigma, rng)`` draws the noise."""
    k = stats.sums.shape[1]
    iu = np.triu_indices(k)
    upper = gaussian(stats.moments[:, iu[0], iu[1]], sigmas["moments"], rng)
    moments = np.zeros_like(stats.moments)
    moments[:, iu[0], iu[1]] = upper
    moments = moments + np.triu(moments, 1).transpose(0, 2, 1)
    rsq_sigma = sigmas["energy"] if stats.rsq.shape[1] == 1 else sigmas["rsq"]
    rsums = gaussian(stats.rsums, sigmas["rsums"], rng) if residual_mean \
        else np.zeros_like(stats.rsums)
    return BasisStats(stats.counts, gaussian(stats.sums, sigmas["sums"], rng), moments,
                      rsums, gaussian(stats.rsq, rsq_sigma, rng))


def _psd_factor(cov: np.ndarray, floor: float) -> np.ndarray:
    """A factor L with L Lᵀ = the covariance with eigenvalues floored at ``floor``."""
    cov = (cov + cov.T) / 2.0
    vals, vecs = np.linalg.eigh(cov)
    return vecs * np.sqrt(np.maximum(vals, floor))


def fit_model(stats: BasisStats, covariance: str, pool: float, residual: str,
              residual_mean: bool, d_resid: int | None = None) -> dict[str, np.ndarray]:
    """Post-processing (no privacy cost): per-stratum means in the basis, a factor of each
    stratum's covariance (``covariance="class"``, shrunk by ``pool`` towards the pooled
    within-stratum one) or of the pooled one, the residual's standard deviation per feature
    (``(S or 1, d)``) and the residual means (zero unless ``residual_mean``).

    ``stats`` may be collapsed (:func:`collapse`); ``d_resid`` (default d − k) is the number
    of residual dimensions an isotropic energy is spread over.
    """
    counts = stats.counts
    S, k = stats.sums.shape
    d = stats.rsums.shape[1]
    n = float(counts.sum())
    if n <= 0:
        raise BioanonError("no records to model; release a non-empty table")
    present = counts > 0
    safe = np.maximum(counts, 1.0)
    mean_all = stats.sums.sum(axis=0) / n
    means = np.where(present[:, None], stats.sums / safe[:, None], mean_all)
    between = np.einsum("s,si,sj->ij", counts, means, means)
    pooled = (stats.moments.sum(axis=0) - between) / n
    scale = max(float(np.trace(pooled)) / max(k, 1), 1e-12)
    floor = 1e-3 * scale
    if stats.moments.shape[0] == 1 or covariance == "pooled":
        factors = np.broadcast_to(_psd_factor(pooled, floor), (S, k, k)).copy()
    else:
        factors = np.empty((S, k, k))
        for s in range(S):  # a loop over strata
            own = (stats.moments[s] / counts[s] - np.outer(means[s], means[s])
                   if counts[s] > 1 else pooled)
            factors[s] = _psd_factor((1.0 - pool) * own + pool * pooled, floor)
    rmean_all = stats.rsums.sum(axis=0) / n
    rmeans = (np.where(present[:, None], stats.rsums / safe[:, None], rmean_all)
              if residual_mean else np.zeros((S, d)))
    if stats.rsq.shape[1] == 1:  # isotropic: one energy over d - k dimensions
        dims = max(d - k if d_resid is None else d_resid, 1)
        var = np.full((1, d), float(stats.rsq.sum()) / (n * dims))
        if residual_mean:
            var -= np.einsum("s,sj,sj->", counts, rmeans, rmeans) / (n * dims)
    elif stats.rsq.shape[0] == 1:
        var = stats.rsq / n
        if residual_mean:
            var = var - np.einsum("s,sj->j", counts, rmeans * rmeans)[None, :] / n
    else:
        var = np.where(present[:, None], stats.rsq / safe[:, None], stats.rsq.sum(0) / n)
        var = var - rmeans * rmeans
    rfloor = 1e-3 * max(float(np.mean(np.clip(var, 0.0, None))), 1e-12)
    return {"means": means, "factors": factors, "rmeans": rmeans,
            "rsd": np.sqrt(np.clip(var, rfloor, None))}


def sample_model(model: dict[str, np.ndarray], strat: np.ndarray, P: np.ndarray,
                 rng: np.random.Generator, scale: np.ndarray | None = None,
                 shift: np.ndarray | None = None) -> np.ndarray:
    """One fresh record per entry of ``strat`` (stratum codes), in the scaled units (float32),
    or mapped back as ``record * scale + shift`` when given (in place, no second copy).

    In the basis: ``mean_s + L_s z``; outside it: ``rmean_s + (I − PᵀP)(rsd ⊙ ζ)``; in row
    blocks of the whole array (strata gathered per block, a loop over strata only for
    per-stratum covariance factors), written as ``ζ' + (b − ζ' Pᵀ) P`` with ζ' = rsd ⊙ ζ:
    one product with P per block.
    """
    n = strat.size
    k, d = P.shape
    P32 = P.astype(np.float32)
    out = np.empty((n, d), dtype=np.float32)
    factors = model["factors"].astype(np.float32)
    means = model["means"].astype(np.float32)
    rsd = model["rsd"].astype(np.float32)
    rmeans = model["rmeans"].astype(np.float32)
    has_rmean = bool(np.any(rmeans))
    shared = factors.shape[0] == 1 or bool(np.all(factors == factors[:1]))
    sc = None if scale is None else np.asarray(scale, dtype=np.float32)
    sh = None if shift is None else np.asarray(shift, dtype=np.float32)
    for start in range(0, n, _BLOCK):
        s = strat[start:start + _BLOCK]
        m = s.size
        z = rng.standard_normal((m, k), dtype=np.float32)
        if shared:
            coef = z @ factors[0].T
        else:
            coef = np.empty((m, k), dtype=np.float32)
            for g in np.unique(s):  # a loop over strata, never over records
                rows = s == g
                coef[rows] = z[rows] @ factors[g].T
        coef += means[s]
        zeta = rng.standard_normal((m, d), dtype=np.float32)
        zeta *= rsd[0] if rsd.shape[0] == 1 else rsd[s]
        coef -= zeta @ P32.T
        zeta += coef @ P32
        if has_rmean:
            zeta += rmeans[s]
        if sc is not None:
            zeta *= sc
        if sh is not None:
            zeta += sh
        out[start:start + m] = zeta
    return out


def orthonormal(M: np.ndarray) -> np.ndarray:
    """Orthonormal rows spanning the rows of ``M`` (k, d), k ≤ d (QR, signs fixed)."""
    q, r = np.linalg.qr(np.asarray(M, dtype=np.float64).T)
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return (q * signs).T


def random_basis(k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """A data-independent random orthonormal basis (k, d) (Gaussian matrix, QR).

    >>> P = random_basis(3, 8, np.random.default_rng(0))
    >>> bool(np.allclose(P @ P.T, np.eye(3)))
    True
    """
    return orthonormal(rng.standard_normal((min(k, d), d)))


def top_eigenvectors(A: np.ndarray, k: int) -> np.ndarray:
    """The top-``k`` eigenvectors of the symmetric ``A`` as rows (k, d)."""
    A = (A + A.T) / 2.0
    vals, vecs = np.linalg.eigh(A)
    top = np.argsort(vals)[::-1][:min(k, A.shape[0])]
    return vecs[:, top].T.copy()


def second_moment(U: np.ndarray, radius: float | None = None,
                  scale: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """``Σ u uᵀ`` over rows clipped to ``radius``; the input of Analyze-Gauss (a replaced
    row moves it by at most ``sqrt(2) radius²``, Frobenius). Row blocks: each block's product
    in float32 (twice as fast), the sum across blocks in float64."""
    d = U.shape[1]
    A = np.zeros((d, d))
    for start in range(0, U.shape[0], _BLOCK):
        block = U[start:start + _BLOCK]
        u = clip_rows(np.array(block if scale is None else scale(block), dtype=np.float32),
                      radius)
        A += u.T @ u
    return A


def symmetric_noise(A: np.ndarray, sigma: float, rng: np.random.Generator,
                    gaussian: Any) -> np.ndarray:
    """``A`` plus symmetric Gaussian noise: the upper triangle drawn, mirrored."""
    d = A.shape[0]
    iu = np.triu_indices(d)
    noisy = np.zeros_like(A)
    noisy[iu] = gaussian(A[iu], sigma, rng)
    return noisy + np.triu(noisy, 1).T


__all__ = ["COVARIANCES", "RESIDUALS", "BasisStats", "add_noise", "basis_stats", "clip_rows",
           "collapse", "fit_model", "orthonormal", "public_pca", "random_basis", "sample_model",
           "second_moment", "sensitivities", "split_basis", "symmetric_noise",
           "top_eigenvectors"]
