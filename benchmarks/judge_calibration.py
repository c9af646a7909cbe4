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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="synthetic300", choices=["synthetic300", "fsdd"])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--models", default="logreg,knn")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
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
