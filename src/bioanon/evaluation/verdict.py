"""The verdict: one privacy rule shared by ``evaluate``, ``tune`` and ``release``.

The rule
--------
The privacy target is met when the upper end of the 95% interval of the **cross-fitted worst
case**'s advantage over the stronger of chance and the control baseline is at most
``target_advantage`` (default 0.05). The cross-fitted worst case chooses the strongest attacker
of the panel on one half of the released records and scores it on the other half, both ways
(:meth:`bioanon.evaluation.Evaluation.worst_case_crossfit`).

Why not the plain maximum: the panel runs some thirty attacks (attacker modes × recognizers),
and the maximum of thirty noisy accuracies is biased upwards by a few standard errors (the
winner's curse). At FSDD's size a release of pure noise reaches a maximum of about 0.20
against chance 0.167, so a 0.05 target judged by the maximum could not be met by any release,
however safe. Cross-fitting removes that selection bias while still letting the attacker pick
the best of the whole panel. The plain maximum is still reported beside the verdict, named
(``verdict.max_over_panel``), so a reader sees both. When an evaluation has no cross-fitted
figure (no attack produced predictions) the verdict falls back to the maximum.

Utility is stated as the classification accuracy score (CAS: trained on the release, scored on
clear held-out data) beside the clear figure.

:func:`verdict` reads an :class:`~bioanon.evaluation.Evaluation` or a report (the dict that
``report.json`` holds), so any part of bioanon can judge with the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import BioanonError
from ..metrics.results import INCONCLUSIVE, RiskResult, passing_words
from .options import DEFAULT_TARGET, check_option
from .risks.base import not_covered, rejudge
from .risks.registry import apply_accepted, check_accepted, cover, spec_of

#: how the verdict conjoins the risks (written in report.json)
RISK_RULE = ("met only when every risk is within its target: recognition by the upper 95% "
             "bound of the cross-fitted worst case's advantage (target_advantage); membership "
             "and inference on members, both membership tests, by the upper 95% bound of "
             "their cross-fitted membership advantage TPR − FPR against one target per level "
             "(the privacy level: record, identity), or covered by a strict DP guarantee "
             "whose unit covers the level and whose bound is within the target; a level that "
             "cannot be shown at this size is 'inconclusive at this size' and fails the "
             "verdict unless accepted by name with a reason, and an accepted risk passes only "
             "where its estimate is within the target (an estimate above it is 'not met', "
             "however wide its interval)")


def _level_targets(level: Any) -> Any:
    from ..levels import resolve_level

    return resolve_level(level)
#: how the verdict judges privacy (written in report.json)
RULE = ("met when the upper 95% bound of the cross-fitted worst case's advantage over "
        "max(chance, control) is at most target_advantage (attacker chosen on one half of the "
        "released records, scored on the other, both ways); the plain maximum over the panel "
        "is reported beside it and is biased upwards by the choice among ~30 attacks")


@dataclass(frozen=True)
class Verdict:
    """Met or not, against which attacker, with what utility.

    ``accuracy``, ``ci``, ``attacker``, ``advantage`` and ``advantage_ci`` are those of the
    judged figure (the cross-fitted worst case; ``judged_by`` says which); the ``max_*``
    fields are the plain maximum over the panel, reported beside it.
    """

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
    judged_by: str = "cross-fitted worst case"
    max_accuracy: float | None = None
    max_ci: tuple[float, float] | None = None
    max_attacker: str | None = None
    max_advantage: float | None = None
    max_advantage_ci: tuple[float, float] | None = None
    risks: tuple[RiskResult, ...] = field(default_factory=tuple)
    level: Any = None
    accepted: dict[str, str] = field(default_factory=dict)
    #: the 95% intervals of ``cas`` and ``clear`` (None: not known, a report written
    #: before they were kept)
    cas_ci: tuple[float, float] | None = None
    clear_ci: tuple[float, float] | None = None

    @property
    def recognition_met(self) -> bool:
        """The recognition risk alone (the rule of earlier versions)."""
        return self.advantage_ci[1] <= self.target_advantage

    def failed(self) -> list[RiskResult]:
        """The risks that keep the verdict from being met (not met, or inconclusive at this
        size)."""
        return [r for r in self.risks if not r.passes]

    def to_dict(self) -> dict[str, Any]:
        """The ``verdict`` block of ``report.json``."""
        out: dict[str, Any] = {
            "target_advantage": self.target_advantage, "met": self.met,
            "level": _level_targets(self.level).to_dict(),
            "risks": [r.to_dict() for r in self.risks],
            "accepted_risks": dict(self.accepted),
            "failed": [r.name for r in self.failed()],
            "recognition_met": self.recognition_met, "risk_rule": RISK_RULE,
            "judged_by": self.judged_by, "rule": RULE,
            "worst_case": {"accuracy": self.accuracy, "ci": list(self.ci),
                           "attacker": self.attacker},
            "chance": self.chance, "control": self.control,
            "utility": {"cas": self.cas, "clear": self.clear, "column": self.interest,
                        "cas_ci": None if self.cas_ci is None else list(self.cas_ci),
                        "clear_ci": None if self.clear_ci is None else list(self.clear_ci)},
            "advantage": {"value": self.advantage, "ci": list(self.advantage_ci),
                          "over": self.baseline_name}}
        if self.max_accuracy is not None:
            out["max_over_panel"] = {
                "accuracy": self.max_accuracy, "ci": list(self.max_ci or ()),
                "attacker": self.max_attacker,
                "advantage": {"value": self.max_advantage,
                              "ci": list(self.max_advantage_ci or ()),
                              "over": self.baseline_name}}
        out["sentence"] = self.sentence()
        out["risk_sentence"] = self.risk_sentence()  # the sentence's opening, on its own
        return out

    def risk_sentence(self) -> str:
        """Which risks hold, which fail, which are inconclusive at this size (one sentence)."""
        if not self.risks:
            return ""
        if self.met:  # an accepted risk is counted as accepted, never as within its target
            return f"Privacy target met: {passing_words(self.risks, names=True)}."
        parts = []
        for r in self.failed():
            if r.status == INCONCLUSIVE:
                parts.append(f"{r.name} is {INCONCLUSIVE} ({r.reason})")
            else:
                parts.append(f"{r.name} fails ({r.statistic} {r.value:.3f}, upper 95% bound "
                             f"{r.ci[1]:.3f} > target {r.target:g}; {r.attacker})")
        return "Privacy target NOT met: " + "; ".join(parts) + "."

    def sentence(self) -> str:
        """One sentence for the top of report.html and the terminal."""
        lead = self.risk_sentence()
        head = "Recognition target met" if self.recognition_met else \
            "Recognition target NOT met"
        if not self.risks:
            head = "Privacy target met" if self.met else "Privacy target NOT met"
        text = (f"{lead + ' ' if lead else ''}{head}: judged by the {self.judged_by} "
                f"({self.attacker}), "
                f"'{self.sensitive}' was recognised in {self.accuracy:.1%} of released records "
                f"(95% CI {self.ci[0]:.1%}–{self.ci[1]:.1%}) against a baseline of "
                f"{max(self.chance, self.control):.1%} ({self.baseline_name}; chance "
                f"{self.chance:.1%}, label-only control {self.control:.1%}): advantage "
                f"{self.advantage:+.3f}, upper 95% bound {self.advantage_ci[1]:.3f} "
                f"{'≤' if self.recognition_met else '>'} target {self.target_advantage:g}.")
        if self.max_accuracy is not None and self.max_ci is not None:
            hi = (self.max_advantage_ci or (0.0, 0.0))[1]
            text += (f" The plain maximum over the panel ({self.max_attacker}; biased upwards "
                     f"by the choice among the attacks) reached {self.max_accuracy:.1%} "
                     f"(95% CI {self.max_ci[0]:.1%}–{self.max_ci[1]:.1%}; advantage upper "
                     f"bound {hi:.3f}).")
        return text + (f" Utility: CAS {self.cas:.3f} for '{self.interest}' (trained on the "
                       f"release, scored on clear data; clear {self.clear:.3f}).")


def _crossfit_name(cf: Mapping[str, Any]) -> str:
    names = list(dict.fromkeys(cf.get("attackers") or []))
    return "chosen per half: " + (" | ".join(names) if names else "?")


def _risks_of(result: Any) -> list[RiskResult] | None:
    """The typed risks of an evaluation or a report mapping (None: an older report)."""
    if isinstance(result, Mapping):
        raw = result.get("risks")
        if raw is None:
            raw = (result.get("verdict") or {}).get("risks")
        return None if raw is None else [RiskResult.from_dict(d) for d in raw]
    return list(result.risks())


def verdict(result: Any, target_advantage: float = DEFAULT_TARGET, *,
            level: Any = None, accept_risks: Mapping[str, str] | None = None,
            guarantee: Any = None) -> Verdict:
    """Judge an evaluation (an :class:`Evaluation` or a report mapping) against the targets.

    The verdict is met only when every risk passes: recognition (the cross-fitted worst
    case's advantage, see the module's docstring), membership and inference on members (the
    upper bound of their membership advantage ≤ the ``level``'s target at their level: a
    name of :data:`bioanon.levels.LEVELS`, a number, or None for the default). A level not
    measurable at this size is "inconclusive at this size" and fails, unless
    ``accept_risks`` names it (``{"identity-membership": "why"}``). A report written before
    the risks existed holds no membership or inference figure: both are inconclusive.

    Examples
    --------
    >>> rep = {"privacy": {"sensitive": "id", "chance": 0.2, "control": {"value": 0.25},
    ...        "worst_case": {"accuracy": 0.3, "ci": [0.25, 0.36], "attacker": "parrot / knn"},
    ...        "advantage": {"value": 0.05, "ci": [-0.02, 0.12], "over": "control"},
    ...        "worst_case_crossfit": {"accuracy": 0.26, "ci": [0.21, 0.31],
    ...            "attackers": ["parrot / knn", "naive / forest"],
    ...            "advantage": {"value": 0.01, "ci": [-0.06, 0.07]}}},
    ...        "utility": {"interest": {"column": "digit", "cas": 0.8, "clear": 0.9}}}
    >>> v = verdict(rep, 0.05)
    >>> v.met, v.max_attacker, [r.status for r in v.risks][1:]
    (False, 'parrot / knn', ['inconclusive at this size', 'inconclusive at this size'])
    >>> v = verdict(rep, 0.1)   # 0.07 <= 0.1 although the maximum's bound is 0.12
    >>> v.recognition_met, v.met   # membership and inference were not measured
    (True, False)
    >>> accept = {"record-membership": "old report", "record-inference": "old report"}
    >>> verdict(rep, 0.1, accept_risks=accept).met
    True
    """
    check_option("target_advantage", target_advantage)
    lv = _level_targets(level)
    accept = check_accepted(accept_risks)
    target = float(target_advantage)
    if not isinstance(result, Mapping):
        if not hasattr(result, "risks") or not hasattr(result, "worst_case"):
            raise BioanonError("verdict() takes an Evaluation or a report; run evaluate() first")
        w = result.worst_case()
        u = result.utility()[result.interest]
        mx = (w.rate.value, w.rate.ci, w.attacker, w.advantage.value, w.advantage.ci)
        common = (result.chance(), result.control().value, w.baseline_name, result.sensitive,
                  result.interest, u.cas.value, u.clear.value)
        util_ci = (tuple(u.cas.ci), tuple(u.clear.ci))
        cf = result.worst_case_crossfit()
        accept = {**dict(getattr(result, "accept_risks_", {}) or {}), **accept}
    else:
        p, u_ = result["privacy"], result["utility"]["interest"]
        w_, adv = p["worst_case"], p["advantage"]
        name = w_.get("attacker") or f"{w_.get('mode')} / {w_.get('model')}"
        mx = (w_["accuracy"], tuple(w_["ci"]), name, adv["value"], tuple(adv["ci"]))
        common = (p["chance"], p["control"]["value"], adv["over"], p["sensitive"],
                  u_["column"], u_.get("cas", u_.get("anonymized_to_clear")), u_["clear"])
        util_ci = _report_utility_cis(result)
        cf = p.get("worst_case_crossfit")
        accept = {**dict((result.get("verdict") or {}).get("accepted_risks") or {}), **accept}
    if cf:
        a = cf["advantage"]
        judged = (cf["accuracy"], tuple(cf["ci"]), _crossfit_name(cf), a["value"],
                  tuple(a["ci"]))
        by = "cross-fitted worst case"
    else:
        judged, by = mx, "maximum over the panel (no cross-fitted figure)"
    risks = _risks_of(result)
    if risks is None:  # a report of an earlier version: recognition only was measured
        from .risks.base import risk_result

        rec = risk_result("recognition", "record", "advantage", judged[3], judged[4],
                          judged[2], max(common[0], common[1]), common[2], target,
                          float("-inf"), "")
        why = "the report holds no figure for it (written before membership and inference"\
              " were judged)"
        risks = [rec, not_covered("membership", "record", "advantage", lv.record, why),
                 not_covered("inference", "record", "advantage", lv.record, why)]
    risks = judge_risks(risks, target, lv, accept, guarantee)
    met = all(r.passes for r in risks)
    return Verdict(target, met, judged[0], judged[1], judged[2], judged[3],
                   judged[4], *common, judged_by=by, max_accuracy=mx[0], max_ci=mx[1],
                   max_attacker=mx[2], max_advantage=mx[3], max_advantage_ci=mx[4],
                   risks=tuple(risks), level=lv, accepted=accept, cas_ci=util_ci[0],
                   clear_ci=util_ci[1])


def _report_utility_cis(report: Mapping[str, Any]
                        ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """(CAS, clear) 95% intervals of a report's interest: the ones it carries, else Wilson's
    on the held-out records it was scored on; None where neither is known."""
    from ..metrics.intervals import rate_interval

    u = report["utility"]["interest"]
    n = u.get("n", (report.get("dataset") or {}).get("n_test"))
    top = report["utility"].get("cas")
    given = u.get("cas_ci") or (top.get("ci") if isinstance(top, Mapping) else None)
    return (rate_interval(u.get("cas", u.get("anonymized_to_clear")), n, given),
            rate_interval(u.get("clear"), n, u.get("clear_ci")))


def judge_risks(risks: Any, target: float, lv: Any, accept: dict[str, str],
                guarantee: Any = None) -> list[RiskResult]:
    """Risks re-judged against the targets, as :func:`verdict` judges them.

    ``target`` is recognition's, ``lv`` the resolved level (membership and inference);
    ``accept`` (updated in place with the risks already accepted) names the accepted risks.
    The search's first stage judges its cheap risks with this very rule.
    """
    fresh = []
    for r in risks:
        if r.status == "accepted" and r.name not in accept:
            reason = str(r.extras.get("accepted_reason") or
                         r.reason.split("accepted by the user: ", 1)[-1]
                         .split(" (measured", 1)[0])
            accept[r.name] = reason
        spec = spec_of(r.risk)  # its target option: its own (target_advantage) or the level
        t = r.target if spec is None else target if spec.target_option != "level" else \
            lv.target(r.level)
        fresh.append(rejudge(_unaccepted(r), t))
    return apply_accepted(cover(fresh, guarantee), accept)


def _unaccepted(r: RiskResult) -> RiskResult:
    """An accepted risk back to its measured status (re-judged, then accepted again)."""
    from dataclasses import replace

    if r.status != "accepted":
        return r
    extras = {k: v for k, v in r.extras.items() if k not in ("status_text", "accepted_reason")}
    return replace(r, status=INCONCLUSIVE, target=float("nan"), extras=extras)
