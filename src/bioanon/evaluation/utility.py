"""Utility of a release in every view, CAS first.

- ``cas`` (``anonymized_to_clear``): trained on the release, scored on clear held-out records:
  what a data consumer gets. The headline, and what ``tune`` and ``release`` judge by.
- ``anonymized`` (the paper's view): trained on clear, scored on the release.
- ``anonymized_to_anonymized``: trained and scored on released records.
- ``clear``: trained and scored on clear records (the reference).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..attack import make_recognizer
from ..attack.attackers import ModelCache, fingerprint
from ..attack.parallel import is_parallel, parallel_map
from ..attack.recognizers import model_name, single_threaded
from ..metrics import accuracy, chance_level
from ..table import FeatureTable
from .caps import capped_rows


def _utility_fit(model: Any, seed: int, X: np.ndarray, y: np.ndarray,
                 probes: Sequence[np.ndarray], oob: bool, single: bool,
                 fitted: Any = None) -> tuple[list[np.ndarray], Any]:
    """Predictions on each probe set, and the fitted model (``fitted``: fit nothing;
    ``oob``: a forest keeps its out-of-bag predictions, for the consumer's panel)."""
    est = fitted
    if est is None:
        from .consumer import with_oob

        est = with_oob(make_recognizer(model, seed), oob)
        if single:
            single_threaded(est)
        est.fit(X, y)
    return [est.predict(P) for P in probes], est


def utility_views(train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                  anon_test: np.ndarray, columns: Sequence[str], model: Any = "forest",
                  seed: int = 0, n_jobs: int | None = -1,
                  cache: ModelCache | None = None,
                  max_fit_records: int | None = None,
                  keep: dict[tuple[str, str], Any] | None = None,
                  release: bool = True) -> dict[str, dict[str, Any]]:
    """Accuracy of each useful attribute in the three views (plus clear → clear).

    Each entry also carries the hits behind each figure (``n`` test records) so that the
    typed results can give intervals, and ``cas`` (= ``anonymized_to_clear``).

    ``cache`` (the panel's :class:`~bioanon.attack.attackers.ModelCache`) keeps the models
    trained on clear records: every setting a search judges on the same split shares them,
    so only the model trained on the release is fitted again.

    ``max_fit_records`` caps the records each model is trained on (a sample of the training
    split stratified by the column, the same records clear and released; each entry's
    ``n_fit`` says how many); the test records are never sampled.

    ``keep``, when given, receives the models fitted on the interest (the first column),
    under ("clear", model) and ("release", model), a forest with its out-of-bag predictions:
    the consumer's panel (:mod:`.consumer`) reads them instead of fitting the same models
    again (in process only).

    ``release`` False: the models trained on clear records only (the clear accuracy, and
    the paper's view); every view of a model trained on the release is NaN, not measured
    (a setting a search's screen decided on privacy).
    """
    jobs, keys, fitted, n_fit = [], [], [], []
    for col in columns:
        y = train.labels[col].to_numpy()
        rows = capped_rows(y, max_fit_records, seed, f"utility/{col}")
        X_clear, X_anon = train.X, anon_train
        if rows is not None:
            X_clear, X_anon, y = train.X[rows], anon_train[rows], y[rows]
        n_fit.append(int(y.size))
        key = (cache.key(model, seed, "utility|" + fingerprint(X_clear, y.astype(str)))
               if cache is not None else None)
        for X_fit, k in ((X_clear, key), (X_anon, None)):
            jobs.append((model, seed, X_fit, y, [test.X, anon_test], keep is not None))
            keys.append(k)
            fitted.append(cache.get(k) if cache is not None and k is not None else None)
    skipped = set() if release else set(range(1, len(jobs), 2))  # the release's models
    todo = [i for i, f in enumerate(fitted) if f is None and i not in skipped]
    single = n_jobs == 1 or is_parallel(n_jobs, len(todo))  # one job: one thread each
    outs: list[Any] = [None] * len(jobs)
    models = list(fitted)
    for i, out in zip(todo, parallel_map(_utility_fit, [(*jobs[i], single) for i in todo],
                                         n_jobs, len(todo)), strict=True):
        outs[i], models[i] = out
        if cache is not None and keys[i] is not None:
            cache.put(keys[i], out[1])
    for i, f in enumerate(fitted):
        if f is not None:
            outs[i] = _utility_fit(*jobs[i], False, f)[0]
    for i in skipped:
        outs[i] = [None, None]
    if keep is not None and columns:
        keep[("clear", model_name(model))], keep[("release", model_name(model))] = models[:2]
    util: dict[str, dict[str, Any]] = {}
    for i, col in enumerate(columns):
        y = test.labels[col].to_numpy()
        (clear_clear, clear_anon), (anon_clear, anon_anon) = outs[2 * i], outs[2 * i + 1]
        nan = float("nan")
        util[col] = {
            "column": col, "model": model_name(model),
            "clear": accuracy(y, clear_clear),
            "anonymized": accuracy(y, clear_anon),
            "anonymized_to_clear": nan if anon_clear is None else accuracy(y, anon_clear),
            "anonymized_to_anonymized": nan if anon_anon is None else accuracy(y, anon_anon),
            "cas": nan if anon_clear is None else accuracy(y, anon_clear),
            "chance": chance_level(y),
            "n": int(y.size),
            "n_fit": n_fit[i], "n_train": int(train.n_records),
            "split": "closed set",
        }
    return util
