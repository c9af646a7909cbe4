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
within-class covariance (OAS-shrunk towards its mean variance, so it stays invertible at
d > n); per-class
covariances shrunk half-way to the pooled one; each either in all d features or in the
release's top k principal directions (k the declared rank, else :data:`GENERIC_RANK`), there
optionally with the d − k other directions as per-feature variances (the basis model's
residual), or in the release's top discriminant directions (classes − 1, or the declared
``mean_rank``). Where the method declares a **public basis** (a rule of the feature names and
d the attacker calls: e.g. dp-cells' temporal DCT of each trajectory), the declared covariance
in that basis's kept coordinates (a diagonal one also tied over the classes), with and without
one isotropic variance for the d − k other directions; where it declares a **mixture**, per
class a mixture of its components with one tied diagonal covariance, started from the split a
cells method makes and refined by :data:`~.class_models.EM_STEPS` EM steps.
A rank left to a public rule
(``rank_rule``) is the rule's k. A basis drawn from a secret seed, or from public records the
attacker does not hold, declares no rule: the generic families read it. Without a declaration
the attacker still runs the generic families (diagonal and pooled in all d features, pooled in
the top principal and discriminant directions): the threat model allows it to try them.
Features are standardized by the reference (the same for every release of a game).

Inference on members (:func:`parametric_labels`): the label whose class model, fitted on the
release, fits the candidate best (the release's own Bayes classifier under the declared
family), and the label whose release model fits it best relative to the reference model of
the same label.

Cost: the reference is read once into sufficient statistics per fold and class (n·d² flops
for the second moments); each of the K fold-left-out models is a sum of those and one
Cholesky factor and its triangular inverse per covariance (d³; one per class for per-class
covariances); scoring is n·d² per family. The reference models are kept for the game's level,
so the membership and inference attackers and the identity level's K releases share them
(those in a stated basis too: the basis depends on no release). The mixture family costs
:data:`FOLDS` + 1 EM fits of a few steps, each n·C·K·k per step. Linear in the records, quadratic in
the features (cubic in the factorizations).

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

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .class_models import (
    MAX_COMPONENTS,
    PREFIX,
    Family,
    discriminant_basis,
    fitted_family,
    principal_basis,
)
from .game import Attacker, Game, Scores
from .kept import Kept, content_key

#: folds of the reference population (a candidate never sits in a model that scores it)
FOLDS = 5
#: the top principal directions the generic basis family uses when no rank is declared
GENERIC_RANK = 16
#: fewest identities for folds by identity (else by record), as the evaluation's identity level
MIN_ID_FOLDS = 20
#: what every game tries, declared or not (the threat model allows an attacker to try them)
GENERIC: tuple[Family, ...] = (Family("diag"), Family("pooled"), Family("pooled", GENERIC_RANK),
                               Family("pooled", discriminant=0))
#: the candidates' log-likelihoods under the reference models leaving their fold out, kept in
#: this process by a digest of the reference, its folds, the candidates and the family
#: (:func:`_reference_side`): they depend on no release, so every setting a search judges on
#: one split shares them (FSDD's stage 1 refitted the reference models of every game for each
#: of its 34 settings: 11 of its 107 CPU-seconds)
REFERENCE_SIDE_SIZE = 128
_REFERENCE_SIDE = Kept(REFERENCE_SIDE_SIZE)
#: the covariance the attacker fits for a declared one
_COVARIANCE = {"diag": "diag", "spherical": "diag", "pooled": "pooled", "class": "class",
               "factor": "class", "full": "class"}


def families(model: Any, d: int, n_classes: int | None = None, stated: bool = True
             ) -> list[Family]:
    """The families the attacker refits for a declared model (None: the generic ones only).

    A declared public basis adds the declared covariance in its kept coordinates (a "diag"
    one also tied over the classes), with and without the isotropic residual; a declared
    mixture adds the mixture family (in the public basis where there is one, else in all d
    features); a rank left to a public rule (``rank_rule``) is the rule's k for ``d`` features
    and ``n_classes`` classes. ``stated`` False: the attacker could not rebuild the declared
    public basis (its rule failed on these features); the mixture then runs in all d.

    Examples
    --------
    >>> from bioanon.anonymize.release_model import ReleaseModel
    >>> for f in families(ReleaseModel("basis-gaussian", "class", rank=8), 400):
    ...     print(f.name)
    model-aware LR (diag, all d)
    model-aware LR (pooled, all d)
    model-aware LR (pooled, top 16 directions)
    model-aware LR (pooled, top C-1 discriminant directions)
    model-aware LR (class, top 8 directions)
    model-aware LR (class, top 8 directions + residual)
    """
    out = list(GENERIC)
    if model is not None:
        cov = _COVARIANCE.get(str(getattr(model, "covariance", "")), "class")
        rank = getattr(model, "rank", None)
        rule = getattr(model, "rank_rule", None)
        if rank is None and callable(rule) and n_classes is not None:
            rank = int(rule(int(d), int(n_classes)))
        if getattr(model, "family", "") == "basis-gaussian":
            k = int(rank or GENERIC_RANK)
            cov_b = "pooled" if cov == "diag" else cov
            out += [Family(cov_b, k), Family(cov_b, k, residual=True)]
        else:
            out.append(Family(cov))
            if cov == "class" and rank:
                out.append(Family("class", int(rank)))
        m = getattr(model, "mean_rank", None)
        if m:
            out.append(Family("pooled", discriminant=int(m)))
        public = stated and getattr(model, "public_basis", None) is not None
        if public:
            first = ["tied", "diag"] if cov == "diag" else [cov]
            out += [Family(c, stated=True) for c in first]
            if getattr(model.public_basis, "residual", "none") == "isotropic":
                out.append(Family(first[0], residual=True, stated=True))
        comps = int(getattr(model, "components", 1) or 1)
        if getattr(model, "family", "") == "mixture" and comps > 1:
            out.append(Family("tied", stated=public,
                              components=min(comps, MAX_COMPONENTS)))
    seen: dict[tuple[Any, ...], Family] = {}
    for f in out:
        rk = None if f.rank is None or f.rank >= d else int(f.rank)
        if rk is None and f.residual and not f.stated:
            continue
        seen.setdefault((f.covariance, rk, f.residual, f.discriminant, f.stated,
                         f.components),
                        Family(f.covariance, rk, f.residual, f.discriminant, f.stated,
                               f.components))
    return list(seen.values())


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


def _reference_models(cache: dict[str, Any], key: str, Zr: np.ndarray, r_codes: np.ndarray,
                      n_classes: int, fam: Family, B: np.ndarray | None,
                      f_ref: np.ndarray, keep: bool = False) -> list[Any]:
    """The reference model leaving out each fold (kept in ``cache`` for families in all d
    features, and with ``keep`` for those in a stated basis: they depend on the reference,
    the folds and that public basis only, never on a release)."""
    if (B is None or keep) and key in cache:
        return cache[key]  # type: ignore[no-any-return]
    models = fitted_family(Zr, r_codes, n_classes, fam, B, f_ref, FOLDS)
    if B is None or keep:
        cache[key] = models
    return models


def _by_fold(models: list[Any], Zc: np.ndarray, c_codes: np.ndarray, f_cand: np.ndarray
             ) -> np.ndarray:
    """Each candidate's log-likelihood under the model that leaves its fold out."""
    out = np.full(Zc.shape[0], np.nan)
    for k in np.unique(f_cand):  # K models, never one per record
        rows = np.flatnonzero(f_cand == k)
        out[rows] = models[k].loglik(Zc[rows], c_codes[rows])
    return out


def _by_fold_all(models: list[Any], Zc: np.ndarray, f_cand: np.ndarray, n_classes: int
                 ) -> np.ndarray:
    """Each candidate's log-likelihood under every class of the model leaving its fold out
    (candidates × classes; NaN where a class was not seen)."""
    out = np.full((Zc.shape[0], n_classes), np.nan)
    for k in np.unique(f_cand):  # K models, never one per record
        rows = np.flatnonzero(f_cand == k)
        out[rows] = models[k].loglik_all(Zc[rows])
    return out


# ---------------------------------------------------------------------- scores
def _standardizer(reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    R = np.asarray(reference, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    return mu, np.where(sd > 0, sd, 1.0)


@dataclass
class _Setup:
    """What the reference side of one stratum column fixes for every release of a game: the
    standardization, the classes (the reference's; any other is "unknown", the last code),
    the folds and the reference models already fitted (families in all d features)."""

    mu: np.ndarray
    sd: np.ndarray
    classes: np.ndarray
    f_ref: np.ndarray
    f_cand: np.ndarray
    Zr: np.ndarray
    r_codes: np.ndarray
    key: tuple[Any, ...]
    models: dict[str, list[Any]]
    raw: np.ndarray | None = None  # the reference as given (its digest's input)
    digest_: str = ""

    @property
    def n_classes(self) -> int:
        return int(self.classes.size) + 1

    def codes(self, labels: np.ndarray) -> np.ndarray:
        lab = np.asarray(labels).astype(str)
        pos = np.clip(np.searchsorted(self.classes, lab), 0, max(self.classes.size - 1, 0))
        known = self.classes[pos] == lab if self.classes.size else np.zeros(lab.size, bool)
        return np.where(known, pos, self.classes.size).astype(np.int64)

    def z(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, np.float64) - self.mu) / self.sd

    def digest(self) -> str:
        """A digest of the reference side (the reference as given, which fixes its
        standardization; its classes; the folds of the reference and of the candidates),
        made once. The records as given are hashed, not their standardized float64 copy:
        half the bytes for a float32 table."""
        if not self.digest_:
            given = self.Zr if self.raw is None else self.raw
            self.digest_ = content_key(given, self.r_codes, self.f_ref, self.f_cand,
                                       self.classes.astype(str))
        return self.digest_


def _reference_side(st: _Setup, key: str, Xr: np.ndarray, fam: Family, B: np.ndarray | None,
                    Xc: np.ndarray, c_codes: np.ndarray | None, candidates: str) -> np.ndarray:
    """The candidates' log-likelihoods under the reference models leaving their fold out
    (:func:`_reference_models`, :func:`_by_fold`; with ``c_codes`` None, under every class:
    :func:`_by_fold_all`) for a family that depends on no release (all d features, or a
    stated basis), kept in this process by a digest of the reference side, the family,
    ``key`` (which names a stated basis) and ``candidates`` (a digest of the candidates'
    coordinates and codes): the very numbers a fit and score would give, made once per
    split."""
    name = content_key(tags=(st.digest(), candidates, key, repr(fam),
                             "every class" if c_codes is None else "own class"))
    got = _REFERENCE_SIDE.get(name)
    if got is None:
        models = _reference_models(st.models, key, Xr, st.r_codes, st.n_classes, fam, B,
                                   st.f_ref, keep=fam.stated)
        got = (_by_fold_all(models, Xc, st.f_cand, st.n_classes) if c_codes is None
               else _by_fold(models, Xc, c_codes, st.f_cand))
        got.setflags(write=False)
        _REFERENCE_SIDE.put(name, got)
    return got  # type: ignore[no-any-return]


def _setup(cache: dict[str, Any], reference: np.ndarray, reference_labels: np.ndarray,
           reference_ids: np.ndarray, candidate_ids: np.ndarray, in_reference: np.ndarray,
           rng: np.random.Generator) -> _Setup:
    """The stratum's :class:`_Setup`, kept in ``cache`` while the candidates and the reference
    stay the same (a membership and an inference game on the same candidates share it)."""
    key = (len(reference), len(candidate_ids), hash(np.asarray(in_reference).tobytes()),
           hash("\x1f".join(np.asarray(candidate_ids).astype(str).tolist())))
    got = cache.get("setup")
    if isinstance(got, _Setup) and got.key == key:
        return got
    mu, sd = _standardizer(reference)
    f_ref, f_cand = reference_folds(reference_ids, candidate_ids, in_reference, rng)
    classes = np.unique(np.asarray(reference_labels).astype(str))
    made = _Setup(mu, sd, classes, f_ref, f_cand, np.empty((0, 0)), np.empty(0, np.int64),
                  key, {})
    made.Zr, made.raw = made.z(reference), np.asarray(reference)
    made.r_codes = made.codes(reference_labels)
    cache["setup"] = made
    return made


def box_factor(reference: np.ndarray, sd: np.ndarray, scale: str = "box",
               bounds: Any = None) -> np.ndarray:
    """Per-feature factor from reference-standardized units to the units a public basis
    applies in: ``"box"`` maps each feature to [−1, 1] by its box — the declared ``bounds``,
    else the reference's 1% / 99% quantiles (the rule the methods use without public
    bounds); ``"none"`` keeps the features as they are (centred). Centring does not matter:
    every family fits its own means.

    Examples
    --------
    >>> R = np.c_[np.linspace(-1, 1, 101), np.linspace(-10, 10, 101)]
    >>> (box_factor(R, R.std(axis=0)) / R.std(axis=0)).round(2).tolist()
    [1.02, 0.1]
    """
    if scale == "none":
        return np.asarray(sd, np.float64)
    d = np.asarray(reference).shape[1]
    if bounds is not None:
        lo, hi = (np.broadcast_to(np.asarray(b, np.float64), (d,)) for b in bounds)
    else:
        lo, hi = np.quantile(np.asarray(reference, np.float64), [0.01, 0.99], axis=0)
    half = (np.asarray(hi, np.float64) - np.asarray(lo, np.float64)) / 2.0
    return np.asarray(sd, np.float64) / np.where(half > 0, half, 1.0)


def likelihood_ratios(candidates: np.ndarray, candidate_labels: np.ndarray,
                      released: np.ndarray, released_labels: np.ndarray,
                      reference: np.ndarray, reference_labels: np.ndarray,
                      fams: Sequence[Family], *, reference_ids: np.ndarray | None = None,
                      candidate_ids: np.ndarray | None = None,
                      in_reference: np.ndarray | None = None,
                      rng: np.random.Generator | None = None,
                      cache: dict[str, Any] | None = None,
                      stated: np.ndarray | None = None, scale: str = "box",
                      bounds: Any = None) -> Scores:
    """``log p_release(x | y) − log p_reference(x | y)`` per candidate for every family.

    Labels are the class column the model conditions on (strings; an interest × additional
    stratum joined into one value). The reference side is cross-fitted
    (:func:`reference_folds`); ``cache`` keeps it between calls with the same candidates and
    reference (the families in all d features and in the stated basis). A candidate of a
    class the release or the reference lacks scores 0 (no evidence either way).

    ``stated`` (k, d): the method's public basis (orthonormal rows), applied after
    :func:`box_factor` (``scale``, ``bounds``) for the ``stated`` families; without it those
    families are skipped. A stated identity adds nothing but the mixture (the other
    families already fit all d features), named "all d".
    """
    n = len(candidates)
    ref_ids = (np.arange(len(reference)).astype(str) if reference_ids is None
               else np.asarray(reference_ids))
    cand_ids = (np.array([f"candidate {i}" for i in range(n)]) if candidate_ids is None
                else np.asarray(candidate_ids))
    in_ref = np.full(n, -1) if in_reference is None else np.asarray(in_reference)
    st = _setup({} if cache is None else cache, reference, reference_labels, ref_ids,
                cand_ids, in_ref, rng if rng is not None else np.random.default_rng(0))
    c_codes, s_codes = st.codes(candidate_labels), st.codes(released_labels)
    Zc, Zs = st.z(candidates), st.z(released)
    one = np.zeros(len(released), np.int64)
    bases: dict[int, np.ndarray] = {}
    frame = _stated_frame(st, reference, stated, scale, bounds, any(f.stated for f in fams))
    cand = content_key(np.asarray(candidates), c_codes)  # as given: Zc follows from it
    out: Scores = {}
    for fam in fams:
        B = None
        Xc, Xs, Xr, key = Zc, Zs, st.Zr, fam.name
        if fam.stated:
            if frame is None:
                continue
            else:
                factor, B, tag = frame
                if B is None and fam.components == 1:
                    continue  # a stated identity: the all-d families already fit it
                Xc, Xs, Xr, key = Zc * factor, Zs * factor, st.Zr * factor, fam.name + tag
        elif fam.discriminant is not None:
            B = discriminant_basis(Zs, s_codes, st.n_classes, fam.discriminant)
            if B.shape[1] == 0:
                continue
        elif fam.rank is not None:
            B = bases.setdefault(fam.rank, principal_basis(Zs, fam.rank))
        if B is None or fam.stated:  # no release in it: once per split
            ll_ref = _reference_side(st, key, Xr, fam, B, Xc, c_codes, cand)
        else:
            ref_models = _reference_models(st.models, key, Xr, st.r_codes, st.n_classes,
                                           fam, B, st.f_ref)
            ll_ref = _by_fold(ref_models, Xc, c_codes, st.f_cand)
        rel = fitted_family(Xs, s_codes, st.n_classes, fam, B, one, 1)[0]
        lr = rel.loglik(Xc, c_codes) - ll_ref
        name = fam.name
        if fam.stated and B is None:  # a stated identity: say so
            name = name.replace("stated basis", "all d")
        out[name] = np.where(np.isfinite(lr), lr, 0.0)
    return out


def _stated_frame(st: _Setup, reference: np.ndarray, stated: np.ndarray | None, scale: str,
                  bounds: Any, wanted: bool) -> tuple[np.ndarray, np.ndarray | None, str] | None:
    """``(factor, B, tag)`` of a stated basis: the per-feature factor to its units, its kept
    directions as columns (None: the identity) and a tag naming it in the cache; None when
    no stated family runs or no basis was given."""
    if not wanted or stated is None:
        return None
    P = np.asarray(stated, np.float64)
    d = st.mu.size
    if P.ndim != 2 or P.shape[1] != d or P.shape[0] < 1:
        return None
    factor = box_factor(reference, st.sd, scale, bounds)
    identity = P.shape[0] == d and bool(np.allclose(P, np.eye(d)))
    tag = "|" + hashlib.blake2b(P.tobytes() + factor.tobytes(), digest_size=8).hexdigest()
    return factor, None if identity else P.T.copy(), tag


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


def public_basis(model: Any, game: Game) -> tuple[np.ndarray | None, str, Any]:
    """``(P, scale, bounds)`` of the declared public basis, rebuilt by the attacker from the
    feature names and d (P None: none declared, or its rule fails on these features)."""
    pb = getattr(model, "public_basis", None)
    if pb is None:
        return None, "box", None
    d = game.candidates.shape[1]
    try:
        P = np.asarray(pb.build(game.feature_names(), d), np.float64)
    except Exception:  # noqa: BLE001 - a rule that fails here is no basis for this table
        return None, "box", None
    if P.ndim != 2 or P.shape[1] != d or not np.all(np.isfinite(P)):
        return None, "box", None
    return P, str(getattr(pb, "scale", "box")), getattr(pb, "bounds", None)


def parametric_scores(game: Game) -> Scores:
    """The model-aware membership scores of a game (one per family, per unit)."""
    model = _model_of(game.anonymizer)
    cols = _columns(game, model)
    n = len(game.candidates)
    rel_strata = _stratum(game.released_labels, cols, len(game.released))
    P, scale, bounds = public_basis(model, game)
    fams = families(model, game.candidates.shape[1], int(np.unique(rel_strata).size),
                    stated=P is not None)
    cache = game.cache.setdefault("parametric/" + "|".join(cols), {})  # shared with inference
    lr = likelihood_ratios(game.candidates, _stratum(game.candidate_labels, cols, n),
                           game.released, rel_strata,
                           game.reference, _stratum(game.reference_labels, cols,
                                                    len(game.reference)),
                           fams, reference_ids=game.reference_ids,
                           candidate_ids=game.candidate_ids, in_reference=game.in_reference,
                           rng=game.rng("parametric/folds"), cache=cache, stated=P,
                           scale=scale, bounds=bounds)
    return {k: game.per_unit(v) for k, v in lr.items()}


# ---------------------------------------------------------------------- inference
def parametric_labels(game: Game) -> Scores:
    """Model-aware inference on members, for every released label column the attacker holds
    for its candidates: the release's best class under the refitted family, and the best
    class relative to the reference (diag and pooled families, all d features). One guess
    per candidate (the inference risk judges records, with identities as units). Where the
    method declares a public basis, the same in its kept coordinates (per-class and tied
    diagonal: the Bayes classifier of a model diagonal there)."""
    out: Scores = {}
    P, scale, bounds = public_basis(_model_of(game.anonymizer), game)
    for col in game.targets:
        if col not in game.released_labels or col not in game.reference_labels:
            continue
        st = _setup(game.cache.setdefault(f"parametric/{col}", {}), game.reference,
                    game.reference_labels[col], game.reference_ids, game.candidate_ids,
                    game.in_reference, game.rng("parametric/folds"))
        known = st.classes.size
        Zc, Zs = st.z(game.candidates), st.z(game.released)
        cand = content_key(np.asarray(game.candidates), tags=("labels",))
        s_codes = st.codes(game.released_labels[col])
        one = np.zeros(len(game.released), np.int64)
        runs: list[tuple[str, Family, np.ndarray, np.ndarray, np.ndarray, str]] = [
            (kind, Family(kind), Zc, Zs, st.Zr, Family(kind).name) for kind in ("diag", "pooled")]
        frame = _stated_frame(st, game.reference, P, scale, bounds, True)
        if frame is not None and frame[1] is not None:
            factor, B, tag = frame  # coordinates of the stated basis (k of them)
            runs += [(f"{kind}, stated basis", Family(kind, stated=True), Zc * factor @ B,
                      Zs * factor @ B, st.Zr * factor @ B,
                      Family(kind, stated=True).name + tag + "/coordinates")
                     for kind in ("diag", "tied")]
        for label_kind, fam, Xc, Xs, Xr, key in runs:
            plain = Family(fam.covariance)  # the coordinates are already the basis's
            rel = fitted_family(Xs, s_codes, st.n_classes, plain, None, one, 1)[0].loglik_all(Xc)
            ref = _reference_side(st, key, Xr, plain, None, Xc, None, cand)
            for label, table in (("release model's best class", rel),
                                 ("best class relative to the reference", rel - ref)):
                t = np.nan_to_num(table[:, :known], nan=-np.inf)
                out[f"{PREFIX} ({label_kind}), {label}, '{col}'"] = \
                    st.classes[t.argmax(axis=1)]
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

__all__ = ["FOLDS", "Family", "GENERIC", "INFERENCE", "MEMBERSHIP", "box_factor", "families",
           "likelihood_ratios", "parametric_labels", "parametric_scores",
           "public_basis",
           "reference_folds"]
