"""Membership / tracing: is X in the release? which released records carry X?

Attackers: every one registered in :data:`bioanon.attack.registry.MEMBERSHIP` (each scores
every clear candidate; higher: member), among them

- tracing (:func:`bioanon.attack.tracing.tracing_scores`): knows the method and g, centres
  released records on their class means, averages the best 1 (and g) matches of the
  candidate's class-centred deviation;
- density ratio (:func:`bioanon.attack.density.density_scores`, DOMIAS-style): release
  density at the candidate against a reference population the attacker holds;
- nearest released / calibrated / euclidean (:mod:`bioanon.attack.membership`);
- the model-aware likelihood ratio (:mod:`bioanon.attack.parametric`): refits the model the
  method declares (and the generic Gaussian families) on the release and on the reference,
  cross-fitted, per class;
- the shadow-model attacker (:mod:`bioanon.attack.shadow`): for a method without a declared
  model, runs the method on its reference and learns a score from the others'.

The judged figure is the membership advantage TPR − FPR (:mod:`bioanon.metrics.advantage`):
the attacker, direction and threshold chosen on one half of the candidates and scored on the
other (both ways), with its 95% interval, against the level's target
(:mod:`bioanon.levels`); the held-out AUC (Hanley–McNeil interval) and the TPR at FPR 1% stay
beside it. Record level: the released records' clear originals against held-out clear
records of the same people (halves and interval by identity where 20 or more people hold
them: records cluster by person). Identity level: a release leaves one fold of the identities
out, for each of K folds (every identity is a non-member once); the attacker scores each
identity by its clear training records against every release; the identity is the unit of
the halves and of the interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...attack import registry as attackers
from ...attack.game import Game, run_attackers
from ...attack.membership import membership_auc
from ...metrics.advantage import (
    METHOD,
    AdvantageResult,
    advantage_from_auc,
    crossfit_advantage,
    with_game_spread,
)
from ...metrics.intervals import auc_interval
from ...metrics.results import MembershipResult, RiskResult
from ...metrics.risk_stats import crossfit_auc
from .base import (
    MIN_IDENTITY_LEVEL,
    SCREEN_RULE,
    RiskContext,
    not_covered,
    risk_result,
    target_at,
)

BASELINE_NAME = "no signal (advantage 0)"
ADVANTAGE_METHOD = ("membership advantage TPR − FPR of the strongest attacker; AUC and TPR at "
                    "FPR 1% of the attackers chosen reported beside it")


def _by_group(s: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, weights=s, minlength=n) / np.bincount(codes, minlength=n)


def game_of(ctx: RiskContext, candidates: np.ndarray, cand_labels: Mapping[str, np.ndarray],
            cand_ids: np.ndarray, released: np.ndarray, released_labels: Any,
            in_reference: np.ndarray, groups: np.ndarray | None, level: str,
            cache: dict[str, Any] | None = None, targets: tuple[str, ...] = ()) -> Game:
    """The game the registered attackers play on one release: the candidates, the release,
    the training split as the attacker's reference population, the method."""
    train = ctx.train
    person = ctx.group or ctx.sensitive  # the identity column (a group split's whole groups)
    cols = [c for c in dict.fromkeys([ctx.interest, *ctx.label_columns])
            if c in train.labels.columns]
    carried = [*cols, *([person] if ctx.released_sensitive else []), *ctx.linking]
    rel_lab = {c: released_labels[c].astype(str).to_numpy() for c in dict.fromkeys(carried)
               if c in released_labels.columns}
    return Game(candidates, cand_labels, released, rel_lab, train.X,
                {c: train.labels[c].astype(str).to_numpy() for c in cols},
                train.labels[person].astype(str).to_numpy(),
                np.asarray(cand_ids).astype(str), np.asarray(in_reference, np.int64),
                ctx.interest, groups=groups, anonymizer=ctx.anonymizer,
                n_released=int(len(released)), tops=ctx.tops(), seed=ctx.seed,
                cache={} if cache is None else cache, level=level, targets=targets,
                reference_table=train, sensitive=person, linking=tuple(ctx.linking))


def attack_scores(ctx: RiskContext, candidates: np.ndarray, cand_labels: np.ndarray,
                  released: np.ndarray, released_labels: Any, reference: np.ndarray,
                  in_reference: np.ndarray, groups: np.ndarray | None,
                  reference_cache: dict[str, Any] | None = None,
                  cand_ids: np.ndarray | None = None, level: str = "record",
                  known: dict[str, dict[str, np.ndarray]] | None = None
                  ) -> dict[str, np.ndarray]:
    """Every registered membership attacker's score per candidate (per group when
    ``groups``), :data:`bioanon.attack.registry.MEMBERSHIP`.

    ``released_labels`` is the release's label frame; ``reference`` must be the training
    split's features (the attacker's reference population). ``reference_cache`` keeps the
    reference-side figures between calls that score the same candidates against the same
    reference (the identity level's folds); ``known``: the scores attackers already gave on
    this very game (the screen's: :data:`SCREEN_SCORES`)."""
    del reference  # the game reads the training split itself (its labels and identities)
    labels = {ctx.interest: np.asarray(cand_labels).astype(str)}
    ids = (np.array([f"candidate {i}" for i in range(len(candidates))]) if cand_ids is None
           else cand_ids)
    game = game_of(ctx, candidates, labels, ids, released, released_labels, in_reference,
                   groups, level, reference_cache)
    return run_attackers(attackers.MEMBERSHIP, game, known)


def record_candidates(ctx: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                         np.ndarray, np.ndarray]:
    """A record-level game's candidates: the member rows ``te`` (of the test side) and the
    non-member rows ``tr`` (of the training side), their features stacked (members first),
    their interest labels and identities as text, and each one's row in the reference (−1 for
    a member: not in it)."""
    te, tr = ctx.candidate_rows()
    mem, non = ctx.test.subset(te), ctx.train.subset(tr)
    cand = np.vstack([mem.X, non.X])
    lab = np.r_[mem.labels[ctx.interest].astype(str).to_numpy(),
                non.labels[ctx.interest].astype(str).to_numpy()]
    who = np.r_[mem.labels[ctx.sensitive].astype(str).to_numpy(),
                non.labels[ctx.sensitive].astype(str).to_numpy()]
    return te, tr, cand, lab, who, np.r_[-np.ones(te.size, int), tr]


def group_candidates(ctx: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                        np.ndarray]:
    """A group-level game's candidates (a split keeping groups whole): their features
    stacked (members first), interest labels and groups as text, each one's row in the
    reference (−1 for a member) and the member flags, per record."""
    mem, non, non_rows = ctx.candidates()  # at most max_candidates per side
    cand = np.vstack([mem.X, non.X])
    member = np.r_[np.ones(mem.n_records, bool), np.zeros(non.n_records, bool)]
    lab = np.r_[mem.labels[ctx.interest].astype(str).to_numpy(),
                non.labels[ctx.interest].astype(str).to_numpy()]
    in_ref = np.r_[-np.ones(mem.n_records, int), non_rows]
    groups = np.r_[mem.labels[ctx.group].astype(str).to_numpy(),
                   non.labels[ctx.group].astype(str).to_numpy()]
    return cand, lab, groups, in_ref, member


#: the attack cache's key for the screen's scores, by attacker (:func:`_screen_scores`)
SCREEN_SCORES = "screen scores"


def _screen_scores(ctx: RiskContext, game: Any) -> dict[str, np.ndarray]:
    """The screen's attackers (:data:`bioanon.attack.registry.SCREEN`) on ``game``, merged;
    each one's scores kept in the context's attack cache (:data:`SCREEN_SCORES`) for the full
    figure, whose first game (the record level's own, or the group level's) is this very
    game: when the screen does not decide, those attackers are not run twice."""
    per = {a.name: run_attackers([a], game) for a in attackers.SCREEN}
    ctx.attack_cache[SCREEN_SCORES] = per
    return {k: v for scores in per.values() for k, v in scores.items()}


class MembershipRisk:
    """The membership risk at record (or group) and identity level (call :meth:`evaluate`).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> from bioanon.evaluation.split import split_table
    >>> t = make_biometric(n_identities=24, records_per_identity=12, n_features=32)
    >>> tr, te = split_table(t, "expression", "identity", 0.25, 0)
    >>> train, test = t.subset(tr), t.subset(te)
    >>> class Copy:                                   # releases the records themselves
    ...     def get_params(self, deep=False): return {}
    ...     def fit_transform(self, X, y=None): return X.X.copy()
    >>> ctx = RiskContext(train, test, test.X.copy(), Copy(), "expression", "identity",
    ...                   ["expression"], None, 0)
    >>> res = MembershipRisk(ctx, "standard").evaluate().results()
    >>> [(r.level, r.statistic, round(r.value, 1), r.target) for r in res]
    [('record', 'advantage', 1.0, 0.1), ('identity', 'advantage', 1.0, 0.14)]
    """

    def __init__(self, ctx: RiskContext, target: Any) -> None:
        self.ctx = ctx
        self.target = target

    def evaluate(self) -> MembershipRisk:
        ctx = self.ctx
        train, test = ctx.train, ctx.test
        self.legacy_: list[MembershipResult] = []
        out: list[RiskResult] = []
        # ---------------------------------------------------------------- record / group
        if ctx.screen is not None and (self._screen() or self._floored()):
            return self
        if ctx.group is None:
            scores, member, units = self._record_games()
            out.append(self._judge(scores, member, "record", units, self.game_of_))
            self.legacy_.append(membership_auc(scores, member, "record"))
        else:
            cand, lab, groups, in_ref, member = group_candidates(ctx)
            scores = attack_scores(ctx, cand, lab, ctx.anon_test, test.labels, train.X, in_ref,
                                   groups, ctx.attack_cache.setdefault("group", {}),
                                   cand_ids=groups, level="group",
                                   known=ctx.attack_cache.get(SCREEN_SCORES))
            uniq, codes = np.unique(groups, return_inverse=True)
            member = _by_group(member.astype(float), codes, uniq.size) > 0.5
            out.append(self._judge(scores, member, "group", uniq))
            self.legacy_.append(membership_auc(scores, member, f"group ('{ctx.group}')"))
        # ---------------------------------------------------------------- identity
        idr = ctx.identity_releases()
        if isinstance(idr, str):
            # said in words, never silent (also when a group split leaves it unmeasured)
            out.append(not_covered("membership", "identity", "advantage",
                                   self._target("identity"), idr, 0.0, BASELINE_NAME))
        else:
            rows = ctx.identity_candidates()  # at most max_candidates, every identity
            tr_lab = train.labels[ctx.interest].astype(str).to_numpy()[rows]
            fold_scores, fold_members = [], []
            ref_cache = ctx.attack_cache.setdefault("identity", {})  # same candidates
            for k, rel in enumerate(idr):
                ctx.step("membership", "identity fold", k, len(idr))
                fold_scores.append(attack_scores(ctx, train.X[rows], tr_lab, rel.X,
                                                 rel.labels, train.X, rows, rel.ids[rows],
                                                 ref_cache, cand_ids=rel.ids[rows],
                                                 level="identity"))
                uniq, codes = np.unique(rel.ids[rows], return_inverse=True)
                fold_members.append(_by_group(rel.member[rows].astype(float), codes,
                                              uniq.size) > 0.5)
            out.append(self._judge_folds(fold_scores, fold_members))
            self.legacy_.append(membership_auc(fold_scores[0], fold_members[0], "identity"))
        self.results_ = out
        return self

    def _target(self, level: str) -> float:
        return target_at(self.target, level)

    def _screen(self) -> bool:
        """A search's stage-1 screen (:data:`~.base.SCREEN_RULE`): the cheap attackers
        (:data:`bioanon.attack.registry.SCREEN`) on the evaluation's own record-level game
        (group-level when the split keeps groups whole: the same candidates and units as
        the full figure), cross-fitted as the full figure is; True (and the results set, the
        context marked ``screened``) when the advantage's lower 95% bound lies above
        ``ctx.screen``. Otherwise nothing is kept but what the full run reuses (the game's
        cache)."""
        ctx = self.ctx
        level = "record" if ctx.group is None else "group"
        scores, member, units, unit = (self._screen_record() if ctx.group is None
                                       else self._screen_group())
        adv = crossfit_advantage(scores, member, None, units, ctx.rng("membership/screen"),
                                 unit)
        bound = float(ctx.screen)  # type: ignore[arg-type]
        if not adv.ci[0] > bound:
            return False
        why = SCREEN_RULE.format(bound=bound, level=level)
        r = self._result(adv, level, scores, member, None)
        r = risk_result("membership", level, "advantage", adv.value, adv.ci, r.attacker,
                        0.0, BASELINE_NAME, self._target(level), adv.null_upper,
                        f"{why}; lower 95% bound {adv.ci[0]:.3f} > {bound:g}",
                        {**r.extras, "screened": True, "n_games": 1})
        ctx.screened = why
        self.legacy_ = [membership_auc(scores, member, level)]
        self.results_ = [r, not_covered("membership", "identity", "advantage",
                                        self._target("identity"), why, 0.0, BASELINE_NAME)]
        return True

    def _floored(self) -> bool:
        """Right after a screen that did not decide: the context's ``after_screen`` (the
        CAS, measured then); True (every level "not measured" with its reason, the context
        marked ``floored``) when it decides the setting on utility (:data:`~.base.
        FLOOR_RULE`)."""
        ctx = self.ctx
        why = ctx.after_screen() if ctx.after_screen is not None else None
        if not why:
            return False
        ctx.floored = why
        self.legacy_ = []
        self.results_ = [not_covered("membership", level, "advantage", self._target(level),
                                     why, 0.0, BASELINE_NAME)
                         for level in (ctx.level, "identity")]
        return True

    def _screen_record(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, str]:
        """The screen's record-level game: the cheap attackers' scores (ranks), the member
        flags, the units and their name."""
        from scipy.stats import rankdata  # not at import: it costs seconds at start-up

        ctx = self.ctx
        te, tr, cand, lab, who, in_ref = record_candidates(ctx)
        game = game_of(ctx, cand, {ctx.interest: lab}, who, ctx.anon_test, ctx.test.labels,
                       in_ref, None, "record", ctx.attack_cache.setdefault("screen", {}))
        raw = _screen_scores(ctx, game)
        scores = {k: rankdata(np.nan_to_num(v, nan=-np.inf)) / v.size for k, v in raw.items()}
        member = np.r_[np.ones(te.size, bool), np.zeros(tr.size, bool)]
        keys = np.r_[ctx.train.n_records + te, tr]
        units = who if np.unique(who).size >= MIN_IDENTITY_LEVEL else keys
        return scores, member, units, ("records (folds and interval by identity)"
                                       if units is who else "records")

    def _screen_group(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, str]:
        """The screen's group-level game (a split keeping groups whole): the full figure's
        candidates and groups, scored by the cheap attackers only."""
        ctx = self.ctx
        cand, lab, groups, in_ref, member = group_candidates(ctx)
        game = game_of(ctx, cand, {ctx.interest: lab}, groups, ctx.anon_test,
                       ctx.test.labels, in_ref, groups, "group",
                       ctx.attack_cache.setdefault("screen", {}))
        scores = _screen_scores(ctx, game)
        uniq, codes = np.unique(groups, return_inverse=True)
        return scores, _by_group(member.astype(float), codes, uniq.size) > 0.5, uniq, "groups"

    def _record_games(self) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        """Every record-level game's candidates scored by every attacker
        (:meth:`~.base.RiskContext.record_games`), pooled: each game's scores as their rank
        within it (a threshold then flags the same share in every game), the member flags,
        and the unit of each candidate (its identity where 20 or more people hold the
        candidates, else its record: a record is a member in one game and a non-member in
        another)."""
        from scipy.stats import rankdata  # not at import: it costs seconds at start-up

        parts, members, keys, people = [], [], [], []
        games = self.ctx.record_games()
        for k, game in enumerate(games):
            self.ctx.step("membership", "record game", k, len(games))
            g = game.ctx
            te, tr, cand, lab, who, in_ref = record_candidates(g)
            s = attack_scores(g, cand, lab, g.anon_test, g.test.labels, g.train.X, in_ref,
                              None, g.attack_cache.setdefault("record", {}), cand_ids=who,
                              level="record",
                              known=g.attack_cache.get(SCREEN_SCORES) if g is self.ctx
                              else None)
            parts.append({k: rankdata(np.nan_to_num(v, nan=-np.inf)) / v.size
                          for k, v in s.items()})
            members.append(np.r_[np.ones(te.size, bool), np.zeros(tr.size, bool)])
            keys.append(np.r_[game.test_keys[te], game.train_keys[tr]])
            people.append(who)
        names = sorted(set.intersection(*(set(p) for p in parts)))
        scores = {k: np.concatenate([p[k] for p in parts]) for k in names}
        self.people_ = np.concatenate(people)
        self.n_games_ = len(parts)
        self.game_of_ = np.repeat(np.arange(len(parts)), [m.size for m in members])
        units = (self.people_ if np.unique(self.people_).size >= MIN_IDENTITY_LEVEL
                 else np.concatenate(keys))
        return scores, np.concatenate(members), units

    def _judge(self, scores: dict[str, np.ndarray], member: np.ndarray, level: str,
               units: np.ndarray | None = None, games: np.ndarray | None = None
               ) -> RiskResult:
        """Record (or group) level: the attacker and threshold chosen on k − 1 folds of the
        units and applied to the held-out fold (:func:`crossfit_advantage`); with several
        games, the interval covers the spread between their releases too
        (:func:`with_game_spread`)."""
        ctx = self.ctx
        unit = "groups" if level == "group" else "records"
        if level == "record" and units is not None and units is self.people_:
            unit = "records (folds and interval by identity)"
        purpose = "membership/" + level
        adv = crossfit_advantage(scores, member, None, units, ctx.rng(purpose), unit)
        if games is not None and games.max() > 0:
            adv = with_game_spread(adv, [crossfit_advantage(
                {k: v[games == g] for k, v in scores.items()}, member[games == g], None,
                None if units is None else units[games == g], ctx.rng(f"{purpose}/{g}")).value
                for g in range(int(games.max()) + 1)])
        n = member.size
        cf: dict[str, Any] = crossfit_auc(scores, member, ctx.rng(purpose + "/auc")
                                          .permutation(n) < n // 2)
        r = self._result(adv, level, scores, member, cf)
        if level == "record":
            r.extras["n_games"] = getattr(self, "n_games_", 1)
            for key in ("per_game", "se_between_games"):
                if key in adv.extras:
                    r.extras[key] = adv.extras[key]
        return r

    def _result(self, adv: AdvantageResult, level: str, scores: dict[str, np.ndarray],
                member: np.ndarray, cf: dict[str, Any] | None) -> RiskResult:
        who = " | ".join(dict.fromkeys(adv.attackers))
        extras: dict[str, Any] = {
            "auc": adv.auc, "auc_ci": list(auc_interval(adv.auc, adv.n_members,
                                                        adv.n_nonmembers))
            if np.isfinite(adv.auc) else [float("nan"), float("nan")],
            "auc_as_advantage": advantage_from_auc(adv.auc) if np.isfinite(adv.auc)
            else float("nan"),
            "tpr_at_fpr": (cf or {}).get("tpr_at_fpr", adv.tpr_at_fpr),
            "balanced_accuracy": adv.balanced_accuracy,
            "n_members": adv.n_members, "n_nonmembers": adv.n_nonmembers,
            "n_units": adv.n_units, "unit": adv.unit,
            "per_attacker_auc": {k: float(_auc(v, member)) for k, v in scores.items()},
            "method": ADVANTAGE_METHOD + "; " + METHOD}
        if not extras["tpr_at_fpr"]:
            extras["tpr_note"] = (f"TPR at FPR 1% needs 100 non-member {adv.unit} per half; "
                                  f"{adv.n_nonmembers} in all")
        return risk_result("membership", level, "advantage", adv.value, adv.ci, who, 0.0,
                           BASELINE_NAME, self._target(level), adv.null_upper, "", extras)

    def _judge_folds(self, scores: list[dict[str, np.ndarray]],
                     members: list[np.ndarray]) -> RiskResult:
        """Identity level: every identity scored against each of the K releases (a member of
        K − 1, a non-member of one), pooled, with the identity as the unit of the halves and
        of the interval."""
        from scipy.stats import rankdata  # not at import: it costs seconds at start-up

        n = members[0].size
        # each release's scores as their rank within it (a threshold then flags the same
        # share of identities in every release, whatever the scale a release gives)
        pooled = {k: np.concatenate([rankdata(np.nan_to_num(f[k], nan=-np.inf)) / n
                                     for f in scores]) for k in scores[0]}
        member = np.concatenate(members)
        ids = np.tile(np.arange(n), len(members))
        rng = self.ctx.rng("membership/identity")
        adv = crossfit_advantage(pooled, member, None, ids, rng, "identities")
        r = self._result(adv, "identity", pooled, member, None)
        r.extras.update({"n_identities": n, "n_folds": len(members), "tpr_at_fpr": {},
                         "tpr_note": "TPR at a fixed FPR is not computed at identity level",
                         "method": f"{len(members)} releases, each leaving one fold of the "
                                   "identities out (every identity a non-member once); "
                                   "each identity's scores against every release (as ranks "
                                   "within it) pooled; "
                                   + METHOD})
        return r

    def results(self) -> list[RiskResult]:
        return list(self.results_)

    def legacy(self) -> list[MembershipResult]:
        """The per-level AUC of the strongest attacker (report.json's ``membership``)."""
        return list(self.legacy_)


def _auc(s: np.ndarray, member: np.ndarray) -> float:
    from ...metrics.intervals import rank_auc

    return rank_auc(np.asarray(s)[member], np.asarray(s)[~member])
