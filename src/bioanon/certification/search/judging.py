"""The judge of a search: one setting evaluated on the tuning split, or on a fresh one."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ...errors import BioanonError
from ...evaluation import Evaluation
from ...evaluation.options import EvaluationOptions
from ...evaluation.seeds import derive_seed
from ...report.build import build_report
from ...table import FeatureTable
from .candidates import Candidate, build_candidate
from .result import SearchResult
from .rows import FULL_PANEL, cheap_row, setting_row


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
    #: stage 1's screen (:func:`screen_bound`): a setting whose cheap membership attackers
    #: put the record-level advantage's lower 95% bound above it is decided there; None:
    #: every attacker judges every setting
    screen: float | None = None
    #: the options the tuning split runs (:func:`.ranking.ranking_options`: which consumers
    #: rank the settings); None: ``options.for_tuning()``
    tuning_options: EvaluationOptions | None = field(default=None, compare=False)
    #: what the check behind ``tuning_options`` measured (None: no check ran)
    ranking: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def for_tuning(self) -> EvaluationOptions:
        """The evaluation options every setting is judged with on the tuning split (with
        ``options``' ``n_jobs``: a worker process's judge runs one job)."""
        if self.tuning_options is None:
            return self.options.for_tuning()
        return replace(self.tuning_options, n_jobs=self.options.n_jobs)

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
                              options=judge.for_tuning,
                              checked=judge.checked).evaluate(
                                  recognition=recognition,
                                  screen=None if recognition else judge.screen,
                                  floor=(None if recognition or judge.screen is None
                                         else judge.min_utility or None))
    except MemoryError:
        raise BioanonError(f"out of memory on {judge.tuning_table.n_features} features (a "
                           "model of features × features numbers does not fit); reduce the "
                           "features first (e.g. PCA) to release with it") from None


def screen_bound(options: EvaluationOptions, checked: Any) -> float | None:
    """Stage 1's screen: the largest record-level membership target the search and its
    trade-off read (the chosen level's and those of :data:`~..tradeoff.TABLE_LEVELS`; the
    group level's when the split keeps groups whole), so a setting it decides fails at every
    level the search reports, whatever the other attackers show
    (:data:`~bioanon.evaluation.risks.base.SCREEN_RULE`). None (no screen) when that level's
    membership is accepted by name or a declared guarantee covers risks.

    Examples
    --------
    >>> from bioanon.levels import resolve_level
    >>> class Checked: level, accept_risks = resolve_level("standard"), {}
    >>> screen_bound(EvaluationOptions.of(), Checked())
    0.14
    """
    from ...evaluation.risks.base import target_at
    from ..tradeoff import TABLE_LEVELS

    level = "record" if options.group is None else "group"
    if options.guarantee is not None or f"{level}-membership" in dict(checked.accept_risks
                                                                       or {}):
        return None
    return max(target_at(lv, level) for lv in (*TABLE_LEVELS, checked.level))


def resume_setting(judge: Judge, ev: Evaluation, progress: Any) -> Evaluation:
    """Stage 2 of a setting: the recognition panel on what its stage 1 kept
    (:meth:`~bioanon.evaluation.Evaluation.resume`; an evaluation that came from a worker
    process gets the table, the cache and the options' ``n_jobs`` of this one back)."""
    ev.table = judge.tuning_table
    ev.cache, ev.options = judge.cache, judge.for_tuning
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
    row = setting_row(c, ev, judge.options.target_advantage, min_utility=judge.min_utility,
               **judge.targets)
    row["judged_by"] = FULL_PANEL
    row["_ev"] = ev  # in process only: the closest setting's report reads it (tuning_report)
    return keep_setting(row, c)


def stage1_row(judge: Judge, c: Candidate, ev: Evaluation) -> dict[str, Any]:
    """The row of a setting judged at stage 1 (utility and the cheap risks)."""
    return keep_setting(cheap_row(c, ev, judge.options.target_advantage,
                                   min_utility=judge.min_utility, **judge.targets), c)


def fresh_report(judge: Judge, c: Candidate, as_judged: bool = True) -> Any:
    """``c`` judged on the fresh split (the confirmation's), as a secret-free report."""
    with one_thread():
        ev = judge_on_fresh_split(judge.table, judge.anonymizer(c, as_judged), judge.interest,
                                  judge.sensitive, judge.additional, judge.seed,
                                  options=judge.options, checked=judge.checked)
    return secret_free_report(build_report(ev))


def tuning_report(judge: Judge, c: Candidate, kept: Evaluation | None = None) -> Any:
    """``c`` judged on the tuning split as the search judged it (the same split, seeds,
    anonymization and options: every figure is its row's, the CAS too — the consumers that
    ranked the settings, :attr:`Judge.for_tuning`, not the whole panel, which judges only a
    confirmation), with the recognition panel, as a secret-free report: the closest setting's
    report of a refusal the tuning split decided. ``kept``: the row's evaluation by the full
    panel, when the search kept it (its consumers are then the ones the row shows:
    :meth:`~bioanon.evaluation.Evaluation.with_consumer_panel` adds nothing)."""
    options = judge.for_tuning
    with one_thread():
        if kept is not None and getattr(kept, "recognition_run_", False):
            kept.table, kept.cache = judge.tuning_table, judge.cache
            ev = kept.with_consumer_panel(options)
        else:
            ev = Evaluation(judge.tuning_table, judge.interest, judge.sensitive,
                            judge.additional, judge.anonymizer(c), random_state=judge.seed,
                            cache=judge.cache, options=options,
                            checked=judge.checked).evaluate()
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
