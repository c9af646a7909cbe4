"""Which consumers rank a search's settings on its tuning split.

Under ``consumer_panel="final"`` (the default) a search's tuning split ranks its settings by
the ranking panel (:data:`~bioanon.evaluation.panel_modes.RANKING_MODELS`: shrunk LDA and
logistic regression, the consumer's pick between them), a few tenths of a second a setting
where a forest costs seconds. That is a fair proxy for the consumer's whole panel only where
the linear consumers learn the interest as well as a forest does on clear records: on a table
whose classes a linear model cannot tell apart (SP-SW-HAR's activities: LDA 0.55 against a
chance of 0.53, the forest 0.79) every release would rank near chance. So, once per search and
before any setting is judged, the forest and the linear consumers are cross-validated on the
clear records of the tuning table (a stratified sample of at most :data:`SAMPLE` records, the
forest by its out-of-bag predictions, LDA then logistic regression by the consumer's folds,
the second only when the first falls short): where a linear consumer reaches the forest's
accuracy less :data:`TOLERANCE`, the ranking panel ranks; otherwise the forest joins it
(``consumer_panel="forest-ranking"``): the pick among the forest and the linear consumers,
made on each release as the whole panel makes it, ranks; that forest is the consumer's with
half its trees (:data:`~bioanon.evaluation.panel_modes.RANKING_FOREST`, a proxy as the linear
consumers are: the gate and the confirmation judge by the consumer's own). The forest alone
would rank a release whose linear consumers cross-validate clearly better on it by a model the
confirmation's consumer does not pick (the 1,040-person demo-like table, seed 3: the forest
ranked ``dp-basis(dp-lda)`` at 0.94 × clear, the confirmation's pick, logistic regression,
read 0.69 ×). The confirmation judges by the whole panel either way.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> from bioanon.evaluation.options import EvaluationOptions
>>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
>>> opts, why = ranking_options(t, "expression", EvaluationOptions.of(), seed=0)
>>> opts.consumer_panel, sorted(why)
('ranking', ['forest', 'linear', 'n', 'ranks_by'])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...evaluation.caps import capped_rows
from ...evaluation.options import EvaluationOptions
from ...table import FeatureTable

#: clear records the check cross-validates on (a stratified sample of the tuning table)
SAMPLE = 2_000
#: how far below the forest's cross-validated accuracy the better linear consumer may fall
#: and still rank (FSDD's clear records: logistic regression 0.933, the forest 0.945)
TOLERANCE = 0.02


def ranking_options(table: FeatureTable, interest: str, options: EvaluationOptions,
                    seed: int) -> tuple[EvaluationOptions, dict[str, Any] | None]:
    """The options the tuning split runs (:meth:`EvaluationOptions.for_tuning`, the forest
    alone where the linear consumers fall short on clear records: see the module) and what
    the check measured (None where ``options`` ask for no ranking panel)."""
    tuning = options.for_tuning()
    if tuning.consumer_panel != "ranking":
        return tuning, None
    from threadpoolctl import threadpool_limits

    from ...attack.recognizers import make_recognizer, single_threaded
    from ...evaluation.consumer import fold_hits, folds_for, oob_hits, with_oob
    from ...evaluation.panel_modes import RANKING_FOREST, RANKING_MODELS

    y = table.labels[interest].to_numpy().astype(str)
    rows = capped_rows(y, SAMPLE, seed, "ranking panel check")
    X = table.X if rows is None else table.X[rows]
    y = y if rows is None else y[rows]
    folds = folds_for(y)
    if folds < 2 or np.unique(y).size < 2:  # no cross-validation: nothing to compare
        return tuning, None
    # the one forest on every core (nothing else runs yet; its trees do not depend on them)
    forest = with_oob(make_recognizer("forest", seed), True).fit(X, y)
    forest_acc = (oob_hits(forest, y) or 0) / y.size
    linear: dict[str, float] = {}
    # the linear fits on one BLAS thread, as the judge fits them: their figures then do not
    # depend on the cores, and they are faster (SP-SW-HAR's logistic regression folds: 3.0 s
    # on two BLAS threads of 2 cores, 0.24 s on one)
    with threadpool_limits(limits=1):
        for m in RANKING_MODELS:  # in the panel's order; the first that reaches it decides
            est = single_threaded(make_recognizer(m, seed))
            linear[m] = fold_hits(est, X, y, folds, seed) / y.size
            if linear[m] >= forest_acc - TOLERANCE:
                break
    ok = max(linear.values()) >= forest_acc - TOLERANCE
    why = {"n": int(y.size), "forest": round(forest_acc, 4),
           "linear": {m: round(a, 4) for m, a in linear.items()},
           "ranks_by": "ranking panel" if ok else "forest panel"}
    if ok:
        return tuning, why
    # the utility views' model is the panel's forest, so that its one fit serves both
    view = RANKING_FOREST if options.utility_model == "forest" else options.utility_model
    return replace(options, consumer_panel="forest-ranking", utility_model=view), why


__all__ = ["SAMPLE", "TOLERANCE", "ranking_options"]
