"""Intervals for the judge: a difference of proportions (Newcombe), an AUC (Hanley–McNeil),
an equal error rate (bootstrap over probes), and the rank AUC itself.

Every privacy figure of a report carries a 95% interval; these are the pure functions behind
them (no I/O, no randomness except the seeded bootstrap).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .normal import ppf
from .scores import wilson_interval


def _z(confidence: float) -> float:
    return float(ppf(0.5 + confidence / 2))


def newcombe_difference(x1: int, n1: int, x2: int | None, n2: int | None, p2: float | None = None,
                        confidence: float = 0.95) -> tuple[float, float, float]:
    """Difference p1 − p2 with Newcombe's hybrid score interval (method 10, 1998).

    ``p2`` given instead of counts (``x2 = n2 = None``) is a known constant (chance), whose
    interval has no width: the interval is then p1's Wilson interval shifted by p2.

    Returns ``(difference, low, high)``.

    Examples
    --------
    >>> [round(v, 4) for v in newcombe_difference(56, 70, 48, 80)]
    [0.2, 0.0524, 0.3339]
    >>> [round(v, 4) for v in newcombe_difference(8, 10, None, None, p2=0.5)]
    [0.3, -0.0098, 0.4433]
    """
    p1 = x1 / n1 if n1 else 0.0
    l1, u1 = wilson_interval(x1, n1, confidence)
    if x2 is None or n2 is None:
        base = float(p2 if p2 is not None else 0.0)
        return (float(p1 - base), float(l1 - base), float(u1 - base))
    q = x2 / n2 if n2 else 0.0
    l2, u2 = wilson_interval(x2, n2, confidence)
    d = p1 - q
    lo = d - np.sqrt((p1 - l1) ** 2 + (u2 - q) ** 2)
    hi = d + np.sqrt((u1 - p1) ** 2 + (q - l2) ** 2)
    return (float(d), float(max(-1.0, lo)), float(min(1.0, hi)))


def rank_auc(scores_pos: np.ndarray, scores_neg: np.ndarray) -> float:
    """Probability that a positive scores above a negative (ties count one half).

    Examples
    --------
    >>> rank_auc(np.array([3.0, 2.0, 1.0]), np.array([2.0, 0.0, 0.0]))
    0.8333333333333334
    """
    pos = np.asarray(scores_pos, dtype=np.float64).ravel()
    neg = np.asarray(scores_neg, dtype=np.float64).ravel()
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    from scipy.stats import rankdata  # not at import: scipy.stats costs seconds at start-up

    ranks = rankdata(np.concatenate([pos, neg]))
    return float((ranks[:pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def auc_interval(auc: float, n_pos: int, n_neg: int,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Hanley & McNeil (1982) interval of an AUC, clipped to [0, 1].

    Examples
    --------
    >>> [round(v, 4) for v in auc_interval(0.8333, 3, 3)]
    [0.4726, 1.0]
    """
    if not np.isfinite(auc) or n_pos == 0 or n_neg == 0:
        return (0.0, 1.0)
    q1 = auc / (2 - auc)
    q2 = 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc)
           + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    half = _z(confidence) * np.sqrt(max(var, 0.0))
    return (float(max(0.0, auc - half)), float(min(1.0, auc + half)))


def equal_error_rate(target: np.ndarray, nontarget: np.ndarray) -> float:
    """EER of a verifier: the rate where false acceptances equal false rejections.

    Scores: higher means "same identity". 0.5 means the verifier learns nothing; 0 is perfect.

    Examples
    --------
    >>> round(equal_error_rate(np.array([0.9, 0.8, 0.3]), np.array([0.1, 0.2, 0.85])), 4)
    0.3333
    """
    t = np.sort(np.asarray(target, dtype=np.float64))
    nt = np.sort(np.asarray(nontarget, dtype=np.float64))
    if t.size == 0 or nt.size == 0:
        return float("nan")
    thr = np.unique(np.concatenate([t, nt]))
    frr = np.searchsorted(t, thr, side="left") / t.size        # targets below the threshold
    far = 1.0 - np.searchsorted(nt, thr, side="left") / nt.size  # non-targets at or above
    i = int(np.argmin(np.abs(frr - far)))
    return float((frr[i] + far[i]) / 2)


def bootstrap_eer(scores: np.ndarray, same: np.ndarray, n_boot: int = 200, seed: int = 0,
                  confidence: float = 0.95) -> tuple[float, float, float]:
    """EER of a (probes × identities) score matrix and its percentile bootstrap interval.

    ``same[i, j]`` marks the target trials (probe i has identity j). Probes are resampled
    with replacement, keeping all their trials.
    """
    scores, same = np.asarray(scores), np.asarray(same, dtype=bool)
    eer = equal_error_rate(scores[same], scores[~same])
    rng = np.random.default_rng(seed)
    n = scores.shape[0]
    boots = []
    for _ in range(n_boot):  # a loop over resamples, not records
        pick = rng.integers(0, n, n)
        s, m = scores[pick], same[pick]
        boots.append(equal_error_rate(s[m], s[~m]))
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(boots, [alpha, 1 - alpha])
    return (eer, float(lo), float(hi))


def rate_interval(rate: float | None, n: int | None,
                  given: Sequence[float] | None = None) -> tuple[float, float] | None:
    """``given`` when present, else Wilson's interval for ``rate`` measured on ``n`` records.

    Examples
    --------
    >>> [round(v, 3) for v in rate_interval(0.8, 10)]
    [0.49, 0.943]
    >>> rate_interval(0.5, None) is None, rate_interval(float("nan"), 10) is None
    (True, True)
    """
    if given is not None and len(given) == 2:
        try:
            lo, hi = float(given[0]), float(given[1])
        except (TypeError, ValueError):  # None, NA: no interval given
            lo = hi = math.nan
        if math.isfinite(lo) and math.isfinite(hi):
            return lo, hi
    try:  # no rate (None, NaN, not a number) or no count: no interval
        value, count = float(rate), int(n or 0)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or count <= 0:
        return None
    return wilson_interval(int(round(value * count)), count)


def interval_words(ci: Any, fmt: str = ".3f") -> str:
    """`` [lo, hi]``: a 95% interval as the terminal writes it after its figure; empty when
    there is none (None, NaN).

    >>> interval_words([0.49, 0.943]), interval_words(None), interval_words([-0.02, 0.1], "+.3f")
    (' [0.490, 0.943]', '', ' [-0.020, +0.100]')
    """
    if ci is None or len(ci) != 2:
        return ""
    try:
        lo, hi = float(ci[0]), float(ci[1])
    except (TypeError, ValueError):
        return ""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f" [{lo:{fmt}}, {hi:{fmt}}]"


def rate_words(value: float | None, ci: Any) -> str:
    """A rate and its 95% interval as every terminal line says them; empty without a rate.

    >>> rate_words(0.8, [0.49, 0.943]), rate_words(0.8, None), rate_words(None, None)
    ('0.800 [0.490, 0.943]', '0.800', '')
    """
    if value is None:
        return ""
    return f"{float(value):.3f}{interval_words(ci)}"
