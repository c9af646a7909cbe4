"""Pure statistics behind the risks: TPR at a fixed FPR, the cross-fitted AUC, the advantage
of an inference on members over the same inference on non-members, and the judgement of a
figure against its target (met, not met, or inconclusive at this size).

No I/O and no randomness beyond the halves passed in.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .intervals import auc_interval, newcombe_difference, rank_auc
from .normal import ppf
from .results import INCONCLUSIVE
from .scores import wilson_interval


def tpr_at_fpr(pos: np.ndarray, neg: np.ndarray, fpr: float) -> tuple[int, int]:
    """True positives at the threshold that lets at most ``fpr`` of the negatives through.

    The threshold is the smallest score above which at most ``floor(fpr × n_neg)`` negatives
    score (strictly greater). Returns ``(true positives, positives)``; with fewer than
    ``1 / fpr`` negatives the rate is not defined and ``(0, 0)`` is returned.

    Examples
    --------
    >>> neg = np.arange(100.0)            # one negative (99) may pass at 1%
    >>> pos = np.array([99.5, 120.0, 98.0, 50.0])
    >>> tpr_at_fpr(pos, neg, 0.01)        # threshold 98: 99.5 and 120 pass
    (2, 4)
    >>> tpr_at_fpr(pos, neg[:50], 0.01)
    (0, 0)
    """
    pos = np.asarray(pos, dtype=np.float64).ravel()
    neg = np.sort(np.asarray(neg, dtype=np.float64).ravel())
    allowed = int(np.floor(fpr * neg.size + 1e-9))
    if neg.size == 0 or allowed < 1 or pos.size == 0:
        return 0, 0
    thr = neg[neg.size - allowed - 1]  # at most `allowed` negatives lie strictly above
    return int((pos > thr).sum()), int(pos.size)


def crossfit_auc(scores: Mapping[str, np.ndarray], member: np.ndarray, half: np.ndarray,
                 fprs: tuple[float, ...] = (0.01, 0.001)
                 ) -> dict[str, object]:
    """The strongest attacker chosen on one half of the candidates, scored on the other.

    ``half`` marks the first half (boolean per candidate). Each way, the attacker with the
    highest AUC on one half is scored on the other; the figure is the mean of the two held-out
    AUCs, with the Hanley–McNeil interval at the full numbers of members and non-members.
    TPR at each FPR pools the held-out halves (threshold from each half's own non-members) with
    a Wilson interval; an FPR is left out when a half holds fewer than 1/FPR non-members.

    Examples
    --------
    >>> m = np.array([1, 1, 1, 1, 0, 0, 0, 0], bool)
    >>> good = np.array([4., 3, 4, 3, 1, 2, 1, 2])
    >>> s = {"good": good, "bad": -good}
    >>> h = np.array([1, 1, 0, 0, 1, 1, 0, 0], bool)
    >>> r = crossfit_auc(s, m, h)
    >>> r["auc"], r["attackers"]
    (1.0, ['good', 'good'])
    """
    member = np.asarray(member, dtype=bool)
    half = np.asarray(half, dtype=bool)
    names = sorted(scores)
    aucs, chosen = [], []
    tp = {f: [0, 0] for f in fprs}
    for pick, score in ((half, ~half), (~half, half)):
        per = {k: rank_auc(np.asarray(scores[k])[pick & member],
                           np.asarray(scores[k])[pick & ~member]) for k in names}
        best = max(names, key=lambda k: (np.nan_to_num(per[k], nan=-1.0), k))
        chosen.append(best)
        s = np.asarray(scores[best], dtype=np.float64)
        aucs.append(rank_auc(s[score & member], s[score & ~member]))
        for f in fprs:
            a, n = tpr_at_fpr(s[score & member], s[score & ~member], f)
            tp[f][0] += a
            tp[f][1] += n
    auc = float(np.nanmean(aucs)) if np.isfinite(aucs).any() else float("nan")
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    tpr = {}
    for f in fprs:
        a, n = tp[f]
        if n == 0 or min(int((half & ~member).sum()), int((~half & ~member).sum())) < 1 / f:
            continue
        tpr[f"{f:g}"] = {"tpr": a / n, "ci": list(wilson_interval(a, n)), "n": n}
    return {"auc": auc, "ci": auc_interval(auc, n_pos, n_neg), "attackers": chosen,
            "n_members": n_pos, "n_nonmembers": n_neg, "tpr_at_fpr": tpr}


def null_auc_upper(n_pos: int, n_neg: int) -> float:
    """Upper 95% bound of an AUC of exactly 0.5 at these sizes (the best a leak-free release
    can show): when it exceeds the target, the level cannot be judged at this size.

    Examples
    --------
    >>> round(null_auc_upper(17, 7), 3), round(null_auc_upper(600, 600), 3)
    (0.759, 0.533)
    """
    return auc_interval(0.5, n_pos, n_neg)[1]


def difference_of_means(a: np.ndarray, b: np.ndarray,
                        confidence: float = 0.95) -> tuple[float, float, float]:
    """mean(a) − mean(b) with a Welch normal interval (for per-identity success rates).

    Examples
    --------
    >>> a, b = np.array([1., 1, 0, 1]), np.array([0., 1, 0, 0])
    >>> [round(v, 3) for v in difference_of_means(a, b)]
    [0.5, -0.193, 1.193]
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.size < 2 or b.size < 2:
        d = float(a.mean() - b.mean()) if a.size and b.size else float("nan")
        return d, -1.0, 1.0
    d = float(a.mean() - b.mean())
    se = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    z = float(ppf(0.5 + confidence / 2))
    return d, d - z * se, d + z * se


def inference_advantage(member_hits: np.ndarray, nonmember_hits: np.ndarray
                        ) -> tuple[float, float, float, float, float]:
    """Success on members − success on non-members (the control), Newcombe interval.

    Returns ``(advantage, low, high, member rate, non-member rate)``.

    Examples
    --------
    >>> adv = inference_advantage(np.array([1, 1, 1, 0]), np.array([1, 0, 0, 0]))
    >>> [round(v, 3) for v in adv]
    [0.5, -0.135, 0.789, 0.75, 0.25]
    """
    m = np.asarray(member_hits, bool)
    c = np.asarray(nonmember_hits, bool)
    d, lo, hi = newcombe_difference(int(m.sum()), m.size, int(c.sum()), c.size)
    return d, lo, hi, float(m.mean()) if m.size else float("nan"), \
        float(c.mean()) if c.size else float("nan")


def judge(upper: float, target: float, null_upper: float, lower: float | None = None) -> str:
    """"met" when ``upper`` ≤ ``target``; "not met" when the figure clearly exceeds the target
    (``lower`` above it) or when a leak-free release could have met it at this size;
    "inconclusive at this size" when even a leak-free release would show an upper bound
    (``null_upper``) above the target (the level cannot be judged at this size).

    Examples
    --------
    >>> judge(0.55, 0.6, 0.53), judge(0.7, 0.6, 0.53), judge(0.7, 0.6, 0.75)
    ('met', 'not met', 'inconclusive at this size')
    >>> judge(0.9, 0.6, 0.75, lower=0.65)   # clearly above the target: a result
    'not met'
    """
    if np.isfinite(upper) and upper <= target:
        return "met"
    if lower is not None and np.isfinite(lower) and lower > target:
        return "not met"
    if not np.isfinite(upper) or null_upper > target:
        return INCONCLUSIVE
    return "not met"


def _fold_aucs(scores: list[np.ndarray], members: list[np.ndarray], sel: np.ndarray,
               idx: np.ndarray | None = None) -> float:
    """Mean over folds of the AUC on the identities ``sel`` (rows ``idx`` when resampled)."""
    out = []
    for s, m in zip(scores, members, strict=True):
        if idx is not None:
            s, m = s[idx], m[idx]
        out.append(rank_auc(s[sel & m], s[sel & ~m]))
    a = np.asarray(out, np.float64)
    return float(np.nanmean(a)) if np.isfinite(a).any() else float("nan")


def _crossfit_folds_once(scores: list[Mapping[str, np.ndarray]], members: list[np.ndarray],
                         half: np.ndarray, names: list[str], idx: np.ndarray | None = None
                         ) -> tuple[float, list[str]]:
    aucs, chosen = [], []
    for pick, score in ((half, ~half), (~half, half)):
        per = {k: _fold_aucs([f[k] for f in scores], members, pick, idx) for k in names}
        best = max(names, key=lambda k: (np.nan_to_num(per[k], nan=-1.0), k))
        chosen.append(best)
        aucs.append(_fold_aucs([f[best] for f in scores], members, score, idx))
    a = np.asarray(aucs, np.float64)
    return (float(np.nanmean(a)) if np.isfinite(a).any() else float("nan")), chosen


def crossfit_auc_folds(scores: list[Mapping[str, np.ndarray]], members: list[np.ndarray],
                       half: np.ndarray, rng: np.random.Generator, n_boot: int = 400,
                       confidence: float = 0.95) -> dict[str, object]:
    """The cross-fitted AUC over K releases, each leaving out one fold of the identities.

    Every identity is a non-member of exactly one release and a member of the others, so all
    of them serve as controls. ``scores[f][name]`` scores each identity against release f,
    ``members[f]`` marks the identities in it, and ``half`` (per identity) splits them for
    cross-fitting: the attacker with the highest fold-averaged AUC on one half is scored on
    the other, both ways. The interval is normal, its standard error from a bootstrap over
    identities (each carries its scores in every fold and its half) that redoes the choice of
    attacker in every resample, so it is as wide as the whole procedure's spread;
    ``null_upper`` is 0.5 plus its half-width (the bound a leak-free release would show at
    this size).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m0 = np.arange(40) >= 20; m1 = ~m0           # two folds of 20 identities
    >>> s0 = {"copy": m0 * 1.0}; s1 = {"copy": m1 * 1.0}
    >>> h = np.arange(40) % 2 == 0
    >>> r = crossfit_auc_folds([s0, s1], [m0, m1], h, rng, n_boot=50)
    >>> r["auc"], r["attackers"], r["n_identities"]
    (1.0, ['copy', 'copy'], 40)
    """
    half = np.asarray(half, dtype=bool)
    members = [np.asarray(m, dtype=bool) for m in members]
    names = sorted(scores[0])
    auc, chosen = _crossfit_folds_once(scores, members, half, names)
    n = half.size
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        boots.append(_crossfit_folds_once(scores, members, half[idx], names, idx)[0])
    b = np.asarray(boots, np.float64)
    b = b[np.isfinite(b)]
    if b.size < 10 or not np.isfinite(auc):
        lo, hi = 0.0, 1.0
    else:
        # centred on the estimate: a resample re-chooses the attacker on fewer distinct
        # identities and reads low, so its percentiles would sit below the figure
        hw = float(ppf(0.5 + confidence / 2)) * float(b.std(ddof=1))
        lo, hi = max(0.0, auc - hw), min(1.0, auc + hw)
    return {"auc": auc, "ci": (lo, hi), "attackers": chosen,
            "null_upper": min(1.0, 0.5 + (hi - lo) / 2), "n_identities": n,
            "n_folds": len(scores), "n_boot": n_boot,
            "n_members": int(np.mean([m.sum() for m in members])),
            "n_nonmembers": int(np.mean([(~m).sum() for m in members]))}


def paired_advantage(member_rate: np.ndarray, control_rate: np.ndarray,
                     confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Mean over identities of (success as a member − success as a non-member), with a
    normal interval for paired differences; returns ``(mean, low, high, null upper)``, the
    null upper being the half-width (the bound a leak-free release would show).

    Examples
    --------
    >>> m = np.array([1., 1, 0.5, 1]); c = np.array([0.5, 1, 0.5, 0.5])
    >>> [round(v, 3) for v in paired_advantage(m, c)]
    [0.25, -0.033, 0.533, 0.283]
    """
    d = np.asarray(member_rate, np.float64) - np.asarray(control_rate, np.float64)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return (float(d.mean()) if d.size else float("nan")), -1.0, 1.0, 1.0
    z = float(ppf(0.5 + confidence / 2))
    hw = z * float(d.std(ddof=1)) / float(np.sqrt(d.size))
    m = float(d.mean())
    return m, m - hw, m + hw, hw
