"""What a search returns: the rows, the choice, its confirmation and the certificate."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...metrics.intervals import rate_words
from ...metrics.results import PASSING
from ..tradeoff import public as public_table
from .candidates import Candidate
from .rows import CHOICE_RULE, FLOOR_RULE, closeness, confirmation_utility, floor_met, risk_text


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
    #: which consumers ranked the settings on the tuning split and what decided it
    #: (:func:`.ranking.ranking_options`: the clear records' cross-validated accuracies of the
    #: forest and the linear consumers); None: ``consumer_panel`` chose without a check
    ranking: dict[str, Any] | None = None

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

    def let_go(self) -> None:
        """Drop the rows' in-process evaluations — by the full panel (``_ev``) and by stage 1
        (``_stage1``, which the trade-off's panels and the closest setting's report resume) —
        once the search has made its reports."""
        for r in self.rows:
            r.pop("_ev", None)
            r.pop("_stage1", None)

    def rule(self) -> str:
        """The choice rule, with the utility floor when one is set."""
        if self.min_utility is None:
            return CHOICE_RULE
        return CHOICE_RULE + FLOOR_RULE.format(floor=self.min_utility)

    def utility_shortfall(self, row: Mapping[str, Any]) -> str:
        """Why ``row`` is not useful, in words (chance, or the floor)."""
        if not math.isfinite(float(row["cas"])):
            return ("utility: not measured (stage 1's screen decided the setting on record "
                    "membership, so no model was trained on its release)")
        gate = row.get("consumer_gate") or {}
        if gate.get("passed") is False:  # the whole panel's pick, not the row's ranking CAS
            return (f"utility: the consumer's whole panel on the tuning split picks "
                    f"{gate['pick']}, CAS {gate['cas']:.3f}, below the floor "
                    f"{self.min_utility:g} × clear {gate['clear']:.3f} = {gate['floor']:.3f}")
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
            why = risk_text({"risks": failed}) if failed or v["met"] is False else ""
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
            return best, risk_text(best)
        if private:
            best = max(private, key=lambda r: r["cas"])
            return best, self.utility_shortfall(best)
        best = min(self.rows, key=closeness)
        return best, f"{risk_text(best)}; and {self.utility_shortfall(best)}"

    def failure_line(self) -> str:
        """One line: no certified setting, which came closest, which risk fell short (first,
        when the time budget cut the search short, that and the settings it left)."""
        row, why = self.closest()
        cut = self.cut_short()
        if cut is not None:
            if row is None:
                return cut
            return (f"{cut}; of the settings judged, the closest: {row['setting']} "
                    f"({_utility_words(row)}) fell short on {why}")
        if row is None:
            return f"no certified setting: {why}"
        return (f"no setting meets every target; closest: {row['setting']} "
                f"({_utility_words(row)}); fell short on {why}")

    def tradeoff_table(self) -> list[dict[str, Any]]:
        """The trade-off table from the rows as they stand (:func:`.tradeoff.level_rows`)."""
        from ..tradeoff import level_rows

        return level_rows(self.rows, self.level, self.target_advantage, self.accept_risks,
                          self.guarantee, self.min_utility)

    def refusal_line(self) -> str:
        """The refusal in one line: :meth:`failure_line`, then the trade-off
        (:func:`.tradeoff.tradeoff_line`): the best CAS that met every target, the level at
        which a more useful release meets every target, how far the most useful setting
        fell short and on which risk."""
        from ..tradeoff import tradeoff_line

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
        from ...levels import resolve_level

        return {"target_advantage": self.target_advantage,
                "level": resolve_level(self.level).to_dict(),
                "accepted_risks": dict(self.accept_risks), "rule": self.rule(),
                "min_utility": self.min_utility,
                "tradeoff": public_table(self.tradeoff),
                "rows": rows, "chosen": self.chosen, "certified": self.certified,
                "confirmation": conf, "skipped": self.skipped,
                "not_evaluated": self.not_evaluated, "wall_s": round(self.wall_s, 1),
                "plan": self.plan.to_dict() if self.plan is not None else None,
                "budget_minutes": self.budget_minutes, "judged": dict(self.judged),
                "ranking": self.ranking}


def _utility_words(row: Mapping[str, Any]) -> str:
    """A row's CAS and clear accuracy with their 95% intervals, as a refusal says them.

    >>> _utility_words({"cas": 0.872, "cas_ci": [0.85, 0.89], "clear": 0.953})
    'CAS 0.872 [0.850, 0.890], clear 0.953'
    """
    return (f"CAS {rate_words(row['cas'], row.get('cas_ci'))}, "
            f"clear {rate_words(row['clear'], row.get('clear_ci'))}")
