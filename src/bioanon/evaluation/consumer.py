"""Utility as a consumer meets it: a small panel of models, the pick made on the release alone.

A data consumer who trains on a release does not train one fixed model: they try a few and
keep the one that cross-validates best **on what they hold — the release**. This module
plays that consumer:

1. each model of the panel (:data:`CONSUMER_MODELS`: a random forest, logistic regression,
   shrunk LDA, histogram gradient boosting, k-NN; scikit-learn only, each single-threaded) is
   cross-validated on the released training records alone (:data:`FOLDS` stratified folds;
   the forest by its out-of-bag predictions, the held-out estimate its bootstrap gives
   without refitting; no clear record is read for the choice);
2. the pick (highest cross-validated accuracy, ties in the panel's order) is trained on the
   whole release and scored on the clear held-out records: the headline CAS;
3. the clear baseline is made the same way on the clear training records (their own pick by
   cross-validation there), scored on the same held-out records, so the utility floor and
   the ratio compare like with like: pick on the release against pick on the clear data.

Every model's release → clear and clear → clear accuracy is kept beside the pick (the forest
stays a row), each with its Wilson 95% interval.

What this view is not: a guarantee about any particular model. A consumer who picks by
another rule, tunes hyper-parameters, or uses a model outside the panel can do better or
worse; the pick is one honest consumer's, made without clear records.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=4, records_per_identity=30, n_features=32, random_state=0)
>>> y = t.labels["expression"].to_numpy()
>>> out = consumer_panel(t.X[:90], y[:90], t.X[:90], t.X[90:], y[90:], seed=0, n_jobs=1,
...                      models=("logreg", "lda"))
>>> out["pick"] in ("logreg", "lda"), [m["model"] for m in out["models"]]
(True, ['logreg', 'lda'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from ..attack.attackers import ModelCache, fingerprint
from ..attack.parallel import parallel_map
from ..attack.recognizers import make_recognizer, model_name, single_threaded
from ..metrics.results import Rate
from .panel_modes import FOREST_RANKING_MODELS, PANEL_MODES, RANKING_MODELS

#: the consumer's panel, in the order ties are broken
CONSUMER_MODELS = ("forest", "logreg", "lda", "hgb", "knn")
#: stratified folds of the consumer's cross-validation
FOLDS = 3
#: how the pick is made, in words (report.json, the report)
RULE = (f"the consumer's pick: the first model of the panel (forest, logistic regression, "
        f"shrunk LDA, gradient boosting, k-NN) whose {FOLDS}-fold cross-validated accuracy on "
        "the release alone (no clear record is read) reaches the lower end of the best one's "
        "95% interval, trained "
        "on the whole release and scored on the clear held-out records; the clear baseline "
        "is the clear training records' own pick, made the same way")

#: said of a pick the ranking panel made (a search's tuning split)
RANKING_NOTE = ("; on a search's tuning split the panel is the linear consumers (shrunk LDA, "
                "logistic regression) alone, the whole panel judging the confirmation")
#: said of a pick the forest and the ranking panel made (a tuning split whose clear records
#: the linear consumers alone do not learn)
FOREST_RANKING_NOTE = ("; on a search's tuning split the panel is a forest of half the "
                       "trees and the linear consumers (shrunk LDA, logistic regression), the "
                       "whole panel judging the confirmation")


def _fit_task(model: Any, seed: int, X: np.ndarray, y: np.ndarray, probe: np.ndarray,
              folds: int, fitted: Any = None) -> tuple[int | None, np.ndarray]:
    """(cross-validated hits on ``X`` — records predicted right by a model that did not
    train on them — or None without folds, predictions on ``probe`` of the model trained on
    all of ``X``); one thread.

    A random forest is cross-validated by its out-of-bag predictions (each record predicted
    by the trees whose bootstrap left it out: :func:`oob_hits`), from the one fit on all of
    ``X``; ``fitted`` is that fit when the caller made it already (the utility views' model:
    the same estimator, seed and records), which then needs no fit here; another model
    ``fitted`` gives the predictions on ``probe``, its folds are fitted here."""
    est = fitted
    bagged = est is not None and getattr(est, "bootstrap", False) and hasattr(est, "oob_score")
    if est is None or (folds >= 2 and bagged and oob_hits(est, y) is None):
        est = with_oob(single_threaded(make_recognizer(model, seed)), folds >= 2)
        est.fit(X, y)
    hits: int | None = None
    if folds >= 2:
        hits = oob_hits(est, y)
        if hits is None:
            hits = fold_hits(est, X, y, folds, seed)
    return hits, est.predict(probe)


def _fold_task(model: Any, seed: int, X: np.ndarray, y: np.ndarray, folds: int, k: int,
               fitted: Any = None) -> int:
    """The hits of fold ``k`` of :func:`fold_hits` alone (the same split, clone and fit):
    the folds of one model run as tasks of their own, beside the other models' fits."""
    est = fitted if fitted is not None else single_threaded(make_recognizer(model, seed))
    tr, te = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y))[k]
    one = clone(est).fit(X[tr], y[tr])
    return int(np.count_nonzero(one.predict(X[te]) == y[te]))


def _bagged(model: Any, seed: int, fitted: Any) -> bool:
    """Whether ``model`` is cross-validated out of bag (a forest), not by folds."""
    est = fitted if fitted is not None else make_recognizer(model, seed)
    return bool(getattr(est, "bootstrap", False)) and hasattr(est, "oob_score")


def fit_tasks(tasks: Sequence[tuple[Any, ...]], n_jobs: int | None
              ) -> list[tuple[int | None, np.ndarray]]:
    """:func:`_fit_task` of every task, with each model's cross-validation folds run as
    tasks of their own (a model's folds and its fit on all the records are independent): the
    same hits and predictions as one task per model, bit for bit, without one model's folds
    (gradient boosting's, on ten classes) running one after the other while the other
    cores wait.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat(["a", "b", "c"], 30)
    >>> X = rng.normal(size=(90, 8)) + (y == "a")[:, None]
    >>> task = ("lda", 0, X, y, X[::7], 3, None)
    >>> (hits, pred), = fit_tasks([task], n_jobs=2)
    >>> one_task = _fit_task(*task)
    >>> hits == one_task[0] and bool((pred == one_task[1]).all())
    True
    """
    jobs: list[tuple[Any, ...]] = []
    split: list[int] = []  # per task: the folds run apart (0: the task runs whole)
    for task in tasks:
        model, seed, X, y, probe, folds, fitted = task
        apart = folds if folds >= 2 and not _bagged(model, seed, fitted) else 0
        split.append(apart)
        jobs.append((_fit_task, (model, seed, X, y, probe, 0 if apart else folds, fitted)))
        jobs += [(_fold_task, (model, seed, X, y, folds, k, fitted)) for k in range(apart)]
    outs = iter(parallel_map(_call, jobs, n_jobs, len(jobs)))
    done: list[tuple[int | None, np.ndarray]] = []
    for apart in split:
        hits, pred = next(outs)
        if apart:
            hits = sum(int(next(outs)) for _ in range(apart))
        done.append((hits, pred))
    return done


def _call(func: Any, args: tuple[Any, ...]) -> Any:
    return func(*args)


def fold_hits(est: Any, X: np.ndarray, y: np.ndarray, folds: int, seed: int) -> int:
    """Records of ``X`` predicted right by a copy of ``est`` (fitted or not: it is cloned)
    trained on the other folds: the consumer's stratified ``folds``-fold cross-validation.

    >>> from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    >>> X = np.r_[np.zeros((6, 2)), np.ones((6, 2))] + np.arange(12)[:, None] * 0.01
    >>> fold_hits(LinearDiscriminantAnalysis(), X, np.repeat(["a", "b"], 6), 3, 0)
    12
    """
    hits = 0
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y):
        one = clone(est).fit(X[tr], y[tr])
        hits += int(np.count_nonzero(one.predict(X[te]) == y[te]))
    return hits


def with_oob(est: Any, wanted: bool) -> Any:
    """A random forest asked to keep its out-of-bag predictions (the trees, their seeds and
    every prediction are those of the same forest without them); any other model as is."""
    if wanted and hasattr(est, "oob_score") and getattr(est, "bootstrap", False):
        est.set_params(oob_score=True)
    return est


def oob_hits(est: Any, y: np.ndarray) -> int | None:
    """Records of the training set ``y`` a fitted forest predicts right out of bag (a record
    no tree left out counts as a miss); None for a model without out-of-bag predictions.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> X = np.r_[np.zeros((20, 2)), np.ones((20, 2))]
    >>> y = np.repeat(["a", "b"], 20)
    >>> f = RandomForestClassifier(20, oob_score=True, random_state=0).fit(X, y)
    >>> oob_hits(f, y), oob_hits(RandomForestClassifier(5).fit(X, y), y)
    (40, None)
    """
    proba = getattr(est, "oob_decision_function_", None)
    if proba is None or proba.shape[0] != np.asarray(y).shape[0]:
        return None
    seen = np.isfinite(proba).all(axis=1) & (proba.sum(axis=1) > 0)
    guess = est.classes_[np.argmax(np.nan_to_num(proba), axis=1)]
    return int(np.count_nonzero(seen & (guess == np.asarray(y))))


def folds_for(y: np.ndarray) -> int:
    """The folds the consumer can use: :data:`FOLDS`, fewer when a class is smaller (0: a
    class of one record, no cross-validation).

    >>> folds_for(np.array(list("aabbb"))), folds_for(np.array(list("abbb")))
    (2, 0)
    """
    smallest = int(np.unique(y, return_counts=True)[1].min()) if y.size else 0
    k = min(FOLDS, smallest)
    return k if k >= 2 else 0


def _pick(names: Sequence[str], cv: Sequence[dict[str, Any] | None]) -> str:
    """The first model in the panel's order whose cross-validated accuracy is not clearly
    below the best's (it reaches the lower end of the best's 95% interval): a consumer keeps
    the first model unless another is clearly better. On a release whose cross-validated
    accuracies all sit near the ceiling (a Gaussian synthesizer's classes are easy to tell
    apart), the highest of them says little about clear data, and the order decides.

    >>> _pick(["forest", "knn"], [{"value": 0.97, "ci": [0.95, 0.98]},
    ...                           {"value": 0.98, "ci": [0.96, 0.99]}])
    'forest'
    >>> _pick(["forest", "knn"], [{"value": 0.80, "ci": [0.77, 0.83]},
    ...                           {"value": 0.98, "ci": [0.96, 0.99]}])
    'knn'
    """
    scored = [(c["value"], -i) for i, c in enumerate(cv) if c is not None]
    if not scored:
        return names[0]
    best = cv[-max(scored)[1]]
    assert best is not None
    floor = float((best.get("ci") or [best["value"]])[0])
    return next(n for n, c in zip(names, cv, strict=True)
                if c is not None and c["value"] >= floor)


def consumer_panel(X_clear: np.ndarray, y: np.ndarray, X_release: np.ndarray | None,
                   X_test: np.ndarray, y_test: np.ndarray, *, seed: int = 0,
                   n_jobs: int | None = 1, models: Sequence[Any] = CONSUMER_MODELS,
                   cache: ModelCache | None = None,
                   fitted: Mapping[tuple[str, str], Any] | None = None) -> dict[str, Any]:
    """The consumer's panel on one useful attribute (see the module): each model's
    cross-validated accuracy on the release and on the clear training records, its release →
    clear and clear → clear accuracy on ``X_test``, the two picks and their scores.

    ``X_clear`` and ``X_release`` are the same training records, clear and released, with
    labels ``y``; ``X_release`` None: the clear side alone (every release figure None, the
    pick None). ``cache`` keeps the clear side (the same for every setting judged on one
    split). ``fitted`` maps (side, model name) — side "release" or "clear" — to a model
    already fitted on that side's records (``X_release`` or ``X_clear`` with ``y``, with
    this seed: the utility views' forest), used instead of fitting it again. Returns plain
    JSON values (rates as ``{"value", "ci", "n"}``).
    """
    fitted = dict(fitted or {})
    names = [model_name(m) for m in models]
    folds = folds_for(y)
    key = None
    clear_side = None
    if cache is not None:
        key = cache.key("consumer", seed, "consumer|" + ",".join(names) + "|"
                        + fingerprint(X_clear, y.astype(str))
                        + fingerprint(X_test, y_test.astype(str)))
        clear_side = cache.get(key)
    tasks = ([] if X_release is None else
             [(m, seed, X_release, y, X_test, folds, fitted.get(("release", n)))
              for m, n in zip(models, names, strict=True)])
    if clear_side is None:
        tasks += [(m, seed, X_clear, y, X_test, folds, fitted.get(("clear", n)))
                  for m, n in zip(models, names, strict=True)]
    outs = fit_tasks(tasks, n_jobs)
    ours = 0 if X_release is None else len(models)
    release_side = outs[:ours] or [(None, None)] * len(models)
    if clear_side is None:
        clear_side = outs[ours:]
        if cache is not None and key is not None:
            cache.put(key, clear_side)
    n = int(y_test.size)

    def rate(pred: np.ndarray | None) -> dict[str, Any] | None:
        if pred is None:
            return None
        return Rate.from_counts(int(np.count_nonzero(pred == y_test)), n).to_dict()

    def cv_rate(hits: int | None) -> dict[str, Any] | None:
        return None if hits is None else Rate.from_counts(hits, int(y.size)).to_dict()

    rows = [{"model": name, "release_cv": cv_rate(r_cv), "release_to_clear": rate(r_pred),
             "clear_cv": cv_rate(c_cv), "clear_to_clear": rate(c_pred)}
            for name, (r_cv, r_pred), (c_cv, c_pred)
            in zip(names, release_side, clear_side, strict=True)]
    pick = None if X_release is None else _pick(names, [r["release_cv"] for r in rows])
    clear_pick = _pick(names, [r["clear_cv"] for r in rows])
    by = {r["model"]: r for r in rows}
    return {"models": rows, "pick": pick, "clear_pick": clear_pick,
            "cas": None if pick is None else by[pick]["release_to_clear"],
            "clear": by[clear_pick]["clear_to_clear"],
            "folds": folds, "rule": (RULE if folds else
            "no class holds 2 records: no cross-validation; the panel's first model is used")
            + {RANKING_MODELS: RANKING_NOTE,
               FOREST_RANKING_MODELS: FOREST_RANKING_NOTE}.get(tuple(names), "")}


def release_pick(X_release: np.ndarray, y: np.ndarray, X_test: np.ndarray,
                 y_test: np.ndarray, *, seed: int = 0, n_jobs: int | None = 1,
                 models: Sequence[Any] = CONSUMER_MODELS,
                 known: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The release side of :func:`consumer_panel` alone: the consumer's pick among
    ``models`` by cross-validation on the release and its accuracy on ``X_test`` (the same
    fits, folds, seeds and rule, so the same pick and CAS as the panel's), without the
    clear records' side. ``known``: rows of a panel already run on the same records, split
    and seed (``consumer_panel``'s ``models``, e.g. a search's ranking panel): a model
    among them is read there, not fitted again.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=30, n_features=32,
    ...                    random_state=0)
    >>> y = t.labels["expression"].to_numpy()
    >>> one = release_pick(t.X[:90], y[:90], t.X[90:], y[90:], models=("logreg", "lda"))
    >>> whole = consumer_panel(t.X[:90], y[:90], t.X[:90], t.X[90:], y[90:],
    ...                        models=("logreg", "lda"))
    >>> (one["pick"], one["cas"]) == (whole["pick"], whole["cas"])
    True
    >>> again = release_pick(t.X[:90], y[:90], t.X[90:], y[90:], models=("logreg", "lda"),
    ...                      known=whole["models"])   # read, not fitted again
    >>> (again["pick"], again["cas"]) == (one["pick"], one["cas"]), again["fitted"]
    (True, [])
    """
    names = [model_name(m) for m in models]
    have = {r["model"]: r for r in known
            if r.get("release_cv") is not None and r.get("release_to_clear") is not None}
    folds = folds_for(y)
    todo = [(m, n) for m, n in zip(models, names, strict=True) if n not in have]
    tasks = [(m, seed, X_release, y, X_test, folds, None) for m, _ in todo]
    outs = dict(zip([n for _, n in todo], fit_tasks(tasks, n_jobs), strict=True))

    def rates(name: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        if name in have:
            return have[name]["release_cv"], have[name]["release_to_clear"]
        hits, pred = outs[name]
        return (None if hits is None else Rate.from_counts(hits, int(y.size)).to_dict(),
                Rate.from_counts(int(np.count_nonzero(pred == y_test)),
                                 int(y_test.size)).to_dict())

    got = {name: rates(name) for name in names}
    pick = _pick(names, [got[name][0] for name in names])
    return {"pick": pick, "cas": got[pick][1], "fitted": [n for _, n in todo]}


def apply_pick(entry: dict[str, Any], panel: dict[str, Any]) -> None:
    """Make the consumer's pick the headline of one attribute's utility ``entry`` (from
    :func:`~bioanon.evaluation.utility.utility_views`): its CAS (release → clear) and its
    clear accuracy are the picks' scores; the other views keep ``utility_model``'s."""
    entry["consumer"] = panel
    entry["cas"] = entry["anonymized_to_clear"] = float(panel["cas"]["value"])
    entry["clear"] = float(panel["clear"]["value"])
    entry["cas_model"], entry["clear_model"] = panel["pick"], panel["clear_pick"]


__all__ = ["CONSUMER_MODELS", "FOLDS", "PANEL_MODES", "RULE", "apply_pick", "consumer_panel",
           "fold_hits", "folds_for", "oob_hits", "release_pick", "with_oob"]
