"""Search methods and settings for a release that meets the privacy target, then confirm it.

:func:`search` is the library behind ``bioanon release``:

1. **candidates**: every registered method that applies to the table (the labels it needs
   are given a role; image methods only on tables with ``image_shape`` meta; methods fitted on
   auxiliary data, the sanitizer, only with a trained decoupler), each at the settings of its
   class attribute ``search_space`` (:class:`~bioanon.anonymize.base.Anonymizer`). A method
   added to the registry with a ``search_space`` is searched with no change here.
2. **tuning split**: each candidate is evaluated by the judge
   (:class:`~bioanon.evaluation.Evaluation`) on one split with one evaluation seed; the
   clear-trained attack and utility models are fitted once and shared by every candidate
   (:class:`~bioanon.attack.ModelCache`). A setting the data cannot support (a class smaller
   than ``g``) is listed in ``skipped`` with its reason. The judging is staged (stage 1:
   utility, membership and inference on every setting; stage 2: the recognition panel on the
   survivors in decreasing CAS until one meets every target; see :func:`search`), with the
   exhaustive search's choice. Stage 1 judges every setting whatever the time (in parallel
   worker processes, ``n_jobs``); stage 2 resumes each setting's stage-1 state. The result
   is a function of the table, the options and the seed alone: the time budget bounds only
   stage 2, and when it runs out before a choice the search is cut short and certifies
   nothing, naming the budget and the settings it left (never a different choice).
3. **choice**: among the settings that meet the verdict (privacy: the upper 95% bound of the
   cross-fitted worst case's advantage ≤ target, and every other risk — membership and
   inference on members — within its target or accepted by name; utility: CAS above the
   interest's chance),
   the one with the highest CAS.
4. **confirmation**: the chosen setting is evaluated again on a **fresh split with a fresh
   evaluation seed** (derived one way from the search's), so the choice among many noisy
   evaluations does not flatter it (no winner's curse). Only when this confirmation meets the
   target too does :attr:`SearchResult.certified` hold.

:func:`certified_release` then anonymizes the whole table with the chosen setting through
:func:`bioanon.release.release` (the same column policy as ``anonymize``) with a fresh release
seed, and marks the manifest certified.

Nothing secret reaches a result: no seed (search, evaluation or release), no permutation, no
random sets; settings are listed with their public parameters only.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
>>> res = search(t, "expression", "identity", methods=["noise"], target_advantage=0.5,
...              models=["knn"], attackers="naive,parrot", random_state=0, n_jobs=1)
>>> [r["method"] for r in res.rows]
['noise', 'noise']
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from sklearn.base import clone

from ..anonymize.base import Anonymizer
from ..anonymize.registry import build_method
from ..anonymize.registry import methods as registered_methods
from ..attack import ModelCache
from ..errors import BioanonError
from ..evaluation import Evaluation
from ..evaluation.options import EvaluationOptions
from ..evaluation.protocol import judged_sample
from ..evaluation.seeds import derive_seed
from ..evaluation.verdict import (
    DEFAULT_TARGET,
    RISK_RULE,
    verdict,
)
from ..metrics.results import INCONCLUSIVE, PASSING
from ..progress import stages
from ..report.build import build_report
from ..table import FeatureTable
from .judge_seed import judged_inputs, judged_statement, root_seed
from .margin import CONFIRM_PROBABILITY, has_margin, pass_probability, short_of_margin
from .settings import check_min_utility, check_search_args
from .tradeoff import public as public_table
from .tradeoff import stage1_only

Progress = Callable[[int, int, str], None]

#: how the search chooses (written in report.json)
CHOICE_RULE = ("privacy: " + RISK_RULE + "; utility: CAS above the interest's chance; chosen: "
               "the highest CAS among the settings meeting both on the tuning split with "
               "margin (a probability of at least 0.8 that a fresh evaluation meets every "
               "measured target too); certified only when a re-evaluation on a fresh "
               "split with a fresh evaluation seed meets every target too")

#: the rule's utility clause when the user sets a floor (``min_utility``)
FLOOR_RULE = ("; utility floor: the CAS must also reach {floor:g} × the clear accuracy (point "
              "estimates, on the same held-out clear records), on the tuning split and again "
              "on the confirmation")


def floor_met(cas: float, clear: float, min_utility: float | None) -> bool:
    """Whether a CAS reaches the utility floor, ``min_utility`` × the clear accuracy (True
    when no floor is set: None or 0).

    Examples
    --------
    >>> floor_met(0.90, 0.96, 0.95), floor_met(0.92, 0.96, 0.95), floor_met(0.3, 0.96, None)
    (False, True, True)
    """
    return min_utility is None or float(cas) >= float(min_utility) * float(clear)


@dataclass(frozen=True)
class Candidate:
    """One method at one setting (public parameters only; roles are filled when built).

    ``hidden`` holds values the setting takes from public side data (a clipping box, a
    centre: :mod:`bioanon.certification.dp_budget`); they override ``params`` when the anonymizer is
    built and appear in no label, row, manifest or report (``params`` says ``public``).
    """

    method: str
    params: dict[str, Any]
    hidden: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def label(self) -> str:
        """``method(k=v, ...)`` for tables and charts."""
        inner = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in self.params.items())
        return f"{self.method}({inner})"


def _applies(cls: type[Anonymizer], table: FeatureTable, decoupler: Any) -> str | None:
    """Why method ``cls`` does not apply to ``table`` (None when it does)."""
    if not cls.search_space:
        return "no search_space declared (not searched)"
    if cls.fit_on_auxiliary:
        if decoupler is None:
            return "needs a decoupler trained on auxiliary data (pass decoupler=)"
        return None
    if "image_shape" in cls.params and "image_shape" not in table.meta:
        return "an image method: the table has no image_shape (not pixels)"
    return None


def _parts(name: str, known: Mapping[str, Any]) -> list[str]:
    """The registered methods a name stands for: itself, or the steps of ``A+B``."""
    from ..anonymize.registry import get_method, split_composition

    if "+" in name:
        first, posts = split_composition(name)
        return [first, *posts]
    if name not in known:
        get_method(name)  # raises the one-line error with a suggestion
    return [name]


def candidates(table: FeatureTable, methods: Sequence[str] | None = None,
               decoupler: Any = None) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The candidate settings for ``table`` and the methods left out, with their reasons.

    With ``methods`` None, every registered method that applies; named methods that do not
    apply are refused (one line), so a user's choice is never silently dropped. Candidates are
    interleaved across methods (every method's first setting, then every second one ...), so
    that a short budget still covers every method.
    """
    known = registered_methods()
    skipped: list[dict[str, Any]] = []
    chosen: list[str] = []
    spaces_of: dict[str, tuple[dict[str, Any], ...]] = {}
    if methods is not None:
        for name in methods:
            parts = _parts(name, known)  # one-line error (with a suggestion) for a bad name
            for part in parts:
                why = _applies(known[part], table, decoupler)
                if why is not None:
                    raise BioanonError(f"method '{name}' cannot be searched on this table: "
                                       f"{why}; drop it from methods=", parameter="methods")
            chosen.append(name)
            # a composition A+B is searched over A's settings (plain keys go to A)
            spaces_of[name] = known[parts[0]].search_space
    else:
        for name, cls in known.items():
            why = _applies(cls, table, decoupler)
            if why is None:
                chosen.append(name)
                spaces_of[name] = cls.search_space
            else:
                skipped.append({"method": name, "reason": why})
    spaces = [_settings(n, spaces_of[n], table, known) for n in chosen]
    out = [c for depth in range(max((len(s) for s in spaces), default=0))
           for s in spaces if depth < len(s) for c in s[depth:depth + 1]]
    if decoupler is not None:
        out = [Candidate(c.method, {**c.params, "decoupler": decoupler})
               if known[_parts(c.method, known)[0]].fit_on_auxiliary else c for c in out]
    return out, skipped


def _settings(name: str, space: Sequence[Mapping[str, Any]], table: FeatureTable,
              known: Mapping[str, Any]) -> list[Candidate]:
    """Method ``name``'s settings as they act on ``table`` (the method's ``setting_for``: a
    parameter with no effect there dropped, a stated layout filled in), each once."""
    cls = known.get(_parts(name, known)[0])
    out: list[Candidate] = []
    for p in space:
        params = cls.setting_for(dict(p), table) if cls is not None else dict(p)
        if all(params != c.params for c in out):
            out.append(Candidate(name, params))
    return out


def build_candidate(c: Candidate, interest: str, sensitive: str,
                    additional: Sequence[str] | None, random_state: int | None) -> Any:
    """The anonymizer of a candidate with the roles filled in (checked, not fitted)."""
    return build_method(c.method, {**c.params, **c.hidden}, interest=interest,
                        sensitive=sensitive, additional=list(additional or []),
                        random_state=random_state)


def _public(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, str | int | float | bool) or v is None else type(v).__name__)
            for k, v in params.items() if k != "random_state"}


def _row(c: Candidate, ev: Evaluation, target: float, *, min_utility: float | None = None,
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
NOT_JUDGED = "not judged by the panel: a more useful setting met every target"
BUDGET_LEFT = "not judged by the panel: the time budget ran out (the search was cut short)"


def _cheap_row(c: Candidate, ev: Evaluation, target: float, *, level: Any,
               accept_risks: Mapping[str, str], min_utility: float | None = None
               ) -> dict[str, Any]:
    """The stage-1 row of a setting: CAS and the cheap risks, judged as :func:`verdict`
    judges them (recognition is not in it: no panel ran)."""
    from ..evaluation.verdict import judge_risks

    u = ev.utility()[ev.interest]
    accept = {**dict(getattr(ev, "accept_risks_", {}) or {}), **dict(accept_risks)}
    risks = judge_risks([r for r in ev.risks() if r.risk != "recognition"], float(target),
                        level, accept)
    failed = [r.name for r in risks if not r.passes]
    useful = bool(u.cas.ci[0] > u.chance and floor_met(u.cas.value, u.clear.value,
                                                       min_utility))
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
        "met_utility": useful, "met": False, "judged_by": STAGE1, **_margin(risks, list(accept)),
        "passed_stage1": bool(useful and not failed and has_margin(risks, list(accept))),
        "_risks": [r for r in ev.risks() if r.risk != "recognition"],
    }


def row_line(row: Mapping[str, Any]) -> str:
    """One terminal line of a search row: CAS beside clear, every risk, met or which failed.

    Examples
    --------
    >>> r = {"setting": "vp-mix(g=8)", "cas": 0.85, "clear": 0.86, "met": False,
    ...      "risks": [{"name": "record-membership", "statistic": "advantage", "value": 0.36,
    ...                 "ci": [0.25, 0.47], "target": 0.1, "status": "not met"}]}
    >>> row_line(r).split("; ")[1].split(" -> ")[0]
    'record-membership advantage 0.360 (upper bound 0.470, target 0.1) not met'
    """
    parts = []
    for r in row.get("risks", []):
        v, target = r["value"], r.get("target")
        limit = "" if target is None else f", target {target:g}"
        fig = ("—" if not np.isfinite(v)
               else f"{v:.3f} (upper bound {r['ci'][1]:.3f}{limit})")
        parts.append(f"{r['name']} {r['statistic']} {fig} {r['status']}")
    failed = [r["name"] for r in row.get("risks", []) if r["status"] not in PASSING]
    margin = [f"{name}: margin" for name in row.get("short_of_margin", [])]
    verdict_ = "meets every target" if row["met"] else (
        f"fails ({', '.join(failed or margin)})" if failed or margin else "fails (utility)")
    if row.get("not_judged"):
        verdict_ = str(row["not_judged"])
    elif row.get("judged_by", FULL_PANEL) != FULL_PANEL:
        verdict_ = f"{verdict_} [judged at stage 1, no recognition panel]"
    return (f"  {row['setting']}: CAS {row['cas']:.3f} (clear {row['clear']:.3f}); "
            + "; ".join(parts) + f" -> {verdict_}")


def _risk_text(row: Mapping[str, Any]) -> str:
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
    targets, then the highest CAS.
    """
    from ..evaluation.risks.registry import REGISTRY

    risks = row.get("risks", [])
    held = {r.get("risk", r["name"]) for r in risks}
    missing = sum(1 for spec in REGISTRY if spec.name not in held)
    failed = [r for r in risks if r["status"] not in PASSING
              or r["name"] in row.get("short_of_margin", [])]
    excess = sum(max(0.0, float(r["ci"][1]) - float(r["target"])) for r in failed
                 if r.get("target") is not None and np.isfinite(r["ci"][1])
                 and np.isfinite(r["target"]))
    return (len(failed) + missing, excess, -float(row["cas"]))


@dataclass
class SearchResult:
    """The rows of a search (one per evaluated setting), the choice and its confirmation."""

    rows: list[dict[str, Any]]
    target_advantage: float
    chosen: int | None = None
    confirmation: Any = None  # the confirmation's Report (report.json's content)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    budget_minutes: float | None = None
    level: Any = None
    accept_risks: dict[str, str] = field(default_factory=dict)
    interest: str | None = None
    closest_report: Any = None  # the closest setting's report when nothing was chosen
    plan: Any = None  # the plan (bioanon.plan.Plan) the certification ran under
    min_utility: float | None = None  # the utility floor: CAS >= min_utility x clear
    #: the trade-off table (:mod:`.tradeoff`): per level, the most useful setting meeting it
    tradeoff: list[dict[str, Any]] = field(default_factory=list)
    guarantee: Any = None  # a declared DP guarantee (covers the risks its unit covers)
    #: what was judged (:func:`.judge_seed.judged_statement`): a fingerprint a second run
    #: can be checked against, and where the judge's randomness came from (no seed)
    judged: dict[str, Any] = field(default_factory=dict)

    @property
    def candidate(self) -> Candidate | None:
        """The chosen setting (None when no setting met the target on the tuning split)."""
        if self.chosen is None:
            return None
        r = self.rows[self.chosen]
        return Candidate(r["method"], dict(r["_params"]), dict(r.get("_hidden", {})))

    @property
    def certified(self) -> bool:
        """True when the chosen setting's confirmation met the target too (and the utility
        floor, when one is set)."""
        return (self.confirmation is not None and bool(self.confirmation["verdict"]["met"])
                and self.confirmation_floor_met)

    @property
    def confirmation_floor_met(self) -> bool:
        """Whether the confirmation's CAS reaches the floor (True without a floor)."""
        if self.confirmation is None or self.min_utility is None:
            return True
        cas, clear = confirmation_utility(self.confirmation)
        return floor_met(cas, clear, self.min_utility)

    def rule(self) -> str:
        """The choice rule, with the utility floor when one is set."""
        if self.min_utility is None:
            return CHOICE_RULE
        return CHOICE_RULE + FLOOR_RULE.format(floor=self.min_utility)

    def utility_shortfall(self, row: Mapping[str, Any]) -> str:
        """Why ``row`` is not useful, in words (chance, or the floor)."""
        if row["cas_ci"][0] <= row["interest_chance"]:
            return (f"utility: CAS {row['cas']:.3f} (95% CI lower end {row['cas_ci'][0]:.3f}) "
                    f"is not above the chance of {row['interest_chance']:.3f}")
        return (f"utility: CAS {row['cas']:.3f} is below the floor {self.min_utility:g} × "
                f"clear {row['clear']:.3f} = {float(self.min_utility or 0) * row['clear']:.3f}")

    def closest(self) -> tuple[dict[str, Any] | None, str]:
        """The setting that came closest, and what fell short (which risk, or utility).

        A chosen setting whose confirmation failed; else, among the settings useful on the
        tuning split, the smallest :func:`closeness` (fewest risks not met — a risk not
        judged counts as not met —, then the smallest total excess of upper bounds over
        targets, then the highest CAS); else the most useful of those meeting privacy. The
        rule reads the rows' figures only: it does not change with machine load.
        """
        if self.chosen is not None and not self.certified:
            v = self.confirmation["verdict"]
            failed = [r for r in v.get("risks", []) if r["status"] not in PASSING]
            why = _risk_text({"risks": failed}) if failed or v["met"] is False else ""
            if not self.confirmation_floor_met:
                cas, clear = confirmation_utility(self.confirmation)
                floor = (f"utility: CAS {cas:.3f} below the floor {self.min_utility:g} × clear "
                         f"{clear:.3f} = {float(self.min_utility or 0) * clear:.3f}")
                why = f"{why}; and {floor}" if why else floor
            return (self.rows[self.chosen], "the confirmation run (a fresh split): " + why)
        if not self.rows:
            return None, "no setting could be evaluated"
        if not any(r.get("clear_useful", True) for r in self.rows):
            r = self.rows[0]
            return None, (f"utility cannot be measured at this size: even the clear data do "
                          f"not predict '{self.interest or 'the interest'}' above chance on "
                          f"the tuning split (clear accuracy {r['clear']:.3f}, 95% CI lower "
                          f"end {r['clear_ci'][0]:.3f}, chance {r['interest_chance']:.3f}); "
                          "the methods were not at fault — more records or people are needed")
        useful = [r for r in self.rows if r["met_utility"]]
        private = [r for r in self.rows if r["met_privacy"]]

        if useful:
            best = min(useful, key=closeness)
            return best, _risk_text(best)
        if private:
            best = max(private, key=lambda r: r["cas"])
            return best, self.utility_shortfall(best)
        best = min(self.rows, key=closeness)
        return best, f"{_risk_text(best)}; and {self.utility_shortfall(best)}"

    def failure_line(self) -> str:
        """One line: no certified setting, which came closest, which risk fell short (first,
        when the time budget cut the search short, that and the settings it left)."""
        row, why = self.closest()
        cut = self.cut_short()
        if cut is not None:
            if row is None:
                return cut
            return (f"{cut}; of the settings judged, the closest: {row['setting']} (CAS "
                    f"{row['cas']:.3f}, clear {row['clear']:.3f}) fell short on {why}")
        if row is None:
            return f"no certified setting: {why}"
        return (f"no setting meets every target; closest: {row['setting']} (CAS "
                f"{row['cas']:.3f}, clear {row['clear']:.3f}); fell short on {why}")

    def tradeoff_table(self) -> list[dict[str, Any]]:
        """The trade-off table from the rows as they stand (:func:`.tradeoff.level_rows`)."""
        from .tradeoff import level_rows

        return level_rows(self.rows, self.level, self.target_advantage, self.accept_risks,
                          self.guarantee, self.min_utility)

    def refusal_line(self) -> str:
        """The refusal in one line: :meth:`failure_line`, then the trade-off
        (:func:`.tradeoff.tradeoff_line`): the best CAS that met every target, the level at
        which a more useful release meets every target, how far the most useful setting
        fell short and on which risk."""
        from .tradeoff import tradeoff_line

        line = self.failure_line()
        if not any(r.get("clear_useful", True) for r in self.rows):
            return line  # utility cannot be measured: no trade-off to name
        table = self.tradeoff or self.tradeoff_table()
        return f"{line} — trade-off: {tradeoff_line(table, self.rows, self.min_utility)}"

    def cut_short(self) -> str | None:
        """Why nothing was certified when the time budget ran out before the search could
        choose (None when it did not): the budget and the settings it left. A search cut
        short certifies nothing: choosing among the settings judged in time would make the
        answer depend on the machine's speed.

        Examples
        --------
        >>> r = SearchResult([], 0.05, budget_minutes=2, not_evaluated=["a(g=1)", "b(g=2)"])
        >>> r.cut_short()[:60]
        'the time budget of 2 min ran out before the recognition pane'
        """
        if not self.not_evaluated or self.certified:
            return None
        left = self.not_evaluated
        return (f"the time budget of {float(self.budget_minutes or 0):g} min ran out before "
                f"the recognition panel judged {len(left)} setting(s) ({', '.join(left)}); "
                "a search cut short certifies nothing (a larger time budget, or none, "
                "lets it finish)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (public parameters only; no seed)."""
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.rows]
        conf = None
        if self.confirmation is not None:
            conf = self.confirmation["verdict"]
        from ..levels import resolve_level

        return {"target_advantage": self.target_advantage,
                "level": resolve_level(self.level).to_dict(),
                "accepted_risks": dict(self.accept_risks), "rule": self.rule(),
                "min_utility": self.min_utility,
                "tradeoff": public_table(self.tradeoff),
                "rows": rows, "chosen": self.chosen, "certified": self.certified,
                "confirmation": conf, "skipped": self.skipped,
                "not_evaluated": self.not_evaluated, "wall_s": round(self.wall_s, 1),
                "plan": self.plan.to_dict() if self.plan is not None else None,
                "budget_minutes": self.budget_minutes, "judged": dict(self.judged)}


@dataclass(frozen=True)
class SearchSpace:
    """Where a search's candidates come from and how each is judged (what differs between
    the release paths; the default: every applicable method's ``search_space``, judged as
    it is).

    Attributes
    ----------
    decoupler : optional
        A trained decoupler, for the sanitizer to be searched.
    budget : bioanon.certification.dp_budget.DPBudget, optional
        A declared differential-privacy budget: only the DP methods are searched, each
        setting at exactly its ε and δ (public side data, when given, fix the bounds).
    judge_as : callable, optional
        Turns each candidate's anonymizer into the estimator the judge evaluates (tuning and
        confirmation alike), e.g. the bucketed rule of a dask release
        (:class:`~bioanon.scale.BucketedMixing`), so the certificate describes what is
        written.
    """

    decoupler: Any = None
    budget: Any = None
    judge_as: Callable[[Any], Any] | None = None

    def candidates(self, table: FeatureTable, methods: Sequence[str] | None,
                   sensitive: str) -> tuple[list[Candidate], list[dict[str, Any]]]:
        """The candidate settings and the methods left out (with their reasons)."""
        if self.budget is not None:
            return self.budget.candidates(table, methods, sensitive)
        return candidates(table, methods, self.decoupler)


@dataclass(frozen=True)
class Judge:
    """Everything a step of one search reads, fixed before the first setting is judged:
    the table, the roles, the judge's options (checked once: ``checked``), the tuning
    split's evaluation seed, how a candidate is judged and the targets. Each step is a
    function of a ``Judge`` and one candidate (the model cache only saves time)."""

    table: FeatureTable
    interest: str
    sensitive: str
    additional: dict[str, float]
    options: EvaluationOptions
    checked: Any
    seed: int
    judge_as: Callable[[Any], Any] | None = None
    min_utility: float | None = None
    cache: Any = field(default=None, compare=False)
    #: the records the tuning split is drawn from: the table, or its panel sample when it
    #: holds more than ``max_records`` (drawn once with the tuning seed, as each evaluation
    #: would draw it); None: the table
    tuning: Any = field(default=None, compare=False, repr=False)

    @property
    def tuning_table(self) -> FeatureTable:
        """The records every setting is judged on (the tuning split's table)."""
        return self.table if self.tuning is None else self.tuning

    @property
    def targets(self) -> dict[str, Any]:
        """The verdict's targets beside recognition's: the level and the accepted risks."""
        return {"level": self.checked.level, "accept_risks": dict(self.checked.accept_risks)}

    def anonymizer(self, c: Candidate, as_judged: bool = True) -> Any:
        """The estimator the judge evaluates for ``c`` (its release rule with ``judge_as``)."""
        anon = build_candidate(c, self.interest, self.sensitive, list(self.additional), None)
        return self.judge_as(anon) if self.judge_as is not None and as_judged else anon


def judge_setting(judge: Judge, c: Candidate, recognition: bool, progress: Any) -> Evaluation:
    """``c`` judged on the tuning split (``recognition`` False: stage 1, no panel). A
    setting that runs out of memory (a model of features × features numbers on a wide table)
    is refused like a setting the data cannot support: skipped, with its reason."""
    return judge_anonymizer(judge, judge.anonymizer(c), recognition, progress)


def judge_anonymizer(judge: Judge, anonymizer: Any, recognition: bool,
                     progress: Any) -> Evaluation:
    """The estimator ``anonymizer`` judged on the tuning split, with one BLAS and OpenMP
    thread in this thread (:func:`one_thread`: the same figures in a worker process, in
    this process, on any number of cores)."""
    nested = None if progress is None else progress.nested(progress.stage or "")
    try:
        with one_thread():
            return Evaluation(judge.tuning_table, judge.interest, judge.sensitive,
                              judge.additional, anonymizer, random_state=judge.seed,
                              cache=judge.cache, progress=nested,
                              options=judge.options.for_tuning(),
                              checked=judge.checked).evaluate(recognition=recognition)
    except MemoryError:
        raise BioanonError(f"out of memory on {judge.tuning_table.n_features} features (a "
                           "model of features × features numbers does not fit); reduce the "
                           "features first (e.g. PCA) to release with it") from None


def resume_setting(judge: Judge, ev: Evaluation, progress: Any) -> Evaluation:
    """Stage 2 of a setting: the recognition panel on what its stage 1 kept
    (:meth:`~bioanon.evaluation.Evaluation.resume`; an evaluation that came from a worker
    process gets the table, the cache and the options' ``n_jobs`` of this one back)."""
    ev.table = judge.tuning_table
    ev.cache, ev.options = judge.cache, judge.options.for_tuning()
    ev.progress = None if progress is None else progress.nested(progress.stage or "")
    with one_thread():
        return ev.resume()


def one_thread() -> Any:
    """One BLAS and one OpenMP thread in the calling thread, for every step of the judge:
    the figures do not depend on how many threads a library would start (the attack panel
    and the utility views run their fits in parallel, each single-threaded, as before)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def keep_setting(row: dict[str, Any], c: Candidate) -> dict[str, Any]:
    """``row`` holding ``c``'s parameters for the release (in-process fields, never
    written: ``_params`` may hold a decoupler object, ``_hidden`` values from public side
    data)."""
    row["_params"] = dict(c.params)
    row["_hidden"] = dict(c.hidden)
    return row


def panel_row(judge: Judge, c: Candidate, ev: Evaluation) -> dict[str, Any]:
    """The row of a setting judged with the full panel."""
    row = _row(c, ev, judge.options.target_advantage, min_utility=judge.min_utility,
               **judge.targets)
    row["judged_by"] = FULL_PANEL
    return keep_setting(row, c)


def stage1_row(judge: Judge, c: Candidate, ev: Evaluation) -> dict[str, Any]:
    """The row of a setting judged at stage 1 (utility and the cheap risks)."""
    return keep_setting(_cheap_row(c, ev, judge.options.target_advantage,
                                   min_utility=judge.min_utility, **judge.targets), c)


def fresh_report(judge: Judge, c: Candidate, as_judged: bool = True) -> Any:
    """``c`` judged on the fresh split (the confirmation's), as a secret-free report."""
    with one_thread():
        ev = judge_on_fresh_split(judge.table, judge.anonymizer(c, as_judged), judge.interest,
                                  judge.sensitive, judge.additional, judge.seed,
                                  options=judge.options, checked=judge.checked)
    return secret_free_report(build_report(ev))


def skip_setting(result: SearchResult, c: Candidate, exc: BioanonError) -> None:
    """Name a setting that could not run on the table, with the reason."""
    result.skipped.append({"method": c.method, "setting": c.label(), "reason": str(exc)})


@dataclass
class Clock:
    """The search's time budget (None: no limit).

    It bounds the recognition panel's stage only, from its start: stage 1 judges every
    setting whatever the time (cheap by design; its time grows with the load, not with the
    budget), then the panel judges its first group and no further group once the budget has
    passed. A budget that binds cuts the search short (a refusal naming the settings left)
    and never changes its answer. The exhaustive search has no stage 1: its budget runs from
    its start. ``now`` is the clock read (tests replace it with one on which every step
    looks slow).
    """

    budget_minutes: float | None
    start: float = field(default=-1.0)
    now: ClassVar[Callable[[], float]] = time.perf_counter

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = type(self).now()
        self.since = self.start

    def elapsed(self) -> float:
        """Seconds since the search started, on this clock."""
        return type(self).now() - self.start

    def start_budget(self) -> None:
        """Start the budget now (the panel's stage begins)."""
        self.since = type(self).now()

    def over(self) -> bool:
        """Whether the budget has run out."""
        return (self.budget_minutes is not None
                and type(self).now() - self.since > 60 * self.budget_minutes)


def search(table: FeatureTable, interest: str, sensitive: str,
           additional: Mapping[str, float] | None = None, *,
           methods: Sequence[str] | None = None, budget_minutes: float | None = 10.0,
           progress: Progress | None = None, random_state: int | None = None,
           report_closest: bool = False, exhaustive: bool = False,
           min_utility: float | None = None, space: SearchSpace | None = None,
           options: EvaluationOptions | None = None, tradeoff_panels: int = 0,
           **option_values: Any) -> SearchResult:
    """Evaluate every candidate on a tuning split, choose by CAS, confirm on a fresh one.

    The search is staged, with the same winner and certificate as the exhaustive search
    (every setting judged by the full panel; ``exhaustive=True``):

    1. **stage 1**, on every setting: the tuning split anonymized, utility (CAS) and the
       cheap risks (membership and inference on members), no recognition panel. A setting
       failing one of them (or utility) cannot be chosen: its row says so
       (``judged_by``: stage 1).
    2. **stage 2**: the settings that passed, in decreasing CAS (ties in the candidates'
       order), are judged by the recognition panel, a group of equal CAS at a time; the
       first group holding a setting that meets every target gives the choice by the
       exhaustive rule (highest CAS, then the lowest upper bound of the recognition
       advantage, then the candidates' order). The settings after it keep their stage-1
       row, marked "not judged by the panel: a more useful setting met every target".
       Should the chosen setting's confirmation not even run, stage 2 goes on.

    The cheap risks are the same figures as the full evaluation's (same split, seeds and
    anonymization): stage 2 resumes stage 1's evaluation of the setting
    (:meth:`~bioanon.evaluation.Evaluation.resume`) and runs the panel only. Stage 1 runs in
    parallel worker processes when ``n_jobs`` allows (:func:`stage1`), with the sequential
    run's figures. The confirmation is always the full panel on a fresh split and seed.

    The answer depends on the table, the options and the seed only, not on the machine's
    load or cores: stage 1 judges every setting whatever the time; the time budget bounds
    stage 2 only, from its start (its first group is always judged), and when it runs out
    before a choice the search is cut short: nothing is certified, the settings left are named in
    ``not_evaluated`` and :meth:`SearchResult.cut_short` says so — never a different
    choice. Each step is a function of the search's :class:`Judge` and one candidate.

    Parameters
    ----------
    table : FeatureTable
    interest, sensitive : str
        Roles of the judge (utility is the interest's CAS; privacy is about ``sensitive``).
    additional : mapping {column: alpha}, optional
    options : EvaluationOptions, optional
        How each setting is judged (:class:`~bioanon.evaluation.options.EvaluationOptions`:
        the panel, ``group``, ``released_labels``, ``test_size``, the targets —
        ``target_advantage`` 0.05 (recognition) and ``level`` (membership and inference, one
        membership-advantage target per level; default "standard") — and ``accept_risks``);
        a setting is chosen only when every risk is met (membership, not verification).
    **option_values
        Any field of :class:`~bioanon.evaluation.options.EvaluationOptions`, replacing the
        one in ``options``.
    report_closest : bool
        When no setting meets every target, evaluate the closest one on the fresh split and
        keep its report (``SearchResult.closest_report``) to show what fell short.
    methods : sequence of str, optional
        Methods to consider (default: every registered method that applies).
    budget_minutes : float or None
        Wall-clock minutes for stage 2, from its start (stage 1 judges every setting
        whatever the time): once they have passed, the panel judges no further group of
        settings; a search it cuts short before a choice certifies nothing and names the
        settings left. None: no limit.
    exhaustive : bool
        Judge every setting with the full panel (the former behaviour; slower, same winner).
    min_utility : float in [0, 1], optional
        The utility floor: CAS ≥ ``min_utility`` × clear (point estimates), on the tuning
        split and on the confirmation. None or 0 (here the default; a release's:
        :data:`bioanon.levels.DEFAULT_MIN_UTILITY`): CAS above chance is enough.
    tradeoff_panels : int
        Settings the panel may judge after the choice, for the trade-off table
        (:func:`judge_levels`; the choice never changes). 0: none.
    progress : callable (done, total, text), optional
    random_state : int, optional
        Asks for another reproducible evaluation. None: the judge's randomness is derived
        from the table and the options (:mod:`.judge_seed`): re-running does not re-roll the
        verdict. Never written (the result's ``judged`` holds a fingerprint instead).
    space : SearchSpace, optional
        Where the candidates come from (a declared DP budget, a decoupler) and how each is
        judged (``judge_as``: the rule a dask release applies).

    Returns
    -------
    SearchResult
    """
    opts = EvaluationOptions.of(options, **option_values)
    floor = check_search_args(budget_minutes, min_utility)
    space = space or SearchSpace()
    add = dict(additional or {})
    cands, skipped = _checked_candidates(space, table, methods, interest, sensitive, add)
    from ..evaluation.risks import check_accepted

    opts = replace(opts, selection=None, membership=True, verification=False,
                   accept_risks=check_accepted(opts.accept_risks))
    checked = check_judgeable(table, interest, sensitive, add, opts)
    inputs = judged_inputs(table, {
        "interest": interest, "sensitive": sensitive, "additional": add,
        "settings": [c.label() for c in cands], "options": opts, "min_utility": floor,
        "tradeoff_panels": tradeoff_panels})
    seed = derive_seed(root_seed(inputs) if random_state is None else int(random_state),
                       "search/tuning split") % (2**31)
    judge = Judge(table, interest, sensitive, add, opts, checked, seed, space.judge_as, floor,
                  ModelCache(), judged_sample(table, interest, sensitive, opts, seed)[0])
    result = SearchResult([], float(opts.target_advantage), skipped=skipped,
                          budget_minutes=budget_minutes, level=checked.level,
                          accept_risks=dict(checked.accept_risks), interest=interest,
                          min_utility=floor, guarantee=opts.guarantee)
    result.judged = judged_statement(inputs, random_state)
    clock = Clock(budget_minutes)
    progress = stages(progress, "searching", "bioanon.search")
    steps = exhaustive_search if exhaustive else staged_search
    total = steps(judge, result, cands, clock, progress)
    judge_levels(judge, result, 0 if exhaustive else int(tradeoff_panels),
                 lambda text: progress(total - 1, total, text))
    if report_closest and result.confirmation is None and result.rows:
        _report_closest(result, judge, lambda text: progress(total - 1, total, text))
    result.wall_s = clock.elapsed()
    progress(total, total, "done")
    return result


def _checked_candidates(space: SearchSpace, table: FeatureTable,
                        methods: Sequence[str] | None, interest: str, sensitive: str,
                        add: Mapping[str, float]
                        ) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """The search's candidates and the settings skipped, each candidate built once (checked,
    not fitted) so that an impossible setting is refused before any work."""
    cands, skipped = space.candidates(table, methods, sensitive)
    if not cands:
        raise BioanonError("no registered method applies to this table; name one with "
                           "methods= or check the table's labels and meta",
                           parameter="methods")
    for c in cands:
        build_candidate(c, interest, sensitive, list(add), None)
    return cands, skipped


def judge_levels(judge: Judge, result: SearchResult, panels: int,
                 say: Callable[[str], None]) -> None:
    """Fill ``result.tradeoff`` (:mod:`.tradeoff`), first judging with the recognition panel
    up to ``panels`` settings behind rows of the table that stage 1 alone judged (the chosen
    level's first, then the others by decreasing CAS; a setting whose panel cannot run is not
    tried again). A panel that finds a setting failing recognition moves the level's row to
    the next setting, which may take the next panel. The choice is made before: it, its
    confirmation and the chosen level's verdict do not change (a row judged here is the
    exhaustive search's row). Nothing is judged when the search was cut short."""
    if not result.rows:
        return
    tried: set[int] = set()
    for _ in range(max(0, panels) if not result.not_evaluated else 0):
        todo = [j for j in stage1_only(result.tradeoff_table()) if j not in tried]
        if not todo:
            break
        j = todo[0]
        tried.add(j)
        r = result.rows[j]
        c = Candidate(r["method"], dict(r["_params"]), dict(r.get("_hidden", {})))
        say(f"trade-off: judging {c.label()} with the recognition panel")
        if panel_setting(judge, result, j, c, None):
            result.rows[j]["tradeoff_judged"] = True
    result.tradeoff = result.tradeoff_table()


def exhaustive_search(judge: Judge, result: SearchResult, cands: list[Candidate],
                      clock: Clock, progress: Any) -> int:
    """Every setting judged by the full panel, then the choice confirmed; returns the
    number of progress steps. A time budget that runs out leaves settings unjudged: the
    search is then cut short and certifies nothing (a choice among the settings judged
    could differ from the search's)."""
    total = len(cands) + 1
    n_skipped = len(result.skipped)
    for i, c in enumerate(cands):
        if i > 0 and clock.over():  # at least one setting is always evaluated
            result.not_evaluated = [x.label() for x in cands[i:]]
            break
        progress(i, total, f"{c.label()} ({i + 1}/{len(cands)})")
        try:
            ev = judge_setting(judge, c, True, progress)
        except BioanonError as exc:
            skip_setting(result, c, exc)
            continue
        result.rows.append(panel_row(judge, c, ev))
    nothing_judged(result, n_skipped)
    if not result.not_evaluated:
        _confirm(result, judge, lambda text: progress(len(cands), total, text))
    return total


def staged_search(judge: Judge, result: SearchResult, cands: list[Candidate],
                  clock: Clock, progress: Any) -> int:
    """Stage 1 on every setting (:func:`stage1`, whatever the time budget), then stage 2
    (:func:`_stage2`) on the survivors, resuming each one's stage-1 state; returns the
    number of progress steps."""
    # the steps: stage 1's settings, stage 2's (one until their count is known), the end
    total = [len(cands) + 2]
    n_skipped = len(result.skipped)
    judged: list[Candidate] = []
    kept: list[Evaluation | None] = []  # stage 1's evaluation of the settings that passed it
    held = 0  # bytes of stage-1 state kept in this process
    outcomes = stage1(judge, cands, progress, total[0])
    for c, outcome in zip(cands, outcomes, strict=True):
        if isinstance(outcome, BioanonError):
            skip_setting(result, c, outcome)
            continue
        row = stage1_row(judge, c, outcome)
        result.rows.append(row)
        judged.append(c)
        kept.append(outcome if row["passed_stage1"] else None)
        held += _hold_state(outcome, row["passed_stage1"], held)
    del outcomes
    nothing_judged(result, n_skipped)

    def panel(j: int, k: int, n: int) -> bool:
        total[0] = max(total[0], len(cands) + n + 1)
        progress(len(cands) + k, total[0], f"stage 2: {judged[j].label()} ({k + 1}/{n})")
        ev, kept[j] = kept[j], None
        return panel_setting(judge, result, j, judged[j], progress, ev)

    clock.start_budget()  # the budget bounds the panel's stage only
    _stage2(result, judge, panel, clock, lambda text: progress(total[0] - 1, total[0], text))
    return total[0]


#: the most stage-1 state (anonymized splits) a search keeps in memory for stage 2; beyond
#: it, stage 2 derives a setting's anonymized splits again from the seed (the same records)
KEEP_STATE_BYTES = 1 << 30


def _hold_state(ev: Evaluation, passed: bool, held: int) -> int:
    """Keep ``ev``'s stage-1 state for stage 2 when it passed and the memory allows; drop it
    otherwise. Returns the bytes kept."""
    state = getattr(ev, "stage_", None)
    if state is None:
        return 0
    size = sum(int(a.nbytes) for a in (state.anon_train, state.anon_test, state.train.X,
                                        state.test.X))
    if passed and held + size <= KEEP_STATE_BYTES:
        return size
    ev.stage_ = None  # resume() derives it again
    return 0


def stage1(judge: Judge, cands: Sequence[Candidate], progress: Any, total: int
           ) -> list[Evaluation | BioanonError]:
    """Stage 1 (utility and every risk but recognition) of every setting, in the
    candidates' order: each one's stage-1 evaluation, or the error that stopped it.

    With more than one worker (``n_jobs``: -1, every core) the settings are judged in
    parallel worker processes (joblib's loky), each single-threaded with its own cache of
    the clear-trained models, which it fits once; the figures are those of the sequential
    run (the same seeds, one thread each, the same models). An evaluation comes back from
    its worker without its anonymized splits or mixing matrix (secrets stay in the process
    that drew them; stage 2 derives them again from the seed) and its warnings are said
    again here, where the caller's filters apply.
    """
    n = workers(judge.options.n_jobs, len(cands))
    anonymizers = [judge.anonymizer(c) for c in cands]
    if n > 1 and picklable((judge.options, judge.checked, anonymizers)):
        return _stage1_parallel(judge, cands, anonymizers, n,
                                lambda i, text: progress(i, total, text))
    out: list[Evaluation | BioanonError] = []
    for i, (c, anon) in enumerate(zip(cands, anonymizers, strict=True)):
        progress(i, total, f"stage 1: {c.label()} ({i + 1}/{len(cands)})")
        try:
            out.append(judge_anonymizer(judge, anon, False, progress))
        except BioanonError as exc:
            out.append(exc)
    return out


def _stage1_parallel(judge: Judge, cands: Sequence[Candidate], anonymizers: list[Any],
                     n: int, say: Callable[[int, str], None]
                     ) -> list[Evaluation | BioanonError]:
    """:func:`stage1` in ``n`` worker processes."""
    import uuid
    import warnings

    from sklearn.utils.parallel import Parallel, delayed  # passes sklearn's config on

    work = replace(judge, table=judge.tuning_table, tuning=None, judge_as=None, cache=None,
                   options=replace(judge.options, n_jobs=1))
    token = uuid.uuid4().hex  # the workers' cache of clear-trained models, for this search
    out: list[Evaluation | BioanonError | None] = [None] * len(cands)
    say(0, f"stage 1: {len(cands)} settings in {n} worker processes")
    tasks = (delayed(_stage1_task)(work, i, anon, token) for i, anon in enumerate(anonymizers))
    for k, (i, outcome, caught) in enumerate(
            Parallel(n_jobs=n, backend="loky", return_as="generator_unordered")(tasks)):
        for category, message in caught:
            warnings.warn(message, category, stacklevel=2)
        if isinstance(outcome, str):
            out[i] = BioanonError(outcome)
        else:
            outcome.table, outcome.cache = judge.tuning_table, judge.cache
            out[i] = outcome
        say(k + 1, f"stage 1: {cands[i].label()} judged ({k + 1}/{len(cands)})")
    return [o for o in out if o is not None]


#: each worker process's cache of clear-trained models: (the search's token, the cache)
_WORKER_CACHE: dict[str, Any] = {}


def _stage1_task(judge: Judge, i: int, anonymizer: Any, token: str
                 ) -> tuple[int, Evaluation | str, list[tuple[type[Warning], str]]]:
    """One setting's stage 1 in a worker process: (its index, its evaluation or the error
    message that stopped it, the warnings it raised)."""
    import warnings

    if token not in _WORKER_CACHE:
        _WORKER_CACHE.clear()  # a former search's models
        _WORKER_CACHE[token] = ModelCache()
    judge = replace(judge, cache=_WORKER_CACHE[token])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: Evaluation | str = judge_anonymizer(judge, anonymizer, False, None)
        except BioanonError as exc:
            outcome = str(exc)
    if isinstance(outcome, Evaluation):
        outcome.table = None  # type: ignore[assignment]  # the caller holds it
        outcome.cache = None  # its own (kept in this worker); no secret is pickled
    seen = list(dict.fromkeys((w.category, str(w.message)) for w in caught))
    return i, outcome, seen


def workers(n_jobs: int | None, n_tasks: int) -> int:
    """How many worker processes judge ``n_tasks`` settings at stage 1 (``n_jobs`` as
    joblib reads it: -1 every core; at most one per setting).

    Examples
    --------
    >>> workers(1, 30), workers(2, 30), workers(4, 3)
    (1, 2, 3)
    """
    from joblib import effective_n_jobs

    return max(1, min(int(effective_n_jobs(n_jobs)), int(n_tasks)))


def picklable(objects: Any) -> bool:
    """Whether ``objects`` can go to a worker process (in memory; nothing is written)."""
    import pickle

    try:
        pickle.dumps(objects)
    except Exception:  # noqa: BLE001 - any object that cannot travel: judge in process
        return False
    return True


def panel_setting(judge: Judge, result: SearchResult, j: int, c: Candidate,
                  progress: Any, kept: Evaluation | None = None) -> bool:
    """Judge row ``j`` (setting ``c``) with the full panel, resuming its stage-1
    evaluation ``kept`` when given; False when it could not run."""
    try:
        ev = (judge_setting(judge, c, True, progress) if kept is None
              else resume_setting(judge, kept, progress))
    except BioanonError as exc:
        skip_setting(result, c, exc)
        result.rows[j]["not_judged"] = f"the panel could not run: {exc}"
        return False
    result.rows[j] = panel_row(judge, c, ev)
    return True


def check_judgeable(table: FeatureTable, interest: str, sensitive: str,
                    additional: Mapping[str, float] | None, opts: EvaluationOptions) -> Any:
    """Refuse, before any setting is judged, a table and options every setting would fail
    on: the judge's own check (:func:`~bioanon.evaluation.protocol.check_judge`, run once
    here and handed to every evaluation) and its split (records per identity, groups per
    class) depend on them alone, so a failure there is the input's, not a setting's.
    Returns the judge's check."""
    from ..evaluation.protocol import check_judge
    from ..evaluation.split import group_split, split_table

    checked = check_judge(table, interest, sensitive, additional, opts)
    try:
        if opts.group is None:
            split_table(table, interest, sensitive, opts.test_size, 0)
        else:
            group_split(table, opts.group, sensitive, opts.test_size, 0)
    except BioanonError as exc:
        raise BioanonError(f"no setting can be judged on this table: {exc}",
                           parameter=exc.parameter) from None
    return checked


def nothing_judged(result: SearchResult, n_skipped_before: int) -> None:
    """When no setting could even run on the table (every one failed before it was judged,
    and the time budget left none out), nothing was judged: the table or the options are at
    fault, not the settings, so this is an input error, not a "not certified". One reason
    shared by every setting is given alone."""
    failed = [s for s in result.skipped[n_skipped_before:] if "setting" in s]
    if result.rows or result.not_evaluated or not failed:
        return
    reasons = list(dict.fromkeys(s["reason"] for s in failed))
    if len(reasons) == 1:
        raise BioanonError(f"no setting can be judged on this table: {reasons[0]}")
    raise BioanonError(f"no setting can be judged on this table: all {len(failed)} settings "
                       f"tried failed to run (the first: {failed[0]['setting']}: "
                       f"{reasons[0]}); give more records per class and identity, or name "
                       "the methods whose settings fit it (methods=)", parameter="methods")


def _confirm_one(result: SearchResult, j: int, judge: Judge,
                 say: Callable[[str], None]) -> bool:
    """Confirm row ``j`` on the fresh split; False when the confirmation cannot even run."""
    result.chosen = j
    chosen = result.candidate
    assert chosen is not None
    say(f"confirming {chosen.label()} on a fresh split and seed")
    try:
        result.confirmation = fresh_report(judge, chosen)
    except BioanonError as exc:
        result.skipped.append({"method": chosen.method, "setting": chosen.label(),
                               "reason": f"confirmation could not run: {exc}"})
        result.chosen = None
        return False
    return True


def _confirm(result: SearchResult, judge: Judge, say: Callable[[str], None]) -> None:
    """Confirm the most useful setting that met every target on the fresh split.

    The order: highest CAS, then the lowest upper bound of the recognition advantage, then
    the candidates' order. One that cannot even run there (e.g. a class too small for g)
    gives way to the next. A setting whose confirmation runs and fails is final: trying
    others until one passes would bring the winner's curse back.
    """
    ok = [j for j, r in enumerate(result.rows) if r["met"]]
    for j in sorted(ok, key=lambda j: (result.rows[j]["cas"],
                                       -result.rows[j]["advantage_ci"][1]), reverse=True):
        if _confirm_one(result, j, judge, say):
            break


def _stage2(result: SearchResult, judge: Judge, panel: Callable[[int, int, int], bool],
            clock: Clock, say: Callable[[str], None]) -> None:
    """The search's second stage: the settings that passed stage 1 judged by the panel in
    decreasing CAS (ties in the candidates' order), a group of equal CAS at a time, until a
    group holds a setting that meets every target and whose confirmation runs.

    Within the group the order of :func:`_confirm` applies (lowest upper bound of the
    recognition advantage, then the candidates' order), so the choice is the exhaustive
    search's: every setting of a lower CAS would come after it there. The settings left are
    marked as not judged by the panel (a more useful setting met every target, or the time
    budget ran out: these are named in ``not_evaluated`` too).
    """
    rows = result.rows
    order = sorted((j for j, r in enumerate(rows) if r.get("passed_stage1")),
                   key=lambda j: -rows[j]["cas"])  # stable: candidates' order in ties
    k, n = 0, len(order)
    while k < n:
        if k > 0 and clock.over():
            for j in order[k:]:
                rows[j]["not_judged"] = BUDGET_LEFT
            result.not_evaluated += [rows[j]["setting"] for j in order[k:]]
            return
        group = [j for j in order[k:] if rows[j]["cas"] == rows[order[k]]["cas"]]
        for m, j in enumerate(group):
            panel(j, k + m, n)
        k += len(group)
        ok = [j for j in group if rows[j]["met"]]
        for j in sorted(ok, key=lambda j: rows[j]["advantage_ci"][1]):
            if _confirm_one(result, j, judge, say):
                for rest in order[k:]:
                    rows[rest]["not_judged"] = NOT_JUDGED
                return


def _report_closest(result: SearchResult, judge: Judge, say: Callable[[str], None]) -> None:
    """Judge the setting that came closest on the fresh split, to show what fell short."""
    near, _ = result.closest()
    if near is None:
        return
    c = Candidate(near["method"], dict(near["_params"]), dict(near.get("_hidden", {})))
    say(f"reporting the closest setting {c.label()}")
    with contextlib.suppress(BioanonError):
        result.closest_report = fresh_report(judge, c, as_judged=False)


def confirmation_utility(report: Any) -> tuple[float, float]:
    """(CAS, clear accuracy) of the interest in a confirmation's report."""
    util = report["utility"]
    return float(util["cas"]["value"]), float(util["interest"]["clear"])


def _drop_seeds(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: (None if k == "seed" else _drop_seeds(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_drop_seeds(v) for v in obj]
    return obj


def secret_free_report(report: Any) -> Any:
    """The report with every evaluation seed blanked (they derive from the user's seed)."""

    def blank(data: dict[str, Any]) -> None:
        data.update(_drop_seeds(data))
        ev = data.get("params", {}).get("evaluation", {})
        ev["seed_note"] = ("the evaluation seeds of a certified release derive from its "
                           "search seed and are not written")

    return report.amended(blank)


def confirmation_seed(seed: int) -> int:
    """The evaluation seed of the confirmation run (derived from the search's seed)."""
    return derive_seed(seed, "confirmation") % (2**31)


def judge_on_fresh_split(table: FeatureTable, anonymizer: Any, interest: str, sensitive: str,
                         additional: Mapping[str, float] | None, search_seed: int,
                         **evaluation_kwargs: Any) -> Evaluation:
    """The confirmation: ``anonymizer`` judged on a fresh split with a fresh evaluation seed
    (derived one way from the search's), so choosing among many noisy evaluations does not
    flatter the winner. The one engine behind :func:`search`'s confirmation and
    :func:`confirm` (a sweep's)."""
    return Evaluation(table, interest, sensitive, additional, anonymizer,
                      random_state=confirmation_seed(search_seed),
                      **evaluation_kwargs).evaluate()


def confirm(table: FeatureTable, anonymizer: Any, interest: str, sensitive: str,
            additional: Mapping[str, float] | None = None,
            target_advantage: float = DEFAULT_TARGET, random_state: int = 0,
            **evaluation_kwargs: Any) -> dict[str, Any]:
    """Re-evaluate ``anonymizer`` on a fresh split and seed; return its verdict as a dict.

    ``evaluation_kwargs`` go to :class:`~bioanon.evaluation.Evaluation` (models, attackers,
    group, ...). The returned dict holds the verdict block plus ``seed`` (the confirmation's
    evaluation seed; an evaluation seed, not a release key).
    """
    kwargs = {k: v for k, v in evaluation_kwargs.items() if k not in ("cache", "progress")}
    anon = clone(anonymizer)
    if "random_state" in anon.get_params(deep=False):
        anon.set_params(random_state=None)  # the evaluation derives a fresh one from its seed
    ev = judge_on_fresh_split(table, anon, interest, sensitive, additional, random_state,
                              target_advantage=target_advantage, **kwargs)
    v = verdict(ev, target_advantage)
    return {**v.to_dict(), "seed": confirmation_seed(random_state)}


def weights(roles: Any) -> dict[str, float]:
    """The additional attributes' weights alpha (1.0 each when ``roles`` lists names only)."""
    add = roles.additional
    if isinstance(add, Mapping):
        return {str(k): float(v) for k, v in add.items()}
    return {str(c): 1.0 for c in add}


def judge_options(options: EvaluationOptions | None, target: float | None,
                  values: Mapping[str, Any]) -> EvaluationOptions:
    """The adapters' evaluation options: ``options`` with ``values`` (fields of
    :class:`~bioanon.evaluation.options.EvaluationOptions`) and ``target``, the adapters'
    short name for ``target_advantage``, applied."""
    opts = EvaluationOptions.of(options, **values)
    return opts if target is None else replace(opts, target_advantage=float(target))


def run_search(table: FeatureTable, roles: Any, *, options: EvaluationOptions | None = None,
               **search_args: Any) -> SearchResult:
    """Run the search for ``roles`` (the released labels are the roles' released ones);
    ``search_args`` are :func:`search`'s own keywords and evaluation options."""
    if not roles.interest:
        raise BioanonError("a certified release needs the attribute of interest; pass "
                           "interest=COL", parameter="interest")
    add = weights(roles)
    opts = EvaluationOptions.of(options, released_labels=[roles.interest, *add, *roles.quasi,
                                                          *roles.keep])
    return search(table, roles.interest, roles.sensitive, add, options=opts, **search_args)



__all__ = ["CHOICE_RULE", "Candidate", "Clock", "Judge", "SearchResult", "SearchSpace",
           "build_candidate", "candidates", "check_judgeable", "check_min_utility",
           "check_search_args", "closeness", "confirm", "confirmation_seed",
           "exhaustive_search", "floor_met", "fresh_report", "judge_levels", "judge_on_fresh_split",
           "judge_anonymizer", "judge_options", "judge_setting", "keep_setting",
           "one_thread", "panel_row", "panel_setting", "picklable", "resume_setting",
           "row_line", "run_search", "search", "secret_free_report", "stage1",
           "staged_search", "stage1_row", "weights", "workers"]
