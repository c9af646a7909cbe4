"""The judge's calibration: how often does a release that leaks nothing fail a risk?

A leak-free release draws every record from a per-class Gaussian whose moments are fixed
before the evaluation (taken from the whole table, so members and non-members weigh the same
and the release holds nothing that sets a member apart). Over ``--seeds`` evaluations (each
seed a fresh split, fresh control identities, fresh draws) it reports, per risk and level:

- the mean and standard deviation of the judged figure (AUC: 0.5 is no signal; advantage: 0);
- the mean half-width of its 95% interval, beside 1.96 × the standard deviation across seeds
  (an honest interval is about as wide as the spread it claims);
- coverage: the share of intervals that hold the no-signal value (95% is the promise);
- the false-fail rate: the share of seeds where the risk was judged "not met" or "not covered"
  although nothing leaked, and the share where any risk failed (the verdict's false refusal).

Prints a table (with the load average) and writes JSON.

    PYTHONPATH=src python benchmarks/judge_calibration.py [--dataset synthetic300] [--seeds 20]

``--levels`` calibrates the named privacy levels (issue 27) instead: for each table size
(synthetic populations) and seed, one leak-free evaluation re-judged at every named level
(:data:`bioanon.levels.LEVELS`), counting, among the risks the plan calls showable at that
size and level, how often a leak-free release passes; an identity copy and vp-mix g=8 at the
same sizes, counting how often the verdict refuses them; and at 6 identities, how often the
leak-free release's recognition is failed ("not met": it should be met or inconclusive).

    PYTHONPATH=src python benchmarks/judge_calibration.py --levels [--seeds 30]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from bioanon.anonymize.base import AnonymizerMixin, label_values, split_input
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "judge_calibration.json"
NULL = {"AUC": 0.5, "advantage": 0.0}


class FixedClassGaussian(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """Each record → a fresh draw from its class's Gaussian, the moments fixed in advance.

    ``moments`` maps a class to (mean, sd); nothing is learnt from the records released, so
    the release cannot tell a member from a non-member.
    """

    def __init__(self, interest: str = "expression", moments: Any = None,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.moments = moments
        self.random_state = random_state

    def fit(self, X: Any, labels: Any = None) -> FixedClassGaussian:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, labels = split_input(X, labels)
        y = label_values(labels, self.interest, X.shape[0]).astype(str)
        classes = np.array(sorted(self.moments))
        mean = np.stack([self.moments[c][0] for c in classes])
        sd = np.stack([self.moments[c][1] for c in classes])
        codes = np.searchsorted(classes, y)
        rng = np.random.default_rng()
        return (mean[codes] + rng.normal(size=X.shape) * sd[codes]).astype(np.float32)


def moments_of(table: Any, interest: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    y = table.labels[interest].astype(str).to_numpy()
    X = np.asarray(table.X, np.float64)
    return {c: (X[y == c].mean(0), X[y == c].std(0)) for c in np.unique(y)}


def load(name: str) -> tuple[Any, str, str, str | None]:
    if name == "synthetic300":
        from bioanon.datasets import make_biometric

        t = make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                           random_state=0)
        return t, "expression", "identity", None
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker", None


#: the sizes of the levels' calibration: (identities, records per identity)
SIZES = ((60, 20), (300, 12), (520, 10))
FAST_PANEL = {"models": "knn", "attackers": "naive,parrot,reverse", "n_jobs": 1,
              "verification": False, "selection": None}


class Copy(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """The identity copy: releases the records themselves (every risk should fail)."""

    def fit(self, X: Any, labels: Any = None) -> Copy:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, _ = split_input(X, labels)
        return np.asarray(X, np.float32).copy()


def levels_main(seeds: int, out: Path, sizes: tuple[tuple[int, int], ...] = SIZES,
                leaky_seeds: int = 3) -> None:
    """Pass rates of leak-free releases per named level and size (showable risks only),
    refusal rates of the identity copy and vp-mix g=8, recognition at 6 identities."""
    from bioanon.anonymize.registry import build_method
    from bioanon.datasets import make_biometric
    from bioanon.evaluation.verdict import verdict
    from bioanon.levels import LEVELS
    from bioanon.plan import SHOWABLE, make_plan

    start = time.perf_counter()
    result: dict[str, Any] = {"seeds": seeds, "leaky_seeds": leaky_seeds, "sizes": []}
    for n_id, per in sizes:
        t = make_biometric(n_identities=n_id, records_per_identity=per, random_state=0)
        anon = FixedClassGaussian("expression", moments_of(t, "expression"))
        plans = {name: make_plan(t, "expression", "identity", level=name) for name in LEVELS}
        passes: dict[str, dict[str, list[bool]]] = {name: {} for name in LEVELS}
        for seed in range(1, seeds + 1):
            ev = Evaluation(t, "expression", "identity", anonymizer=anon, random_state=seed,
                            **FAST_PANEL).evaluate()
            for name, plan in plans.items():
                v = verdict(ev, level=name)
                for r in v.risks:
                    row = plan.row(r.name)
                    if row is not None and row.status == SHOWABLE:
                        passes[name].setdefault(r.name, []).append(r.passes)
            print(f"{n_id}x{per} seed {seed}: showable risks passed " + "  ".join(
                f"{name} {sum(v[-1] for v in d.values())}/{len(d)}"
                for name, d in passes.items() if d)
                + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
        refused: dict[str, dict[str, int]] = {}
        for label, make in (("identity copy", lambda: Copy()),
                            ("vp-mix g=8", lambda: build_method(
                                "vp-mix", {"g": 8}, interest="expression",
                                sensitive="identity", additional=[], random_state=None))):
            for seed in range(1, leaky_seeds + 1):
                ev = Evaluation(t, "expression", "identity", anonymizer=make(),
                                random_state=seed, **FAST_PANEL).evaluate()
                for name in LEVELS:
                    d = refused.setdefault(label, {}).setdefault(name, 0)
                    refused[label][name] = d + (not verdict(ev, level=name).met)
        entry = {"identities": n_id, "records_per_identity": per, "records": t.n_records,
                 "plan": {n: [r.name for r in p.rows if r.status == SHOWABLE]
                          for n, p in plans.items()},
                 "leak_free_pass_rate": {n: {k: float(np.mean(v)) for k, v in d.items()}
                                         for n, d in passes.items()},
                 "leak_free_all_showable_pass_rate": {
                     n: float(np.mean([all(v[i] for v in d.values())
                                       for i in range(seeds)])) if d else None
                     for n, d in passes.items()},
                 "leaky_refusal_rate": {lab: {n: c / leaky_seeds for n, c in d.items()}
                                        for lab, d in refused.items()}}
        result["sizes"].append(entry)
        print(json.dumps({k: v for k, v in entry.items()}, indent=1), flush=True)
    # recognition at 6 identities (the case): a release with no identity information
    t6 = make_biometric(n_identities=6, records_per_identity=100, random_state=0)
    anon6 = FixedClassGaussian("expression", moments_of(t6, "expression"))
    statuses = []
    for seed in range(1, seeds + 1):
        ev = Evaluation(t6, "expression", "identity", anonymizer=anon6, random_state=seed,
                        membership=False, inference=False, **FAST_PANEL).evaluate()
        statuses.append(next(r.status for r in ev.risks() if r.risk == "recognition"))
    result["six_identities_recognition"] = {s: statuses.count(s) for s in set(statuses)}
    result["seconds"] = time.perf_counter() - start
    result["load_average"] = os.getloadavg()[0]
    print(json.dumps(result["six_identities_recognition"]),
          f"{result['seconds']:.0f} s (load {result['load_average']:.2f})")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2))
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", action="store_true",
                    help="calibrate the named privacy levels per table size (issue 27)")
    ap.add_argument("--dataset", default="synthetic300", choices=["synthetic300", "fsdd"])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--models", default="logreg,knn")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.levels:
        levels_main(args.seeds, args.out.with_name("judge_calibration_levels.json"))
        return
    table, interest, sensitive, group = load(args.dataset)
    anon = FixedClassGaussian(interest, moments_of(table, interest))
    per: dict[str, list[dict[str, Any]]] = {}
    any_fail = 0
    start = time.perf_counter()
    for seed in range(1, args.seeds + 1):
        ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=args.models,
                        attackers="naive,parrot,reverse,linkage", random_state=seed,
                        n_jobs=1, verification=False, selection=None, group=group).evaluate()
        failed = False
        for r in ev.risks():
            per.setdefault(r.name, []).append(
                {"seed": seed, "value": r.value, "ci": list(r.ci), "status": r.status,
                 "statistic": r.statistic, "attacker": r.attacker})
            failed |= r.status not in ("met", "accepted")
        any_fail += failed
        print(f"seed {seed}: " + "  ".join(f"{k} {v[-1]['value']:.3f} {v[-1]['status']}"
                                           for k, v in per.items())
              + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    sec = time.perf_counter() - start
    rows = []
    print(f"\n{args.dataset}, leak-free release, {args.seeds} seeds, {sec:.0f} s "
          f"(load {os.getloadavg()[0]:.2f})")
    print(f"{'risk':<22} {'mean':>7} {'sd':>6} {'half-width':>10} {'1.96·sd':>8} "
          f"{'coverage':>8} {'fails':>6}")
    for name, vals in per.items():
        v = np.array([x["value"] for x in vals], float)
        ok = np.isfinite(v)
        null = NULL[vals[0]["statistic"]]
        lo = np.array([x["ci"][0] for x in vals], float)
        hi = np.array([x["ci"][1] for x in vals], float)
        cover = float(np.mean((lo[ok] <= null) & (null <= hi[ok]))) if ok.any() else float("nan")
        fails = float(np.mean([x["status"] not in ("met", "accepted") for x in vals]))
        row = {"risk": name, "null": null, "mean": float(v[ok].mean()) if ok.any() else None,
               "sd": float(v[ok].std(ddof=1)) if ok.sum() > 1 else None,
               "half_width": float(np.mean((hi - lo)[ok]) / 2) if ok.any() else None,
               "coverage": cover, "false_fail_rate": fails, "seeds": vals}
        rows.append(row)
        if ok.sum() > 1:
            print(f"{name:<22} {row['mean']:>7.3f} {row['sd']:>6.3f} {row['half_width']:>10.3f} "
                  f"{1.96 * row['sd']:>8.3f} {cover:>8.2f} {fails:>6.2f}")
        else:
            print(f"{name:<22} not measured ({vals[0]['status']})")
    print(f"any risk failed (false refusal): {any_fail}/{args.seeds}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(
        {"dataset": args.dataset, "seeds": args.seeds, "models": args.models,
         "seconds": sec, "load_average": os.getloadavg()[0],
         "false_refusal_rate": any_fail / args.seeds, "rows": rows}, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
