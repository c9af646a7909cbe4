"""The chance that a fresh evaluation passes, from one evaluation of an advantage.

One evaluation reads an advantage ``v`` with standard error ``s``; a fresh evaluation (a new
split and seed) reads the true advantage ``a`` plus noise of the same size, and passes when
its upper 95% bound stays within the target ``t``: when it reads at most
``c = t − 1.96·s``. The true advantage is unknown: about normal around ``v`` with spread
``s``, and never below 0 (an attacker that ignores the release, the label-only control or a
coin, has advantage 0; every risk's statistic is such an advantage). So ``a`` is taken as a
normal around ``v`` truncated at 0 (a flat prior on ``a ≥ 0``), and::

    P(pass) = ∫₀^∞ φ((a − v)/s) Φ((c − a)/s) da  /  ∫₀^∞ φ((a − v)/s) da

Far above 0 (``v`` several ``s`` over it) this is the untruncated ``Φ((c − v)/(√2·s))``. Near
and below 0 it is smaller: a negative reading is noise the fresh evaluation does not repeat,
and even a true advantage of 0 passes only with ``Φ(c/s)``, the most any reading can state.
Computed by Simpson's rule on a fixed grid of the standardized advantage (deterministic: the
same bits on every machine).

Examples
--------
>>> round(fresh_pass_chance(0.02, 0.02, 0.10), 2)    # far under the target
0.91
>>> round(fresh_pass_chance(0.061, 0.02, 0.10), 2)   # upper bound on the target
0.5
>>> round(fresh_pass_chance(-0.04, 0.018, 0.05), 3), round(most_stated(0.018, 0.05), 3)
(0.675, 0.793)
"""

from __future__ import annotations

import math

import numpy as np

from .normal import cdf, ppf

_Z95 = ppf(0.975)
#: nodes of the Simpson grid (odd), over at most 24 standard errors
NODES = 2001
#: standardized half-width of the grid: the normal's mass beyond it is below 1e-32
REACH = 12.0


def fresh_pass_chance(value: float, se: float, target: float) -> float:
    """P(a fresh evaluation's upper 95% bound ≤ ``target``) from one reading ``value`` with
    standard error ``se`` of an advantage (see the module)."""
    from scipy.special import ndtr  # already loaded by metrics.normal; vectorized here

    if not (se > 0 and math.isfinite(se) and math.isfinite(value) and math.isfinite(target)):
        return math.nan
    h = -value / se                   # where a = 0 sits, standardized around the reading
    m = (target - _Z95 * se - value) / se
    lo, h0 = max(h, -REACH), max(h, 0.0)
    z = np.linspace(lo, h0 + REACH, NODES)
    dens = np.exp(-(z - h0) * (z + h0) / 2.0)   # φ(z) / φ(h0): no underflow far out
    w = np.ones(NODES)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0             # Simpson's weights (the step cancels)
    mass = float(w @ dens)
    return float(w @ (dens * ndtr(m - z)) / mass) if mass > 0 else cdf(m - h)


def most_stated(se: float, target: float) -> float:
    """The largest chance any reading states at standard error ``se``: that of a true
    advantage of 0 known to be 0, ``Φ((target − 1.96·se) / se)``."""
    return cdf((target - _Z95 * se) / se) if se > 0 else math.nan


def reading_for(probability: float, se: float, target: float) -> float:
    """The largest reading whose :func:`fresh_pass_chance` reaches ``probability``, or −inf
    where none does (:func:`most_stated` is below it); by bisection, 60 halvings."""
    if not most_stated(se, target) > probability:
        return -math.inf
    lo, hi = -REACH * se, target + REACH * se
    while fresh_pass_chance(lo, se, target) < probability:
        lo -= REACH * se
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if fresh_pass_chance(mid, se, target) >= probability:
            lo = mid
        else:
            hi = mid
    return lo


__all__ = ["fresh_pass_chance", "most_stated", "reading_for"]
