"""Membership / tracing: is X in the release? which released records carry X?

Attackers (each scores every clear candidate; higher: member):

- tracing (:func:`bioanon.attack.tracing.tracing_scores`): knows the method and g, centres
  released records on their class means, averages the best 1 (and g) matches of the
  candidate's class-centred deviation;
- density ratio (:func:`bioanon.attack.density.density_scores`, DOMIAS-style): release
  density at the candidate against a reference population the attacker holds;
- nearest released / calibrated / euclidean (:mod:`bioanon.attack.membership`).

The judged figure is the AUC of the strongest attacker chosen on one half of the candidates
and scored on the other (both ways), with its 95% interval, beside the TPR at FPR 1% (0.1%
where a half holds 1000 non-members). Record level: the released records' clear originals
against held-out clear records of the same people. Identity level: a release leaves
one fold of the identities out, for each of K folds (every identity is a non-member once); the
attacker scores each identity by its clear training records; a bootstrap over identities of
the whole cross-fitted procedure gives the interval's standard error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attack.density import density_scores_multi
from ...attack.membership import membership_auc, membership_scores
from ...attack.tracing import tracing_scores
from ...metrics.results import MembershipResult, RiskResult
from ...metrics.risk_stats import crossfit_auc, crossfit_auc_folds, null_auc_upper
from .base import RiskContext, not_covered, risk_result

BASELINE_NAME = "no signal"


def _by_group(s: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, weights=s, minlength=n) / np.bincount(codes, minlength=n)


def attack_scores(ctx: RiskContext, candidates: np.ndarray, cand_labels: np.ndarray,
                  released: np.ndarray, released_labels: np.ndarray, reference: np.ndarray,
                  in_reference: np.ndarray, groups: np.ndarray | None,
                  reference_cache: dict[int, np.ndarray] | None = None
                  ) -> dict[str, np.ndarray]:
    """Every membership attacker's score per candidate (per group when ``groups``).

    ``reference_cache`` keeps the density attacker's reference distances between calls that
    score the same candidates against the same reference (the identity level's folds)."""
    scores: dict[str, np.ndarray] = {}
    codes, n = None, 0
    if groups is not None:
        _, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
        n = int(codes.max()) + 1
    for top in ctx.tops():
        name = f"tracing, best {top}" if top == 1 else f"tracing, best g={top}"
        scores[name] = tracing_scores(candidates, released, released_labels, cand_labels,
                                      top=top, groups=groups)
    dens = density_scores_multi(candidates, released, reference, ks=(1, 5),
                                candidate_in_reference=in_reference,
                                reference_cache=reference_cache)
    per_record = {f"density ratio (DOMIAS-style, k={k})": v for k, v in dens.items()}
    per_record.update({k.replace("_", " "): v
                       for k, v in membership_scores(candidates, released).items()})
    for k, v in per_record.items():
        scores[k] = v if codes is None else _by_group(v, codes, n)
    return scores


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
    >>> res = MembershipRisk(ctx, 0.6).evaluate().results()
    >>> [(r.level, round(r.value, 1)) for r in res]
    [('record', 1.0), ('identity', 1.0)]
    """

    def __init__(self, ctx: RiskContext, target: float) -> None:
        self.ctx = ctx
        self.target = target

    def evaluate(self) -> MembershipRisk:
        ctx = self.ctx
        train, test = ctx.train, ctx.test
        self.legacy_: list[MembershipResult] = []
        out: list[RiskResult] = []
        # ---------------------------------------------------------------- record / group
        cand = np.vstack([test.X, train.X])
        member = np.r_[np.ones(test.n_records, bool), np.zeros(train.n_records, bool)]
        lab = np.r_[test.labels[ctx.interest].astype(str).to_numpy(),
                    train.labels[ctx.interest].astype(str).to_numpy()]
        rel_lab = test.labels[ctx.interest].astype(str).to_numpy()
        in_ref = np.r_[-np.ones(test.n_records, int), np.arange(train.n_records)]
        groups = None
        level = "record"
        if ctx.group is not None:
            level = "group"
            groups = np.r_[test.labels[ctx.group].astype(str).to_numpy(),
                           train.labels[ctx.group].astype(str).to_numpy()]
        scores = attack_scores(ctx, cand, lab, ctx.anon_test, rel_lab, train.X, in_ref, groups)
        if groups is not None:
            uniq, codes = np.unique(groups, return_inverse=True)
            member = _by_group(member.astype(float), codes, uniq.size) > 0.5
        out.append(self._judge(scores, member, level, "membership/" + level))
        self.legacy_.append(membership_auc(scores, member,
                                           level if groups is None else
                                           f"group ('{ctx.group}')"))
        # ---------------------------------------------------------------- identity
        idr = ctx.identity_releases()
        if isinstance(idr, str):
            # said in words, never silent (also when a group split leaves it unmeasured)
            out.append(not_covered("membership", "identity", "AUC", self.target, idr,
                                   0.5, BASELINE_NAME))
        else:
            tr_lab = train.labels[ctx.interest].astype(str).to_numpy()
            fold_scores, fold_members = [], []
            ref_cache: dict[int, np.ndarray] = {}  # same candidates, same reference
            for rel in idr:
                rel_lab2 = rel.labels[ctx.interest].astype(str).to_numpy()
                fold_scores.append(attack_scores(ctx, train.X, tr_lab, rel.X, rel_lab2,
                                                 train.X, np.arange(train.n_records),
                                                 rel.ids, ref_cache))
                uniq, codes = np.unique(rel.ids, return_inverse=True)
                fold_members.append(_by_group(rel.member.astype(float), codes,
                                              uniq.size) > 0.5)
            out.append(self._judge_folds(fold_scores, fold_members))
            self.legacy_.append(membership_auc(fold_scores[0], fold_members[0], "identity"))
        self.results_ = out
        return self

    def _judge(self, scores: dict[str, np.ndarray], member: np.ndarray, level: str,
               purpose: str) -> RiskResult:
        n = member.size
        half = self.ctx.rng(purpose).permutation(n) < n // 2
        cf: dict[str, Any] = crossfit_auc(scores, member, half)
        n_pos, n_neg = int(cf["n_members"]), int(cf["n_nonmembers"])
        null = null_auc_upper(n_pos, n_neg)
        who = " | ".join(dict.fromkeys(cf["attackers"]))
        unit = "identities" if level == "identity" else ("groups" if level == "group"
                                                         else "records")
        extras = {"tpr_at_fpr": cf["tpr_at_fpr"], "n_members": n_pos,
                  "n_nonmembers": n_neg, "unit": unit,
                  "per_attacker_auc": {k: float(_auc(v, member)) for k, v in scores.items()},
                  "method": "attacker chosen on one half of the candidates, scored on the "
                            "other, both ways; Hanley–McNeil interval"}
        reason = ""
        if not cf["tpr_at_fpr"]:
            extras["tpr_note"] = (f"TPR at FPR 1% needs 100 non-member {unit} per half; "
                                  f"{n_neg} in all")
        return risk_result("membership", level, "AUC", float(cf["auc"]), cf["ci"],
                           who, 0.5, BASELINE_NAME,
                           self.target, null, reason, extras)

    def _judge_folds(self, scores: list[dict[str, np.ndarray]],
                     members: list[np.ndarray]) -> RiskResult:
        n = members[0].size
        half = self.ctx.rng("membership/identity").permutation(n) < n // 2
        cf: dict[str, Any] = crossfit_auc_folds(scores, members, half,
                                                self.ctx.rng("membership/identity/boot"))
        who = " | ".join(dict.fromkeys(cf["attackers"]))
        extras = {"n_members": cf["n_members"], "n_nonmembers": cf["n_nonmembers"],
                  "n_identities": cf["n_identities"], "n_folds": cf["n_folds"],
                  "unit": "identities", "tpr_at_fpr": {},
                  "tpr_note": "TPR at a fixed FPR is not computed at identity level",
                  "per_attacker_auc": {k: float(np.nanmean([_auc(f[k], m) for f, m in
                                                            zip(scores, members,
                                                                strict=True)]))
                                       for k in scores[0]},
                  "method": f"{cf['n_folds']} releases, each leaving one fold of the "
                            "identities out (every identity a non-member once); attacker "
                            "chosen on one half of the identities, scored on the other, both "
                            "ways, AUC averaged over folds; normal interval, its standard "
                            f"error from a bootstrap over identities ({cf['n_boot']} "
                            "resamples, the choice redone in each)"}
        return risk_result("membership", "identity", "AUC", float(cf["auc"]), cf["ci"],
                           who, 0.5, BASELINE_NAME, self.target, float(cf["null_upper"]),
                           "", extras)

    def results(self) -> list[RiskResult]:
        return list(self.results_)

    def legacy(self) -> list[MembershipResult]:
        """The per-level AUC of the strongest attacker (report.json's ``membership``)."""
        return list(self.legacy_)


def _auc(s: np.ndarray, member: np.ndarray) -> float:
    from ...metrics.intervals import rank_auc

    return rank_auc(np.asarray(s)[member], np.asarray(s)[~member])
