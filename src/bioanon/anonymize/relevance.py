"""Feature relevance scores and the feature selection F(R_p, {R_q}, R_s).

Relevance of each feature to an attribute comes from a random forest's Gini importances
(``"forest"``), from mutual information (``"mutual_info"``, model-agnostic), or from any
scikit-learn estimator exposing ``feature_importances_`` or ``coef_`` after fitting.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_selection import mutual_info_classif

from ..attack.kept import Kept, content_key
from ..errors import BioanonError
from ..table import untargetable_kind

SCORERS = ("forest", "mutual_info")

#: relevance is fitted on at most this many records, a sample stratified by the attribute
#: scored (the scorers' cost grows faster than the table; the release still covers every
#: record). Reported in a release's manifest. On FSDD and SP-SW-HAR a forest on 2,000
#: records selects features that agree with a forest on every record as well as two forests
#: on every record agree with each other (``benchmarks/relevance_sample.py``).
MAX_RECORDS = 2_000
#: relevance scores kept in this process, by a digest of the records, the labels, the scorer,
#: the seed and the sample size (:func:`relevance_scores`): the settings a search judges on
#: one split, and the shadow games an attacker who knows the method plays on one shadow
#: table, fit the same seeded forest on the same records again and again; the scores are
#: a function of those inputs, so a kept one is the fit's own result, bit for bit
CACHE_SIZE = 256
#: the forest fits its trees in threads from this many values (records × features) on;
#: below it a tree takes less than the threads' hand-over (600 × 32: 0.37 s in one thread,
#: 0.41 s in threads), and the trees, their seeds and the scores are the same either way
THREADED_SIZE = 100_000
_KEPT = Kept(CACHE_SIZE)
_KEPT_LOCK = threading.Lock()


def relevance_records_param() -> Any:
    """The declared constraint of a mixing method's ``relevance_records`` parameter."""
    from .params import Param

    return Param("int", low=10, none=True,
                 help="records the relevance scorer is fitted on: a sample stratified by the "
                      "attribute scored (none: every record)")


def relevance_sample_size(n: int, max_records: int | None = MAX_RECORDS) -> int:
    """Records the relevance scorers are fitted on for a table of ``n`` records."""
    return n if max_records is None else min(n, int(max_records))


def relevance_scores(X: np.ndarray, y: np.ndarray, scorer: Any = "forest",
                     random_state: int | np.random.Generator | None = None,
                     max_records: int | None = MAX_RECORDS) -> np.ndarray:
    """Return one non-negative relevance score per feature for predicting ``y``.

    Parameters
    ----------
    X : array (n, d)
    y : array (n,)
        Class labels.
    scorer : {"forest", "mutual_info"} or estimator
        Estimators are cloned and fitted; their ``feature_importances_`` or ``|coef_|``
        (averaged over classes) are used.
    random_state : int, Generator or None
    max_records : int or None, default :data:`MAX_RECORDS`
        Fit on a sample of at most this many records, stratified by ``y`` (None: all).

    Returns
    -------
    array (d,) of float64, summing to 1 (or all zeros if nothing is relevant).

    Notes
    -----
    A named scorer with an integer seed is fitted once per process for the same records,
    labels, seed and sample size (:data:`CACHE_SIZE` kept): a search fits the same forest
    for many settings. The scores returned are a copy.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(60, 4)); y = (X[:, 2] > 0).astype(int)
    >>> s = relevance_scores(X, y, "forest", random_state=0)
    >>> int(np.argmax(s)), bool(np.array_equal(s, relevance_scores(X, y, "forest", 0)))
    (2, True)
    """
    seed = _seed_int(random_state)
    key = None
    if isinstance(scorer, str) and isinstance(seed, (int, np.integer)):
        key = _key(X, y, scorer, int(seed), max_records)
    if key is not None:
        with _KEPT_LOCK:
            got = _KEPT.get(key)
        if got is not None:
            return np.array(got, copy=True)
    scores = _scores(X, y, scorer, seed, max_records)
    if key is not None:
        with _KEPT_LOCK:
            _KEPT.put(key, np.array(scores, copy=True))
    return scores


def _key(X: np.ndarray, y: np.ndarray, scorer: str, seed: int,
         max_records: int | None) -> str | None:
    """The digest a kept relevance is found by (None: labels that cannot be ordered)."""
    try:
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):  # the fit itself says what is wrong with them
        return None
    return content_key(X, codes.astype(np.int64).ravel(),
                       tags=(scorer, str(seed), str(max_records), repr(classes.tolist())))


def _scores(X: np.ndarray, y: np.ndarray, scorer: Any, seed: int | None,
            max_records: int | None) -> np.ndarray:
    """:func:`relevance_scores` without the kept results: one fit."""
    if max_records is not None and X.shape[0] > max_records:
        from ..sampling import stratified_positions

        rows = stratified_positions(np.asarray(y), int(max_records),
                                    np.random.default_rng(seed))
        X, y = np.asarray(X)[rows], np.asarray(y)[rows]
    if untargetable_kind(y) is not None:  # dates, decimals: scikit-learn's "Unknown label
        y = np.unique(np.asarray(y), return_inverse=True)[1].ravel()  # type": their classes
    if isinstance(scorer, str):
        if scorer == "forest":
            est = RandomForestClassifier(n_estimators=100, min_samples_leaf=2,
                                         n_jobs=-1 if np.size(X) >= THREADED_SIZE else 1,
                                         random_state=seed)
            scores = est.fit(X, y).feature_importances_
        elif scorer == "mutual_info":
            scores = mutual_info_classif(X, y, random_state=seed)
        else:
            raise BioanonError(
                f"unknown relevance scorer '{scorer}'; use one of {', '.join(SCORERS)} or a "
                "fitted-estimator object with feature_importances_ or coef_"
            )
    else:
        est = clone(scorer).fit(X, y)
        if hasattr(est, "feature_importances_"):
            scores = est.feature_importances_
        elif hasattr(est, "coef_"):
            coef = np.atleast_2d(np.asarray(est.coef_))
            scores = np.abs(coef).mean(axis=0)
        else:
            raise BioanonError(
                f"relevance estimator {type(est).__name__} has neither feature_importances_ nor "
                "coef_; use 'forest', 'mutual_info' or an estimator that has one"
            )
    scores = np.clip(np.asarray(scores, dtype=np.float64).ravel(), 0.0, None)
    if scores.shape[0] != X.shape[1]:
        raise BioanonError(
            f"relevance scorer returned {scores.shape[0]} scores for {X.shape[1]} features"
        )
    total = scores.sum()
    return scores / total if total > 0 else scores


def top_fraction(scores: np.ndarray, ratio: float) -> np.ndarray:
    """Indices of the ``ratio`` most relevant features (at least one when ``ratio > 0``)."""
    if not 0.0 <= ratio <= 1.0:
        raise BioanonError(f"retention ratio {ratio} is outside [0, 1]; use e.g. 0.01 for 1%")
    d = scores.shape[0]
    count = 0 if ratio == 0 else min(d, max(1, int(round(ratio * d))))
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    # stable ordering: highest score first, ties broken by feature index
    order = np.lexsort((np.arange(d), -scores))
    return np.sort(order[:count])


def select_features(relevance_interest: np.ndarray, r_p: float,
                    relevance_additional: Mapping[str, np.ndarray] | None = None,
                    r_q: Mapping[str, float] | None = None,
                    relevance_sensitive: np.ndarray | None = None,
                    r_s: float = 0.0) -> np.ndarray:
    """The selection F: top r_p of R_p ∪ top r_q of each R_q, minus top r_s of R_s.

    Returns
    -------
    Boolean mask of shape (d,): True for the features the record's own value is kept on.

    Examples
    --------
    >>> import numpy as np
    >>> select_features(np.array([.5, .3, .1, .1]), 0.5,
    ...                 relevance_sensitive=np.array([0., 1., 0., 0.]), r_s=0.25)
    array([ True, False, False, False])
    """
    mask = np.zeros(relevance_interest.shape[0], dtype=bool)
    mask[top_fraction(relevance_interest, r_p)] = True
    for col, scores in (relevance_additional or {}).items():
        mask[top_fraction(scores, (r_q or {}).get(col, 0.0))] = True
    if relevance_sensitive is not None and r_s > 0:
        mask[top_fraction(relevance_sensitive, r_s)] = False
    return mask


def _seed_int(random_state: int | np.random.Generator | None) -> int | None:
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31 - 1))
    return random_state


# ---------------------------------------------------------------------- declared effects
def retention_ignored(r_p: float, r_q: Mapping[str, float], r_s: float, raw_r_q: Any
                      ) -> dict[str, str]:
    """Parameters of a retaining mix (selective mean, vp-mix) that a setting ignores.

    ``r_q`` is the share per additional attribute in use; ``raw_r_q`` the parameter as given
    (a number or a mapping column -> share).

    Examples
    --------
    >>> sorted(retention_ignored(0.1, {}, 0.0, {"accent": 0.1}))
    ['r_q']
    """
    out: dict[str, str] = {}
    if not r_q:
        out["r_q"] = "there is no additional attribute to retain features for (name one with " \
                     "additional=COL)"
    elif isinstance(raw_r_q, Mapping):
        stray = [str(c) for c in raw_r_q if str(c) not in r_q]
        if stray:
            out["r_q"] = f"'{stray[0]}' is not an additional attribute (name it with " \
                         f"additional={stray[0]})"
    retains = r_p > 0 or any(v > 0 for v in r_q.values())
    if not retains:
        out["w"] = "no feature is retained (r_p = 0 and no r_q > 0), so the record's weight " \
                   "applies nowhere"
        if r_s == 0:
            why = "no relevance is scored (r_p, r_q and r_s are all 0)"
            out["relevance"] = out["relevance_records"] = why
    return out


def retention_unchanged(r_p: float, r_q: Mapping[str, float], r_s: float, w: float,
                        donors: int) -> str | None:
    """Why a retaining mix releases every record unchanged at float32 precision, or None.

    With every feature retained (a share of 1, nothing excluded by r_s), a released value is
    ``λ·x + (1 − λ)·mix`` with ``1 − λ = donors / (w − 1 + donors)``; below float32's
    precision the donors leave no trace.

    Examples
    --------
    >>> retention_unchanged(1.0, {}, 0.0, 1e12, 8) is not None
    True
    >>> retention_unchanged(0.5, {}, 0.0, 1e12, 8) is None
    True
    """
    from .base import FLOAT32_EPS

    if max([r_p, *r_q.values()]) < 1.0 or r_s > 0:
        return None
    share = donors / (w - 1.0 + donors)
    if share >= FLOAT32_EPS:
        return None
    return (f"w={w:g} with every feature retained keeps the record's own value with weight "
            f"1 - {share:.2g}, so its donors leave no trace; lower w or the retained share")
