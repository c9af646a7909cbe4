"""Inference on members: what does the release tell about X's labels beyond what it tells
about a non-member?

An attacker holding a person's clear records infers that person's released labels (the
interest and additional columns the release carries) from the release, either by recognition
(the label of the nearest released record) or through the records they contributed to
(:func:`bioanon.attack.tracing.traced_labels`). The same attack on non-members is the control
(as in Anonymeter): what the release teaches about anyone. The figure is the strongest
attack's success on members minus the strongest attack's success on non-members (each chosen
on one half of the candidates and scored on the other), for the label column where it is
largest. Record level: paired by identity where 20 or more identities hold members and
non-members (each identity's member success minus its non-member success, averaged over
identities, normal interval), else a Newcombe interval over records. Identity level: K
releases each leave one fold of the identities out, so every identity is scored as a member
and as a non-member; the figure is the mean paired difference over identities, with its
normal interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attack.tracing import _unit, traced_labels
from ...metrics.intervals import newcombe_difference
from ...metrics.results import RiskResult
from ...metrics.risk_stats import difference_of_means, paired_advantage
from .base import RiskContext, not_covered, risk_result

BASELINE_NAME = "non-members"
#: fewest identities holding both members and non-members for the paired record-level figure
PAIRED_MIN_IDENTITIES = 20


def nearest_labels(candidates: np.ndarray, released: np.ndarray, released_labels: np.ndarray,
                   block: int = 1024) -> np.ndarray:
    """The label of each candidate's nearest released record (cosine, standardized)."""
    R = np.asarray(released, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    Ru = _unit((R - mu) / sd)
    Cu = _unit((np.asarray(candidates, np.float64) - mu) / sd)
    idx = np.empty(Cu.shape[0], dtype=np.int64)
    for s in range(0, Cu.shape[0], block):
        idx[s:s + block] = (Cu[s:s + block] @ Ru.T).argmax(axis=1)
    return np.asarray(released_labels).astype(str)[idx]


def centroid_labels(candidates: np.ndarray, released: np.ndarray,
                    released_labels: np.ndarray) -> np.ndarray:
    """The label of the nearest released class mean (Euclidean, standardized): what the
    release teaches about anyone, member or not.

    Examples
    --------
    >>> R = np.array([[0.0, 0], [0, 1], [5, 5], [5, 6]]); y = np.array(list("aabb"))
    >>> centroid_labels(np.array([[1.0, 1], [4, 4]]), R, y).tolist()
    ['a', 'b']
    """
    from ...attack.tracing import class_means

    R = np.asarray(released, np.float64)
    mu, sd = R.mean(axis=0), R.std(axis=0)
    sd = np.where(sd == 0, 1.0, sd)
    classes, means = class_means((R - mu) / sd, released_labels)
    C = (np.asarray(candidates, np.float64) - mu) / sd
    d = (C * C).sum(1)[:, None] - 2 * C @ means.T + (means * means).sum(1)[None, :]
    return classes[d.argmin(axis=1)]


def _hits(ctx: RiskContext, cand: np.ndarray, truth: dict[str, np.ndarray],
          released: np.ndarray, rel_labels: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {}
    for col, y in truth.items():
        out[f"nearest released, '{col}'"] = nearest_labels(cand, released,
                                                           rel_labels[col]) == y
        out[f"nearest released class mean, '{col}'"] = centroid_labels(
            cand, released, rel_labels[col]) == y
        for top in ctx.tops():
            out[f"tracing, best {top if top == 1 else f'g={top}'}, '{col}'"] = traced_labels(
                cand, released, rel_labels[col], top=top) == y
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

    def __init__(self, ctx: RiskContext, target: float) -> None:
        self.ctx = ctx
        self.target = target

    def evaluate(self) -> InferenceRisk:
        ctx = self.ctx
        train, test = ctx.train, ctx.test
        cols = list(ctx.label_columns)
        out: list[RiskResult] = []
        if not cols:
            out.append(not_covered("inference", "record", "advantage", self.target,
                                   "the release carries no label column"))
            self.results_ = out
            return self
        cand = np.vstack([test.X, train.X])
        member = np.r_[np.ones(test.n_records, bool), np.zeros(train.n_records, bool)]
        truth = {c: np.r_[test.labels[c].astype(str).to_numpy(),
                          train.labels[c].astype(str).to_numpy()] for c in cols}
        rel = {c: test.labels[c].astype(str).to_numpy() for c in cols}
        hits = _hits(ctx, cand, truth, ctx.anon_test, rel)
        level = "record" if ctx.group is None else "group"
        groups = None
        if ctx.group is not None:
            groups = np.r_[test.labels[ctx.group].astype(str).to_numpy(),
                           train.labels[ctx.group].astype(str).to_numpy()]
        people = np.r_[test.labels[ctx.sensitive].astype(str).to_numpy(),
                       train.labels[ctx.sensitive].astype(str).to_numpy()]
        out.append(self._judge(hits, member, groups, level, people))
        idr = ctx.identity_releases()
        if isinstance(idr, str):
            # said in words, never silent (also when a group split leaves it unmeasured)
            out.append(not_covered("inference", "identity", "advantage", self.target, idr,
                                   float("nan"), BASELINE_NAME))
        else:
            truth2 = {c: train.labels[c].astype(str).to_numpy() for c in cols}
            folds = [(_hits(ctx, train.X, truth2, rel.X,
                            {c: rel.labels[c].astype(str).to_numpy() for c in cols}),
                      rel.member) for rel in idr]
            out.append(self._judge_folds(folds, idr[0].ids))
        self.results_ = out
        return self

    def _judge(self, hits: dict[str, np.ndarray], member: np.ndarray,
               groups: np.ndarray | None, level: str,
               people: np.ndarray | None = None) -> RiskResult:
        codes = None
        if groups is None and people is not None:
            codes = np.unique(np.asarray(people).astype(str), return_inverse=True)[1]
        if groups is None:
            unit_of = np.arange(member.size)
        else:
            _, unit_of = np.unique(np.asarray(groups).astype(str), return_inverse=True)
        n_units = int(unit_of.max()) + 1
        half_u = self.ctx.rng(f"inference/{level}").permutation(n_units) < n_units // 2
        half = half_u[unit_of]
        columns = sorted({k.split("'")[1] for k in hits})
        best: tuple[float, ...] | None = None
        for col in columns:
            names = sorted(k for k in hits if k.split("'")[1] == col)
            held = np.zeros(member.size, bool)
            chosen: dict[str, list[str]] = {"members": [], "non-members": []}
            # the strongest attack on members and, apart, the strongest on non-members (the
            # control: what the release tells about anyone), each chosen on one half
            for who, sel in (("members", member), ("non-members", ~member)):
                for pick, score in ((half, ~half), (~half, half)):
                    k = max(names, key=lambda n: (float(hits[n][pick & sel].mean())
                                                  if (pick & sel).any() else -1.0, n))
                    chosen[who].append(k)
                    held[score & sel] = hits[k][score & sel]
            fig = self._interval(held, member, unit_of, n_units, groups is not None, codes)
            if best is None or fig[0] > best[0]:
                best = (*fig, col, chosen)  # type: ignore[assignment]
        assert best is not None
        d, lo, hi, null, m_rate, c_rate, n_m, n_c, paired, col, chosen = \
            best  # type: ignore[misc]
        unit = "records" if groups is None else ("identities" if level == "identity"
                                                 else "groups")
        how = ("Welch interval over per-group success rates" if groups is not None else
               f"paired by identity: the mean over {paired} identities of their members' "
               "success minus their non-members', normal interval" if paired else
               "Newcombe interval over records")
        who = (" | ".join(dict.fromkeys(chosen["members"])) + " (control: "
               + " | ".join(dict.fromkeys(chosen["non-members"])) + ")")
        extras = {"member_rate": m_rate, "nonmember_rate": c_rate, "n_members": n_m,
                  "n_nonmembers": n_c, "unit": unit, "column": col,
                  "columns_judged": columns,
                  "method": "per released label column, the strongest attack on members and "
                            "the strongest on non-members, each chosen on one half of the "
                            "candidates and scored on the other; the column with the largest "
                            "advantage is reported; " + how}
        return risk_result("inference", level, "advantage", d, (lo, hi), who, c_rate,
                           BASELINE_NAME, self.target, null, "", extras)

    def _judge_folds(self, folds: list[tuple[dict[str, np.ndarray], np.ndarray]],
                     ids: np.ndarray) -> RiskResult:
        """Identity level over K releases: each identity's success as a member (the releases
        holding it) against its success as a non-member (the one leaving it out), paired."""
        _, codes = np.unique(np.asarray(ids).astype(str), return_inverse=True)
        n = int(codes.max()) + 1
        m_rate: dict[str, np.ndarray] = {}
        c_rate: dict[str, np.ndarray] = {}
        for name in folds[0][0]:
            acc = np.zeros((4, n))
            for hits, member in folds:
                h = hits[name].astype(float)
                acc += [np.bincount(codes, weights=h * member, minlength=n),
                        np.bincount(codes, weights=member.astype(float), minlength=n),
                        np.bincount(codes, weights=h * ~member, minlength=n),
                        np.bincount(codes, weights=(~member).astype(float), minlength=n)]
            with np.errstate(invalid="ignore", divide="ignore"):
                m_rate[name], c_rate[name] = acc[0] / acc[1], acc[2] / acc[3]
        half = self.ctx.rng("inference/identity").permutation(n) < n // 2
        best: tuple[Any, ...] | None = None
        for col in sorted({k.split("'")[1] for k in m_rate}):
            names = sorted(k for k in m_rate if k.split("'")[1] == col)
            mh, ch = np.full(n, np.nan), np.full(n, np.nan)
            chosen: dict[str, list[str]] = {"members": [], "non-members": []}
            for pick, score in ((half, ~half), (~half, half)):
                km = max(names, key=lambda k: (float(np.nanmean(m_rate[k][pick])), k))
                kc = max(names, key=lambda k: (float(np.nanmean(c_rate[k][pick])), k))
                chosen["members"].append(km)
                chosen["non-members"].append(kc)
                mh[score], ch[score] = m_rate[km][score], c_rate[kc][score]
            d, lo, hi, null = paired_advantage(mh, ch)
            if best is None or d > best[0]:
                best = (d, lo, hi, null, float(np.nanmean(mh)), float(np.nanmean(ch)), col,
                        chosen)
        assert best is not None
        d, lo, hi, null, mr, cr, col, chosen = best
        who = (" | ".join(dict.fromkeys(chosen["members"])) + " (control: "
               + " | ".join(dict.fromkeys(chosen["non-members"])) + ")")
        extras = {"member_rate": mr, "nonmember_rate": cr, "n_members": n,
                  "n_nonmembers": n, "n_folds": len(folds), "unit": "identities",
                  "column": col,
                  "method": f"{len(folds)} releases, each leaving one fold of the identities "
                            "out; per identity, the attack's success as a member minus its "
                            "success as a non-member (each attack chosen on one half of the "
                            "identities, scored on the other); normal interval of the paired "
                            "differences; the column with the largest advantage is reported"}
        return risk_result("inference", "identity", "advantage", d, (lo, hi), who, cr,
                           BASELINE_NAME, self.target, null, "", extras)

    @staticmethod
    def _interval(held: np.ndarray, member: np.ndarray, unit_of: np.ndarray, n_units: int,
                  grouped: bool, people: np.ndarray | None = None) -> tuple[float, ...]:
        """(advantage, low, high, null upper, member rate, control rate, n members, n
        non-members, identities paired or 0) of a success array.

        Records of the same people sit on both sides, so where at least
        ``PAIRED_MIN_IDENTITIES`` identities hold members and non-members the difference is
        taken within each identity (what is easy or hard about a person cancels) and averaged
        over identities; otherwise the records are compared unpaired (Newcombe)."""
        m_rate = float(held[member].mean()) if member.any() else float("nan")
        c_rate = float(held[~member].mean()) if (~member).any() else float("nan")
        if not grouped and people is not None:
            k = int(people.max()) + 1
            nm = np.bincount(people, weights=member, minlength=k)
            nc = np.bincount(people, weights=~member, minlength=k)
            both = (nm > 0) & (nc > 0)
            if both.sum() >= PAIRED_MIN_IDENTITIES:
                mi = np.bincount(people, weights=held & member, minlength=k)[both] / nm[both]
                ci = np.bincount(people, weights=held & ~member, minlength=k)[both] / nc[both]
                d, lo, hi, null = paired_advantage(mi, ci)
                return (d, lo, hi, null, m_rate, c_rate, int(member.sum()),
                        int((~member).sum()), int(both.sum()))
        if not grouped:
            x1, n1 = int(held[member].sum()), int(member.sum())
            x2, n2 = int(held[~member].sum()), int((~member).sum())
            d, lo, hi = newcombe_difference(x1, n1, x2, n2)
            p = (x1 + x2) / max(1, n1 + n2)
            null = newcombe_difference(int(round(p * n1)), n1, int(round(p * n2)), n2)[2]
            return d, lo, hi, null, m_rate, c_rate, n1, n2, 0
        cnt = np.bincount(unit_of, minlength=n_units)
        per = np.bincount(unit_of, weights=held, minlength=n_units) / cnt
        um = np.bincount(unit_of, weights=member, minlength=n_units) / cnt > 0.5
        d, lo, hi = difference_of_means(per[um], per[~um])
        pooled = np.r_[per[um] - per[um].mean(), per[~um] - per[~um].mean()]
        null = difference_of_means(pooled[:um.sum()], pooled[um.sum():])[2]
        return d, lo, hi, null, m_rate, c_rate, int(um.sum()), int((~um).sum()), 0

    def results(self) -> list[RiskResult]:
        return list(self.results_)
