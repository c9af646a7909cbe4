"""Classification scores: accuracy, chance, mixture, utility U, KL from chance, top-k, Wilson."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .normal import ppf


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of predictions equal to the truth."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred)) if y_true.size else float("nan")


def chance_level(y: np.ndarray) -> float:
    """Accuracy of always guessing the commonest class (1/#classes when balanced)."""
    _, counts = np.unique(np.asarray(y), return_counts=True)
    return float(counts.max() / counts.sum())


def mixture(acc: float) -> float:
    """The paper's mixture M = 1 − S(T(D)) for one attacker's accuracy."""
    return 1.0 - acc


def utility(interest_accuracy: float, additional: Mapping[str, tuple[float, float]]) -> float:
    """U = P + Σ alpha_i Q_i, with ``additional`` mapping column → (alpha_i, Q_i)."""
    return float(interest_accuracy + sum(a * q for a, q in additional.values()))


def kl_from_uniform(proba: np.ndarray) -> float:
    """Mean over records of KL(p ‖ uniform) in nats; 0 means the attacker learns nothing.

    Examples
    --------
    >>> kl_from_uniform(np.full((3, 4), 0.25))
    0.0
    """
    p = np.clip(np.asarray(proba, dtype=np.float64), 1e-12, 1.0)
    p = p / p.sum(axis=1, keepdims=True)
    k = p.shape[1]
    return float(np.mean(np.sum(p * np.log(p * k), axis=1)))


def top_k_accuracy(proba: np.ndarray, classes: np.ndarray, y_true: np.ndarray,
                   k_max: int) -> list[float]:
    """Hit rate of the true class among the k most probable, for k = 1..k_max."""
    order = np.argsort(-np.asarray(proba), axis=1, kind="stable")
    ranked = np.asarray(classes)[order]
    hits = ranked == np.asarray(y_true)[:, None]
    cum = np.cumsum(hits, axis=1) > 0
    k_max = min(k_max, cum.shape[1])
    return [float(cum[:, k - 1].mean()) for k in range(1, k_max + 1)]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Examples
    --------
    >>> [round(v, 4) for v in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    if n == 0:
        return (0.0, 1.0)
    z = float(ppf(0.5 + confidence / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends (no rounding)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (float(lo), float(hi))


def advantage(acc: float, chance: float) -> float:
    """Advantage over chance, (acc − chance)/(1 − chance): 0 at chance, 1 at perfect."""
    return float((acc - chance) / (1 - chance)) if chance < 1 else 0.0
