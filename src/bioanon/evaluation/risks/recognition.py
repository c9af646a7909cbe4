"""Recognition: is this released record X's? (the sensitive attribute of a released record)

The figure is the cross-fitted worst case of the attack panel: the strongest attacker ×
recognizer is chosen on one half of the released records and scored on the other, both ways,
and its advantage over max(chance, label-only control) carries a Newcombe interval; with fewer
than 20 identities the records cluster by person (a recognizer maps most of one person's
records to one label), and the interval is the wider of that one and the identity-permutation
interval (:mod:`bioanon.metrics.recognition_null`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...metrics.intervals import newcombe_difference
from ...metrics.recognition_null import identity_permutation_interval
from ...metrics.results import Rate, RiskResult
from ..seeds import derive_seed
from .base import RiskContext, not_covered, risk_result

#: below this many identities the interval also takes the identity-permutation null (a
#: recognizer maps most of one person's records to one label: the records cluster)
CLUSTERED_BELOW = 20
#: how the advantage interval is computed (written in the report)
ADVANTAGE_METHOD = ("Newcombe hybrid score interval of worst − control (Wilson intervals of "
                    "both); worst − chance uses the worst attack's Wilson interval, chance being "
                    "a known constant")


def advantage_interval(hits: int, n: int, chance: float, control: Rate
                       ) -> tuple[float, float, float, str]:
    """``(advantage, low, high, baseline name)`` over max(chance, control)."""
    if control.value > chance and control.successes is not None:
        d, lo, hi = newcombe_difference(hits, n, control.successes, control.n)
        return d, lo, hi, "control"
    d, lo, hi = newcombe_difference(hits, n, None, None, p2=chance)
    return d, lo, hi, "chance"


class RecognitionRisk:
    """The recognition risk of one release (call :meth:`evaluate`).

    Parameters
    ----------
    ctx : RiskContext
        The evaluation's shared context; recognition reads its ``predictions`` (the panel's
        guesses per released record), ``truth``, ``chance``, ``control``, ``seed`` (the
        halves) and ``level``.
    target : float
        The bound on the advantage's upper 95% end.

    Examples
    --------
    >>> from bioanon.evaluation.risks.base import RiskContext
    >>> y = np.array(list("abcd") * 1000)
    >>> ctrl = Rate.from_counts(1000, 4000)          # the label-only control
    >>> ctx = RiskContext(None, None, None, None, "", "", [], None, 0,
    ...                   predictions={"naive / knn": y}, truth=y, chance=0.25, control=ctrl)
    >>> res = RecognitionRisk(ctx, 0.05).evaluate().results()[0]
    >>> res.status, round(res.value, 2)
    ('not met', 0.75)
    """

    def __init__(self, ctx: RiskContext, target: float) -> None:
        self.ctx = ctx
        self.predictions = ctx.predictions
        self.truth = ctx.truth
        self.chance = ctx.chance
        self.control = ctx.control
        self.target = target
        self.seed = ctx.seed
        self.level = ctx.level

    def evaluate(self) -> RecognitionRisk:
        y = np.asarray(self.truth if self.truth is not None else []).astype(str)
        self.crossfit_: dict[str, Any] | None = None
        if not self.predictions or y.size < 2:
            self.result_ = not_covered("recognition", self.level, "advantage", self.target,
                                       "no attack produced predictions")
            return self
        names = list(self.predictions)
        hits = np.stack([np.asarray(self.predictions[k]).astype(str) == y for k in names])
        rng = np.random.default_rng(derive_seed(self.seed, "cross-fit") % (2**31))
        half = rng.permutation(y.size) < y.size // 2
        total, chosen = 0, []
        for pick, score in ((half, ~half), (~half, half)):
            j = int(np.argmax(hits[:, pick].mean(axis=1)))
            chosen.append(names[j])
            total += int(hits[j, score].sum())
        rate = Rate.from_counts(total, y.size)
        d, lo, hi, base_name = advantage_interval(total, y.size, self.chance, self.control)
        base = self.control.value if base_name == "control" else self.chance
        null_hits = int(round(base * y.size))
        null_upper = advantage_interval(null_hits, y.size, self.chance, self.control)[2]
        method = ADVANTAGE_METHOD
        k = int(np.unique(y).size)
        if k < CLUSTERED_BELOW:  # records cluster by person: the identity-permutation null
            perm = identity_permutation_interval(
                self.predictions, y, base, half,
                rng=np.random.default_rng(derive_seed(self.seed, "permutation") % (2**31)))
            lo, hi = min(lo, perm["ci"][0]), max(hi, perm["ci"][1])
            null_upper = max(null_upper, perm["null_upper"])
            method = (f"the wider of {ADVANTAGE_METHOD} and, with {k} identities (records "
                      f"cluster by person), the {perm['method']}")
        if self.ctx.panel_sample:  # the panel scored a sample of the released records
            method = f"{method}; the released records scored: {self.ctx.panel_sample}"
        self.crossfit_ = {
            "accuracy": rate.value, "ci": list(rate.ci), "attackers": chosen,
            "advantage": {"value": d, "ci": [lo, hi], "method": method},
            "method": "attacker chosen on one half of the released records, scored on the "
                      "other half, both ways"}
        attacker = " | ".join(dict.fromkeys(chosen))
        self.result_ = risk_result(
            "recognition", self.level, "advantage", d, (lo, hi),
            attacker, base, base_name, self.target, null_upper,
            "", {"accuracy": rate.value, "accuracy_ci": list(rate.ci), "n": int(y.size)})
        return self

    def results(self) -> list[RiskResult]:
        return [self.result_]
