"""Privacy–utility Pareto fronts and the area under them (the sanitizer paper's AuC).

Each point is one setting of a method: a privacy score and a utility score, both "higher is
better" (use privacy = 1 − attack accuracy, or 1 − leakage). The front keeps the settings no
other setting beats on both; the area under it is the integral over privacy levels of the best
utility reached at that privacy or more (a staircase, no interpolation), so a method whose
front dominates another's has the larger area.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import BioanonError


def _points(privacy: Sequence[float], utility: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(privacy, dtype=np.float64).ravel()
    u = np.asarray(utility, dtype=np.float64).ravel()
    if p.shape != u.shape:
        raise BioanonError(f"{p.size} privacy scores for {u.size} utility scores; pair them")
    if p.size == 0:
        raise BioanonError("the Pareto front needs at least one (privacy, utility) point")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(u))):
        raise BioanonError("privacy and utility scores must be finite numbers")
    return p, u


def pareto_front(privacy: Sequence[float], utility: Sequence[float]) -> np.ndarray:
    """Indices of the non-dominated points, sorted by increasing privacy.

    A point is dominated when another is at least as good on both scores and better on one.

    Examples
    --------
    >>> pareto_front([0.1, 0.5, 0.4, 0.9], [0.9, 0.6, 0.5, 0.2]).tolist()
    [0, 1, 3]
    """
    p, u = _points(privacy, utility)
    order = np.lexsort((-u, -p))  # by privacy descending, ties: best utility first
    best = -np.inf
    keep = []
    for i in order:  # one pass over the points (a loop over settings, not records)
        if u[i] > best:
            keep.append(i)
            best = u[i]
    return np.asarray(keep[::-1], dtype=np.int64)


def pareto_auc(privacy: Sequence[float], utility: Sequence[float],
               privacy_range: tuple[float, float] = (0.0, 1.0)) -> float:
    """Area under the Pareto staircase over ``privacy_range`` (higher is better).

    ``∫ max{u_i : p_i ≥ x} dx`` over x in the range (0 where no point reaches x), divided by
    the range's width, so it lies in the units of utility.

    Examples
    --------
    >>> round(pareto_auc([0.5, 1.0], [0.8, 0.4]), 3)
    0.6
    """
    p, u = _points(privacy, utility)
    lo, hi = map(float, privacy_range)
    if not hi > lo:
        raise BioanonError(f"privacy_range {privacy_range} must be increasing")
    idx = pareto_front(p, u)
    xs = np.clip(p[idx], lo, hi)
    area, start = 0.0, lo
    for x, y in zip(xs, u[idx], strict=True):  # front sorted by privacy, utility decreasing
        if x > start:
            area += (x - start) * y
            start = x
    return float(area / (hi - lo))
