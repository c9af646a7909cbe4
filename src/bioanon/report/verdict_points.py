"""The verdict as a headline and a short list (one point per risk that fell short, and the
utility), built from the report's structured verdict rather than its long sentence.

Examples
--------
>>> v = {"met": False, "risks": [
...     {"name": "record-recognition", "status": "not met", "statistic": "advantage",
...      "value": 0.5, "ci": [0.2, 0.66], "target": 0.05, "reason": "upper 95% bound 0.661"},
...     {"name": "record-membership", "status": "met", "statistic": "AUC", "value": 0.5,
...      "ci": [0.4, 0.55], "target": 0.6, "reason": ""}],
...      "utility": {"cas": 0.25, "column": "expression", "clear": 0.917}}
>>> head, points = verdict_points(v)
>>> head
'target NOT met: 1 of 2 risks fell short'
>>> verdict_points({**v, "met": True, "risks": v["risks"][1:]})[0]
'target met: 1 risk within its target'
>>> points[0]
'record-recognition: not met — advantage 0.500 [0.200, 0.660] (target 0.05)'
>>> verdict_points({**v, "utility": {**v["utility"], "cas_ci": [0.2, 0.3]}})[1][-1]
"headline utility: CAS 0.250 [0.200, 0.300] (0.27 × clear 0.917) for 'expression'"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..metrics.intervals import interval_words, rate_words

#: statuses that pass the verdict
PASSING = ("met", "accepted", "covered by the guarantee")


def _figure(r: Mapping[str, Any]) -> str:
    """A risk's figure with its 95% interval (whose upper bound the target reads)."""
    value, ci, target = r.get("value"), r.get("ci") or [None, None], r.get("target")
    if not isinstance(value, int | float) or value != value:
        return "not measured"
    return (f"{r.get('statistic', '')} {value:.3f}{interval_words(ci)} "
            f"(target {target:g})").strip()


def verdict_points(verdict: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A headline and one short point per risk that fell short, then the utility."""
    from ..metrics.results import passing_words

    risks = list(verdict.get("risks") or [])
    short = [r for r in risks if r.get("status") not in PASSING]
    refused = verdict.get("refused")
    if refused:  # a refused run's report: what decided comes first, never "met"
        head = f"NOT certified — {refused['decided']}"
    elif verdict.get("met"):  # accepted risks counted as accepted, never as within target
        head = f"target met: {passing_words(risks)}"
    elif short:
        head = f"target NOT met: {len(short)} of {len(risks)} risks fell short"
    else:
        head = "target NOT met: the utility fell short"
    points = [f"the figures below: {refused['figures_of']}"] if refused else []
    for r in short:
        if r.get("status") in ("not met",):
            points.append(f"{r['name']}: not met — {_figure(r)}")
        else:
            points.append(f"{r['name']}: {r.get('status')} — {r.get('reason', '')}")
    u = verdict.get("utility") or {}
    if isinstance(u, Mapping) and isinstance(u.get("cas"), int | float):
        from .summary import HEADLINE, of_clear

        ratio = of_clear(u["cas"], u.get("clear"))
        points.append(f"{HEADLINE}: CAS {rate_words(u['cas'], u.get('cas_ci'))} {ratio}".rstrip()
                      + f" for '{u.get('column', 'the interest')}'")
    return head, points


__all__ = ["verdict_points"]
