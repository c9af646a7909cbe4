"""The membership advantage (TPR − FPR), cross-fitted, with a bootstrap interval over units.

One unit for every membership test the certificate judges: a tracing or density attacker's
score, and an inference on members (success on members p1 against non-members p0, which *is*
a membership test of advantage p1 − p0: flag "member" when the inference is right).

Cross-fitting: the candidates' units (records, or identities when the level is identity) are
dealt into 5 folds (stratified by membership); for each fold, the attacker with the largest
AUC on the other four and its threshold of the largest TPR − FPR there form a fixed rule that
flags the fold's candidates. Every candidate is flagged once, by a rule that never saw it, and
the figure is TPR − FPR of the pooled flags: unbiased for the procedure (a leak-free release
reads 0 on average, whatever the number of attackers tried), and — the choice being made on
four fifths of the candidates by a smooth criterion — it does not dilute the strongest
attacker among many as a choice by the noisy best TPR − FPR on one half did (a planted leak
of 0.087 among 45 noise attackers reads 0.081 on average, against 0.067 then; coverage 0.93
against 0.79: ``benchmarks/advantage_estimator.py``). The interval is normal, its standard
error linearized over units (records, or identities whose several candidates are correlated)
with the rules taken as fixed, scaled by :data:`CV_SE_INFLATION` for their choice.

Everything is whole-array: one sort and one cumulative sum per attacker and half (no loop per
record).

Examples
--------
>>> m = np.array([1, 1, 1, 1, 0, 0, 0, 0], bool)
>>> r = crossfit_advantage({"copy": m * 1.0}, m, np.arange(8) % 2 == 0)
>>> r.value, r.attackers
(1.0, ('copy', 'copy'))
>>> round(advantage_from_auc(0.6), 4)      # today's membership target, binormal ROC
0.1422
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .intervals import rank_auc
from .normal import cdf, ppf
from .risk_stats import tpr_at_fpr
from .scores import wilson_interval

Z95 = float(ppf(0.975))
#: one-sided 95%: the probability a leak-free release passes (plan and calibration)
Z_PASS = float(ppf(0.95))
#: under no signal the interval's standard error (the linearized error of the pooled held-out
#: flags, scaled by ``CV_SE_INFLATION``) averages 0.60–0.62 × sqrt(1/n1 + 1/n0) and the
#: estimate's standard deviation is 0.57–0.64 × the same (``benchmarks/advantage_estimator.py``:
#: 300 leak-free draws of 3 and 45 attackers at 200–4000 candidates); the null standard
#: error is taken as 0.61 × it (variance factor 0.61²)
NULL_VARIANCE_FACTOR = 0.61 ** 2
#: under no signal, the estimate's standard deviation and the interval's mean standard error
#: per sqrt(1/n1 + 1/n0) (measured, see :func:`smallest_showable`)
NULL_EST_FACTOR = 0.62
NULL_SE_FACTOR = 0.61
METHOD = ("5 folds of whole units: for each fold, the attacker with the largest AUC and "
          "its threshold of the largest TPR − FPR chosen on the other 4 and applied to it, so "
          "every candidate is scored once by a rule that never saw it; the figure is TPR − FPR "
          "of the pooled held-out flags; normal interval, standard error linearized over "
          "units and scaled by 1.25 for the rules' choice (calibrated)")


@dataclass(frozen=True)
class AdvantageResult:
    """A cross-fitted membership advantage with its 95% interval.

    ``value`` is the mean held-out TPR − FPR of the rule chosen on the other half; ``ci`` its
    normal 95% interval (standard error ``se``); ``auc`` the held-out AUC of the attackers
    chosen; ``tpr_at_fpr`` the TPR at FPR 1% (pooled held-out halves, Wilson interval), empty
    when a half holds fewer than 100 non-members; ``null_upper`` the upper bound a leak-free
    release would show at these sizes (1.96 × its standard error).
    """

    value: float
    ci: tuple[float, float]
    se: float
    attackers: tuple[str, ...]
    auc: float
    tpr_at_fpr: dict[str, Any]
    n_members: int
    n_nonmembers: int
    n_units: int
    unit: str
    null_upper: float
    member_rate: float = float("nan")
    nonmember_rate: float = float("nan")
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def balanced_accuracy(self) -> float:
        """How often the attacker guesses membership right, members and non-members weighed
        equally: (1 + advantage) / 2."""
        return (1.0 + self.value) / 2.0

    def to_dict(self) -> dict[str, Any]:
        return {"advantage": self.value, "ci": list(self.ci), "se": self.se,
                "attackers": list(self.attackers), "auc": self.auc,
                "tpr_at_fpr": self.tpr_at_fpr, "n_members": self.n_members,
                "n_nonmembers": self.n_nonmembers, "n_units": self.n_units, "unit": self.unit,
                "null_upper": self.null_upper,
                "member_rate": self.member_rate, "nonmember_rate": self.nonmember_rate,
                "balanced_accuracy": self.balanced_accuracy}


# ---------------------------------------------------------------------- conversions
def advantage_from_auc(auc: float) -> float:
    """The largest TPR − FPR of an equal-variance binormal ROC of this AUC.

    The ROC of two normals a distance d apart (unit variance) has AUC = Φ(d/√2) and its
    largest TPR − FPR, at the midpoint threshold, is 2Φ(d/2) − 1.

    Examples
    --------
    >>> round(advantage_from_auc(0.5), 6), round(advantage_from_auc(0.6), 4)
    (0.0, 0.1422)
    """
    d = np.sqrt(2.0) * ppf(float(auc))
    return float(2.0 * cdf(d / 2.0) - 1.0)


def auc_from_advantage(advantage: float) -> float:
    """The AUC of the equal-variance binormal ROC whose largest TPR − FPR is ``advantage``
    (inverse of :func:`advantage_from_auc`).

    >>> round(auc_from_advantage(0.1422), 3)
    0.6
    """
    d = 2.0 * ppf((1.0 + float(advantage)) / 2.0)
    return float(cdf(d / np.sqrt(2.0)))


def null_se(n_members: float, n_nonmembers: float) -> float:
    """The standard error the interval uses for a leak-free release with these numbers of
    member and non-member units: sqrt(0.61² · (1/n1 + 1/n0)) (see ``NULL_VARIANCE_FACTOR``).

    >>> round(null_se(600, 600), 4)
    0.0352
    """
    if n_members <= 0 or n_nonmembers <= 0:
        return float("inf")
    return float(np.sqrt(NULL_VARIANCE_FACTOR * (1.0 / n_members + 1.0 / n_nonmembers)))


def smallest_showable(n_members: float, n_nonmembers: float) -> float:
    """The smallest target a leak-free release passes with probability ≥ 95% at these sizes.

    Its upper bound is estimate + 1.96·SE; under no signal the estimate has standard deviation
    ``NULL_EST_FACTOR``·√S and the interval's SE averages ``NULL_SE_FACTOR``·√S (S = 1/n1 +
    1/n0, measured over 300 leak-free draws of 3 and 45 attackers at 200–4000 candidates), so
    the bound stays below the target in 95% of draws when target ≥ (1.96·0.61 + 1.645·0.62)·√S
    ≈ 2.2·√S. The record level pools several games (:data:`~bioanon.evaluation.risks.base.
    RECORD_GAMES`; four with a quarter held out): four times the members, every record a
    non-member once at least.

    >>> round(smallest_showable(750, 2250), 3)       # 3000 records, 25% released, one game
    0.093
    >>> round(smallest_showable(3000, 3000), 3)      # the same records, four games pooled
    0.057
    """
    if n_members <= 0 or n_nonmembers <= 0:
        return float("inf")
    s = float(np.sqrt(1.0 / n_members + 1.0 / n_nonmembers))
    return float((Z95 * NULL_SE_FACTOR + Z_PASS * NULL_EST_FACTOR) * s)


def margin_chance(target: float, se: float, sd: float, probability: float) -> float:
    """The chance that a release leaking nothing is chosen with margin: that its measured
    figure ``v`` (about normal around 0, standard deviation ``sd``), judged with standard
    error ``se``, gives a fresh evaluation a chance of at least ``probability`` to pass
    (:func:`~.pass_chance.fresh_pass_chance`, which falls as ``v`` grows: ``v`` at most the
    reading :func:`~.pass_chance.reading_for` finds)::

        Φ(reading_for(probability, se, target) / sd)

    0 where no reading states that chance (even a true 0 passes less often:
    :func:`~.pass_chance.most_stated`). :func:`smallest_showable` asks that the leak-free
    release's *upper bound* pass 95% of the time; the search's margin asks more of it, so a
    target just showable can still refuse at some seeds.

    >>> round(margin_chance(0.05, 0.0136, 0.0136, 0.8), 2)   # FSDD's recognition, 6 speakers
    0.45
    >>> round(margin_chance(0.10, 0.0157, 0.016, 0.8), 2)    # FSDD's record membership
    1.0
    >>> margin_chance(0.05, 0.018, 0.018, 0.8)               # no reading has the margin
    0.0
    """
    from .pass_chance import reading_for

    if not (se > 0 and sd > 0) or not np.isfinite(target):
        return 0.0
    v = reading_for(probability, se, float(target))
    return float(cdf(v / sd)) if np.isfinite(v) else 0.0


# ---------------------------------------------------------------------- the statistic
def _units(member: np.ndarray, units: np.ndarray | None) -> tuple[np.ndarray, int]:
    if units is None:
        return np.arange(member.size), member.size
    codes = np.unique(np.asarray(units).astype(str), return_inverse=True)[1]
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def _curves(order: np.ndarray, ends: np.ndarray, member: np.ndarray,
            sel: np.ndarray) -> np.ndarray:
    """TPR − FPR among the candidates ``sel`` flagging the top j tie groups, j = 0..len(ends)."""
    cm = np.r_[0.0, np.cumsum((member & sel)[order])[ends]]
    cn = np.r_[0.0, np.cumsum((~member & sel)[order])[ends]]
    tm, tn = cm[-1], cn[-1]
    if tm == 0 or tn == 0:
        return np.full(cm.size, np.nan)
    return cm / tm - cn / tn


def _way_se(flag: np.ndarray, member: np.ndarray, unit_of: np.ndarray,
            sel: np.ndarray) -> float:
    """Standard error of TPR − FPR of a fixed rule (``flag``) on the candidates ``sel``,
    linearized over units (a unit's candidates are correlated; one candidate per unit gives
    the two-binomial formula)."""
    u = unit_of[sel]
    m, f = member[sel], flag[sel].astype(np.float64)
    n_m, n_n = float(m.sum()), float((~m).sum())
    if n_m == 0 or n_n == 0:
        return float("nan")
    tpr, fpr = float(f[m].mean()), float(f[~m].mean())
    k = int(u.max()) + 1
    r = (np.bincount(u, weights=(f - tpr) * m, minlength=k) / n_m
         - np.bincount(u, weights=(f - fpr) * ~m, minlength=k) / n_n)
    used = np.bincount(u, minlength=k) > 0
    n_u = int(used.sum())
    if n_u < 2:
        return float("nan")
    return float(np.sqrt(n_u / (n_u - 1) * (r[used] ** 2).sum()))


#: folds of the cross-fitted choice: the attacker and threshold are chosen on k − 1 folds and
#: the rule is applied to the held-out fold, so every candidate is scored once, by a rule that
#: never saw it
K_FOLDS = 5
#: the linearized standard error takes each fold's rule as fixed; the rules are chosen on
#: the other folds' candidates, which adds variance: under no signal the estimate's standard
#: deviation is 1.22–1.28 × the linearized error, 1.1–1.2 × with a leak of 0.09–0.15
#: (``benchmarks/advantage_estimator.py``, 200 draws per row), so the error is scaled by 1.25
CV_SE_INFLATION = 1.25


def _fold_of(member: np.ndarray, unit_of: np.ndarray, n_units: int, k: int,
             rng: np.random.Generator) -> np.ndarray:
    """A fold per unit: a random order, stratified by the unit's share of member candidates
    (each fold holds members and non-members alike), then dealt round-robin."""
    share = np.bincount(unit_of, weights=member, minlength=n_units) / np.maximum(
        np.bincount(unit_of, minlength=n_units), 1)
    perm = rng.permutation(n_units)
    dealt = perm[np.argsort(share[perm], kind="stable")]
    fold = np.empty(n_units, np.int64)
    fold[dealt] = np.arange(n_units) % k
    return fold


def _auc_on(prep: tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
            member: np.ndarray, sel: np.ndarray) -> float:
    """The AUC (ties count half) of one attacker among the candidates ``sel``: one pass over
    its tie groups, in its precomputed descending order."""
    _, order, ends, _, group = prep
    m = (member & sel)[order].astype(np.float64)
    n = (~member & sel)[order].astype(np.float64)
    n_groups = ends.size
    mg = np.bincount(group, weights=m, minlength=n_groups)
    ng = np.bincount(group, weights=n, minlength=n_groups)
    tm, tn = mg.sum(), ng.sum()
    if tm == 0 or tn == 0:
        return float("nan")
    below = tn - np.cumsum(ng)  # non-members in the groups scored lower
    return float(((mg * below).sum() + 0.5 * (mg * ng).sum()) / (tm * tn))


def _rule(prep: tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
          member: np.ndarray, sel: np.ndarray) -> np.ndarray | None:
    """The flags (score at or above the threshold of the largest TPR − FPR among ``sel``) of
    one attacker, for every candidate; None when ``sel`` lacks members or non-members."""
    _, order, ends, s, _ = prep
    curve = _curves(order, ends, member, sel)
    if not np.isfinite(curve).any():
        return None
    j = int(np.nan_to_num(curve, nan=-np.inf).argmax())
    thr = s[order[ends[j - 1]]] if j > 0 else np.inf  # flag the top j tie groups
    return s >= thr


def _crossfit(prepared: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
              member: np.ndarray, fold: np.ndarray, unit_of: np.ndarray, k: int
              ) -> tuple[float, float, list[str], np.ndarray, np.ndarray]:
    """(held-out advantage, its standard error, attacker chosen per fold, the held-out flags,
    which candidates were scored).

    For each fold, the attacker with the largest AUC on the other k − 1 folds is chosen (a
    smooth criterion: choosing among many attackers by their noisy best TPR − FPR would pull
    the held-out figure down, diluting the strongest), then its threshold of the largest
    TPR − FPR there; that fixed rule flags the held-out fold's candidates. Every candidate
    is scored once; the figure is TPR − FPR of the pooled held-out flags and its standard
    error is linearized over units, the rules taken as fixed."""
    cand_fold = fold[unit_of]
    flags = np.zeros(member.size, bool)
    scored = np.zeros(member.size, bool)
    names: list[str] = []
    for f in range(k):
        test = cand_fold == f
        train = ~test
        if not test.any():
            continue
        aucs = np.array([_auc_on(p, member, train) for p in prepared])
        if not np.isfinite(aucs).any():
            continue
        best = prepared[int(np.nan_to_num(aucs, nan=-np.inf).argmax())]
        flag = _rule(best, member, train)
        if flag is None:
            continue
        flags[test] = flag[test]
        scored |= test
        names.append(best[0])
    m, n = member & scored, ~member & scored
    if not m.any() or not n.any():
        return float("nan"), float("nan"), names, flags, scored
    value = float(flags[m].mean() - flags[n].mean())
    se = CV_SE_INFLATION * _way_se(flags, member, unit_of, scored)
    return value, se, names, flags, scored


def _prepare(scores: Mapping[str, np.ndarray]
             ) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    out = []
    for name in sorted(scores):
        s = np.nan_to_num(np.asarray(scores[name], np.float64), nan=-np.inf)
        order = np.argsort(-s, kind="stable")
        ss = s[order]
        ends = np.flatnonzero(np.r_[ss[1:] != ss[:-1], True])  # last index of each tie group
        group = np.r_[0, np.cumsum(ss[1:] != ss[:-1])]  # tie group of each sorted position
        out.append((name, order, ends, s, group))
    return out


def crossfit_advantage(scores: Mapping[str, np.ndarray], member: np.ndarray,
                       half: np.ndarray | None = None, units: np.ndarray | None = None,
                       rng: np.random.Generator | None = None, unit: str = "records",
                       confidence: float = 0.95) -> AdvantageResult:
    """The cross-fitted membership advantage of the strongest attacker.

    Parameters
    ----------
    scores : {attacker: score per candidate}, higher meaning "member" (the attackers' own
        convention; the direction is not flipped: in the evaluation's design a reversed score
        can read how the attacker's reference sample was built rather than the release)
    member : whether each candidate is in the release
    half : the first half, per unit (``units`` given) or per candidate; drawn from ``rng``
        when None
    units : the unit of each candidate (an identity), or None (each candidate its own unit).
        Halves take whole units and the standard error is linearized over units: candidates
        of one identity (its records, or its score against each of several releases) stay
        together.
    rng : the generator of the halves (seeded 0 when None)
    unit : the word for a unit in the report ("records", "identities", "groups")

    Returns
    -------
    AdvantageResult

    Examples
    --------
    >>> m = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    >>> s = {"noise": np.random.default_rng(1).normal(size=100)}
    >>> r = crossfit_advantage(s, m)
    >>> bool(r.ci[0] < 0 < r.ci[1]), r.unit
    (True, 'records')
    """
    member = np.asarray(member, dtype=bool).ravel()
    rng = rng if rng is not None else np.random.default_rng(0)
    unit_of, n_units = _units(member, units)
    if half is None:
        k = int(min(K_FOLDS, max(2, n_units)))
        fold = _fold_of(member, unit_of, n_units, k, rng)
    else:  # two folds given by the caller (whole units)
        half = np.asarray(half, dtype=bool).ravel()
        if half.size == n_units:
            half_u = half
        else:  # per candidate, constant within units
            half_u = np.zeros(n_units, bool)
            half_u[unit_of] = half
        k, fold = 2, (~half_u).astype(np.int64)
    prepared = _prepare(scores)
    value, se, attackers, flags, scored = _crossfit(prepared, member, fold, unit_of, k)
    n_m, n_n = _unit_counts(member, unit_of, n_units)
    se_null = null_se(n_m, n_n)
    if not np.isfinite(se):
        se = se_null
    z = float(ppf(0.5 + confidence / 2))
    ci = ((max(-1.0, value - z * se), min(1.0, value + z * se)) if np.isfinite(value)
          else (float("nan"), float("nan")))
    auc, tpr = _heldout_auc_tpr(scores, member, fold[unit_of], attackers, k)
    tpr_rule = float(flags[member & scored].mean()) if (member & scored).any() else float("nan")
    fpr_rule = (float(flags[~member & scored].mean()) if (~member & scored).any()
                else float("nan"))
    return AdvantageResult(value, ci, se, tuple(attackers), auc, tpr, int(member.sum()),
                           int((~member).sum()), n_units, unit,
                           min(1.0, z * se_null),
                           extras={"null_se": se_null, "member_units": n_m,
                                   "nonmember_units": n_n, "folds": k,
                                   "rule_tpr": tpr_rule, "rule_fpr": fpr_rule,
                                   "method": METHOD})


def with_game_spread(adv: AdvantageResult, per_game: list[float],
                     confidence: float = 0.95) -> AdvantageResult:
    """The pooled figure of several games (each its own release) with an interval that also
    covers the spread between releases: the standard error is the larger of the pooled one
    and the games' own spread (their standard deviation over √games). A release's draw (its
    noise, its donors) moves the advantage from one release to the next; the linearized error
    of one evaluation does not see that, several games do (``extras['per_game']``).

    >>> r = crossfit_advantage({"s": np.r_[np.ones(50), np.zeros(50)]},
    ...                        np.r_[np.ones(50, bool), np.zeros(50, bool)])
    >>> w = with_game_spread(r, [0.8, 1.0])
    >>> round(w.se, 3), w.extras["per_game"]
    (0.1, [0.8, 1.0])
    """
    vals = np.asarray([v for v in per_game if np.isfinite(v)], np.float64)
    extras = {**adv.extras, "per_game": [float(v) for v in per_game]}
    if vals.size < 2 or not np.isfinite(adv.value):
        return replace(adv, extras=extras)
    spread = float(vals.std(ddof=1) / np.sqrt(vals.size))
    extras["se_between_games"] = spread
    if spread <= adv.se:
        return replace(adv, extras=extras)
    z = float(ppf(0.5 + confidence / 2))
    ci = (max(-1.0, adv.value - z * spread), min(1.0, adv.value + z * spread))
    return replace(adv, se=spread, ci=ci, extras=extras)


def _unit_counts(member: np.ndarray, unit_of: np.ndarray, n_units: int) -> tuple[float, float]:
    """Member and non-member candidates counted in units (a unit holding both, as at identity
    level over several releases, counts on both sides)."""
    m = np.bincount(unit_of, weights=member, minlength=n_units) > 0
    n = np.bincount(unit_of, weights=~member, minlength=n_units) > 0
    return float(m.sum()), float(n.sum())


def _heldout_auc_tpr(scores: Mapping[str, np.ndarray], member: np.ndarray,
                     cand_fold: np.ndarray, attackers: list[str], k: int
                     ) -> tuple[float, dict[str, Any]]:
    """The held-out AUC of the attacker chosen for each fold (their mean) and their TPR at
    FPR 1% (pooled over the held-out folds, each holding 100 non-members or more)."""
    if len(attackers) != k:  # a fold without a rule (e.g. it holds no member)
        return float("nan"), {}
    aucs, tp, n_tp, fewest = [], 0, 0, np.inf
    for f, name in enumerate(attackers):
        test = cand_fold == f
        s = np.asarray(scores[name], np.float64)
        aucs.append(rank_auc(s[test & member], s[test & ~member]))
        a, n = tpr_at_fpr(s[test & member], s[test & ~member], 0.01)
        tp, n_tp = tp + a, n_tp + n
        fewest = min(fewest, int((test & ~member).sum()))
    a = np.asarray(aucs, np.float64)
    auc = float(np.nanmean(a)) if np.isfinite(a).any() else float("nan")
    tpr: dict[str, Any] = {}
    if n_tp and fewest >= 100:
        tpr["0.01"] = {"tpr": tp / n_tp, "ci": list(wilson_interval(tp, n_tp)), "n": n_tp}
    return auc, tpr


def inference_advantage(hits: Mapping[str, np.ndarray], member: np.ndarray,
                        half: np.ndarray | None = None, units: np.ndarray | None = None,
                        rng: np.random.Generator | None = None,
                        unit: str = "records") -> AdvantageResult:
    """An inference on members read as a membership test: flag "member" when the inference
    is right, so TPR = p1 (success on members), FPR = p0 (on non-members) and the advantage
    is p1 − p0, cross-fitted like any attacker (the attack chosen on one half).

    ``hits`` : {attack: whether it inferred each candidate's label right}.

    Examples
    --------
    >>> m = np.r_[np.ones(40, bool), np.zeros(40, bool)]
    >>> hits = {"nearest": np.r_[np.ones(40, bool), np.zeros(20, bool), np.ones(20, bool)]}
    >>> r = inference_advantage(hits, m)
    >>> round(r.value, 1), round(r.member_rate, 1), round(r.nonmember_rate, 1)
    (0.5, 1.0, 0.5)
    """
    res = crossfit_advantage({k: np.asarray(v, np.float64) for k, v in hits.items()},
                             member, half, units, rng, unit)
    member = np.asarray(member, bool)
    rates = [np.asarray(hits[a], np.float64) for a in res.attackers]
    p1 = float(np.mean([r[member].mean() for r in rates]))
    p0 = float(np.mean([r[~member].mean() for r in rates]))
    return AdvantageResult(**{**res.__dict__, "member_rate": p1, "nonmember_rate": p0})
