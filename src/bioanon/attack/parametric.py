"""The model-aware attacker: refit the release's own model family and read the likelihood ratio.

A release that is a fresh sample of a model fitted on its members carries that model back
out: refitted on the release, it fits the members better than anyone else, by about p/n nats
of log-likelihood per record for p parameters fitted on n records (the optimism behind AIC).
The attacker knows the method and its parameters, so it knows the family
(:meth:`~bioanon.anonymize.base.Anonymizer.release_model`). It fits that family

- on the **release**, per class of the column the method conditions on (label-aware), and
- on its own clear **reference** records, the same family, **cross-fitted**: the reference is
  split into :data:`FOLDS` folds (by identity where there are at least 20 people, else by
  record) and a candidate is scored by the model of the folds that do not hold it (nor, with
  identity folds, its person); members are scored by the model leaving out their person's
  fold, so both sides see reference models of the same size,

and scores each candidate by ``log p_release(x | y) − log p_reference(x | y)`` (higher:
member). Families (:class:`Family`): per-class diagonal Gaussians; class means with one pooled
within-class covariance (Ledoit–Wolf shrunk, so it stays invertible at d > n); per-class
covariances shrunk half-way to the pooled one; each either in all d features or in the
release's top k principal directions (k the declared rank, else :data:`GENERIC_RANK`), there
optionally with the d − k other directions as per-feature variances (the basis model's
residual). Without a declaration the attacker still runs the generic families (diagonal and
pooled in all d features, pooled in the top directions): the threat model allows it to try
them. Features are standardized by the reference (the same for every release of a game).

Inference on members (:func:`parametric_labels`): the label whose class model, fitted on the
release, fits the candidate best (the release's own Bayes classifier under the declared
family), and the label whose release model fits it best relative to the reference model of
the same label.

Cost: fitting a family is one d × d scatter per fit (n·d² flops) and one Cholesky factor per
covariance (d³; C of them for per-class covariances); scoring is n·d² per family. With K folds
the reference side costs K fits, computed once per game and kept (the identity level's K
releases share them). Linear in the records, quadratic in the features.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> y = np.repeat(["a", "b"], 100)
>>> members, others, ref = (rng.normal(size=(200, 20)) + (y == "a")[:, None] for _ in "123")
>>> mu = np.stack([members[y == c].mean(0) for c in "ab"]); sd = members.std(0)
>>> release = mu[(y == "b").astype(int)] + rng.normal(size=(200, 20)) * sd   # fitted on members
>>> s = likelihood_ratios(np.vstack([members, others]), np.r_[y, y], release, y, ref, y,
...                       [Family("diag", None)])
>>> lr = s["model-aware LR (diag, all d)"]
>>> bool(lr[:200].mean() > lr[200:].mean())
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .game import Attacker, Game, Scores

#: folds of the reference population (a candidate never sits in a model that scores it)
FOLDS = 5
#: the top principal directions the generic basis family uses when no rank is declared
GENERIC_RANK = 16
#: weight of the pooled covariance mixed into each class's (class covariances, d > n_c)
CLASS_POOL = 0.5
#: floor of a variance, in standardized units
VAR_FLOOR = 1e-4
#: fewest identities for folds by identity (else by record), as the evaluation's identity level
MIN_ID_FOLDS = 20
#: the name every score of this attacker starts with
PREFIX = "model-aware LR"


@dataclass(frozen=True)
class Family:
    """One model family the attacker refits.

    ``covariance`` is "diag", "pooled" or "class"; ``rank`` None fits all d features, k the
    release's top k principal directions; ``residual`` adds the d − k other directions as
    per-feature variances (the basis model's residual).
    """

    covariance: str
    rank: int | None = None
    residual: bool = False

    @property
    def name(self) -> str:
        where = "all d" if self.rank is None else f"top {self.rank} directions"
        extra = " + residual" if self.residual else ""
        return f"{PREFIX} ({self.covariance}, {where}{extra})"


#: what every game tries, declared or not (the threat model allows an attacker to try them)
GENERIC: tuple[Family, ...] = (Family("diag"), Family("pooled"), Family("pooled", GENERIC_RANK))
#: the covariance the attacker fits for a declared one
_COVARIANCE = {"diag": "diag", "spherical": "diag", "pooled": "pooled", "class": "class",
               "factor": "class", "full": "class"}


def families(model: Any, d: int) -> list[Family]:
    """The families the attacker refits for a declared model (None: the generic ones only).

    Examples
    --------
    >>> from bioanon.anonymize.release_model import ReleaseModel
    >>> for f in families(ReleaseModel("basis-gaussian", "class", rank=8), 400):
    ...     print(f.name)
    model-aware LR (diag, all d)
    model-aware LR (pooled, all d)
    model-aware LR (pooled, top 16 directions)
    model-aware LR (class, top 8 directions)
    model-aware LR (class, top 8 directions + residual)
    """
    out = list(GENERIC)
    if model is not None:
        cov = _COVARIANCE.get(str(getattr(model, "covariance", "")), "class")
        rank = getattr(model, "rank", None)
        if getattr(model, "family", "") == "basis-gaussian":
            k = int(rank or GENERIC_RANK)
            cov_b = "pooled" if cov == "diag" else cov
            out += [Family(cov_b, k), Family(cov_b, k, residual=True)]
        else:
            out.append(Family(cov))
            if cov == "class" and rank:
                out.append(Family("class", int(rank)))
    seen: dict[tuple[str, int | None, bool], Family] = {}
    for f in out:
        rk = None if f.rank is None or f.rank >= d else int(f.rank)
        if rk is None and f.residual:
            continue
        seen.setdefault((f.covariance, rk, f.residual), Family(f.covariance, rk, f.residual))
    return list(seen.values())


# ---------------------------------------------------------------------- fitting
def _ledoit_wolf(R: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``S`` (the covariance of the centred rows ``R``) shrunk towards its mean variance × I
    with the Ledoit–Wolf intensity (capped at 1)."""
    n, d = R.shape
    mu = float(np.trace(S)) / d
    target = mu * np.eye(d)
    delta = float(np.sum(np.square(S - target)))
    sq = np.einsum("ij,ij->i", R, R)
    beta = max((float(np.sum(sq * sq)) - n * float(np.sum(S * S))) / n**2, 0.0)
    lam = 1.0 if delta <= 0 else min(beta / delta, 1.0)
    return (1.0 - lam) * S + lam * target


def _whitener(S: np.ndarray) -> tuple[np.ndarray, float]:
    """``(W, log det S)`` with ``W = L⁻¹`` for ``S = L Lᵀ`` (so ``‖W x‖² = xᵀ S⁻¹ x``)."""
    d = S.shape[0]
    S = S + (VAR_FLOOR * max(float(np.trace(S)) / d, 1e-12)) * np.eye(d)
    L = np.linalg.cholesky(S)
    W = np.linalg.solve(L, np.eye(d))
    return W, 2.0 * float(np.log(np.diag(L)).sum())


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
        if self.kind == "diag":
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
        """``log p(z | c)`` for every row and class (n, C) (diag and pooled only)."""
        C = self.means.shape[0]
        out = np.full((Z.shape[0], C), np.nan)
        if self.kind == "pooled":
            Y, M = Z @ self.W.T, self.means @ self.W.T
            sq = (np.einsum("ij,ij->i", Y, Y)[:, None] - 2.0 * Y @ M.T
                  + np.einsum("ij,ij->i", M, M)[None, :])
            out[:, self.seen] = -0.5 * (sq[:, self.seen] + self.logdet)
            return out
        for c in np.flatnonzero(self.seen):
            D = Z - self.means[c]
            v = self.var[c]  # type: ignore[index]
            out[:, c] = -0.5 * (np.sum(D * D / v, axis=1) + float(np.sum(np.log(v))))
        return out


def fit_class_gaussian(Z: np.ndarray, codes: np.ndarray, n_classes: int, kind: str) -> _Model:
    """Fit a class-conditional Gaussian of ``kind`` ("diag", "pooled", "class") to rows ``Z``
    with class ``codes`` (loops over classes only).

    Examples
    --------
    >>> Z = np.random.default_rng(0).normal(size=(60, 4)); c = np.repeat([0, 1], 30)
    >>> m = fit_class_gaussian(Z, c, 3, "pooled")
    >>> m.seen.tolist(), bool(np.isnan(m.loglik(Z[:2], np.array([2, 0])))[0])
    ([True, True, False], True)
    """
    n, d = Z.shape
    count = np.bincount(codes, minlength=n_classes).astype(np.float64)
    seen = count >= 2
    sums = np.zeros((n_classes, d))
    np.add.at(sums, codes, Z)
    means = np.where(count[:, None] > 0, sums / np.maximum(count, 1.0)[:, None], np.nan)
    R = Z - np.nan_to_num(means)[codes]
    if kind == "diag":
        sq = np.zeros((n_classes, d))
        np.add.at(sq, codes, R * R)
        pooled = sq.sum(axis=0) / max(n - int(seen.sum()), 1)
        var = sq / np.maximum(count - 1.0, 1.0)[:, None]
        var = np.maximum(var, VAR_FLOOR * max(float(pooled.mean()), 1e-12))
        return _Model("diag", means, seen, var=var)
    keep = seen[codes]
    S = R[keep].T @ R[keep] / max(int(keep.sum()) - int(seen.sum()), 1)
    S = _ledoit_wolf(R[keep], S)
    if kind == "pooled":
        W, logdet = _whitener(S)
        return _Model("pooled", means, seen, W=W, logdet=logdet)
    Ws: list[Any] = [None] * n_classes
    logdets = np.zeros(n_classes)
    for c in np.flatnonzero(seen):  # one d × d covariance per class
        Rc = R[codes == c]
        Sc = Rc.T @ Rc / max(Rc.shape[0] - 1, 1)
        Ws[c], logdets[c] = _whitener((1.0 - CLASS_POOL) * Sc + CLASS_POOL * S)
    return _Model("class", means, seen, W=Ws, logdet=logdets)


def _basis(Z_release: np.ndarray, k: int) -> np.ndarray:
    """The release's top ``k`` principal directions (d, k)."""
    Zc = Z_release - Z_release.mean(axis=0)
    vals, vecs = np.linalg.eigh(Zc.T @ Zc)
    return vecs[:, ::-1][:, :k].copy()


@dataclass
class _BasisModel:
    """A class Gaussian in k directions plus, optionally, per-feature residual variances."""

    inner: _Model
    B: np.ndarray
    res_mean: np.ndarray | None = None
    res_var: np.ndarray | None = None

    def loglik(self, Z: np.ndarray, codes: np.ndarray) -> np.ndarray:
        Y = Z @ self.B
        out = self.inner.loglik(Y, codes)
        if self.res_var is not None:
            E = Z - Y @ self.B.T - self.res_mean
            out = out - 0.5 * (np.sum(E * E / self.res_var, axis=1)
                               + float(np.sum(np.log(self.res_var))))
        return out


def _fit(Z: np.ndarray, codes: np.ndarray, n_classes: int, fam: Family,
         B: np.ndarray | None) -> Any:
    if B is None:
        return fit_class_gaussian(Z, codes, n_classes, fam.covariance)
    inner = fit_class_gaussian(Z @ B, codes, n_classes, fam.covariance)
    if not fam.residual:
        return _BasisModel(inner, B)
    E = Z - (Z @ B) @ B.T
    m = E.mean(axis=0)
    v = np.maximum(E.var(axis=0), VAR_FLOOR * max(float(E.var(axis=0).mean()), 1e-12))
    return _BasisModel(inner, B, m, v)


# ---------------------------------------------------------------------- folds
def reference_folds(reference_ids: np.ndarray, candidate_ids: np.ndarray,
                    in_reference: np.ndarray, rng: np.random.Generator,
                    folds: int = FOLDS) -> tuple[np.ndarray, np.ndarray]:
    """The fold of every reference record and of every candidate.

    By identity where the reference holds at least :data:`MIN_ID_FOLDS` people (a candidate
    takes its person's fold, so neither its record nor its person is in the model that scores
    it, member or not); else by record (a non-member takes its own row's fold, a member a
    random one).

    Examples
    --------
    >>> ids = np.repeat(np.arange(30).astype(str), 4)
    >>> fr, fc = reference_folds(ids, ids[:8], np.arange(8), np.random.default_rng(0))
    >>> bool((fc == fr[:8]).all()), len(set(fr[ids == "0"])) == 1
    (True, True)
    """
    ref_ids = np.asarray(reference_ids).astype(str)
    cand_ids = np.asarray(candidate_ids).astype(str)
    in_ref = np.asarray(in_reference, dtype=np.int64)
    people, codes = np.unique(ref_ids, return_inverse=True)
    if people.size >= MIN_ID_FOLDS:
        person_fold = rng.permutation(people.size) % folds
        f_ref = person_fold[codes]
        pos = np.clip(np.searchsorted(people, cand_ids), 0, people.size - 1)
        known = people[pos] == cand_ids
        f_cand = np.where(known, person_fold[pos], rng.integers(0, folds, cand_ids.size))
    else:
        f_ref = rng.permutation(ref_ids.size) % folds
        f_cand = rng.integers(0, folds, cand_ids.size)
    inside = in_ref >= 0
    f_cand[inside] = f_ref[in_ref[inside]]
    return f_ref.astype(np.int64), f_cand.astype(np.int64)


def _reference_loglik(Zc: np.ndarray, c_codes: np.ndarray, Zr: np.ndarray,
                      r_codes: np.ndarray, n_classes: int, fam: Family, B: np.ndarray | None,
                      f_ref: np.ndarray, f_cand: np.ndarray) -> np.ndarray:
    """Each candidate's log-likelihood under the reference model of the other folds."""
    out = np.full(Zc.shape[0], np.nan)
    for k in np.unique(f_cand):  # K fits, never one per record
        rows = np.flatnonzero(f_cand == k)
        train = f_ref != k
        model = _fit(Zr[train], r_codes[train], n_classes, fam, B)
        out[rows] = model.loglik(Zc[rows], c_codes[rows])
    return out


# ---------------------------------------------------------------------- scores
def _codes(*labels: np.ndarray) -> tuple[list[np.ndarray], int]:
    allv = np.concatenate([np.asarray(v).astype(str) for v in labels])
    classes, codes = np.unique(allv, return_inverse=True)
    out, s = [], 0
    for v in labels:
        out.append(codes[s:s + len(v)])
        s += len(v)
    return out, int(classes.size)


def _standardizer(reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    R = np.asarray(reference, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    return mu, np.where(sd > 0, sd, 1.0)


def likelihood_ratios(candidates: np.ndarray, candidate_labels: np.ndarray,
                      released: np.ndarray, released_labels: np.ndarray,
                      reference: np.ndarray, reference_labels: np.ndarray,
                      fams: Sequence[Family], *, reference_ids: np.ndarray | None = None,
                      candidate_ids: np.ndarray | None = None,
                      in_reference: np.ndarray | None = None,
                      rng: np.random.Generator | None = None,
                      cache: dict[str, Any] | None = None) -> Scores:
    """``log p_release(x | y) − log p_reference(x | y)`` per candidate for every family.

    Labels are the class column the model conditions on (strings; an interest × additional
    stratum joined into one value). The reference side is cross-fitted
    (:func:`reference_folds`); ``cache`` keeps it between calls with the same candidates and
    reference (the families in all d features). A candidate of a class the release or the
    reference lacks scores 0 (no evidence either way).
    """
    n = len(candidates)
    rng = rng if rng is not None else np.random.default_rng(0)
    ref_ids = (np.arange(len(reference)).astype(str) if reference_ids is None
               else np.asarray(reference_ids))
    cand_ids = (np.array([f"candidate {i}" for i in range(n)]) if candidate_ids is None
                else np.asarray(candidate_ids))
    in_ref = np.full(n, -1) if in_reference is None else np.asarray(in_reference)
    cache = {} if cache is None else cache
    (c_codes, r_codes, s_codes), n_classes = _codes(candidate_labels, reference_labels,
                                                    released_labels)
    if "standardizer" not in cache:
        cache["standardizer"] = _standardizer(reference)
        cache["folds"] = reference_folds(ref_ids, cand_ids, in_ref, rng)
    mu, sd = cache["standardizer"]
    f_ref, f_cand = cache["folds"]
    Zc = (np.asarray(candidates, np.float64) - mu) / sd
    Zr = (np.asarray(reference, np.float64) - mu) / sd
    Zs = (np.asarray(released, np.float64) - mu) / sd
    bases: dict[int, np.ndarray] = {}
    out: Scores = {}
    for fam in fams:
        B = None
        if fam.rank is not None:
            B = bases.setdefault(fam.rank, _basis(Zs, fam.rank))
        key = f"reference/{fam.name}"
        if B is None and key in cache:
            ll_ref = cache[key]
        else:
            ll_ref = _reference_loglik(Zc, c_codes, Zr, r_codes, n_classes, fam, B, f_ref,
                                       f_cand)
            if B is None:
                cache[key] = ll_ref
        ll_rel = _fit(Zs, s_codes, n_classes, fam, B).loglik(Zc, c_codes)
        lr = ll_rel - ll_ref
        out[fam.name] = np.where(np.isfinite(lr), lr, 0.0)
    return out


def _model_of(anonymizer: Any) -> Any:
    get = getattr(anonymizer, "release_model", None)
    try:
        return get() if callable(get) else None
    except Exception:  # noqa: BLE001 - a declaration that fails is no declaration
        return None


def _stratum(labels: Mapping[str, np.ndarray], columns: Sequence[str], n: int) -> np.ndarray:
    parts = [np.asarray(labels[c]).astype(str) for c in columns if c in labels]
    if not parts:
        return np.full(n, "all")
    out = parts[0]
    for p in parts[1:]:
        out = np.char.add(np.char.add(out, "\x1f"), p)
    return out


def _columns(game: Game, model: Any) -> list[str]:
    cols = [game.interest]
    if model is not None and getattr(model, "interest", None):
        cols = [str(model.interest), *[str(c) for c in getattr(model, "additional", ())]]
    return [c for c in cols if c in game.candidate_labels and c in game.released_labels
            and c in game.reference_labels] or [game.interest]


def parametric_scores(game: Game) -> Scores:
    """The model-aware membership scores of a game (one per family, per unit)."""
    model = _model_of(game.anonymizer)
    cols = _columns(game, model)
    n = len(game.candidates)
    fams = families(model, game.candidates.shape[1])
    cache = game.cache.setdefault("parametric/" + "|".join(cols), {})
    lr = likelihood_ratios(game.candidates, _stratum(game.candidate_labels, cols, n),
                           game.released, _stratum(game.released_labels, cols,
                                                   len(game.released)),
                           game.reference, _stratum(game.reference_labels, cols,
                                                    len(game.reference)),
                           fams, reference_ids=game.reference_ids,
                           candidate_ids=game.candidate_ids, in_reference=game.in_reference,
                           rng=game.rng("parametric/folds"), cache=cache)
    return {k: game.per_unit(v) for k, v in lr.items()}


# ---------------------------------------------------------------------- inference
def parametric_labels(game: Game) -> Scores:
    """Model-aware inference on members, for every released label column the attacker holds
    for its candidates: the release's best class under the refitted family, and the best
    class relative to the reference (diag and pooled families, all d features). One guess
    per candidate (the inference risk judges records, with identities as units)."""
    out: Scores = {}
    n = len(game.candidates)
    for col in game.targets:
        if col not in game.released_labels or col not in game.reference_labels:
            continue
        (r_codes, s_codes), n_classes = _codes(game.reference_labels[col],
                                               game.released_labels[col])
        classes = np.unique(np.concatenate([np.asarray(v).astype(str) for v in (
            game.reference_labels[col], game.released_labels[col])]))
        cache = game.cache.setdefault(f"parametric-labels/{col}", {})
        if "standardizer" not in cache:
            cache["standardizer"] = _standardizer(game.reference)
            cache["folds"] = reference_folds(game.reference_ids, game.candidate_ids,
                                             game.in_reference,
                                             game.rng(f"parametric/labels/{col}"))
        mu, sd = cache["standardizer"]
        f_ref, f_cand = cache["folds"]
        Zc = (np.asarray(game.candidates, np.float64) - mu) / sd
        Zs = (np.asarray(game.released, np.float64) - mu) / sd
        for kind in ("diag", "pooled"):
            rel = fit_class_gaussian(Zs, s_codes, n_classes, kind).loglik_all(Zc)
            key = f"reference/{kind}"
            if key not in cache:
                Zr = (np.asarray(game.reference, np.float64) - mu) / sd
                ref = np.full((n, n_classes), np.nan)
                for k in np.unique(f_cand):
                    rows = np.flatnonzero(f_cand == k)
                    tr = f_ref != k
                    ref[rows] = fit_class_gaussian(Zr[tr], r_codes[tr], n_classes,
                                                   kind).loglik_all(Zc[rows])
                cache[key] = ref
            ref = cache[key]
            for label, table in (("release model's best class", rel),
                                 ("best class relative to the reference", rel - ref)):
                t = np.nan_to_num(table, nan=-np.inf)
                out[f"{PREFIX} ({kind}), {label}, '{col}'"] = classes[t.argmax(axis=1)]
    return out


MEMBERSHIP = Attacker(
    "model-aware likelihood ratio", "membership",
    "knows the method and the model family its release reproduces (the declared release "
    "model, else diagonal and pooled class Gaussians); refits it on the release and on its "
    "clear reference records, per class, and scores each candidate by the log-likelihood "
    "ratio, in all features and in the release's top principal directions",
    parametric_scores)
INFERENCE = Attacker(
    "model-aware labels", "inference",
    "refits the declared family (diagonal and pooled class Gaussians) per label value on the "
    "release and on its reference; guesses the label whose release model fits the candidate "
    "best, alone and relative to the reference",
    parametric_labels)

__all__ = ["FOLDS", "Family", "GENERIC", "INFERENCE", "MEMBERSHIP", "families",
           "fit_class_gaussian", "likelihood_ratios", "parametric_labels", "parametric_scores",
           "reference_folds"]
