"""The standard normal's quantile and distribution functions, for scalars.

``scipy.stats.norm.ppf`` and ``norm.cdf`` are ``scipy.special.ndtri`` and ``ndtr`` behind
argument checks (the same numbers, bit for bit), but importing ``scipy.stats`` costs seconds
at start-up (it loads scipy's optimizers, interpolators and sparse matrices); every command
that reads a level, a plan or an interval needs these two functions only.

Examples
--------
>>> round(ppf(0.975), 6), cdf(0.0)
(1.959964, 0.5)
"""

from __future__ import annotations

from scipy.special import ndtr, ndtri


def ppf(q: float) -> float:
    """The standard normal quantile at ``q`` (``scipy.stats.norm.ppf``: nan outside [0, 1],
    ∓inf at 0 and 1)."""
    return float(ndtri(float(q)))


def cdf(x: float) -> float:
    """The standard normal distribution function at ``x`` (``scipy.stats.norm.cdf``)."""
    return float(ndtr(float(x)))


__all__ = ["cdf", "ppf"]
