"""Inference on members: what does the release tell about X's labels beyond what it tells
about a non-member?

An attacker holding a person's clear records infers that person's released labels (the
interest and additional columns the release carries) from the release: every attacker
registered in :data:`bioanon.attack.registry.INFERENCE` — by recognition (the label of the
nearest released record or class mean), through the records they contributed to
(:func:`bioanon.attack.tracing.traced_labels`), or by refitting the release's model family
per label value (:func:`bioanon.attack.parametric.parametric_labels`: the label whose
release model fits the candidate best, alone and relative to the reference). The same attack
on non-members is the control (as in Anonymeter): what the release teaches about anyone. An
inference that succeeds on members at rate p1 and on non-members at p0 *is* a membership
test ("member" when the inference is right) of advantage TPR − FPR = p1 − p0, so it is
judged in the same unit and against the same target per level as membership
(:mod:`bioanon.metrics.advantage`, :mod:`bioanon.levels`): the attack and label column
chosen on one half of the candidates, scored on the other, both ways. Record level: halves
and interval by identity where 20 or more people hold the records (they cluster by person),
else by record. Identity level: K releases each leave one fold of the identities out, so
every identity is scored as a member and as a non-member; the identity is the unit of the
halves and of the interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attack import registry as attackers
from ...attack.game import run_attackers
from ...attack.inference_labels import centroid_labels, nearest_labels
from ...metrics.advantage import METHOD, AdvantageResult, inference_advantage, with_game_spread
from ...metrics.results import RiskResult
from .base import MIN_IDENTITY_LEVEL, RiskContext, not_covered, risk_result, target_at

BASELINE_NAME = "non-members"


def _column_of(attack: str) -> str:
    """The label column an inference attack is named for: its last quoted part (an
    attack's own name may hold an apostrophe: "release model's best class, 'digit'")."""
    return attack.rsplit("'", 2)[-2]


def _hits(ctx: RiskContext, cand: np.ndarray, truth: dict[str, np.ndarray],
          released: np.ndarray, released_labels: Any, cand_ids: np.ndarray,
          in_reference: np.ndarray, cache: dict[str, Any] | None = None,
          level: str = "record") -> dict[str, np.ndarray]:
    """Whether each registered inference attacker
    (:data:`bioanon.attack.registry.INFERENCE`) guessed each candidate's label right, per
    attack and label column."""
    from .membership import game_of

    game = game_of(ctx, cand, {}, cand_ids, released, released_labels, in_reference, None,
                   level, cache, targets=tuple(truth))
    guesses = run_attackers(attackers.INFERENCE, game)
    out = {}
    for name, guess in guesses.items():
        col = name.rsplit("'", 2)[-2] if name.endswith("'") else None
        if col in truth:
            out[name] = np.asarray(guess).astype(str) == truth[col]
    return out


class InferenceRisk:
    """The inference risk on members at record and identity level (call :meth:`evaluate`).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> from bioanon.evaluation.split import split_table
    >>> t = make_biometric(n_identities=12, records_per_identity=20, n_features=32)
    >>> tr, te = split_table(t, "expression", "identity", 0.25, 0)
    >>> train, test = t.subset(tr), t.subset(te)
    >>> class Copy:                                   # releases the records themselves
    ...     def get_params(self, deep=False): return {}
    ...     def fit_transform(self, X, y=None): return X.X.copy()
    >>> ctx = RiskContext(train, test, test.X.copy(), Copy(), "expression", "identity",
    ...                   ["expression"], None, 0)
    >>> r = InferenceRisk(ctx, 0.05).evaluate().results()[0]
    >>> r.level, r.value > 0      # a copy: members' labels are read off their own records
    ('record', True)
    """

    def __init__(self, ctx: RiskContext, target: Any) -> None:
        self.ctx = ctx
        self.target = target

    def evaluate(self) -> InferenceRisk:
        ctx = self.ctx
        train = ctx.train
        cols = list(ctx.label_columns)
        out: list[RiskResult] = []
        if not cols:
            out.append(not_covered("inference", "record", "advantage",
                                   target_at(self.target, "record"),
                                   "the release carries no label column"))
            self.results_ = out
            return self
        decided = ctx.screened or ctx.floored  # a search's stage 1 decided the setting
        if decided:  # on membership (the screen) or on utility (the floor)
            self.results_ = [not_covered("inference", level, "advantage",
                                         target_at(self.target, level), decided,
                                         float("nan"), BASELINE_NAME)
                             for level in ("record", "identity")]
            return self
        games = ctx.record_games() if ctx.group is None else [None]
        hits_parts, members, people, keys, group_parts = [], [], [], [], []
        for k, game in enumerate(games):
            ctx.step("inference", "record game", k, len(games))
            g = ctx if game is None else game.ctx
            te, tr = g.candidate_rows()
            mem, non = g.test.subset(te), g.train.subset(tr)
            cand = np.vstack([mem.X, non.X])
            members.append(np.r_[np.ones(te.size, bool), np.zeros(tr.size, bool)])
            truth = {c: np.r_[mem.labels[c].astype(str).to_numpy(),
                              non.labels[c].astype(str).to_numpy()] for c in cols}
            who = np.r_[mem.labels[g.sensitive].astype(str).to_numpy(),
                        non.labels[g.sensitive].astype(str).to_numpy()]
            groups = None
            if ctx.group is not None:
                groups = np.r_[mem.labels[ctx.group].astype(str).to_numpy(),
                               non.labels[ctx.group].astype(str).to_numpy()]
                group_parts.append(groups)
            level = "record" if ctx.group is None else "group"
            in_ref = np.r_[-np.ones(te.size, np.int64), tr]
            hits_parts.append(_hits(g, cand, truth, g.anon_test, g.test.labels,
                                    who if groups is None else groups, in_ref,
                                    g.attack_cache.setdefault(level, {}), level))
            people.append(who)
            if game is not None:
                keys.append(np.r_[game.test_keys[te], game.train_keys[tr]])
        names = sorted(set.intersection(*(set(h) for h in hits_parts)))
        hits = {k: np.concatenate([h[k] for h in hits_parts]) for k in names}
        member = np.concatenate(members)
        self.n_games_ = len(hits_parts)
        self.game_of_ = np.repeat(np.arange(len(members)), [m.size for m in members])
        out.append(self._judge(hits, member,
                               np.concatenate(group_parts) if group_parts else None, level,
                               np.concatenate(people), np.concatenate(keys) if keys else None))
        idr = ctx.identity_releases()
        if isinstance(idr, str):
            # said in words, never silent (also when a group split leaves it unmeasured)
            out.append(not_covered("inference", "identity", "advantage",
                                   target_at(self.target, "identity"), idr, float("nan"),
                                   BASELINE_NAME))
        else:
            rows = ctx.identity_candidates()  # at most max_candidates, every identity
            truth2 = {c: train.labels[c].astype(str).to_numpy()[rows] for c in cols}
            cache = ctx.attack_cache.setdefault("identity", {})  # same candidates
            folds = []
            for k, rel in enumerate(idr):
                ctx.step("inference", "identity fold", k, len(idr))
                folds.append((_hits(ctx, train.X[rows], truth2, rel.X, rel.labels,
                                    rel.ids[rows], rows, cache, "identity"), rel.member[rows]))
            out.append(self._judge_folds(folds, idr[0].ids[rows]))
        self.results_ = out
        return self

    def _judge(self, hits: dict[str, np.ndarray], member: np.ndarray,
               groups: np.ndarray | None, level: str,
               people: np.ndarray | None = None, keys: np.ndarray | None = None
               ) -> RiskResult:
        """Record (or group) level: every (attack, column) is a membership test (flag
        "member" when the inference is right), the strongest chosen on k − 1 folds of the
        units and applied to the held-out fold; the record games pooled (a record is one
        unit wherever it appears: ``keys``)."""
        ctx = self.ctx
        units, unit = keys, "records"
        if groups is not None:
            units, unit = groups, "groups"
        elif people is not None and np.unique(people).size >= MIN_IDENTITY_LEVEL:
            units, unit = people, "records (folds and interval by identity)"
        adv = inference_advantage(hits, member, None, units, ctx.rng(f"inference/{level}"),
                                  unit)
        games = getattr(self, "game_of_", None)
        if level == "record" and games is not None and games.max() > 0:
            adv = with_game_spread(adv, [inference_advantage(
                {k: v[games == g] for k, v in hits.items()}, member[games == g], None,
                None if units is None else units[games == g],
                ctx.rng(f"inference/{level}/{g}")).value for g in range(int(games.max()) + 1)])
        r = self._result(adv, level, hits, member)
        if level == "record":
            r.extras["n_games"] = getattr(self, "n_games_", 1)
            for key in ("per_game", "se_between_games"):
                if key in adv.extras:
                    r.extras[key] = adv.extras[key]
        return r

    def _result(self, adv: AdvantageResult, level: str, hits: dict[str, np.ndarray],
                member: np.ndarray) -> RiskResult:
        cols = sorted({_column_of(k) for k in hits})
        chosen = sorted({_column_of(a) for a in adv.attackers if "'" in a})
        who = " | ".join(dict.fromkeys(adv.attackers))
        extras = {"member_rate": adv.member_rate, "nonmember_rate": adv.nonmember_rate,
                  "n_members": adv.n_members, "n_nonmembers": adv.n_nonmembers,
                  "n_units": adv.n_units, "unit": adv.unit,
                  "column": chosen[0] if len(chosen) == 1 else " | ".join(chosen),
                  "columns_judged": cols,
                  "balanced_accuracy": adv.balanced_accuracy,
                  "method": "an inference on members read as a membership test (flag "
                            "'member' when it is right): advantage = success on members − "
                            "success on non-members of the same attack; every attack and "
                            "released label column a candidate; " + METHOD}
        return risk_result("inference", level, "advantage", adv.value, adv.ci, who,
                           adv.nonmember_rate, BASELINE_NAME, target_at(self.target, level),
                           adv.null_upper, "", extras)

    def _judge_folds(self, folds: list[tuple[dict[str, np.ndarray], np.ndarray]],
                     ids: np.ndarray) -> RiskResult:
        """Identity level over K releases: each identity's records scored against every
        release (a member of K − 1, a non-member of one), pooled, the identity the unit of
        the halves and of the interval."""
        _, codes = np.unique(np.asarray(ids).astype(str), return_inverse=True)
        n = int(codes.max()) + 1
        hits = {k: np.concatenate([f[0][k] for f in folds]) for k in folds[0][0]}
        member = np.concatenate([f[1] for f in folds])
        units = np.tile(codes, len(folds))
        rng = self.ctx.rng("inference/identity")
        adv = inference_advantage(hits, member, None, units, rng, "identities")
        r = self._result(adv, "identity", hits, member)
        r.extras.update({"n_identities": n, "n_folds": len(folds),
                         "method": f"{len(folds)} releases, each leaving one fold of the "
                                   "identities out; " + r.extras["method"]})
        return r

    def results(self) -> list[RiskResult]:
        return list(self.results_)


__all__ = ["InferenceRisk", "centroid_labels", "nearest_labels"]
