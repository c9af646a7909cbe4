"""What every risk evaluator shares: the context of one evaluation and the judgement rule.

A risk evaluator (Anonymeter's shape) is built from a :class:`RiskContext` and a target,
``evaluate()`` returns it, and ``results()`` gives its typed
:class:`~bioanon.metrics.results.RiskResult` (one per level it measures). A level that cannot
be measured at this size is returned as "inconclusive at this size", with the reason in
words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...errors import BioanonError
from ...levels import MIN_IDENTITIES, identity_rule
from ...metrics.results import COVERED, INCONCLUSIVE, RiskResult
from ...metrics.risk_stats import judge
from ...table import FeatureTable
from ..caps import capped_rows
from ..seeds import derive_seed, reseeded

#: identity-level releases: the held-out identities are split into this many folds and each
#: release leaves one fold out, so every identity is a non-member once and a member otherwise
IDENTITY_FOLDS = 3
#: record-level games pooled for the membership and inference figures: the release of the
#: held-out split against the training split (the evaluation's own), and releases of disjoint
#: parts of the training split, each as large as the held-out split, against the rest (the
#: held-out split among them). With a quarter held out, four games make every record a
#: member once and a non-member three times: four times the members of one game, and the
#: spread between the games' releases (the release's own draw, which one game's interval
#: does not see) estimated on three degrees of freedom instead of one — with two games it
#: decided verdicts by the luck of one difference (:func:`record_game_counts`)
RECORD_GAMES = 4
#: the screen of a search's stage 1, in words (a setting it decides is never chosen: its
#: record-level membership advantage is above every target the search and its trade-off read)
SCREEN_RULE = ("screened at stage 1: the cheap membership attackers (tracing, density ratio, "
               "model-aware likelihood ratio) on the first {level}-level game already put the "
               "advantage's lower 95% bound above {bound:g}, the largest {level}-level target "
               "the search and its trade-off read; the other attackers, the other games, the "
               "identity level and inference were not run (the setting fails at every level "
               "whatever they show)")
#: the utility floor of a search's stage 1, in words: a setting the screen did not decide and
#: whose CAS then falls under the floor (or to chance) is decided there, as it fails utility
#: at every level whatever its risks read (the floor does not depend on the level)
FLOORED_REASON = "decided at stage 1 by the utility floor"
FLOOR_RULE = (FLOORED_REASON + ": the CAS {cas:.3f} [95% CI {lo:.3f}, "
              "{hi:.3f}] {why}; the attackers after the screen's first game, the identity "
              "level and inference were not run (the setting fails utility at every level "
              "whatever they show)")


def floor_met(cas: float, clear: float, min_utility: float | None) -> bool:
    """Whether a CAS reaches the utility floor, ``min_utility`` × the clear accuracy (True
    when no floor is set: None or 0).

    Examples
    --------
    >>> floor_met(0.90, 0.96, 0.95), floor_met(0.92, 0.96, 0.95), floor_met(0.3, 0.96, None)
    (False, True, True)
    """
    return min_utility is None or float(cas) >= float(min_utility) * float(clear)


def floor_decision(cas: float, cas_ci: tuple[float, float], clear: float, chance: float,
                   floor: float | None) -> str | None:
    """Why a stage-1 setting fails utility at every level (:data:`FLOOR_RULE`), or None: its
    CAS under ``floor`` × the clear accuracy, or its lower 95% bound not above chance — the
    rule a search's row applies (``met_utility``), read before the remaining attackers run.

    Examples
    --------
    >>> floor_decision(0.5, (0.45, 0.55), 0.9, 0.1, 0.8)[:58]
    'decided at stage 1 by the utility floor: the CAS 0.500 [95'
    >>> floor_decision(0.85, (0.8, 0.9), 0.9, 0.1, 0.8) is None
    True
    """
    if floor is None or not floor:
        return None
    lo, hi = float(cas_ci[0]), float(cas_ci[1])
    if not (np.isfinite(cas) and np.isfinite(clear)):
        return None
    if not floor_met(cas, clear, floor):
        why = (f"is under the floor {float(floor):g} × the clear accuracy {float(clear):.3f} "
               f"= {float(floor) * float(clear):.3f}")
    elif not lo > float(chance):
        why = f"does not rise above chance ({float(chance):.3f}) by its lower 95% bound"
    else:
        return None
    return FLOOR_RULE.format(cas=float(cas), lo=lo, hi=hi, why=why)


#: fewest identities for an identity-level figure at all: its interval comes from the spread
#: over identities (a bootstrap, paired differences), which is not to be trusted below this
#: (one constant with the plan: :data:`bioanon.levels.MIN_IDENTITIES`)
MIN_IDENTITY_LEVEL = MIN_IDENTITIES


@dataclass
class IdentityRelease:
    """A release of the held-out split without one fold of identities (the non-members).

    ``member`` marks, per training record (the attacker's clear sample), whether its identity
    is in this release; ``ids`` are those records' identities.
    """

    X: np.ndarray
    labels: Any
    member: np.ndarray
    ids: np.ndarray


@dataclass
class RecordGame:
    """One record-level game: ``ctx.test`` holds its members (``ctx.anon_test`` their
    release), ``ctx.train`` the attacker's reference and the non-member candidates; ``keys``
    name each row of ``ctx.train`` and ``ctx.test`` across the games (a record is one unit
    wherever it appears)."""

    ctx: RiskContext
    train_keys: np.ndarray
    test_keys: np.ndarray


def record_games_for(test_size: float) -> int:
    """How many record-level games a held-out share allows: the evaluation's own and one per
    disjoint part of the training split as large as the held-out split, at most
    :data:`RECORD_GAMES`.

    >>> record_games_for(0.25), record_games_for(0.3), record_games_for(0.6)
    (4, 3, 1)
    """
    if not 0 < test_size <= 0.5:
        return 1
    return int(min(RECORD_GAMES, 1 + math.floor((1.0 - test_size) / test_size + 1e-9)))


def record_game_counts(released: int, n_records: int, test_size: float
                       ) -> tuple[int, int]:
    """(member, non-member) records of the pooled record-level games: ``released`` members in
    each game, every record a non-member in one game at least.

    >>> record_game_counts(750, 3000, 0.25)
    (3000, 3000)
    """
    games = record_games_for(test_size)
    if games == 1:
        return released, n_records - released
    # the training split dealt into parts as large as the held-out split, the last taking
    # what is left: at most every record a member once
    return min(games * released, n_records), n_records


@dataclass
class RiskContext:
    """Everything an evaluator reads (in process only; the mixing secrets are not here)."""

    train: FeatureTable
    test: FeatureTable
    anon_test: np.ndarray
    anonymizer: Any
    interest: str
    sensitive: str
    label_columns: list[str]
    group: str | None
    seed: int
    #: the attack panel's guesses of the sensitive value per released record, by
    #: "mode / model" (in process only), the released records' true values, and the
    #: baselines (majority rate; the label-only control attacker's rate)
    predictions: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    truth: np.ndarray | None = field(default=None, repr=False)
    chance: float = float("nan")
    control: Any = None
    #: candidate records per side the membership and inference attackers score (None: all;
    #: :class:`~bioanon.evaluation.options.EvaluationOptions`' ``max_candidates``)
    max_candidates: int | None = None
    _identity: Any = field(default=None, repr=False)
    _games: Any = field(default=None, repr=False)
    #: what the membership and inference attackers keep between the games of one level
    #: (reference-side statistics and models, learnt shadow scores): in process only
    attack_cache: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the screen of a search's stage 1 (:data:`SCREEN_RULE`): a membership advantage whose
    #: cheap lower 95% bound lies above it decides the setting without the other attackers
    #: (None: no screen, every attacker runs); ``screened`` says why it was decided
    screen: float | None = None
    screened: str | None = None
    #: with a screen, called once right after it leaves the setting undecided: the CAS is
    #: measured then, and a reason (:func:`floor_decision`) decides the setting on utility
    #: without the other attackers; ``floored`` holds it (None: every attacker runs)
    after_screen: Callable[[], str | None] | None = field(default=None, repr=False)
    floored: str | None = None
    #: whether the release carries the sensitive column itself (a release made by anything
    #: else, or one kept with ``keep_sensitive``): the attackers may then read each released
    #: record's person off it (:mod:`bioanon.attack.released_person`). False for bioanon's own
    #: releases, whose label frame the judge holds but never releases
    released_sensitive: bool = False
    #: the release's label columns beside the roles that may link a person's released records
    #: to one another (a subject code, a session, a file id; ``bioanon audit`` names every
    #: column of a release it gives no role): the pooled attacker reads them
    #: (:mod:`bioanon.attack.pooled`). Empty for bioanon's own releases, which carry none
    linking: tuple[str, ...] = ()
    #: the released records the attack panel was scored on, in words, when a sample of them
    #: (:func:`~bioanon.attack.panel_sample.sample_words`; '' for all of them)
    panel_sample: str = ""
    #: says a line of progress within the risk being judged (its games, its folds) without
    #: counting a step; None: nothing is said
    say: Callable[[str], None] | None = field(default=None, repr=False)

    def step(self, risk: str, what: str, k: int, n: int) -> None:
        """Say that game or fold ``k`` (from 0) of ``n`` of ``risk`` begins, when more than
        one is played (a risk's figures take several seconds each on large tables: the line
        shows it has not stopped)."""
        if self.say is not None and n > 1:
            self.say(f"{risk}: {what} {k + 1} of {n}")

    @property
    def level(self) -> str:
        """The unit of the record-level figures: records, or whole groups when the split
        keeps groups apart."""
        return "record" if self.group is None else "group"

    def rng(self, purpose: str) -> np.random.Generator:
        """A generator derived from the evaluation seed for one purpose."""
        return np.random.default_rng(derive_seed(self.seed, purpose) % (2**31))

    def candidates(self) -> tuple[FeatureTable, FeatureTable, np.ndarray]:
        """The record-level candidates: members (released records' clear originals),
        non-members (held-out clear records) and each non-member's row in the training
        split (the attacker's reference population, never sampled).

        At most ``max_candidates`` per side, stratified by identity (by group when the split
        keeps groups whole); the same records for every attacker of the evaluation.
        """
        key = self.group or self.sensitive
        te = capped_rows(self.test.labels[key].to_numpy(), self.max_candidates, self.seed,
                         "candidates/members")
        tr = capped_rows(self.train.labels[key].to_numpy(), self.max_candidates, self.seed,
                         "candidates/non-members")
        members = self.test if te is None else self.test.subset(te)
        others = self.train if tr is None else self.train.subset(tr)
        return members, others, np.arange(self.train.n_records) if tr is None else tr

    def candidate_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``test`` (members) and ``train`` (non-members) :meth:`candidates`
        takes."""
        key = self.group or self.sensitive
        te = capped_rows(self.test.labels[key].to_numpy(), self.max_candidates, self.seed,
                         "candidates/members")
        tr = capped_rows(self.train.labels[key].to_numpy(), self.max_candidates, self.seed,
                         "candidates/non-members")
        return (np.arange(self.test.n_records) if te is None else te,
                np.arange(self.train.n_records) if tr is None else tr)

    def record_games(self) -> list[RecordGame]:
        """The record-level games (:data:`RECORD_GAMES`; cached): this evaluation's, and
        releases of disjoint parts of the training split, each of as many records as the
        held-out split (stratified by identity and interest), judged against the rest. One
        game only with a group split or a held-out share above one half; fewer games when
        the training split holds fewer such parts or the method cannot release one (said
        nowhere else: the figure then has less power than the plan's counts assume)."""
        if self._games is None:
            self._games = self._make_record_games()
        return self._games  # type: ignore[no-any-return]

    def _make_record_games(self) -> list[RecordGame]:
        train, test = self.train, self.test
        n_tr, n_te = train.n_records, test.n_records
        first = RecordGame(self, np.arange(n_tr), n_tr + np.arange(n_te))
        extra = min(RECORD_GAMES - 1, n_tr // max(n_te, 1))  # disjoint parts of the training
        if self.group is not None or extra < 1:             # split, each as large as the test
            return [first]
        from ..split import split_table

        games = [first]
        left = np.arange(n_tr)  # training rows not yet a member of any game
        for g in range(1, extra + 1):
            try:
                if left.size == 0:
                    break
                if left.size < 2 * n_te:  # the last part: what the earlier ones left
                    part, left_next = left, left[:0]
                else:
                    purpose = "record game" if g == 1 else f"record game split/{g}"
                    rest, part = split_table(train.subset(left), self.interest, self.sensitive,
                                             n_te / left.size,
                                             derive_seed(self.seed, purpose) % (2**31))
                    part, left_next = left[np.asarray(part)], left[np.asarray(rest)]
                members = train.subset(part)
                # each game's release its own draw: one seed would give every game of as
                # many records the same noise (one draw judged four times)
                rel = reseeded(self.anonymizer, f"record game/{g + 1}").fit_transform(
                    members, members.labels)
            except (BioanonError, ValueError):
                break
            X = np.asarray(rel.X if isinstance(rel, FeatureTable) else rel, dtype=np.float32)
            # the rest of the training split (the first extra game's order kept), then the
            # earlier games' members
            others = np.r_[left_next, *[gm.test_keys for gm in games[1:]]].astype(np.int64)
            reference = FeatureTable(np.vstack([train.X[others], test.X]),
                                     pd.concat([train.labels.iloc[others], test.labels],
                                               ignore_index=True),
                                     list(train.feature_names or []), dict(train.meta))
            ctx = replace(self, train=reference, test=members, anon_test=X,
                          seed=derive_seed(self.seed, f"record game/{g + 1}") % (2**31),
                          _identity="", _games=[], attack_cache={})
            games.append(RecordGame(ctx, np.r_[others, n_tr + np.arange(n_te)], part))
            left = left_next
        return games

    def identity_candidates(self) -> np.ndarray:
        """Rows of the training split the identity-level attackers hold as clear records
        (at most ``max_candidates``, stratified by identity: every identity kept)."""
        rows = capped_rows(self.train.labels[self.sensitive].to_numpy(), self.max_candidates,
                           self.seed, "candidates/identity")
        return np.arange(self.train.n_records) if rows is None else rows

    def g(self) -> int | None:
        """The anonymizer's set size g when it has one (the tracing attacker knows it)."""
        params = (self.anonymizer.get_params(deep=False)
                  if hasattr(self.anonymizer, "get_params") else {})
        g = params.get("g")
        return int(g) if isinstance(g, int | np.integer) and g > 1 else None

    def tops(self) -> list[int]:
        """How many best-matching released records the tracing attackers average."""
        g = self.g()
        return [1] if g is None else [1, g]

    def identity_releases(self) -> list[IdentityRelease] | str:
        """The identity-level releases (one per fold of identities left out), or why there
        are none (cached)."""
        if self._identity is None:
            self._identity = self._make_identity_releases()
        return self._identity  # type: ignore[no-any-return]

    def _make_identity_releases(self) -> list[IdentityRelease] | str:
        if self.group is not None:
            return (f"the split keeps whole '{self.group}' groups apart, so membership is "
                    "measured at the group level")
        if getattr(self.anonymizer, "fit_on_auxiliary", False):
            return ("the method is fitted on auxiliary data; a second release without some "
                    "identities was not run")
        test, train = self.test, self.train
        ids = np.unique(test.labels[self.sensitive].astype(str))
        folds = np.array_split(self.rng("membership").permutation(ids), IDENTITY_FOLDS)
        if ids.size < MIN_IDENTITY_LEVEL:
            return (f"only {ids.size} identities: too few to judge who is in the release "
                    f"({identity_rule()})")
        te_ids = test.labels[self.sensitive].astype(str).to_numpy()
        tr_ids = train.labels[self.sensitive].astype(str).to_numpy()
        out = []
        te_in, tr_in = pd.Series(te_ids), pd.Series(tr_ids)  # hashed look-ups: np.isin sorts
        for f, ctrl in enumerate(folds):                     # strings (seconds at 50k)
            keep = np.flatnonzero(~te_in.isin(ctrl).to_numpy())
            sub = test.subset(keep)
            try:  # each release its own draw (as the record games')
                rel = reseeded(self.anonymizer, f"identity release/{f + 1}").fit_transform(
                    sub, sub.labels)
            except BioanonError as exc:
                return f"the release without the control identities is not possible ({exc})"
            X = np.asarray(rel.X if isinstance(rel, FeatureTable) else rel, dtype=np.float32)
            out.append(IdentityRelease(X, sub.labels, ~tr_in.isin(ctrl).to_numpy(), tr_ids))
        return out


def target_at(target: Any, level: str) -> float:
    """The target at ``level`` of a number, a level name or a :class:`~bioanon.levels.Level`
    (membership and inference share one target per level).

    >>> target_at(0.08, "identity"), target_at("standard", "identity")
    (0.08, 0.14)
    """
    if isinstance(target, int | float) and not isinstance(target, bool):
        return float(target)
    from ...levels import resolve_level

    return resolve_level(target).target(level)


def risk_result(risk: str, level: str, statistic: str, value: float,
                ci: tuple[float, float], attacker: str, baseline: float, baseline_name: str,
                target: float, null_upper: float, reason: str,
                extras: Mapping[str, Any] | None = None) -> RiskResult:
    """A :class:`RiskResult` judged by its upper 95% bound (``null_upper``: the bound a
    leak-free release would show at this size; above the target, the level is inconclusive
    at this size)."""
    status = judge(ci[1], target, null_upper, ci[0])
    if status == INCONCLUSIVE and not reason:
        reason = (f"{INCONCLUSIVE}: even a leak-free release would show an upper bound of "
                  f"{null_upper:.3f} > {target:g} here (measured {ci[1]:.3f}); more records "
                  "or identities, or a DP guarantee covering it, are needed")
    elif not reason:
        reason = (f"upper 95% bound {ci[1]:.3f} {'≤' if status == 'met' else '>'} "
                  f"target {target:g}")
    return RiskResult(risk, level, statistic, float(value), (float(ci[0]), float(ci[1])),
                      attacker, float(baseline), baseline_name, float(target), status, reason,
                      {**dict(extras or {}), "null_upper": float(null_upper)})


def not_covered(risk: str, level: str, statistic: str, target: float, why: str,
                baseline: float = float("nan"), baseline_name: str = "") -> RiskResult:
    """A level that could not be measured: reported in words, never counted as met."""
    return RiskResult(risk, level, statistic, float("nan"), (float("nan"), float("nan")),
                      "none (not measured)", baseline, baseline_name, float(target),
                      INCONCLUSIVE, f"not measured: {why}", {"null_upper": float("nan")})


def rejudge(r: RiskResult, target: float) -> RiskResult:
    """The same figure judged against another target (the verdict's)."""
    if r.status in ("accepted", COVERED) and r.target == target:
        return r
    if r.status == "accepted" or r.target == target:
        return r
    null = float(r.extras.get("null_upper", float("nan")))
    if not np.isfinite(r.ci[1]):
        return replace(r, target=float(target))
    return risk_result(r.risk, r.level, r.statistic, r.value, r.ci, r.attacker, r.baseline,
                       r.baseline_name, target, null, "", r.extras)
