"""Label guesses read off a release: the nearest released record's, the nearest class mean's.

The inference attackers of :mod:`bioanon.attack.registry` (an inference on members read as a
membership test, :mod:`bioanon.evaluation.risks.inference`).
"""

from __future__ import annotations

import numpy as np

from .tracing import _unit, class_means, cosine_precision


def nearest_labels(candidates: np.ndarray, released: np.ndarray, released_labels: np.ndarray,
                   block: int = 1024) -> np.ndarray:
    """The label of each candidate's nearest released record (cosine, standardized).

    Examples
    --------
    >>> R = np.array([[1.0, 0], [0, 1]]); y = np.array(["a", "b"])
    >>> nearest_labels(np.array([[2.0, -1]]), R, y).tolist()
    ['a']
    """
    R = np.asarray(released, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    Ru = _unit((R - mu) / sd)
    Cu, Ru = cosine_precision(_unit((np.asarray(candidates, np.float64) - mu) / sd), Ru)
    idx = np.empty(Cu.shape[0], dtype=np.int64)
    for s in range(0, Cu.shape[0], block):
        idx[s:s + block] = (Cu[s:s + block] @ Ru.T).argmax(axis=1)
    return np.asarray(released_labels).astype(str)[idx]


def centroid_labels(candidates: np.ndarray, released: np.ndarray,
                    released_labels: np.ndarray) -> np.ndarray:
    """The label of the nearest released class mean (Euclidean, standardized): what the
    release teaches about anyone, member or not.

    Examples
    --------
    >>> R = np.array([[0.0, 0], [0, 1], [5, 5], [5, 6]]); y = np.array(list("aabb"))
    >>> centroid_labels(np.array([[1.0, 1], [4, 4]]), R, y).tolist()
    ['a', 'b']
    """
    R = np.asarray(released, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    classes, means = class_means((R - mu) / sd, released_labels)
    C = (np.asarray(candidates, np.float64) - mu) / sd
    d = (C * C).sum(1)[:, None] - 2 * C @ means.T + (means * means).sum(1)[None, :]
    return classes[d.argmin(axis=1)]


__all__ = ["centroid_labels", "nearest_labels"]
