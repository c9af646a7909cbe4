"""Pure statistics behind the risks: TPR at a fixed FPR, the cross-fitted AUC, the advantage
of an inference on members over the same inference on non-members, and the judgement of a
figure against its target (met, not met, or not covered at this size).

No I/O and no randomness beyond the halves passed in.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.stats import norm

from .intervals import auc_interval, newcombe_difference, rank_auc
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
    z = float(norm.ppf(0.5 + confidence / 2))
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
    (``lower`` above it) or when a leak-free release could have met it at this size; "not
    covered" when even a leak-free release would show an upper bound (``null_upper``) above
    the target (the level cannot be judged at this size).

    Examples
    --------
    >>> judge(0.55, 0.6, 0.53), judge(0.7, 0.6, 0.53), judge(0.7, 0.6, 0.75)
    ('met', 'not met', 'not covered')
    >>> judge(0.9, 0.6, 0.75, lower=0.65)   # clearly above the target: a result
    'not met'
    """
    if np.isfinite(upper) and upper <= target:
        return "met"
    if lower is not None and np.isfinite(lower) and lower > target:
        return "not met"
    if not np.isfinite(upper) or null_upper > target:
        return "not covered"
    return "not met"
