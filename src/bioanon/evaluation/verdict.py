"""The verdict: one privacy rule shared by ``evaluate``, ``tune`` and ``release``.

The privacy target is met when the upper end of the 95% interval of the worst attack's
advantage over the stronger of chance and the control baseline is at most
``target_advantage`` (default 0.05). Utility is stated as the classification accuracy score
(CAS: trained on the release, scored on clear held-out data) beside the clear figure.

:func:`verdict` reads an :class:`~bioanon.evaluation.Evaluation` or a report (the dict that
``report.json`` holds), so any part of bioanon can judge with the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import BioanonError

DEFAULT_TARGET = 0.05


@dataclass(frozen=True)
class Verdict:
    """Met or not, against which attacker, with what utility."""

    target_advantage: float
    met: bool
    accuracy: float
    ci: tuple[float, float]
    attacker: str
    advantage: float
    advantage_ci: tuple[float, float]
    chance: float
    control: float
    baseline_name: str
    sensitive: str
    interest: str
    cas: float
    clear: float

    def to_dict(self) -> dict[str, Any]:
        """The ``verdict`` block of ``report.json``."""
        return {"target_advantage": self.target_advantage, "met": self.met,
                "worst_case": {"accuracy": self.accuracy, "ci": list(self.ci),
                               "attacker": self.attacker},
                "chance": self.chance, "control": self.control,
                "utility": {"cas": self.cas, "clear": self.clear, "column": self.interest},
                "advantage": {"value": self.advantage, "ci": list(self.advantage_ci),
                              "over": self.baseline_name},
                "sentence": self.sentence()}

    def sentence(self) -> str:
        """One sentence for the top of report.html and the terminal."""
        head = "Privacy target met" if self.met else "Privacy target NOT met"
        return (f"{head}: the strongest attacker ({self.attacker}) recognised "
                f"'{self.sensitive}' in {self.accuracy:.1%} of released records "
                f"(95% CI {self.ci[0]:.1%}–{self.ci[1]:.1%}) against a baseline of "
                f"{max(self.chance, self.control):.1%} ({self.baseline_name}; chance "
                f"{self.chance:.1%}, label-only control {self.control:.1%}): advantage "
                f"{self.advantage:+.3f}, upper 95% bound {self.advantage_ci[1]:.3f} "
                f"{'≤' if self.met else '>'} target {self.target_advantage:g}. "
                f"Utility: CAS {self.cas:.3f} for '{self.interest}' (trained on the release, "
                f"scored on clear data; clear {self.clear:.3f}).")


def verdict(result: Any, target_advantage: float = DEFAULT_TARGET) -> Verdict:
    """Judge an evaluation (an :class:`Evaluation` or a report mapping) against the target.

    Examples
    --------
    >>> rep = {"privacy": {"sensitive": "id", "chance": 0.2, "control": {"value": 0.25},
    ...        "worst_case": {"accuracy": 0.3, "ci": [0.25, 0.36], "attacker": "parrot / knn"},
    ...        "advantage": {"value": 0.05, "ci": [-0.02, 0.12], "over": "control"}},
    ...        "utility": {"interest": {"column": "digit", "cas": 0.8, "clear": 0.9}}}
    >>> v = verdict(rep, 0.05)
    >>> v.met, v.attacker
    (False, 'parrot / knn')
    """
    if not 0.0 <= float(target_advantage) <= 1.0:
        raise BioanonError(f"target advantage {target_advantage} must lie in [0, 1]; e.g. 0.05")
    if not isinstance(result, Mapping):
        from .protocol import Evaluation

        if not isinstance(result, Evaluation):
            raise BioanonError("verdict() takes an Evaluation or a report; run evaluate() first")
        w = result.worst_case()
        u = result.utility()[result.interest]
        return Verdict(float(target_advantage), w.advantage.ci[1] <= target_advantage,
                       w.rate.value, w.rate.ci, w.attacker, w.advantage.value, w.advantage.ci,
                       result.chance(), result.control().value, w.baseline_name,
                       result.sensitive, result.interest, u.cas.value, u.clear.value)
    p, u = result["privacy"], result["utility"]["interest"]
    w, adv = p["worst_case"], p["advantage"]
    return Verdict(float(target_advantage), adv["ci"][1] <= target_advantage, w["accuracy"],
                   tuple(w["ci"]), w["attacker"], adv["value"], tuple(adv["ci"]), p["chance"],
                   p["control"]["value"], adv["over"], p["sensitive"], u["column"],
                   u.get("cas", u.get("anonymized_to_clear")), u["clear"])
