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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...attack import ModelCache
from ...errors import BioanonError
from ...evaluation.options import EvaluationOptions, additional_weights
from ...evaluation.protocol import judged_sample
from ...evaluation.seeds import derive_seed
from ...progress import stages
from ...table import FeatureTable
from ..judge_seed import judged_inputs, judged_statement, root_seed
from ..settings import check_min_utility, check_search_args
from .candidates import Candidate, SearchSpace, build_candidate, candidates, checked_candidates
from .confirmation import closest_report, confirm
from .judging import (
    Clock,
    Judge,
    confirmation_seed,
    fresh_report,
    judge_anonymizer,
    judge_on_fresh_split,
    judge_setting,
    keep_setting,
    one_thread,
    panel_row,
    resume_setting,
    screen_bound,
    secret_free_report,
    stage1_row,
)
from .ranking import ranking_options
from .result import SearchResult
from .rows import (
    BUDGET_LEFT,
    CHOICE_RULE,
    FLOOR_RULE,
    FULL_PANEL,
    NOT_JUDGED,
    SCREENED,
    STAGE1,
    Progress,
    closeness,
    confirmation_utility,
    floor_met,
    row_line,
)
from .staged import (
    exhaustive_search,
    judge_levels,
    nothing_judged,
    panel_setting,
    picklable,
    stage1,
    staged_search,
    workers,
)


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
    cands, skipped = checked_candidates(space, table, methods, interest, sensitive, add)
    from ...evaluation.risks import check_accepted

    # the level resolved (None, 'standard' and Level(standard) are one level: one judge)
    opts = replace(opts, selection=None, membership=True, verification=False,
                   accept_risks=check_accepted(opts.accept_risks), level=opts.level_)
    checked = check_judgeable(table, interest, sensitive, add, opts)
    inputs = judged_inputs(table, {
        "interest": interest, "sensitive": sensitive, "additional": add,
        "settings": [c.label() for c in cands], "options": opts, "min_utility": floor,
        "tradeoff_panels": tradeoff_panels})
    seed = derive_seed(root_seed(inputs) if random_state is None else int(random_state),
                       "search/tuning split") % (2**31)
    judge = make_judge(table, interest, sensitive, add, opts, checked, seed, space, floor,
                       exhaustive)
    result = SearchResult([], float(opts.target_advantage), skipped=skipped,
                          budget_minutes=budget_minutes, level=checked.level,
                          accept_risks=dict(checked.accept_risks), interest=interest,
                          min_utility=floor, guarantee=opts.guarantee)
    result.judged = judged_statement(inputs, random_state)
    result.ranking = judge.ranking
    clock = Clock(budget_minutes)
    progress = stages(progress, "searching", "bioanon.search")
    steps = exhaustive_search if exhaustive else staged_search
    total = steps(judge, result, cands, clock, progress)
    judge_levels(judge, result, 0 if exhaustive else int(tradeoff_panels),
                 lambda text: progress(total - 1, total, text))
    closest_report(result, judge, lambda text: progress(total - 1, total, text), report_closest)
    result.wall_s = clock.elapsed()
    progress(total, total, "done")
    return result


def make_judge(table: FeatureTable, interest: str, sensitive: str, add: dict[str, float],
               opts: EvaluationOptions, checked: Any, seed: int, space: SearchSpace,
               floor: float | None, exhaustive: bool) -> Judge:
    """The search's :class:`Judge`: its tuning records (the panel sample of a large table),
    which consumers rank the settings there (:func:`.ranking.ranking_options`, checked once
    on clear records) and stage 1's screen."""
    tuning = judged_sample(table, interest, sensitive, opts, seed)[0]
    tuning_opts, ranking = ranking_options(table if tuning is None else tuning, interest, opts,
                                           seed)
    return Judge(table, interest, sensitive, add, opts, checked, seed, space.judge_as, floor,
                 ModelCache(), tuning,
                 screen_bound(opts, checked) if space.screen and not exhaustive else None,
                 tuning_opts, ranking)


def check_judgeable(table: FeatureTable, interest: str, sensitive: str,
                    additional: Mapping[str, float] | None, opts: EvaluationOptions) -> Any:
    """Refuse, before any setting is judged, a table and options every setting would fail
    on: the judge's own check (:func:`~bioanon.evaluation.protocol.check_judge`, run once
    here and handed to every evaluation) and its split (records per identity, groups per
    class) depend on them alone, so a failure there is the input's, not a setting's.
    Returns the judge's check."""
    from ...evaluation.protocol import check_judge
    from ...evaluation.split import judged_split

    checked = check_judge(table, interest, sensitive, additional, opts)
    try:
        judged_split(table, interest, sensitive, opts.test_size, 0, opts.group)
    except BioanonError as exc:
        raise BioanonError(f"no setting can be judged on this table: {exc}",
                           parameter=exc.parameter) from None
    return checked


def weights(roles: Any) -> dict[str, float]:
    """The additional attributes' weights alpha (1.0 each when ``roles`` lists names only)."""
    return additional_weights(roles.additional)


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


__all__ = ["BUDGET_LEFT", "build_candidate", "Candidate", "candidates", "check_judgeable",
           "check_min_utility", "check_search_args", "CHOICE_RULE", "Clock",
           "closeness", "confirm", "confirmation_seed", "confirmation_utility",
           "exhaustive_search", "floor_met", "FLOOR_RULE", "fresh_report", "FULL_PANEL",
           "Judge", "judge_anonymizer", "judge_levels", "judge_on_fresh_split",
           "judge_options", "judge_setting", "keep_setting", "NOT_JUDGED",
           "nothing_judged", "one_thread", "panel_row", "panel_setting", "picklable",
           "resume_setting", "row_line", "run_search", "SCREENED", "screen_bound", "search",
           "SearchResult",
           "SearchSpace", "secret_free_report", "stage1", "STAGE1", "stage1_row",
           "staged_search", "weights", "workers"]
