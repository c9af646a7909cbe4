"""The rows of a search: the rule it states, one row per setting, and how rows are read."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...evaluation import Evaluation
from ...evaluation.risks.base import floor_met
from ...evaluation.verdict import (
    RISK_RULE,
    verdict,
)
from ...metrics.intervals import interval_words
from ...metrics.results import INCONCLUSIVE, PASSING
from ..margin import CONFIRM_PROBABILITY, has_margin, pass_probability, short_of_margin
from .candidates import Candidate

Progress = Callable[[int, int, str], None]

#: how the search chooses (written in report.json)
CHOICE_RULE = ("privacy: " + RISK_RULE + "; utility: CAS above the interest's chance; chosen: "
               "the highest CAS among the settings meeting both on the tuning split with "
               "margin (a probability of at least 0.8 that a fresh evaluation meets every "
               "measured target too, each risk's true advantage taken as never below 0); "
               "certified only when a re-evaluation on a fresh "
               "split with a fresh evaluation seed meets every target too")

#: the rule's utility clause when the user sets a floor (``min_utility``)
FLOOR_RULE = ("; utility floor: the CAS must also reach {floor:g} × the clear accuracy (point "
              "estimates, on the same held-out clear records), on the tuning split and again "
              "on the confirmation")


def _public(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, str | int | float | bool) or v is None else type(v).__name__)
            for k, v in params.items() if k != "random_state"}


def setting_row(c: Candidate, ev: Evaluation, target: float, *, min_utility: float | None = None,
         **targets: Any) -> dict[str, Any]:
    v = verdict(ev, target, **targets)
    u = ev.utility()[ev.interest]
    cf = ev.worst_case_crossfit() or {}
    useful = u.cas.ci[0] > u.chance and floor_met(u.cas.value, u.clear.value, min_utility)
    return {
        "method": c.method, "params": _public(c.params), "setting": c.label(),
        "cas": u.cas.value, "cas_ci": list(u.cas.ci), "clear": u.clear.value,
        "clear_ci": list(u.clear.ci), "interest_chance": u.chance,
        "clear_useful": bool(u.clear.ci[0] > u.chance),
        "worst_case": v.max_accuracy, "worst_case_ci": list(v.max_ci or ()),
        "worst_attacker": v.max_attacker,
        "crossfit": cf.get("accuracy"), "crossfit_ci": cf.get("ci"),
        "crossfit_attackers": cf.get("attackers"),
        "advantage": v.advantage, "advantage_ci": list(v.advantage_ci),
        "chance": v.chance, "control": v.control, "baseline": v.baseline_name,
        "risks": [r.to_dict() for r in v.risks],
        "failed_risks": [r.name for r in v.failed()],
        "met_recognition": v.recognition_met,
        **_margin(v.risks, _accepted(ev, targets)),
        "met_privacy": v.met, "met_utility": bool(useful),
        "met": bool(v.met and useful and has_margin(v.risks, _accepted(ev, targets))),
        "_risks": list(ev.risks()),
    }


def _margin(risks: Sequence[Any], accepted: Sequence[str]) -> dict[str, Any]:
    """A row's margin (:mod:`.margin`): the probability that its measured risks (those the
    user accepted by name left out) pass a fresh evaluation, and the risks whose own chance
    is under the required one."""
    return {"pass_probability": pass_probability(risks, accepted),
            "short_of_margin": short_of_margin(risks, accepted)}


def _accepted(ev: Evaluation, targets: Mapping[str, Any]) -> list[str]:
    """The risks the user accepted by name (the evaluation's and the search's)."""
    return [*dict(getattr(ev, "accept_risks_", {}) or {}),
            *dict(targets.get("accept_risks") or {})]


#: how a row was judged (its ``judged_by``), and why a row that passed stage 1 was not
#: judged by the panel (its ``not_judged``)
FULL_PANEL = "the full panel"
STAGE1 = "stage 1 (utility, membership and inference, no recognition panel)"
#: ``judged_by`` of a row stage 1's screen decided (:data:`~bioanon.evaluation.risks.base.
#: SCREEN_RULE`): utility, and membership by the cheap attackers only
SCREENED = ("stage 1's screen (record- or group-level membership by the cheap attackers, "
            "already above every level's target; no other attacker, no recognition panel, and no "
            "CAS: no model is trained on a release that cannot be chosen at any level)")
#: ``judged_by`` of a row stage 1's utility floor decided (:data:`~bioanon.evaluation.risks.
#: base.FLOOR_RULE`): the screen's first game, then the CAS under the floor
FLOORED = ("stage 1's utility floor (the CAS, measured right after the screen's first game, "
           "under the floor or at chance; no other attacker, no recognition panel: no risk "
           "decides a setting that fails utility at every level)")
NOT_JUDGED = "not judged by the panel: a more useful setting met every target"
BUDGET_LEFT = "not judged by the panel: the time budget ran out (the search was cut short)"


def cheap_row(c: Candidate, ev: Evaluation, target: float, *, level: Any,
               accept_risks: Mapping[str, str], min_utility: float | None = None
               ) -> dict[str, Any]:
    """The stage-1 row of a setting: CAS and the cheap risks, judged as :func:`verdict`
    judges them (the risks that read the attack panel are not in it: no panel ran)."""
    from ...evaluation.risks.registry import panel_risks
    from ...evaluation.verdict import judge_risks

    u = ev.utility()[ev.interest]
    accept = {**dict(getattr(ev, "accept_risks_", {}) or {}), **dict(accept_risks)}
    cheap = [r for r in ev.risks() if r.risk not in panel_risks()]
    risks = judge_risks(cheap, float(target), level, accept)
    failed = [r.name for r in risks if not r.passes]
    useful = bool(u.cas.ci[0] > u.chance and floor_met(u.cas.value, u.clear.value,
                                                       min_utility))
    floored = getattr(ev, "floored_", None)
    margin = ({"pass_probability": 0.0, "short_of_margin": []} if floored
              else _margin(risks, list(accept)))
    return {
        "method": c.method, "params": _public(c.params), "setting": c.label(),
        "cas": u.cas.value, "cas_ci": list(u.cas.ci), "clear": u.clear.value,
        "clear_ci": list(u.clear.ci), "interest_chance": u.chance,
        "clear_useful": bool(u.clear.ci[0] > u.chance),
        "worst_case": None, "worst_case_ci": [], "worst_attacker": None,
        "crossfit": None, "crossfit_ci": None, "crossfit_attackers": None,
        "advantage": None, "advantage_ci": [], "chance": ev.chance_,
        "control": ev.control_.value, "baseline": None,
        "risks": [r.to_dict() for r in risks], "failed_risks": failed,
        "met_recognition": None, "met_privacy": False if failed else None,
        "met_utility": useful, "met": False,
        "judged_by": (SCREENED if getattr(ev, "screened_", None)
                      else FLOORED if floored else STAGE1),
        **margin,
        "passed_stage1": bool(useful and not failed and has_margin(risks, list(accept))),
        "_risks": cheap,
    }


def row_line(row: Mapping[str, Any]) -> str:
    """One terminal line of a search row: CAS beside clear, every risk, met or which failed.

    Examples
    --------
    >>> r = {"setting": "vp-mix(g=8)", "cas": 0.85, "clear": 0.86, "met": False,
    ...      "risks": [{"name": "record-membership", "statistic": "advantage", "value": 0.36,
    ...                 "ci": [0.25, 0.47], "target": 0.1, "status": "not met"}]}
    >>> row_line(r).split("; ")[1].split(" -> ")[0]
    'record-membership advantage 0.360 [0.250, 0.470] (target 0.1) not met'
    >>> row_line({**r, "cas_ci": [0.83, 0.87], "clear_ci": [0.84, 0.88]}).split("; ")[0]
    '  vp-mix(g=8): CAS 0.850 [0.830, 0.870] (clear 0.860 [0.840, 0.880])'
    """
    parts = []
    for r in row.get("risks", []):
        v, target = r["value"], r.get("target")
        limit = "" if target is None else f" (target {target:g})"
        # the 95% interval, whose upper bound is what the target reads
        fig = "—" if not np.isfinite(v) else f"{v:.3f}{interval_words(r.get('ci'))}{limit}"
        status = "not measured" if _unmeasured(r) else r["status"]
        parts.append(f"{r['name']} {r['statistic']} {fig} {status}")
    if row.get("judged_by") == FLOORED:  # none measured: the floor decided first
        parts = ["risks not measured"]
    # a risk the screen left unmeasured was never judged: not a failure of this size
    failed = [r["name"] for r in row.get("risks", [])
              if r["status"] not in PASSING and not _unmeasured(r)]
    margin = [f"{name}: margin" for name in row.get("short_of_margin", [])]
    verdict_ = "meets every target" if row["met"] else (
        f"fails ({', '.join(failed or margin)})" if failed or margin else "fails (utility)")
    gate = row.get("consumer_gate") or {}
    if gate and not gate["passed"]:
        verdict_ = (f"fails (utility: the consumer's whole panel on the tuning split picks "
                    f"{gate['pick']}, CAS {gate['cas']:.3f} < floor {gate['floor']:.3f})")
    if row.get("not_judged"):
        verdict_ = str(row["not_judged"])
    elif row.get("judged_by") == FLOORED:
        verdict_ = ("fails (utility) [decided at stage 1 by the utility floor: no attacker "
                    "ran after the screen's first game]")
    elif row.get("judged_by") == SCREENED:
        verdict_ = f"{verdict_} [screened at stage 1: the cheap attackers decided it]"
    elif row.get("judged_by", FULL_PANEL) != FULL_PANEL:
        verdict_ = f"{verdict_} [judged at stage 1, no recognition panel]"
    cas = (f"CAS {row['cas']:.3f}{interval_words(row.get('cas_ci'))}"
           if np.isfinite(float(row["cas"])) else "CAS not measured (screened)")
    return (f"  {row['setting']}: {cas} (clear {row['clear']:.3f}"
            f"{interval_words(row.get('clear_ci'))}); "
            + "; ".join(parts) + f" -> {verdict_}")


def _unmeasured(risk: Mapping[str, Any]) -> bool:
    """A risk stage 1's screen left unmeasured (the cheap attackers decided the setting
    first): no figure, and its reason says so — not a risk this size cannot show."""
    return (not np.isfinite(float(risk["value"]))
            and str(risk.get("reason", "")).startswith("not measured: screened at stage 1"))


def risk_text(row: Mapping[str, Any]) -> str:
    """What fell short among the risks of a row, in words."""
    parts = []
    for r in row.get("risks", []):
        if r["status"] in PASSING:
            continue
        if r["status"] in (INCONCLUSIVE, "not covered"):
            parts.append(f"{r['name']} {INCONCLUSIVE} ({r['reason']})")
        else:
            parts.append(f"{r['name']} {r['statistic']} upper bound {r['ci'][1]:.3f} > target "
                         f"{r['target']:g}")
    if not parts and row.get("short_of_margin"):
        return (f"margin: {', '.join(row['short_of_margin'])} within target on the tuning "
                f"split, but the chance that a fresh evaluation passes is "
                f"{float(row.get('pass_probability', 0)):.2f} < {CONFIRM_PROBABILITY:g} (the "
                "search chooses with margin, so the verdict does not hang on the split)")
    return "; ".join(parts) or "privacy"


def closeness(row: Mapping[str, Any]) -> tuple[int, float, float]:
    """The key of the "closest" rule (smaller is closer), from the row's figures alone, so
    it does not change with machine load: the number of risks not met (a registered risk
    the row holds no figure for, e.g. recognition of a setting judged at stage 1, counts as
    not met), then the total excess of the failed risks' upper 95% bounds over their
    targets — for a row that met every target but without margin, how far its probability
    of passing a fresh evaluation falls short of :data:`CONFIRM_PROBABILITY` (such a row is
    closer than any that fails a target) —, then the highest CAS (a CAS not measured, of a
    setting stage 1's screen decided, last).
    """
    from ...evaluation.risks.registry import REGISTRY

    risks = row.get("risks", [])
    held = {r.get("risk", r["name"]) for r in risks}
    missing = sum(1 for spec in REGISTRY if spec.name not in held)
    failed = [r for r in risks if r["status"] not in PASSING]
    excess = sum(max(0.0, float(r["ci"][1]) - float(r["target"])) for r in failed
                 if r.get("target") is not None and np.isfinite(r["ci"][1])
                 and np.isfinite(r["target"]))
    if not failed and not missing and row.get("short_of_margin"):
        excess = max(0.0, CONFIRM_PROBABILITY - float(row.get("pass_probability", 0.0)))
    cas = float(row["cas"])  # a CAS not measured (a setting the screen decided) comes last
    return (len(failed) + missing, excess, -cas if np.isfinite(cas) else np.inf)


def confirmation_utility(report: Any) -> tuple[float, float]:
    """(CAS, clear accuracy) of the interest in a confirmation's report."""
    util = report["utility"]
    return float(util["cas"]["value"]), float(util["interest"]["clear"])
