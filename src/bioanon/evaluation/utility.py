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
from ..attack.parallel import is_parallel, parallel_map
from ..attack.recognizers import model_name, single_threaded
from ..metrics import accuracy, chance_level
from ..table import FeatureTable


def _utility_fit(model: Any, seed: int, X: np.ndarray, y: np.ndarray,
                 probes: Sequence[np.ndarray], single: bool) -> list[np.ndarray]:
    est = make_recognizer(model, seed)
    if single:
        single_threaded(est)
    est.fit(X, y)
    return [est.predict(P) for P in probes]


def utility_views(train: FeatureTable, test: FeatureTable, anon_train: np.ndarray,
                  anon_test: np.ndarray, columns: Sequence[str], model: Any = "forest",
                  seed: int = 0, n_jobs: int | None = -1) -> dict[str, dict[str, Any]]:
    """Accuracy of each useful attribute in the three views (plus clear → clear).

    Each entry also carries the hits behind each figure (``n`` test records) so that the
    typed results can give intervals, and ``cas`` (= ``anonymized_to_clear``).
    """
    jobs = []
    for col in columns:
        y = train.labels[col].to_numpy()
        jobs.append((model, seed, train.X, y, [test.X, anon_test]))
        jobs.append((model, seed, anon_train, y, [test.X, anon_test]))
    single = is_parallel(n_jobs, len(jobs))
    outs = list(parallel_map(_utility_fit, [(*job, single) for job in jobs], n_jobs, len(jobs)))
    util: dict[str, dict[str, Any]] = {}
    for i, col in enumerate(columns):
        y = test.labels[col].to_numpy()
        (clear_clear, clear_anon), (anon_clear, anon_anon) = outs[2 * i], outs[2 * i + 1]
        util[col] = {
            "column": col, "model": model_name(model),
            "clear": accuracy(y, clear_clear),
            "anonymized": accuracy(y, clear_anon),
            "anonymized_to_clear": accuracy(y, anon_clear),
            "anonymized_to_anonymized": accuracy(y, anon_anon),
            "cas": accuracy(y, anon_clear),
            "chance": chance_level(y),
            "n": int(y.size),
            "split": "closed set",
        }
    return util
