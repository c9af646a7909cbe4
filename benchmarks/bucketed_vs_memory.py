"""The bucketed release against the whole-class release, judged by the evaluation panel.

On a dataset that fits in memory (FSDD: interest digit, sensitive speaker), the selective mean
is released (a) as usual, sets drawn from the whole interest class, and (b) with the dask
path's rule, sets drawn within random buckets stratified by the digit
(:class:`bioanon.scale.BucketedMixing`; ``--bucket-size`` records, so the 750-record release
split holds two buckets). Both are judged by ``bioanon.evaluation.evaluate`` with the same
split and seed: CAS (trained on the release, scored on clear held-out data) with a 95% Wilson
interval, and the worst case of the attack panel with its attacker and interval beside
max(chance, control).

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/bucketed_vs_memory.py [--seeds 0 1]

Prints a table and writes JSON (default benchmarks/results/bucketed_vs_memory.json).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets.fsdd import load_fsdd
from bioanon.evaluation import evaluate
from bioanon.io import write_text_atomic
from bioanon.metrics.scores import wilson_interval
from bioanon.scale import BucketedMixing


def row(kind: str, seed: int, report, n_test: int, seconds: float) -> dict:
    u = report["utility"]["interest"]
    w = report["privacy"]["worst_case"]
    cas = u["anonymized_to_clear"]
    lo, hi = wilson_interval(round(cas * n_test), n_test)
    return {"release": kind, "seed": seed, "cas": cas, "cas_ci": [lo, hi],
            "paper_view": u["anonymized"], "clear": u["clear"],
            "worst_case": w["accuracy"], "worst_ci": list(w["ci"]),
            "worst_attacker": w["attacker"], "advantage": w["advantage"],
            "chance": report["privacy"]["chance"], "seconds": seconds,
            "load": f"{os.getloadavg()[0]:.2f}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--bucket-size", type=int, default=375)
    ap.add_argument("--models", default="logreg,knn")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bucketed_vs_memory.json")
    args = ap.parse_args()
    table = load_fsdd()
    rows = []
    for seed in args.seeds:
        inner = SelectiveMeanAnonymizer("digit", g=32, t=0.8, w=10, r_p=0.01,
                                        random_state=seed)
        for kind, anon in [("whole class (in memory)", inner),
                           (f"buckets of {args.bucket_size}",
                            BucketedMixing(inner, "digit", args.bucket_size, seed))]:
            t0 = time.perf_counter()
            rep = evaluate(table, "digit", "speaker", anonymizer=anon, random_state=seed,
                           models=args.models, selection=None, n_jobs=1)
            rows.append(row(kind, seed, rep, rep["dataset"]["n_test"],
                            time.perf_counter() - t0))
            r = rows[-1]
            print(f"seed {seed} {kind:<26} CAS {r['cas']:.3f} [{r['cas_ci'][0]:.3f}, "
                  f"{r['cas_ci'][1]:.3f}]  worst {r['worst_case']:.3f} [{r['worst_ci'][0]:.3f}, "
                  f"{r['worst_ci'][1]:.3f}] ({r['worst_attacker']})  chance {r['chance']:.3f}"
                  f"  adv {r['advantage']}  {r['seconds']:.0f} s  load {r['load']}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(rows, indent=2, default=str))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
