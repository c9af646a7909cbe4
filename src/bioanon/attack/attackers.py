"""Attackers built from the recognizer zoo: the attack panel and nearest-neighbour linkage.

:func:`run_panel` realises every :class:`~bioanon.attack.threat.ThreatModel` of a panel
(attacker modes × recognizers) on one closed-set split. It fits each recognizer once per
distinct training set (clear, anonymized, and each p% mix) and scores every mode that shares
it: ``reverse`` reuses the parrot model on clear probes, the clear baseline reuses the naive
model. Fits run in parallel with joblib; clear-trained models can be kept in a
:class:`ModelCache` and reused by later evaluations of the same split (e.g. a parameter sweep).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..metrics import (
    accuracy,
    advantage,
    kl_from_uniform,
    mixture,
    top_k_accuracy,
    wilson_interval,
)
from .panel_sample import panel_probe_rows, sample_words
from .parallel import is_parallel, parallel_map
from .recognizers import make_recognizer, model_name, single_threaded
from .scalable import resolve_scale_classes, substitute
from .summary import summarize_scores
from .threat import MODES, ThreatModel, parse_modes
from .top_k import top_k_indices

Progress = Callable[[int, int, str], None]


def _unit_rows(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms == 0, 1.0, norms)


class LinkageAttacker(BaseEstimator):
    """Link each released record to its nearest clear record by cosine distance.

    Parameters
    ----------
    k : int, default 5
        How many nearest gallery records :meth:`kneighbors` returns.
    standardize : bool, default True
        Standardize features with the gallery's mean and spread before the cosine distance.

    Examples
    --------
    >>> import numpy as np
    >>> att = LinkageAttacker(k=1).fit(np.eye(3), np.array(["a", "b", "c"]))
    >>> att.predict(np.array([[0.9, 0.1, 0.0]])).tolist()
    ['a']
    """

    def __init__(self, k: int = 5, standardize: bool = True) -> None:
        self.k = k
        self.standardize = standardize

    def fit(self, X_gallery: np.ndarray, y_gallery: np.ndarray | None = None) -> LinkageAttacker:
        """Store the clear gallery (and its labels, if any)."""
        X = np.asarray(X_gallery, dtype=np.float64)
        self.mean_ = X.mean(axis=0) if self.standardize else np.zeros(X.shape[1])
        scale = X.std(axis=0) if self.standardize else np.ones(X.shape[1])
        self.scale_ = np.where(scale == 0, 1.0, scale)
        self.gallery_ = _unit_rows((X - self.mean_) / self.scale_)
        self.labels_ = None if y_gallery is None else np.asarray(y_gallery)
        return self

    def _probe(self, X_probe: np.ndarray) -> np.ndarray:
        return _unit_rows((np.asarray(X_probe, dtype=np.float64) - self.mean_) / self.scale_)

    def kneighbors(self, X_probe: np.ndarray, k: int | None = None,
                   block: int = 2048) -> np.ndarray:
        """Indices of the ``k`` nearest gallery records per probe, nearest first."""
        check_is_fitted(self, "gallery_")
        k = min(k or self.k, self.gallery_.shape[0])
        P = self._probe(X_probe)
        out = np.empty((P.shape[0], k), dtype=np.int64)
        for s in range(0, P.shape[0], block):  # blocks of probes bound the memory
            out[s:s + block] = top_k_indices(P[s:s + block] @ self.gallery_.T, k)
        return out

    def predict(self, X_probe: np.ndarray) -> np.ndarray:
        """Label of the nearest gallery record."""
        if self.labels_ is None:
            raise ValueError("fit the linkage attacker with gallery labels to predict labels")
        return self.labels_[self.kneighbors(X_probe, k=1)[:, 0]]

    def class_scores(self, X_probe: np.ndarray,
                     block: int = 2048) -> tuple[np.ndarray, np.ndarray]:
        """Per class, the best cosine similarity of any of its gallery records.

        Returns ``(scores, classes)`` with scores of shape (n_probes, n_classes); ranking the
        classes by score gives the linkage attacker's top-k guesses.
        """
        check_is_fitted(self, "gallery_")
        if self.labels_ is None:
            raise ValueError("fit the linkage attacker with gallery labels to score classes")
        classes, codes = np.unique(self.labels_, return_inverse=True)
        order = np.argsort(codes, kind="stable")
        starts = np.searchsorted(codes[order], np.arange(classes.size))
        G = self.gallery_[order]
        P = self._probe(X_probe)
        out = np.empty((P.shape[0], classes.size))
        for s in range(0, P.shape[0], block):
            out[s:s + block] = np.maximum.reduceat(P[s:s + block] @ G.T, starts, axis=1)
        return out, classes

    def record_hit_rates(self, X_probe: np.ndarray, true_index: np.ndarray,
                         k: int | None = None) -> list[float]:
        """Top-j re-identification rate of the exact record, j = 1..k."""
        nn = self.kneighbors(X_probe, k)
        hits = np.cumsum(nn == np.asarray(true_index)[:, None], axis=1) > 0
        return [float(v) for v in hits.mean(axis=0)]


# ---------------------------------------------------------------------------- the panel
def fingerprint(*arrays: np.ndarray) -> str:
    """A short content hash of arrays (to recognise the same training data again)."""
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
    return h.hexdigest()


@dataclass
class ModelCache:
    """Fitted clear-data recognizers kept across evaluations of the same split.

    Pass one instance to several :func:`bioanon.evaluation.evaluate` calls (a sweep over
    anonymizer parameters): the naive attackers and the clear baseline are then fitted once.
    """

    models: dict[str, Any] = field(default_factory=dict)
    hits: int = 0

    def key(self, model: Any, seed: int, data_key: str) -> str:
        name = model if isinstance(model, str) else repr(model)
        return f"{name}|{seed}|{data_key}"

    def get(self, key: str) -> Any | None:
        found = self.models.get(key)
        self.hits += found is not None
        return found

    def put(self, key: str, model: Any) -> None:
        self.models[key] = model


def mix_mask(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask choosing ``fraction`` of the records of every class (rounded), at random.

    Examples
    --------
    >>> int(mix_mask(np.repeat(["a", "b"], 8), 0.25, seed=0).sum())
    4
    """
    y = np.asarray(y)
    _, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(y.size), codes))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(y.size, dtype=np.int64)
    rank[order] = np.arange(y.size) - starts[codes[order]]
    return rank < np.round(fraction * counts)[codes]


def training_set(X_train: np.ndarray, A_train: np.ndarray, y_train: np.ndarray,
                 fraction: float, seed: int) -> np.ndarray:
    """The training records of an attacker whose ``fraction`` of records is anonymized.

    The anonymized records are drawn per identity (:func:`mix_mask`) with the seed
    ``seed + round(100 * fraction)``, the same for every recognizer of a panel.
    """
    if fraction <= 0.0:
        return X_train
    if fraction >= 1.0:
        return A_train
    mask = mix_mask(y_train, fraction, seed + int(round(100 * fraction)))
    return np.where(mask[:, None], A_train, X_train)


def _fit_and_score(model: Any, seed: int, X: np.ndarray, y: np.ndarray,
                   probes: dict[str, tuple[np.ndarray, np.ndarray]], top_k: int,
                   single_thread: bool, keep: bool, fitted: Any = None) -> dict[str, Any]:
    """Fit one recognizer (unless given fitted) and summarize its scores on each probe set.

    ``probes`` maps a name to (records, true labels); each gets :func:`summarize_scores`
    (guesses, top-k, KL), computed by row blocks so no full score matrix is kept.
    """
    start = time.perf_counter()
    if fitted is None:
        est = make_recognizer(model, seed)
        if single_thread:
            single_threaded(est)
        fitted = est.fit(X, y)
    fit_s = time.perf_counter() - start
    classes = np.asarray(fitted.classes_)
    kind = ("proba" if hasattr(fitted, "predict_proba") else
            "decision" if hasattr(fitted, "decision_function") else "label")
    summaries = {}
    for name, (P, y_true) in probes.items():
        summaries[name] = summarize_scores(
            lambda rows, P=P: class_scores(fitted, P[rows], classes, kind), len(P), classes,
            y_true, top_k, kind)
    return {"summary": summaries, "kind": kind, "classes": classes, "fit_seconds": fit_s,
            "model": fitted if keep else None}


def class_scores(fitted: Any, X: np.ndarray, classes: np.ndarray, kind: str) -> np.ndarray:
    """(n, n_classes) scores: probabilities, decision values, or one-hot predictions."""
    if kind == "proba":
        return np.asarray(fitted.predict_proba(X), dtype=np.float64)
    if kind == "decision":
        s = np.asarray(fitted.decision_function(X), dtype=np.float64)
        return np.column_stack([-s, s]) if s.ndim == 1 else s
    pred = np.asarray(fitted.predict(X))
    return (pred[:, None] == classes[None, :]).astype(np.float64)


def attack_record(threat: ThreatModel, y_true: np.ndarray, scores: np.ndarray | None,
                  classes: np.ndarray | None, chance: float, top_k: int,
                  y_pred: np.ndarray | None = None, kind: str = "proba",
                  summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """One attack's entry in the report: accuracy, Wilson CI, advantage, top-k, KL.

    ``kind`` says what ``scores`` are: ``proba`` (top-k and KL from uniform), ``decision``
    (a ranking: top-k only) or ``label`` (one-hot predictions: neither). A ``summary`` from
    :func:`~bioanon.attack.summary.summarize_scores` stands in for ``scores`` and ``classes``.
    """
    if summary is not None:
        rec = attack_record(threat, y_true, None, None, chance, top_k, summary["pred"], kind)
        if kind != "label":
            rec["top_k"] = summary["top_k"]
            rec["kl_uniform"] = summary["kl_uniform"] if kind == "proba" else None
        return rec
    if y_pred is None:
        assert scores is not None and classes is not None
        y_pred = np.asarray(classes)[np.argmax(scores, axis=1)]
    y_true = np.asarray(y_true)
    acc = accuracy(y_true, y_pred)
    hits = int(np.sum(y_true == np.asarray(y_pred)))
    rec: dict[str, Any] = {
        "mode": threat.mode, "model": threat.recognizer, "train_data": threat.train_data,
        "test_data": threat.probes, "accuracy": acc, "ci": list(wilson_interval(hits, y_true.size)),
        "advantage": advantage(acc, chance), "mixture": mixture(acc), "n": int(y_true.size),
        "threat": threat.to_dict(),
    }
    if scores is not None and classes is not None and kind != "label":
        rec["top_k"] = top_k_accuracy(scores, classes, y_true, top_k)
        rec["kl_uniform"] = kl_from_uniform(scores) if kind == "proba" else None
    return rec


def run_panel(X_train: np.ndarray, A_train: np.ndarray, y_train: np.ndarray,
              X_test: np.ndarray, A_test: np.ndarray, y_test: np.ndarray, chance: float,
              modes: str | Sequence[str] = "all", models: Sequence[Any] = ("knn",),
              seed: int = 0, top_k: int = 5, n_jobs: int | None = -1,
              cache: ModelCache | None = None,
              progress: Progress | None = None,
              predictions: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Run every attacker mode × recognizer on one closed-set split.

    Parameters
    ----------
    X_train, A_train : arrays (n_train, d)
        Clear and anonymized training records (same order).
    y_train : array (n_train,)
        Sensitive labels of the training records.
    X_test, A_test, y_test
        Clear and anonymized test records (the release) and their sensitive labels.
    chance : float
        Chance accuracy on ``y_test`` (for the advantage).
    modes : "all" or names from :data:`bioanon.attack.threat.MODES`
    models : sequence of recognizer names or estimators
    seed : int
        Seed of the recognizers and of the mixes (every fit uses it).
    top_k : int
        Largest k of the top-k curves.
    n_jobs : int or None
        Parallel fits (joblib; -1: all cores).
    cache : ModelCache, optional
        Reuse clear-trained recognizers fitted on the same training data.
    progress : callable (done, total, description), optional
    predictions : dict, optional
        Filled in place with each attacker's guesses for the test records (in their order;
        the reverse attacker's come from clear probes), keyed ``"mode / recognizer"`` (kept
        in process: contributor disclosure and the cross-fitted worst case read them).

    Where every test record against every identity would exceed
    :data:`~bioanon.attack.verification.MAX_TRIALS` scores, the attackers are scored on a
    seeded random sample of the test records (:func:`~bioanon.attack.panel_sample.
    panel_probe_rows`; the linkage attacker still searches every clear test record): the
    guesses, rates and ``n`` are then the sampled records'.

    With more identities in ``y_train`` than :data:`~bioanon.attack.scalable.SCALE_CLASSES`
    (100, or as :func:`~bioanon.attack.scalable.resolve_scale_classes` reads it),
    recognizers whose cost grows with the number of classes (forest, SVMs, ...) are replaced
    by one-pass recognizers (:data:`~bioanon.attack.scalable.SCALED_SUBSTITUTES`); the output
    names every substitution.

    Returns
    -------
    dict with ``attacks`` (records in mode × recognizer order), ``clear`` (each recognizer on
    clear test data), ``timing`` (seconds per recognizer fit) and ``substitutions`` (each
    replaced recognizer, what stood in for it and why; empty when none).
    """
    modes = parse_modes(modes)
    n_classes = int(np.unique(y_train).size)
    models, substitutions = _panel_models(list(models), n_classes, "auto")
    fractions = sorted({MODES[m].anonymized_fraction for m in modes} - {None} | {0.0})
    train_sets = {f: training_set(X_train, A_train, y_train, f, seed) for f in fractions}
    gallery = _TestSets(X_test, A_test, y_test)
    probe_rows = panel_probe_rows(y_test, seed)
    if probe_rows is not None:
        y_test = np.asarray(y_test)[probe_rows]
    test = gallery if probe_rows is None else _TestSets(X_test[probe_rows],
                                                        A_test[probe_rows], y_test)
    clear_key = fingerprint(X_train, np.asarray(y_train).astype(str))
    results, jobs, slots = _plan_fits(models, fractions, modes, train_sets, y_train, test,
                                      seed, top_k, n_jobs, cache, clear_key)
    results.update(_run_fits(models, jobs, slots, n_jobs, cache, progress))
    clear, timing = _clear_records(models, fractions, results, substitutions, y_test, chance,
                                   seed, top_k)
    attacks = _mode_records(models, modes, results, substitutions, y_test, chance, seed,
                            top_k, predictions)
    if "linkage" in modes:
        attacks.append(_linkage_record(gallery, test, probe_rows, chance, seed, top_k,
                                       predictions))
        timing["cosine_nn"] = {"none": attacks[-1]["fit_seconds"]}
    return {"attacks": attacks, "clear": clear, "timing": timing,
            "substitutions": substitutions,
            "probes": {"n": int(len(test.y)), "of": int(len(gallery.y)),
                       "sample": sample_words(probe_rows, len(gallery.y))},
            "probe_rows": probe_rows}


@dataclass(frozen=True)
class _TestSets:
    """The clear and anonymized test records and their sensitive labels."""

    X: np.ndarray
    A: np.ndarray
    y: np.ndarray


#: a planned fit: (recognizer index, anonymized fraction of its training data, cache key)
_Slot = tuple[int, float, str | None]


def _probes(f: float, modes: Sequence[str], test: _TestSets
            ) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """The probe sets scored by a recognizer trained on ``f`` anonymized data (None: no
    attacker mode needs this fit)."""
    if f == 1.0 and not ({"parrot", "reverse"} & set(modes)):
        return None
    probes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if f == 0.0:
        probes["clear"] = (test.X, test.y)
        if "naive" in modes:
            probes["anonymized"] = (test.A, test.y)
    if f > 0.0:
        probes["anonymized"] = (test.A, test.y)
    if f == 1.0 and "reverse" in modes:
        probes["clear"] = (test.X, test.y)
    return probes


def _plan_fits(models: list[Any], fractions: list[float], modes: Sequence[str],
               train_sets: dict[float, np.ndarray], y_train: np.ndarray, test: _TestSets,
               seed: int, top_k: int, n_jobs: int | None, cache: ModelCache | None,
               clear_key: str) -> tuple[dict[tuple[int, float], dict[str, Any]],
                                        list[tuple[Any, ...]], list[_Slot]]:
    """Score the recognizers the cache already holds; list the fits left to run (their
    arguments to :func:`_fit_and_score` and their slots)."""
    single = is_parallel(n_jobs, len(models) * len(fractions))
    done: dict[tuple[int, float], dict[str, Any]] = {}
    jobs: list[tuple[Any, ...]] = []
    slots: list[_Slot] = []
    for mi, m in enumerate(models):
        for f in fractions:
            probes = _probes(f, modes, test)
            if probes is None:
                continue
            X_fit = train_sets[f]
            key = cache.key(m, seed, clear_key) if cache is not None and f == 0.0 else None
            fitted = cache.get(key) if key is not None else None
            if fitted is not None:
                done[(mi, f)] = _fit_and_score(m, seed, X_fit, y_train, probes, top_k,
                                               single, False, fitted)
                continue
            slots.append((mi, f, key))
            jobs.append((m, seed, X_fit, y_train, probes, top_k, single, key is not None))
    return done, jobs, slots


def _run_fits(models: list[Any], jobs: list[tuple[Any, ...]], slots: list[_Slot],
              n_jobs: int | None, cache: ModelCache | None, progress: Progress | None
              ) -> dict[tuple[int, float], dict[str, Any]]:
    """Run the planned fits in parallel, heaviest first; cache the clear-trained ones."""
    total = len(jobs)
    results: dict[tuple[int, float], dict[str, Any]] = {}
    if progress is not None:
        progress(0, total, f"fitting {total} attack models")
    if not total:
        return results
    # heavy recognizers first keeps both cores busy to the end
    order = sorted(range(total), key=lambda j: _cost_rank(models[slots[j][0]]))
    outs = parallel_map(_tagged, [(j, *jobs[j]) for j in order], n_jobs, total,
                        unordered=True)
    for count, (j, res) in enumerate(outs, start=1):
        mi, f, key = slots[j]
        results[(mi, f)] = res
        if key is not None and cache is not None:
            cache.put(key, res["model"])
        if progress is not None:
            progress(count, total, f"{model_name(models[mi])} "
                                   f"({_frac_label(f)} training data)")
    return results


def _clear_records(models: list[Any], fractions: list[float],
                   results: dict[tuple[int, float], dict[str, Any]],
                   substitutions: list[dict[str, Any]], y_test: np.ndarray, chance: float,
                   seed: int, top_k: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Each recognizer on clear test data, and the seconds of each of its fits."""
    clear, timing = [], {}
    for mi, m in enumerate(models):
        name = model_name(m)
        res0 = results[(mi, 0.0)]
        timing[name] = {_frac_label(f): results[(mi, f)]["fit_seconds"]
                        for f in fractions if (mi, f) in results}
        clear_tm = ThreatModel("naive", name, seed)
        rec = attack_record(clear_tm, y_test, None, None, chance, top_k, kind=res0["kind"],
                            summary=res0["summary"]["clear"])
        rec.update(mode="clear", train_data="clear", test_data="clear")
        rec.pop("threat")
        _note_substitute(rec, name, substitutions)
        clear.append(rec)
    return clear, timing


def _mode_records(models: list[Any], modes: Sequence[str],
                  results: dict[tuple[int, float], dict[str, Any]],
                  substitutions: list[dict[str, Any]], y_test: np.ndarray, chance: float,
                  seed: int, top_k: int, predictions: dict[str, np.ndarray] | None
                  ) -> list[dict[str, Any]]:
    """The trained attackers' records, mode × recognizer; their guesses into
    ``predictions``."""
    attacks = []
    for mode in modes:
        spec = MODES[mode]
        if spec.anonymized_fraction is None:
            continue
        for mi, m in enumerate(models):
            res = results[(mi, spec.anonymized_fraction)]
            tm = ThreatModel(mode, model_name(m), seed)
            summary = res["summary"][spec.probes]
            rec = attack_record(tm, y_test, None, None, chance, top_k, kind=res["kind"],
                                summary=summary)
            rec["fit_seconds"] = res["fit_seconds"]
            _note_substitute(rec, model_name(m), substitutions)
            attacks.append(rec)
            if predictions is not None:  # every attack's guesses, in test-record order
                predictions[f"{mode} / {model_name(m)}"] = summary["pred"]
    return attacks


def _linkage_record(gallery: _TestSets, test: _TestSets, rows: np.ndarray | None,
                    chance: float, seed: int, top_k: int,
                    predictions: dict[str, np.ndarray] | None) -> dict[str, Any]:
    """The linkage attacker: each release record of ``test`` matched to every clear test
    record (``gallery``; ``rows``: the gallery row of each of ``test``'s records, None when
    they are the gallery's own)."""
    start = time.perf_counter()
    link = LinkageAttacker(k=top_k).fit(gallery.X, gallery.y)
    scores, classes = link.class_scores(test.A)
    if predictions is not None:
        predictions["linkage / cosine_nn"] = classes[np.argmax(scores, axis=1)]
    rec = attack_record(ThreatModel("linkage", "cosine_nn", seed), test.y, None, None,
                        chance, top_k, kind="decision",
                        summary=summarize_scores(scores.__getitem__, len(scores), classes,
                                                 test.y, top_k, "decision"))
    del scores  # the (n, n) matrix is not needed by the record rates
    own = np.arange(len(test.y)) if rows is None else rows
    rates = link.record_hit_rates(test.A, own, top_k)
    rec["record_top_k"] = rates
    rec["record_chance_top_k"] = [min(1.0, k / len(gallery.y))
                                  for k in range(1, len(rates) + 1)]
    rec["fit_seconds"] = time.perf_counter() - start
    return rec


def _panel_models(models: list[Any], n_classes: int,
                  scale_classes: int | str | None) -> tuple[list[Any], list[dict[str, Any]]]:
    """The recognizers the panel fits, after substitutions above ``scale_classes`` classes.

    A substitute already in the panel is fitted once (its records name what it replaces).
    """
    out: list[Any] = []
    subs: list[dict[str, Any]] = []
    scale_classes = resolve_scale_classes(scale_classes)
    for m in models:
        s = substitute(m, n_classes, scale_classes)
        if s != m:
            subs.append({"model": m, "substitute": s, "n_classes": n_classes,
                         "scale_classes": scale_classes,
                         "reason": f"{n_classes} identities > {scale_classes}: '{m}' costs "
                                   f"grow with the number of classes; '{s}' is one pass"})
        if not any(isinstance(o, str) and o == s for o in out) or not isinstance(s, str):
            out.append(s)
    return out, subs


def _note_substitute(rec: dict[str, Any], name: str, subs: list[dict[str, Any]]) -> None:
    replaced = [s["model"] for s in subs if s["substitute"] == name]
    if replaced:
        rec["replaces"] = replaced


_COST = {"dlib_embedding": 0, "rbf_svm": 0, "pca_svm": 1, "hgb": 1, "forest": 2, "linear_svm": 3,
         "mlp": 4, "metric_knn": 4, "cosine_knn": 4, "lda": 5}


def _cost_rank(model: Any) -> int:
    return _COST.get(model, 5) if isinstance(model, str) else 0


def _tagged(j: int, *args: Any) -> tuple[int, dict[str, Any]]:
    return j, _fit_and_score(*args)


def _frac_label(f: float) -> str:
    return {0.0: "clear", 1.0: "anonymized"}.get(f, f"{round(100 * f)}% anonymized")
