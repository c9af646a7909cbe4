"""The class-conditional model families the model-aware attacker refits, as fitted models.

:mod:`bioanon.attack.parametric` decides which families to try and reads the likelihood
ratio; this module fits one family to records with class codes and scores records under it:
per-class diagonal Gaussians, class means with a pooled (OAS-shrunk) covariance, per-class
covariances shrunk towards the pooled one, each in all features, in a principal basis (with
the residual directions as per-feature variances), in discriminant directions, or in a stated
public basis; and per-class mixtures with one tied diagonal covariance refined by EM.
Every fit is whole-array NumPy: class counts by ``bincount``, one matrix product per class
or (group, class) cell, never a loop over records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: the name every score of the model-aware attacker starts with
PREFIX = "model-aware LR"
#: most components per class the mixture family fits (2^b cells: b <= 3)
MAX_COMPONENTS = 8


@dataclass(frozen=True)
class Family:
    """One model family the attacker refits.

    ``covariance`` is "diag", "pooled" or "class"; ``rank`` None fits all d features, k the
    release's top k principal directions; ``residual`` adds the d − k other directions as
    per-feature variances (the basis model's residual); ``discriminant`` m fits the release's
    top m discriminant directions instead (those separating its class means against its
    pooled within-class spread; 0: the number of classes − 1), where a model that keeps its
    class structure in few directions carries its members' trace. ``stated`` fits the
    method's declared public basis instead (:class:`~bioanon.anonymize.release_model.
    PublicBasis`: its kept coordinates; ``residual`` then one isotropic variance for the
    d − k others). ``covariance`` "tied" is one variance per coordinate pooled over the
    classes (and the components). ``components`` > 1: per class, a mixture of that many
    Gaussians with one tied diagonal covariance, fitted by :data:`~.class_models.EM_STEPS` EM
    steps from the
    split a cells method makes (signs along the top within-class directions).
    """

    covariance: str
    rank: int | None = None
    residual: bool = False
    discriminant: int | None = None
    stated: bool = False
    components: int = 1

    @property
    def name(self) -> str:
        if self.discriminant is not None:
            m = "C-1" if self.discriminant == 0 else str(self.discriminant)
            return f"{PREFIX} ({self.covariance}, top {m} discriminant directions)"
        if self.stated:
            where = "stated basis"
        else:
            where = "all d" if self.rank is None else f"top {self.rank} directions"
        extra = " + residual" if self.residual else ""
        cov = (self.covariance if self.components == 1
               else f"mixture of {self.components} {self.covariance}")
        return f"{PREFIX} ({cov}, {where}{extra})"


#: weight of the pooled covariance mixed into each class's (class covariances, d > n_c)
CLASS_POOL = 0.5
#: floor of a variance, relative to the mean variance
VAR_FLOOR = 1e-4
#: floor of a variance in standardized units (the reference's), e.g. where a release repeats
#: its class means and has no spread at all
MIN_VAR = 1e-6
#: EM steps of the mixture family (after the method's own sign-split initialisation)
EM_STEPS = 5
#: pseudo-count per component of the mixture weights (a component no record reaches keeps
#: a small weight instead of -inf)
MIX_PRIOR = 1.0


# ---------------------------------------------------------------------- fitting
def _oas(S: np.ndarray, n: float) -> np.ndarray:
    """``S`` shrunk towards its mean variance × I with the oracle approximating shrinkage
    intensity (Chen, Wiesel, Eldar & Hero 2010, as scikit-learn's ``OAS``) for ``n`` samples:
    invertible at d > n, and a function of ``S`` alone (no record is read again)."""
    d = S.shape[0]
    mu = float(np.trace(S)) / d
    alpha = float(np.mean(S * S))
    num = alpha + mu * mu
    den = (n + 1.0) * (alpha - mu * mu / d)
    lam = 1.0 if den <= 0 else min(num / den, 1.0)
    out = (1.0 - lam) * S
    out[np.diag_indices(d)] += lam * mu
    return out


def _whitener(S: np.ndarray) -> tuple[np.ndarray, float]:
    """``(W, log det S)`` with ``W = L⁻¹`` for ``S = L Lᵀ`` (so ``‖W x‖² = xᵀ S⁻¹ x``)."""
    from scipy.linalg import lapack

    d = S.shape[0]
    jitter = max(VAR_FLOOR * float(np.trace(S)) / d, MIN_VAR)
    for _ in range(6):  # a release whose records repeat their class mean has no spread
        A = S.copy()
        A[np.diag_indices(d)] += jitter
        try:
            L = np.linalg.cholesky(A)
            break
        except np.linalg.LinAlgError:
            jitter *= 100.0
    else:  # pragma: no cover - a diagonal this large is positive definite
        L = np.linalg.cholesky(np.diag(np.maximum(np.diag(S), 0.0) + jitter))
    W, info = lapack.dtrtri(L, lower=1)
    if info != 0:  # pragma: no cover - a Cholesky factor is invertible
        W = np.linalg.inv(L)
    return np.tril(W), 2.0 * float(np.log(np.diag(L)).sum())


@dataclass
class _Model:
    """A fitted class-conditional Gaussian (means per class; covariance per ``kind``)."""

    kind: str
    means: np.ndarray  # (C, d); NaN rows: the class was not seen
    seen: np.ndarray  # (C,) bool
    var: np.ndarray | None = None  # diag: (C, d)
    W: Any = None  # pooled: (d, d); class: list of (d, d)
    logdet: Any = None  # pooled: float; class: (C,)

    def loglik(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """``log p(z | class)`` per row up to a constant (NaN where the class is unseen)."""
        out = np.full(Z.shape[0], np.nan)
        ok = self.seen[codes]
        if not ok.any():
            return out
        rows = np.flatnonzero(ok)
        D = Z[rows] - self.means[codes[rows]]
        if self.kind in ("diag", "tied"):
            v = self.var[codes[rows]]  # type: ignore[index]
            out[rows] = -0.5 * (np.sum(D * D / v, axis=1) + np.sum(np.log(v), axis=1))
        elif self.kind == "pooled":
            Y = D @ self.W.T
            out[rows] = -0.5 * (np.einsum("ij,ij->i", Y, Y) + self.logdet)
        else:
            c_rows = codes[rows]
            for c in np.unique(c_rows):  # a matrix product per class, never per record
                sel = c_rows == c
                Y = D[sel] @ self.W[c].T
                out[rows[sel]] = -0.5 * (np.einsum("ij,ij->i", Y, Y) + self.logdet[c])
        return out

    def loglik_all(self, Z: np.ndarray) -> np.ndarray:
        """``log p(z | c)`` for every row and class (n, C) (diag, tied and pooled only)."""
        C = self.means.shape[0]
        out = np.full((Z.shape[0], C), np.nan)
        if self.kind == "pooled":
            M = np.nan_to_num(self.means[self.seen]) @ self.W.T
            Y = Z @ self.W.T
            sq = (np.einsum("ij,ij->i", Y, Y)[:, None] - 2.0 * Y @ M.T
                  + np.einsum("ij,ij->i", M, M)[None, :])
            out[:, self.seen] = -0.5 * (sq + self.logdet)
            return out
        seen = np.flatnonzero(self.seen)
        iv = 1.0 / self.var[seen]  # type: ignore[index]
        mu = self.means[seen]
        # Σ_j (z_j − μ_cj)² / v_cj for every class at once: three matrix products
        quad = (Z * Z) @ iv.T - 2.0 * Z @ (mu * iv).T + np.sum(mu * mu * iv, axis=1)[None, :]
        out[:, seen] = -0.5 * (quad + np.sum(np.log(self.var[seen]), axis=1)[None, :])  # type: ignore[index]
        return out


@dataclass
class _Sums:
    """Sufficient statistics of rows grouped by (group, class): counts, sums, per-feature
    squares, and the second moments a covariance needs (per group; per group and class)."""

    count: np.ndarray  # (G, C)
    sums: np.ndarray  # (G, C, d)
    sq: np.ndarray  # (G, C, d)
    second: np.ndarray | None = None  # (G, d, d)
    second_c: np.ndarray | None = None  # (G, C, d, d)


def _sums(Z: np.ndarray, codes: np.ndarray, n_classes: int, groups: np.ndarray,
          n_groups: int, kind: str) -> _Sums:
    """One pass over the rows (sparse one-hot products; a d × d product per group, or per
    group and class for ``kind="class"``; never a loop over records)."""
    import scipy.sparse as sp

    n, d = Z.shape
    cell = np.asarray(groups, np.int64) * n_classes + np.asarray(codes, np.int64)
    K = n_groups * n_classes
    onehot = sp.csr_matrix((np.ones(n), (cell, np.arange(n))), shape=(K, n))
    count = np.bincount(cell, minlength=K).reshape(n_groups, n_classes).astype(np.float64)
    sums = np.asarray(onehot @ Z).reshape(n_groups, n_classes, d)
    sq = np.asarray(onehot @ (Z * Z)).reshape(n_groups, n_classes, d)
    out = _Sums(count, sums, sq)
    if kind in ("diag", "tied"):
        return out
    order = np.argsort(cell, kind="stable")
    bounds = np.searchsorted(cell[order], np.arange(K + 1))
    if kind == "class":
        sc = np.zeros((K, d, d))
        for k in np.flatnonzero(np.diff(bounds) > 0):  # one product per (group, class)
            Zk = Z[order[bounds[k]:bounds[k + 1]]]
            sc[k] = Zk.T @ Zk
        out.second_c = sc.reshape(n_groups, n_classes, d, d)
        out.second = out.second_c.sum(axis=1)
        return out
    g_order = np.argsort(groups, kind="stable")
    g_bounds = np.searchsorted(np.asarray(groups)[g_order], np.arange(n_groups + 1))
    second = np.zeros((n_groups, d, d))
    for g in range(n_groups):  # one product per group
        Zg = Z[g_order[g_bounds[g]:g_bounds[g + 1]]]
        second[g] = Zg.T @ Zg
    out.second = second
    return out


def _model(s: _Sums, use: np.ndarray, kind: str) -> _Model:
    """The class Gaussian of ``kind`` fitted on the groups ``use`` of the statistics ``s``."""
    count = s.count[use].sum(axis=0)
    sums = s.sums[use].sum(axis=0)
    seen = count >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(count[:, None] > 0, sums / count[:, None], np.nan)
    mu0 = np.nan_to_num(means)
    d = sums.shape[1]
    if kind in ("diag", "tied"):
        within = s.sq[use].sum(axis=0) - count[:, None] * mu0 * mu0
        n_pool = max(float(count.sum()) - float((count > 0).sum()), 1.0)
        pooled = within.sum(axis=0) / n_pool
        if kind == "tied":  # one variance per coordinate, pooled over the classes
            var = np.broadcast_to(pooled, within.shape).copy()
        else:
            var = within / np.maximum(count - 1.0, 1.0)[:, None]
        var = np.maximum(var, max(VAR_FLOOR * float(pooled.mean()), MIN_VAR))
        return _Model(kind, means, seen, var=var)
    outer = np.einsum("c,ci,cj->ij", count, mu0, mu0)
    scatter = s.second[use].sum(axis=0) - outer  # type: ignore[index]
    n_eff = max(float(count.sum()) - float((count > 0).sum()), 1.0)
    S = _oas(scatter / n_eff, n_eff)
    if kind == "pooled":
        W, logdet = _whitener(S)
        return _Model("pooled", means, seen, W=W, logdet=logdet)
    Ws: list[Any] = [None] * count.size
    logdets = np.zeros(count.size)
    second_c = s.second_c[use].sum(axis=0)  # type: ignore[index]
    for c in np.flatnonzero(seen):  # one d × d covariance per class
        Sc = (second_c[c] - count[c] * np.outer(mu0[c], mu0[c])) / max(count[c] - 1.0, 1.0)
        Ws[c], logdets[c] = _whitener((1.0 - CLASS_POOL) * Sc + CLASS_POOL * S)
    del d
    return _Model("class", means, seen, W=Ws, logdet=logdets)


def fit_class_gaussian(Z: np.ndarray, codes: np.ndarray, n_classes: int, kind: str) -> _Model:
    """Fit a class-conditional Gaussian of ``kind`` ("diag", "tied", "pooled", "class") to rows
    ``Z``
    with class ``codes`` (loops over classes only).

    Examples
    --------
    >>> Z = np.random.default_rng(0).normal(size=(60, 4)); c = np.repeat([0, 1], 30)
    >>> m = fit_class_gaussian(Z, c, 3, "pooled")
    >>> m.seen.tolist(), bool(np.isnan(m.loglik(Z[:2], np.array([2, 0])))[0])
    ([True, True, False], True)
    """
    one = np.zeros(Z.shape[0], np.int64)
    return _model(_sums(Z, codes, n_classes, one, 1, kind), np.ones(1, bool), kind)


def principal_basis(Z_release: np.ndarray, k: int) -> np.ndarray:
    """The release's top ``k`` principal directions (d, k)."""
    Zc = Z_release - Z_release.mean(axis=0)
    vals, vecs = np.linalg.eigh(Zc.T @ Zc)
    return vecs[:, ::-1][:, :k].copy()


def discriminant_basis(Z_release: np.ndarray, codes: np.ndarray, n_classes: int, m: int
                  ) -> np.ndarray:
    """The release's top ``m`` discriminant directions (d, m): its class means, whitened by
    its pooled within-class covariance, along their leading singular directions (0: as many
    as its classes − 1)."""
    model = fit_class_gaussian(Z_release, codes, n_classes, "pooled")
    means = model.means[model.seen]
    if means.shape[0] < 2:
        return np.zeros((Z_release.shape[1], 0))
    k = means.shape[0] - 1 if m == 0 else min(int(m), means.shape[0] - 1)
    Mw = (means - means.mean(axis=0)) @ model.W.T
    _, _, Vt = np.linalg.svd(Mw, full_matrices=False)
    return model.W.T @ Vt[:k].T


@dataclass
class _BasisModel:
    """A class Gaussian in k directions plus, optionally, per-feature residual variances."""

    inner: _Model
    B: np.ndarray
    res_mean: np.ndarray | None = None
    res_var: np.ndarray | None = None
    #: one variance for the d − k residual directions (a stated basis's isotropic residual)
    res_iso: float | None = None

    def loglik(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        Y = Z @ self.B
        out = self.inner.loglik(Y, codes)
        if self.res_iso is not None:
            E = Z - Y @ self.B.T - self.res_mean
            dim = max(self.B.shape[0] - self.B.shape[1], 1)
            out = out - 0.5 * (np.sum(E * E, axis=1) / self.res_iso
                               + dim * float(np.log(self.res_iso)))
        elif self.res_var is not None:
            E = Z - Y @ self.B.T - self.res_mean
            out = out - 0.5 * (np.sum(E * E / self.res_var, axis=1)
                               + float(np.sum(np.log(self.res_var))))
        return out


def _residual(E_sums: _Sums, use: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = float(E_sums.count[use].sum())
    m = E_sums.sums[use].sum(axis=(0, 1)) / max(n, 1.0)
    v = E_sums.sq[use].sum(axis=(0, 1)) / max(n, 1.0) - m * m
    return m, np.maximum(v, max(VAR_FLOOR * float(v.mean()), MIN_VAR))


def fitted_family(Z: np.ndarray, codes: np.ndarray, n_classes: int, fam: Family,
            B: np.ndarray | None, groups: np.ndarray, n_groups: int) -> list[Any]:
    """The family fitted once per left-out group (``n_groups`` = 1: once on every row)."""
    cov = fam.covariance
    Y = Z if B is None else Z @ B
    out: list[Any] = []
    if fam.components > 1:
        for g in range(n_groups):  # K EM fits, one per left-out group
            rows = np.flatnonzero(groups != g) if n_groups > 1 else np.arange(Z.shape[0])
            out.append(fit_mixture(Y[rows], codes[rows], n_classes, fam.components, B))
        return out
    stats = _sums(Y, codes, n_classes, groups, n_groups, cov)
    res = None
    if B is not None and fam.residual:
        res = _sums(Z - Y @ B.T, np.zeros(Z.shape[0], np.int64), 1, groups, n_groups, "diag")
    for g in range(n_groups):
        use = (np.arange(n_groups) != g) if n_groups > 1 else np.ones(1, bool)
        inner = _model(stats, use, cov)
        if B is None:
            out.append(inner)
        elif res is None:
            out.append(_BasisModel(inner, B))
        elif fam.stated:  # the stated basis's residual: one variance for its d − k others
            m, v = _residual(res, use)
            dim = max(B.shape[0] - B.shape[1], 1)
            out.append(_BasisModel(inner, B, m, None, max(float(v.sum()) / dim, MIN_VAR)))
        else:
            out.append(_BasisModel(inner, B, *_residual(res, use)))
    return out


# ---------------------------------------------------------------------- mixture
@dataclass
class _Mixture:
    """Per class, a mixture of K Gaussians with one diagonal covariance tied over every class
    and component (in the coordinates ``B``; None: all d features)."""

    means: np.ndarray  # (C, K, k)
    logw: np.ndarray  # (C, K)
    var: np.ndarray  # (k,)
    seen: np.ndarray  # (C,) bool
    B: np.ndarray | None = None

    def _components(self, Y: np.ndarray) -> np.ndarray:
        """``log w_ck + log N(y; m_ck, diag var)`` up to a constant, (n, C, K): three matrix
        products, never a loop over records."""
        C, K, k = self.means.shape
        M = np.nan_to_num(self.means.reshape(C * K, k))
        iv = 1.0 / self.var
        quad = ((Y * Y) @ iv)[:, None] - 2.0 * (Y * iv) @ M.T + ((M * M) @ iv)[None, :]
        return (-0.5 * (quad + float(np.sum(np.log(self.var))))).reshape(-1, C, K) \
            + self.logw[None]

    def loglik(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        from scipy.special import logsumexp

        Y = Z if self.B is None else Z @ self.B
        out = np.full(Z.shape[0], np.nan)
        rows = np.flatnonzero(self.seen[codes])
        if rows.size:
            L = self._components(Y[rows])
            out[rows] = logsumexp(L[np.arange(rows.size), codes[rows]], axis=1)
        return out


def _split_cells(Y: np.ndarray, codes: np.ndarray, n_classes: int, K: int) -> np.ndarray:
    """The cells a cells method cuts its classes into, as the attacker redraws them from a
    set of records: the signs of each record's deviation from its class mean, each
    coordinate scaled by its overall spread (the method's whitening), along the top log2 K
    eigenvectors of the pooled within-class second moment (deterministic; a cell's number
    only names it)."""
    import scipy.sparse as sp

    b = max(int(np.log2(K)), 1)
    n = Y.shape[0]
    onehot = sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(n_classes, n))
    cnt = np.maximum(np.bincount(codes, minlength=n_classes), 1).astype(np.float64)
    D = Y - (np.asarray(onehot @ Y) / cnt[:, None])[codes]
    D = D / np.maximum(Y.std(axis=0), np.sqrt(MIN_VAR))
    vals, vecs = np.linalg.eigh(D.T @ D)
    V = vecs[:, np.argsort(vals)[::-1][:b]]
    bits = (D @ V > 0).astype(np.int64) @ (1 << np.arange(V.shape[1], dtype=np.int64))
    return np.asarray(bits % K, np.int64)


def fit_mixture(Y: np.ndarray, codes: np.ndarray, n_classes: int, K: int,
                 B: np.ndarray | None, steps: int = EM_STEPS) -> _Mixture:
    """Per class, K tied-diagonal Gaussian components: hard start from :func:`_split_cells`,
    then ``steps`` EM steps (whole-array: responsibilities (n, K), sums by sparse one-hot
    products; loops over components and steps only)."""
    import scipy.sparse as sp
    from scipy.special import logsumexp

    n, k = Y.shape
    count = np.bincount(codes, minlength=n_classes).astype(np.float64)
    seen = count >= 2
    onehot = sp.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(n_classes, n))
    R = np.zeros((n, K))
    R[np.arange(n), _split_cells(Y, codes, n_classes, K)] = 1.0
    class_mean = np.asarray(onehot @ Y) / np.maximum(count, 1.0)[:, None]
    total_sq = (Y * Y).sum(axis=0)
    model = _Mixture(np.zeros((n_classes, K, k)), np.zeros((n_classes, K)), np.ones(k), seen, B)
    for step in range(steps + 1):
        Nk = np.asarray(onehot @ R)  # (C, K)
        sums = np.stack([np.asarray(onehot @ (Y * R[:, j:j + 1])) for j in range(K)], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(Nk[..., None] >= 1.0, sums / Nk[..., None],
                             class_mean[:, None, :])
        var = (total_sq - np.einsum("ck,ckj->j", Nk, means * means)) / max(float(n), 1.0)
        var = np.maximum(var, max(VAR_FLOOR * float(np.mean(np.abs(var))), MIN_VAR))
        logw = np.log((Nk + MIX_PRIOR) / (count[:, None] + K * MIX_PRIOR))
        model = _Mixture(means, logw, var, seen, B)
        if step == steps:
            break
        L = model._components(Y)[np.arange(n), codes]  # (n, K): the record's own class
        R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
    return model




__all__ = ["CLASS_POOL", "EM_STEPS", "MAX_COMPONENTS", "MIN_VAR", "MIX_PRIOR", "PREFIX",
           "VAR_FLOOR", "Family", "discriminant_basis", "fit_class_gaussian", "fit_mixture",
           "fitted_family", "principal_basis"]
