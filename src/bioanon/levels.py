"""Named privacy levels: one target membership advantage per level (record, identity).

Membership ("is X in the release?") and inference on members ("does the release tell X's
labels better than a non-member's?") are both membership tests, judged in one unit: the
membership advantage TPR − FPR (:mod:`bioanon.metrics.advantage`). A level fixes the largest
advantage a release may allow at the record level (an attacker holding one of X's records)
and at the identity level (an attacker holding X's records, asking whether X is in it at
all). Recognition keeps its own target (a population-level risk that DP does not bound).

The balanced accuracy of a membership guess is (1 + advantage)/2: an advantage of 0.10 means
the attacker is right at most 55% of the time, against 50% by chance. Each level states the
DP budget that would *prove* it (:mod:`bioanon.privacy_bounds`): pure ε, ε at δ = 1e-6, and
μ-GDP (Gaussian mechanisms: ρ = μ²/2).

Why the default (``standard``) is what it is:

- no looser than the former membership target AUC ≤ 0.6, which under an equal-variance
  binormal ROC permits an advantage of 0.142
  (:func:`~bioanon.metrics.advantage.advantage_from_auc`): the record level is 0.10 and the
  identity level 0.14;
- showable where the data allow: a leak-free release passes a target t with probability
  ≥ 95% once t ≥ 2.2·√(1/n₁ + 1/n₀) (:func:`~bioanon.metrics.advantage.smallest_showable`),
  i.e. 0.10 at about 1,400 records (two record games of 25% released each, pooled) and
  0.14 at about 501 identities at the identity level (:func:`identity_rule`; its three
  releases each leave a third of the identities out); a stricter
  default would be unshowable on every real table tried (FSDD 3,000 records, 6 speakers);
- calibrated by ``benchmarks/judge_calibration.py --levels``: at sizes the plan calls
  showable, leak-free releases pass in ≥ 95% of seeds and an identity copy and vp-mix g=8
  fail.

Examples
--------
>>> lv = resolve_level("standard")
>>> lv.target("record"), lv.target("identity")
(0.1, 0.14)
>>> lv.sentence("record")[-67:]
'in the release right at most 55% of the time, against 50% by chance'

>>> resolve_level("0.08").name, resolve_level(0.08).target("identity")
('0.08', 0.08)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import BioanonError
from .privacy_bounds import (
    epsilon_for_advantage,
    gaussian_epsilon_for_advantage,
    mu_for_advantage,
)

#: the δ at which the "ε with δ" column of the levels table is computed
DELTA_SHOWN = 1e-6


@dataclass(frozen=True)
class Level:
    """A privacy level: the largest membership advantage allowed at the record and the
    identity level (a group split judges groups at the record target)."""

    name: str
    record: float
    identity: float
    note: str = ""

    def target(self, level: str) -> float:
        """The target advantage at ``level`` ("record", "group" or "identity")."""
        return self.identity if level == "identity" else self.record

    def sentence(self, level: str) -> str:
        """What the level means, in a sentence a data owner can sign."""
        pct = 100.0 * (1.0 + self.target(level)) / 2.0
        who = ("an attacker holding X's records guesses whether X is in the release"
               if level == "identity" else
               "an attacker holding one of X's records guesses whether it is in the release")
        return f"{who} right at most {_pct(pct)} of the time, against 50% by chance"

    def dp_needed(self, level: str, delta: float = DELTA_SHOWN) -> dict[str, float]:
        """The DP budget whose bound proves the level's target: pure ε, ε at ``delta``,
        μ-GDP, the ρ-zCDP of Gaussian mechanisms (μ²/2) and the ε at ``delta`` such a
        mechanism may declare (``dp-synthetic``'s accounting)."""
        t = self.target(level)
        mu = mu_for_advantage(t)
        return {"epsilon_pure": epsilon_for_advantage(t), "delta": float(delta),
                "epsilon": epsilon_for_advantage(t, delta), "mu": mu, "rho": mu * mu / 2.0,
                "epsilon_gaussian": gaussian_epsilon_for_advantage(t, delta)}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "note": self.note,
                "levels": {lv: {"target_advantage": self.target(lv),
                                "balanced_accuracy": (1.0 + self.target(lv)) / 2.0,
                                "sentence": self.sentence(lv),
                                "dp_needed": self.dp_needed(lv)}
                           for lv in ("record", "identity")}}


def _pct(p: float) -> str:
    return f"{p:.0f}%" if abs(p - round(p)) < 1e-9 else f"{p:.1f}%"


#: the named levels, strictest first
LEVELS: dict[str, Level] = {
    "strict": Level("strict", 0.05, 0.10, "tables of 10,000+ records and 1,000+ people"),
    "standard": Level("standard", 0.10, 0.14, "the default: no looser than the former "
                      "membership target AUC 0.6 (advantage 0.142, binormal)"),
    "basic": Level("basic", 0.14, 0.20, "small tables; looser than the former membership "
                   "target at the identity level"),
}
DEFAULT_LEVEL = "standard"

#: the utility floor of a certified release by default: its CAS must reach this fraction of
#: the clear accuracy (``min_utility``; 0 sets none). Why 0.80 (docs/levels-and-floor.md):
#: below it a data consumer does better training on a small clear sample than on the
#: release — on FSDD the utility model trained on a twentieth of the clear training records
#: (112 records, ~19 per digit) keeps 0.80 × of the full-data accuracy, a tenth 0.90 × —, and
#: the releases bioanon certified below it were
#: releases no one would use (FSDD at the default level: dp-synthetic at 0.34 ×, a forest on
#: it 0.52 on clear digits). It is low enough that every usable release measured lies above
#: it (FSDD dp-cells 0.9–0.99 ×, SP-SW-HAR and the 300-person population ≥ 0.95 ×), and the
#: noise that buys membership advantage costs 0.90 → 0.80 of CAS at most where it helps
#: (issue 35's toy population): a floor above 0.8 would refuse those trade-offs.
DEFAULT_MIN_UTILITY = 0.80
#: the least probability of passing the confirmation (a fresh split, a fresh evaluation) a
#: chosen setting must have (:mod:`bioanon.certification.margin`; the plan says how often a
#: release leaking nothing would have it on the table's shape)
CONFIRM_PROBABILITY = 0.8


def resolve_level(level: str | float | Level | None) -> Level:
    """A :class:`Level` from its name, a number (the same target at both levels) or itself;
    None gives the default.

    Raises
    ------
    BioanonError
        An unknown name or a number outside (0, 1).
    """
    if level is None:
        return LEVELS[DEFAULT_LEVEL]
    if isinstance(level, Level):
        return level
    if isinstance(level, str) and level.strip().lower() in LEVELS:
        return LEVELS[level.strip().lower()]
    try:
        t = float(level)
    except (TypeError, ValueError):
        raise BioanonError(f"level={level!r} is not a level; name one of "
                           f"{', '.join(LEVELS)} or give a target advantage in (0, 1), e.g. "
                           "level=0.1") from None
    if not (math.isfinite(t) and DELTA_SHOWN < t < 1.0):
        # at or below δ no (ε, δ) budget proves the target: the report's dp_needed failed
        # once the whole audit had run (level=1e-300)
        raise BioanonError(f"level={level!r}: a target advantage must lie strictly between "
                           f"{DELTA_SHOWN:g} and 1, e.g. level=0.1")
    return Level(f"{t:g}", t, t, "a number: the same target advantage at both levels")


#: the fewest identities at which the identity-level figures are measured at all (below it
#: the evaluation leaves that level unmeasured and the plan never counts it as showable)
MIN_IDENTITIES = 20


def identities_needed(target: float) -> int:
    """Identities at which the identity-level figure can show ``target`` (each identity a
    member in one release and a non-member in another: the smallest showable advantage at n
    members and n non-members is within ``target``), never fewer than :data:`MIN_IDENTITIES`.

    >>> identities_needed(resolve_level(None).identity)
    501
    """
    from .metrics.advantage import smallest_showable

    return max(MIN_IDENTITIES, math.ceil((smallest_showable(1, 1) / float(target)) ** 2))


def identity_rule(level: str | float | Level | None = None) -> str:
    """The identity threshold in words, said the same way everywhere (the plan, ``evaluate``,
    the README): from :data:`MIN_IDENTITIES` and :func:`identities_needed`.

    >>> identity_rule()  # doctest: +NORMALIZE_WHITESPACE
    'the identity level is measured from 20 identities and can show its target 0.14 (level
    standard) from about 501'
    """
    lv = resolve_level(level)
    return (f"the identity level is measured from {MIN_IDENTITIES} identities and can show its "
            f"target {lv.identity:g} (level {lv.name}) from about "
            f"{identities_needed(lv.identity)}")


def levels_table() -> str:
    """The levels table of docs/certification.md (markdown)."""
    rows = ["| level | target: record / identity | what it means (record level) | "
            "ε that proves it, record / identity: any mechanism (pure) | "
            "bioanon's Gaussian methods (δ = 1e-6) |",
            "|---|---|---|---|---|"]
    for lv in LEVELS.values():
        r, i = lv.dp_needed("record"), lv.dp_needed("identity")
        rows.append(f"| `{lv.name}`{' (default)' if lv.name == DEFAULT_LEVEL else ''} | "
                    f"{lv.record:g} / {lv.identity:g} | {lv.sentence('record')} | "
                    f"{r['epsilon_pure']:.2f} / {i['epsilon_pure']:.2f} | "
                    f"{r['epsilon_gaussian']:.2f} / {i['epsilon_gaussian']:.2f} |")
    return "\n".join(rows)
