"""Margin in the choice: the most useful setting that passes its confirmation with high
probability, not the one that barely clears the tuning split.

A setting whose upper bound sits just under its target on the tuning split passes the
confirmation (a fresh split, a fresh evaluation) about half the time: the verdict at the edge
is a coin. For each measured risk the confirmation's estimate is predicted from the tuning
split's, ``v̂`` with standard error ``ŝ`` (read off its 95% interval): the true value is
uncertain by ``ŝ`` and never below 0 (every risk is an advantage, and an attacker that
ignores the release has advantage 0), and the confirmation adds its own noise of the same
size; it passes when it reads at most ``target − 1.96·ŝ``. Far above 0 that is::

    P(pass) = Φ((target − 1.96·ŝ − v̂) / (√2·ŝ))

and near or below 0 it is less (:func:`~bioanon.metrics.pass_chance.fresh_pass_chance`: the
true value a normal around ``v̂`` truncated at 0): a negative reading is noise a fresh
evaluation does not repeat. Taken as it read, it overstated the chance: FSDD's record
recognition read −0.036 [−0.107, −0.001] on a tuning split, a stated chance above 0.9
(0.98 for that risk), where a release leaking nothing passes a fresh evaluation at that width
with chance 0.80 at most; the confirmation read +0.037 [−0.026, 0.068] and failed. Now it
states 0.67.

A setting's probability is the product over its measured risks (accepted and covered ones
pass whatever is measured). The search chooses only among settings whose probability reaches
:data:`CONFIRM_PROBABILITY`; where none has that margin at the level asked, it refuses, at
every seed alike, and names the margin. ``tests/test_verdict_reliability.py`` checks the stated
probability against repeated evaluations.

Examples
--------
>>> round(pass_probability_of(0.02, 0.02 + 1.96 * 0.02, 0.10), 2)   # far under the target
0.91
>>> round(pass_probability_of(0.061, 0.10, 0.10), 2)                 # upper bound on it
0.5
>>> round(pass_probability_of(-0.05, -0.05 + 1.96 * 0.02, 0.10), 2)  # a negative reading
0.99
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..levels import CONFIRM_PROBABILITY
from ..metrics.normal import ppf

_Z95 = ppf(0.975)


def pass_probability_of(value: float, upper: float, target: float) -> float:
    """The probability that a fresh evaluation's upper bound stays within ``target``, from
    one evaluation's estimate ``value`` and its upper 95% bound ``upper`` (the standard error
    read off the interval as measured; the true value taken as never below 0:
    :func:`~bioanon.metrics.pass_chance.fresh_pass_chance`)."""
    from ..metrics.pass_chance import fresh_pass_chance

    if not all(math.isfinite(x) for x in (value, upper, target)):
        return 1.0 if math.isfinite(target) and math.isfinite(upper) and upper <= target \
            else 0.0
    se = max((upper - value) / _Z95, 1e-12)
    return fresh_pass_chance(value, se, target)


def pass_probability(risks: Iterable[Any], accepted: Iterable[str] = ()) -> float:
    """The product of :func:`pass_probability_of` over the measured risks that met their
    target (a risk not met has probability 0; accepted — by status, or by name in
    ``accepted`` —, covered or not measured: 1)."""
    p = 1.0
    skip = set(accepted)
    for r in risks:
        if r.name in skip and r.status == "met":
            continue
        if r.status == "met":
            p *= pass_probability_of(float(r.value), float(r.ci[1]), float(r.target))
        elif r.status == "not met":
            return 0.0
    return p


def short_of_margin(risks: Iterable[Any], accepted: Iterable[str] = ()) -> list[str]:
    """The met risks (not accepted by name) whose own probability falls under
    :data:`CONFIRM_PROBABILITY` (what a refusal for margin names); when none does alone but
    together they fall under it, every met risk that is not certain to pass, least certain
    first (no margin is never left without a name)."""
    risks = list(risks)
    skip = set(accepted)
    own = [(pass_probability_of(float(r.value), float(r.ci[1]), float(r.target)), r.name)
           for r in risks if r.status == "met" and r.name not in skip]
    alone = [name for p, name in own if p < CONFIRM_PROBABILITY]
    if alone or pass_probability(risks, accepted) >= CONFIRM_PROBABILITY:
        return alone
    return [name for p, name in sorted(own, key=lambda pn: pn[0]) if p < 1.0]


def has_margin(risks: Iterable[Any], accepted: Iterable[str] = ()) -> bool:
    """Whether the risks pass their confirmation with probability ≥ the required one (the
    risks accepted by name left out: the user took them on)."""
    return pass_probability(risks, accepted) >= CONFIRM_PROBABILITY


__all__ = ["CONFIRM_PROBABILITY", "has_margin", "pass_probability", "pass_probability_of",
           "short_of_margin"]
