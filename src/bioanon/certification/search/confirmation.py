"""The confirmation: the chosen setting judged again on a fresh split and seed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from sklearn.base import clone

from ...errors import BioanonError
from ...evaluation.verdict import (
    DEFAULT_TARGET,
    verdict,
)
from ...table import FeatureTable
from .candidates import Candidate
from .judging import (
    Judge,
    confirmation_seed,
    fresh_report,
    judge_on_fresh_split,
    one_thread,
    resume_setting,
    tuning_report,
)
from .result import SearchResult
from .rows import floor_met


def confirm_setting(result: SearchResult, j: int, judge: Judge,
                 say: Callable[[str], None]) -> bool:
    """Confirm row ``j`` on the fresh split; False when the confirmation cannot even run,
    or when the consumer's whole panel on the tuning split already puts the row under the
    utility floor (:func:`consumer_gate`: the row then fails utility, and the search goes on
    to the next setting)."""
    if not consumer_gate(result.rows[j], judge, say):
        return False
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


def consumer_gate(row: dict[str, Any], judge: Judge, say: Callable[[str], None]) -> bool:
    """Whether row ``row`` keeps its utility when the consumer's **whole** panel judges it on
    the tuning split, as the confirmation will judge it on the fresh one.

    A search ranks its settings by a cheaper panel (:mod:`.ranking`: the linear consumers'
    pick, or theirs and the forest's), and the confirmation makes the headline CAS with the
    whole panel: the first model whose cross-validated accuracy on the release reaches the
    best one's. On a release whose classes every model tells apart (one Gaussian per class),
    that is the forest, which can learn the release's own form and keep far less on clear
    records than the linear consumers do (FSDD's owner half, 750 records, seed 0:
    ``dp-cells(cells=0, mu=4)`` ranked at 0.95 × clear, the confirmation's pick, the forest,
    read 0.75 ×, under the floor: the run refused, and a confirmation that fails is final).
    So before a setting is confirmed, the whole panel's pick is made on its tuning release
    (:meth:`~bioanon.evaluation.Evaluation.consumer_pick`: the same split, release, seed and
    rule as the confirmation's panel, the release side alone) and scored on the tuning
    split's clear held-out records; a setting whose pick there falls under the floor of the
    row's own clear figure, or to chance, fails utility on the tuning split — its row says
    so — and the next setting is tried. The gate reads the tuning split only: no figure of
    the fresh split is looked at before the one confirmation. Nothing runs where the tuning
    split already ranks by the whole panel, or no floor is set, or the row's evaluation was
    let go."""
    ev = row.get("_ev")
    options = judge.options
    if (ev is None or not judge.min_utility or not options.runs_consumer_panel()
            or judge.for_tuning.consumer_models() == options.consumer_models()
            or ev.interest in (getattr(ev, "person_level_", None) or [])):
        return True
    say(f"judging {row['setting']} by the consumer's whole panel on the tuning split")
    ev.table, ev.cache = judge.tuning_table, judge.cache
    with one_thread():
        got = ev.consumer_pick(options)
    cas, ci, clear = got["cas"]["value"], got["cas"]["ci"], float(row["clear"])
    passed = bool(ci[0] > float(row["interest_chance"])
                  and floor_met(cas, clear, judge.min_utility))
    row["consumer_gate"] = {"cas": cas, "cas_ci": list(ci), "clear": clear,
                            "pick": got["pick"], "floor": float(judge.min_utility) * clear,
                            "passed": passed, "fitted": list(got["fitted"])}
    if not passed:
        row["met"] = row["met_utility"] = False
    return passed


def confirm_chosen(result: SearchResult, judge: Judge, say: Callable[[str], None]) -> None:
    """Confirm the most useful setting that met every target on the fresh split.

    The order: highest CAS, then the lowest upper bound of the recognition advantage, then
    the candidates' order. One that cannot even run there (e.g. a class too small for g)
    gives way to the next. A setting whose confirmation runs and fails is final: trying
    others until one passes would bring the winner's curse back.
    """
    ok = [j for j, r in enumerate(result.rows) if r["met"]]
    for j in sorted(ok, key=lambda j: (result.rows[j]["cas"],
                                       -result.rows[j]["advantage_ci"][1]), reverse=True):
        if confirm_setting(result, j, judge, say):
            break


def closest_report(result: SearchResult, judge: Judge, say: Callable[[str], None],
                   wanted: bool = True) -> None:
    """The report of the setting that came closest, to show what fell short (when
    ``wanted`` and nothing was chosen): the setting judged on the tuning split as the search
    judged it (:func:`tuning_report`: the same split, seeds and figures as its row, which
    decided the refusal, with the recognition panel and the consumer's panel), so the
    report's risks are the figures that decided. The rows' evaluations are let go after."""
    try:
        if wanted and result.confirmation is None and result.rows:
            _closest_report(result, judge, say)
    finally:
        result.let_go()


def _closest_report(result: SearchResult, judge: Judge, say: Callable[[str], None]) -> None:
    near, _ = result.closest()
    if near is None:
        return
    c = Candidate(near["method"], dict(near["_params"]), dict(near.get("_hidden", {})))
    say(f"reporting the closest setting {c.label()}")
    with contextlib.suppress(BioanonError):
        kept = near.get("_ev")
        if kept is None and near.get("_stage1") is not None:
            # a row stage 1 alone judged: the recognition panel on its stage-1 evaluation
            # (the same figures as a fresh evaluation, to the bit), not a whole one again
            kept = resume_setting(judge, near["_stage1"], None)
        result.closest_report = tuning_report(judge, c, kept)


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


