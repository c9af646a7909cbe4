"""A release that is INPUT's records under a general linear map: mapped back by reading it.

An invertible linear map of the records (``Y = X A + b``: a random projection onto as many
features, a "multiplicative perturbation" of privacy-preserving data mining, a mixing of the
columns) keeps every member, yet compared column by column with the population it reads as
other people, and it keeps no distance, so the PCA attack of :mod:`.isometry` cannot pair
its axes. The threat model grants the attacker the method and its parameters: here ``A``
and ``b``. The audit does not hold them, but reads them from INPUT through coordinates that
no invertible linear map changes:

- the generalized eigenvectors ``V`` of one class's covariance against the whole table's
  (``S_c v = λ S v``, normalized so that ``Vᵀ S V = I``) give each record the coordinates
  ``(x − mean) V``. Under ``Y = X A + b`` both covariances are carried by ``A``, so the
  eigenvectors are ``A⁻¹ V`` and each record keeps its coordinates, but for each axis's
  sign. The class is the interest's, which the release must carry: the largest class
  with more records than features on both sides;
- each axis's sign is read from the classes' distributions along it (the same values, or
  mirrored: their quantiles, class by class);
- INPUT's inverse map then writes the release in INPUT's own features. A copy, exact or with
  small noise, lands on its sources; the map is then refined by least squares (with an
  intercept) on each released record's nearest INPUT record (the closest half of the pairs,
  up to :data:`REFINE` rounds), which recovers copies with more noise.

:func:`linear_release` says where a release is such a map of INPUT, in the test
:mod:`.isometry` uses (mapped back, its records sit much nearer INPUT's than HOLDOUT's, and
the release as it is does not), decided on released records the refinement did not fit, and
only where the map keeps INPUT's spread (a least-squares fit that explains little collapses
toward INPUT's mean, and sits near INPUT's records for no reason of the release's). Every
step before the refinement reads each table alone: nothing pairs a record with INPUT's.

Not caught: a map onto fewer features (a projection loses what no attacker can restore), a
copy of only part of INPUT (its class covariances are not INPUT's, and the coordinates move:
a copy of 90 % of INPUT's records is missed), noise of a fifth of a feature's spread or
more, and a table whose largest class holds no more records than features.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> y = np.repeat(["a", "b"], 300)
>>> X = rng.normal(size=(600, 5)) * [5, 4, 3, 2, 1] + (y == "a")[:, None] * [2, 0, 0, 1, 0]
>>> X[y == "a"] *= [1.5, 0.5, 1.2, 1, 0.7]
>>> M, H, yM = X[::2], X[1::2], y[::2]
>>> A = rng.normal(size=(5, 5))
>>> back = linear_release(M @ A + 3.0, yM, M, yM, H)
>>> float(np.abs(back - M).max()) < 1e-6
True
>>> linear_release(H @ A, y[1::2], M, yM, H) is None
True
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .isometry import (
    NEARER_SHARE,
    PAIRED_INPUT,
    SAMPLE,
    _nearer,
    _nearest,
    _sample,
    decision_samples,
)

#: the widest release read (generalized eigenproblems of features² entries per table)
MAX_LINEAR_FEATURES = 1024
#: the classes tried, largest first, each needing more records than features on both sides
CLASSES_TRIED = 2
#: rounds of the least-squares refinement at most (:func:`_refined`)
REFINE = 8
#: a map back is kept only where the released records so mapped spread at least this share
#: of INPUT's (the features' standard deviations, summed): a least-squares map that explains
#: little shrinks toward INPUT's mean
MIN_SPREAD = 0.9
#: the quantiles an axis's sign is read from, class by class
_QUANTILES = np.linspace(0.05, 0.95, 19)


def _coordinates(X: np.ndarray, in_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the mean, the generalized eigenvectors of the class's covariance against the whole
    table's, as columns): coordinates no invertible linear map of ``X`` changes but for
    each axis's sign."""
    from scipy.linalg import eigh  # not at import: the audit's start-up

    mu = X.mean(axis=0)
    _w, V = eigh(np.cov(X[in_class] - mu, rowvar=False), np.cov(X - mu, rowvar=False))
    return mu, V


def _class_signs(Zr: np.ndarray, yr: np.ndarray, Zi: np.ndarray, yi: np.ndarray,
                 classes: np.ndarray) -> np.ndarray:
    """Each axis's sign: +1 where the release's values along it, class by class, are
    INPUT's, −1 where they are INPUT's mirrored (compared by their quantiles)."""
    same, mirrored = np.zeros(Zr.shape[1]), np.zeros(Zr.shape[1])
    for c in classes:
        qr = np.quantile(Zr[yr == c], _QUANTILES, axis=0)
        qi = np.quantile(Zi[yi == c], _QUANTILES, axis=0)
        same += np.abs(qr - qi).mean(axis=0)
        mirrored += np.abs(qr + qi[::-1]).mean(axis=0)
    return np.where(mirrored < same, -1.0, 1.0)


def _starts(R: np.ndarray, yr: np.ndarray, M: np.ndarray, yi: np.ndarray
            ) -> Iterator[np.ndarray]:
    """RELEASED written in INPUT's features through the coordinates of each class tried
    (:data:`CLASSES_TRIED`; a class with no more records than features on either side, or
    a covariance that is not positive definite, gives none)."""
    from scipy.linalg import LinAlgError

    d = R.shape[1]
    values, counts = np.unique(yi, return_counts=True)
    shared = np.array([c for c in values if np.count_nonzero(yr == c) >= 2])
    tried = 0
    for c in values[np.argsort(-counts, kind="stable")]:
        if tried == CLASSES_TRIED:
            return
        if min(np.count_nonzero(yr == c), np.count_nonzero(yi == c)) <= d + 1:
            continue
        tried += 1
        try:
            mr, Vr = _coordinates(R, yr == c)
            mi, Vi = _coordinates(M, yi == c)
        except (LinAlgError, ValueError):
            continue
        Zr = (R - mr) @ Vr
        signs = _class_signs(Zr, yr, (M - mi) @ Vi, yi, shared)
        yield np.linalg.solve(Vi.T, (Zr * signs).T).T + mi


def _refined(R: np.ndarray, start: np.ndarray, M: np.ndarray, fit: np.ndarray,
             m_rows: np.ndarray) -> np.ndarray:
    """RELEASED mapped by the least-squares linear map (with an intercept) that carries the
    released records ``fit`` onto their nearest INPUT records (``m_rows``), paired first as
    ``start`` places them, then as the map does (the closest half of the pairs, up to
    :data:`REFINE` rounds)."""
    target = M[m_rows]
    near, idx = _nearest(start[fit], target)
    keep = min(fit.size, max(fit.size // 2, 2 * (R.shape[1] + 1)))
    design = np.c_[R[fit], np.ones(fit.size)]
    W = np.zeros((R.shape[1] + 1, M.shape[1]))
    for _ in range(REFINE):
        pairs = np.argsort(near, kind="stable")[:keep]
        W = np.linalg.lstsq(design[pairs], target[idx[pairs]], rcond=None)[0]
        before = idx
        near, idx = _nearest(design @ W, target)
        if np.array_equal(idx, before):  # the pairs hold: the map is found
            break
    return np.c_[R, np.ones(R.shape[0])] @ W


def linear_release(released: np.ndarray, released_labels: np.ndarray, members: np.ndarray,
                   member_labels: np.ndarray, reference: np.ndarray) -> np.ndarray | None:
    """RELEASED mapped back into INPUT's (``members``') features where it is an invertible
    linear map of them (see the module), or None: where it is not, or the map cannot be read
    (fewer records than features in the classes, one feature, wider than
    :data:`MAX_LINEAR_FEATURES`, a value not finite). ``released_labels`` and
    ``member_labels`` are each record's interest class."""
    R, M, F = (np.asarray(a, np.float64) for a in (released, members, reference))
    yr, yi = np.asarray(released_labels).astype(str), np.asarray(member_labels).astype(str)
    d = R.shape[1]
    if (d < 2 or d > MAX_LINEAR_FEATURES or M.shape[1] != d or F.shape[1] != d
            or yr.shape[0] != R.shape[0] or yi.shape[0] != M.shape[0]
            or min(R.shape[0], M.shape[0], F.shape[0]) <= d + 1
            or not all(np.isfinite(a).all() for a in (R, M, F))):
        return None
    rng = np.random.default_rng(0)  # a fixed draw: the decision is the data's alone
    order = rng.permutation(R.shape[0])
    half = R.shape[0] // 2
    fit, decide = np.sort(order[:half][:SAMPLE]), np.sort(order[half:][:SAMPLE])
    Ms, Fs, q = decision_samples(M, F, rng)
    if _nearer(R[decide], Ms, Fs, q) < NEARER_SHARE:
        return None  # as it is, the release already sits on INPUT's records
    mapped = _sample(np.arange(M.shape[0]), PAIRED_INPUT, rng)
    spread = float(M.std(axis=0).sum())
    for start in _starts(R, yr, M, yi):
        for back in (start, _refined(R, start, M, fit, mapped)):
            if (float(back.std(axis=0).sum()) >= MIN_SPREAD * spread
                    and _nearer(back[decide], Ms, Fs, q) < NEARER_SHARE):
                return back
    return None
