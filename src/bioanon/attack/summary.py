"""What the panel keeps of a recognizer's scores: guesses, top-k hit rates, KL from uniform.

With thousands of identities a score matrix (records × classes) is hundreds of megabytes; the
panel scores probes in row blocks and keeps only these summaries, computed block by block with
the same values as :func:`bioanon.metrics.top_k_accuracy` and
:func:`bioanon.metrics.kl_from_uniform` on the whole matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: score-matrix entries per row block (about 32 MB of float64)
BLOCK_ENTRIES = 4_000_000


def true_columns(classes: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """Column of each record's true class in ``classes`` (-1 where the class is absent).

    Examples
    --------
    >>> true_columns(np.array(["b", "a", "c"]), np.array(["a", "c", "z"])).tolist()
    [1, 2, -1]
    """
    classes, y_true = np.asarray(classes), np.asarray(y_true)
    if classes.dtype.kind != y_true.dtype.kind:
        classes, y_true = classes.astype(str), y_true.astype(str)
    order = np.argsort(classes, kind="stable")
    pos = np.minimum(np.searchsorted(classes[order], y_true), classes.size - 1)
    found = classes[order][pos] == y_true
    return np.where(found, order[pos], -1)


def summarize_scores(score_rows: Callable[[slice], np.ndarray], n: int, classes: np.ndarray,
                     y_true: np.ndarray, top_k: int, kind: str) -> dict[str, Any]:
    """Guesses, top-k hit rates (k = 1..top_k) and mean KL from uniform of a score matrix.

    ``score_rows(rows)`` returns the scores of the records in the slice ``rows`` (n × classes
    in all); ties rank by column order, as a stable sort would. ``kind`` is ``proba``
    (everything), ``decision`` (no KL) or ``label`` (guesses only).

    Examples
    --------
    >>> P = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    >>> s = summarize_scores(lambda r: P[r], 2, np.array(["a", "b", "c"]),
    ...                      np.array(["c", "a"]), 2, "proba")
    >>> s["pred"].tolist(), s["top_k"]
    (['b', 'a'], [0.5, 1.0])
    """
    classes = np.asarray(classes)
    k_max = min(top_k, classes.size)
    t = true_columns(classes, y_true)
    pred_idx = np.empty(n, dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    kl_sum = 0.0
    step = max(1, BLOCK_ENTRIES // max(classes.size, 1))
    cols = np.arange(classes.size)
    for s in range(0, n, step):
        rows = slice(s, min(s + step, n))
        S = np.asarray(score_rows(rows), dtype=np.float64)
        pred_idx[rows] = np.argmax(S, axis=1)
        tb = t[rows]
        st = S[np.arange(S.shape[0]), np.maximum(tb, 0)][:, None]
        before = (S > st) | ((S == st) & (cols[None, :] < tb[:, None]))
        rank[rows] = np.where(tb >= 0, before.sum(axis=1), classes.size)
        if kind == "proba":
            p = np.clip(S, 1e-12, 1.0)
            p /= p.sum(axis=1, keepdims=True)
            kl_sum += float(np.sum(p * np.log(p * classes.size)))
    out: dict[str, Any] = {"pred": classes[pred_idx], "top_k": None, "kl_uniform": None}
    if kind != "label":
        out["top_k"] = [float(np.mean(rank < k)) for k in range(1, k_max + 1)]
    if kind == "proba":
        out["kl_uniform"] = kl_sum / n if n else 0.0
    return out
