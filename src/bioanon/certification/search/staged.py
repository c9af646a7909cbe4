"""The staged driver: stage 1 on every setting (in worker processes), stage 2 on survivors."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ...attack import ModelCache
from ...errors import BioanonError
from ...evaluation import Evaluation
from ..tradeoff import stage1_only
from .candidates import Candidate
from .confirmation import confirm_chosen, confirm_setting
from .judging import (
    Clock,
    Judge,
    judge_anonymizer,
    judge_setting,
    panel_row,
    resume_setting,
    skip_setting,
    stage1_row,
)
from .result import SearchResult
from .rows import BUDGET_LEFT, FLOORED, NOT_JUDGED, STAGE1


def judge_levels(judge: Judge, result: SearchResult, panels: int,
                 say: Callable[[str], None]) -> None:
    """Fill ``result.tradeoff`` (:mod:`.tradeoff`), first judging with the recognition panel
    up to ``panels`` settings behind rows of the table that stage 1 alone judged (the chosen
    level's first, then the others by decreasing CAS, those below the utility floor
    last; a setting whose panel cannot run is not tried again). A panel that finds a setting
    failing recognition moves the level's row to the next setting, which may take the next
    panel. The choice is made before: it, its
    confirmation and the chosen level's verdict do not change (a row judged here is the
    exhaustive search's row). Nothing is judged when the search was cut short.

    A row stage 1 judged holds its stage-1 evaluation (``_stage1``, in process only): its
    panel resumes it (:func:`resume_setting`: the same figures as a fresh full evaluation,
    to the bit) instead of anonymizing and scoring utility and the cheap risks again; the
    closest setting's report resumes it too, and :meth:`SearchResult.let_go` lets the
    evaluations go after it."""
    _judge_levels(judge, result, panels, say)


def _judge_levels(judge: Judge, result: SearchResult, panels: int,
                  say: Callable[[str], None]) -> None:
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
        if panel_setting(judge, result, j, c, None, r.pop("_stage1", None)):
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
        confirm_chosen(result, judge, lambda text: progress(len(cands), total, text))
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
    evals: list[Evaluation | None] = []  # every stage-1 evaluation the panel could resume
    held = 0  # bytes of stage-1 state kept in this process
    token = uuid.uuid4().hex  # the workers' cache of clear-trained models, for this search
    outcomes = stage1(judge, cands, progress, total[0], token)
    for c, outcome in zip(cands, outcomes, strict=True):
        if isinstance(outcome, BioanonError):
            skip_setting(result, c, outcome)
            continue
        row = stage1_row(judge, c, outcome)
        result.rows.append(row)
        judged.append(c)
        kept.append(outcome if row["passed_stage1"] else None)
        decided = getattr(outcome, "screened_", None) or getattr(outcome, "floored_", None)
        evals.append(None if decided else outcome)  # a decided one cannot be resumed
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
    held_at = _HeldAt(progress, total[0] - 1)
    for j, again in unfloor(judge, result, judged, held_at, token).items():
        evals[j] = again
    # the trade-off's panels (judge_levels) resume what stage 1 computed for a row
    for j, ev in enumerate(evals):
        if (ev is not None and result.rows[j].get("judged_by") == STAGE1
                and getattr(ev, "recognition_run_", True) is False):
            result.rows[j]["_stage1"] = ev
    return total[0]


def unfloor(judge: Judge, result: SearchResult, judged: Sequence[Candidate], progress: Any,
            token: str | None = None) -> dict[int, Evaluation]:
    """Stage 1 once more, without the utility floor, for the settings it decided, where the
    refusal needs their figures: when no setting above the floor met the chosen level on
    the tuning split, its trade-off entry is the most useful setting under the floor that
    does (what the table allows: :func:`~..tradeoff.level_rows`).

    They are judged by decreasing CAS (each floored row measured its CAS; ties in the rows'
    order, the table's own rule), a worker's share at a time, until one meets the chosen
    level: it is that level's entry, and no setting after it could be. Those after it stay
    as the floor decided them (also those a batch judged beside it, so that the rows are
    the same whatever the number of workers), and the table says of any other level's entry
    that a setting left under the floor could still change it
    (``floored_unjudged``). The rows judged become the rows an undecided stage 1 gives, to
    the bit (the same seed, split and attackers); a search that found a setting above the
    floor, or whose floor decided nothing, runs nothing here. ``token``: stage 1's (its
    worker processes keep the clear-trained models they fitted then). Returns the new
    stage-1 evaluations by row."""
    rows = result.rows
    floored = [j for j, r in enumerate(rows) if r.get("judged_by") == FLOORED]
    if not floored or _chosen_found(result):
        return {}
    order = sorted(floored, key=lambda j: -float(rows[j]["cas"]))  # stable: rows' order
    progress(0, None, f"stage 1 again: the {len(order)} setting(s) the utility floor decided, "
                      "most useful first, judged on privacy for the trade-off until one "
                      "meets the chosen level")
    share = unfloor_share(judge.options.n_jobs, len(order))
    out: dict[int, Evaluation] = {}
    for k in range(0, len(order), share):
        batch = order[k:k + share]
        outcomes = stage1(replace(judge, min_utility=None), [judged[j] for j in batch],
                          progress, 0, token)
        for j, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BioanonError):  # it ran once: it runs again
                continue
            rows[j] = stage1_row(judge, judged[j], outcome)
            _hold_state(outcome, False, 0)  # nothing of it goes to stage 2
            out[j] = outcome
            if _chosen_found(result):
                return out
    return out


def unfloor_share(n_jobs: int | None, n_settings: int) -> int:
    """How many floored settings :func:`unfloor` judges at once: one per stage-1 worker
    (the rows it keeps do not depend on it)."""
    return workers(n_jobs, n_settings)


def _chosen_found(result: SearchResult) -> bool:
    """Whether the chosen level's trade-off entry names a setting."""
    return any(e["chosen"] and e["setting"] is not None for e in result.tradeoff_table())


class _HeldAt:
    """A search's progress held at one step: a later pass of stage 1 says its lines without
    moving the count back."""

    def __init__(self, progress: Any, step: int) -> None:
        self.progress, self.step = progress, step

    def __call__(self, done: int, total: int | None, text: str) -> None:
        self.progress(self.step, getattr(self.progress, "total", None) or total, text)

    def nested(self, label: str) -> Any:
        return self.progress.nested(label)

    @property
    def stage(self) -> str | None:
        return getattr(self.progress, "stage", None)


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


def stage1(judge: Judge, cands: Sequence[Candidate], progress: Any, total: int,
           token: str | None = None) -> list[Evaluation | BioanonError]:
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
                                lambda i, text: progress(i, total, text), token)
    out: list[Evaluation | BioanonError] = []
    for i, (c, anon) in enumerate(zip(cands, anonymizers, strict=True)):
        progress(i, total, f"stage 1: {c.label()} ({i + 1}/{len(cands)})")
        try:
            out.append(judge_anonymizer(judge, anon, False, progress))
        except BioanonError as exc:
            out.append(exc)
    return out


def _stage1_parallel(judge: Judge, cands: Sequence[Candidate], anonymizers: list[Any],
                     n: int, say: Callable[[int, str], None], token: str | None = None
                     ) -> list[Evaluation | BioanonError]:
    """:func:`stage1` in ``n`` worker processes (``token``: the search's, whose workers
    keep their clear-trained models between its passes; None: a new one)."""
    import warnings

    from sklearn.utils.parallel import Parallel, delayed  # passes sklearn's config on

    work = replace(judge, table=judge.tuning_table, tuning=None, judge_as=None, cache=None,
                   options=replace(judge.options, n_jobs=1))
    token = token or uuid.uuid4().hex  # the workers' cache of clear-trained models
    out: list[Evaluation | BioanonError | None] = [None] * len(cands)
    say(0, f"stage 1: {len(cands)} settings in {n} worker processes")
    tasks = (delayed(_stage1_task)(work, i, anonymizers[i], token)
             for i in dispatch_order(anonymizers))
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


def dispatch_order(anonymizers: Sequence[Any]) -> list[int]:
    """The order stage 1's workers take the settings in: the differentially private methods
    first (designed to sit near the targets, the screen seldom decides them: each takes
    every cheap attacker, several times a screened setting's time), then the others, each
    group in the candidates' order, so that the quick settings fill the workers' last
    seconds instead of one long setting keeping a worker busy while the other waits
    (FSDD's stage 1, per-setting times measured one after the other: 25.3 s on 2 workers in
    the candidates' order, 22.7 s in this one, 22.7 s the best split). The figures do not
    depend on it: each setting's evaluation is its own, returned by its index.

    >>> from types import SimpleNamespace as A
    >>> dispatch_order([A(), A(dp="gdp"), A(), A(dp="zcdp")])
    [1, 3, 0, 2]
    """
    return sorted(range(len(anonymizers)),
                  key=lambda i: getattr(anonymizers[i], "dp", None) is None)


#: each worker process's cache of clear-trained models: (the search's token, the cache)
_WORKER_CACHE: dict[str, Any] = {}
#: how much a stage-1 worker's memory may grow past its size after its first setting before
#: loky replaces it (:func:`keep_this_worker`; loky's own bound is 300 MB)
WORKER_MEMORY_GROWTH = 1 << 36


def keep_this_worker() -> None:
    """Let this loky worker process keep its caches for the whole search.

    Where psutil is installed (it comes with dask), loky replaces a worker whose memory grew
    by more than 300 MB since its first task, as a leak. A stage-1 worker grows by design:
    it keeps the clear-trained models, the density ratio's reference side and the peer
    similarities of its split (:data:`_WORKER_CACHE`, :mod:`bioanon.attack.kept`, each
    bounded), and a replaced worker computes them all again (FSDD's stage 1: one worker of
    two replaced mid-search). The bound is raised to :data:`WORKER_MEMORY_GROWTH` in this
    process only; nothing changes where loky does not check.
    """
    try:
        from joblib.externals.loky import process_executor
    except ImportError:  # pragma: no cover - joblib vendors loky
        return
    if hasattr(process_executor, "_MAX_MEMORY_LEAK_SIZE"):
        process_executor._MAX_MEMORY_LEAK_SIZE = WORKER_MEMORY_GROWTH


def _stage1_task(judge: Judge, i: int, anonymizer: Any, token: str
                 ) -> tuple[int, Evaluation | str, list[tuple[type[Warning], str]]]:
    """One setting's stage 1 in a worker process: (its index, its evaluation or the error
    message that stopped it, the warnings it raised)."""
    import warnings

    keep_this_worker()
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


def _stage2(result: SearchResult, judge: Judge, panel: Callable[[int, int, int], bool],
            clock: Clock, say: Callable[[str], None]) -> None:
    """The search's second stage: the settings that passed stage 1 judged by the panel in
    decreasing CAS (ties in the candidates' order), a group of equal CAS at a time, until a
    group holds a setting that meets every target and whose confirmation runs.

    Within the group the order of :func:`confirm_chosen` applies (lowest upper bound of the
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
            if confirm_setting(result, j, judge, say):
                for rest in order[k:]:
                    rows[rest]["not_judged"] = NOT_JUDGED
                return


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
