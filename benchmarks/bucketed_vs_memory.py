"""The bucketed release against the whole-class release, judged by the evaluation panel.

The dask path draws each record's random set within its bucket (a random subset of the table
stratified by the interest) instead of within its whole interest class. This script releases
real tables both ways, the selective mean (g=32, t=0.8: 24 same-class donors per record) as
usual and with :class:`bioanon.scale.BucketedMixing` (the dask path's rule, in memory), at
several bucket sizes, and judges every release with ``bioanon.evaluation.Evaluation`` on the
same split and evaluation seed (a paired comparison, repeated ``--repeats`` times):

- CAS (trained on the release, scored on clear held-out data) with its 95% interval;
- the cross-fitted worst case of the attack panel (every attacker mode, ``--models``) with its
  attacker and interval, beside max(chance, control).

What decides whether buckets change the release is how many same-class records a bucket
holds per donor a set needs (``per class / donors`` in the table, for the smallest class and
the median one): the dask path's default bucket of 50,000 records holds about 5,000 records
of each of 10 classes, two hundred times the 24 donors. The real tables here are smaller, so
the bucket sizes span that ratio from 1.5 (buckets barely larger than a set) to about 30; a
synthetic table of 40,000 records reaches a hundred.

Data: FSDD (MFCC, 3,000 × 400; interest digit, sensitive speaker), SP-SW-HAR (both devices,
statistics windows, hop 25; interest activity, sensitive subject, executions kept whole on one
side of the split) and synthetic data (``make_biometric``: 100 people × 400 records, 64
features, weak identity; interest expression, sensitive identity).

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/bucketed_vs_memory.py [--repeats 3]

Prints a table (with the load average) and writes JSON
(default benchmarks/results/bucketed_vs_memory.json).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.report.build import build_report
from bioanon.scale import BucketedMixing
from bioanon.table import FeatureTable

G, T = 32, 0.8
DONORS = int(round(T * G)) - 1  # same-class donors per set (the record is the 25th member)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def datasets(hop: int) -> dict[str, tuple[FeatureTable, str, str, str | None, list[int]]]:
    from bioanon.datasets import make_biometric
    from bioanon.datasets.fsdd import load_fsdd
    from bioanon.datasets.sp_sw_har import load_sp_sw_har

    har = load_sp_sw_har(device="both", features="stats", hop=hop)
    # synthetic, large enough for buckets that hold a hundred times the donors of a set;
    # identity weak enough that the attacks land mid-range (not at 0 or 1)
    syn = make_biometric(n_identities=100, records_per_identity=400, n_features=64,
                         identity_strength=0.3, random_state=0)
    return {"FSDD (MFCC)": (load_fsdd(), "digit", "speaker", None, [375, 750, 1125]),
            f"SP-SW-HAR (stats, hop {hop})": (har, "activity", "subject", "execution",
                                              [1500, 6500]),
            "synthetic (make_biometric, 40,000 records)": (syn, "expression", "identity", None,
                                                           [400, 2000, 10000])}


def judge(table: FeatureTable, interest: str, sensitive: str, group: str | None,
          anonymizer: Any, models: str, rep: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    ev = Evaluation(table, interest, sensitive, anonymizer=anonymizer, models=models,
                    attackers="all", group=group, n_jobs=-1, verification=False,
                    membership=False, random_state=rep).evaluate()
    rep_ = build_report(ev)
    p, u = rep_["privacy"], rep_["utility"]
    cf = p["worst_case_crossfit"]
    return {"cas": u["cas"]["value"], "cas_ci": u["cas"]["ci"], "clear": u["interest"]["clear"],
            "worst": cf["accuracy"], "worst_ci": cf["ci"],
            "worst_attackers": list(dict.fromkeys(cf["attackers"])),
            "chance": p["chance"], "control": p["control"]["value"],
            "advantage": cf["advantage"], "n_train": rep_["dataset"]["n_train"],
            "seconds": time.perf_counter() - t0, "load": load()}


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default=None, help="run the datasets whose name starts so")
    ap.add_argument("--har-hop", type=int, default=25)
    ap.add_argument("--models", default="logreg,knn,forest")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bucketed_vs_memory.json")
    args = ap.parse_args()
    result: dict[str, Any] = {"g": G, "t": T, "same_class_donors": DONORS, "datasets": {}}
    for name, (table, interest, sensitive, group, sizes) in datasets(args.har_hop).items():
        if args.only and not name.lower().startswith(args.only.lower()):
            continue
        sizes_c = np.unique(table.labels[interest].to_numpy(), return_counts=True)[1]
        smallest, median = int(sizes_c.min()), float(np.median(sizes_c))
        print(f"\n{name}: {table.n_records} records, interest {interest} (classes of "
              f"{smallest} to {int(sizes_c.max())}), sensitive {sensitive}; models "
              f"{args.models}", flush=True)
        rows = []
        for rep in range(args.repeats):
            inner = SelectiveMeanAnonymizer(interest, g=G, t=T, w=10, r_p=0.01,
                                            random_state=1000 + rep)
            whole = judge(table, interest, sensitive, group, inner, args.models, rep)
            whole.update(release="whole class", bucket_size=None, repetition=rep)
            rows.append(whole)
            for size in sizes:
                anon = BucketedMixing(inner, interest, bucket_size=size, random_state=2000 + rep)
                r = judge(table, interest, sensitive, group, anon, args.models, rep)
                # the training split's buckets: per class, how many records per donor needed
                n_buckets = max(1, r["n_train"] // size)
                share = r["n_train"] / table.n_records / n_buckets
                r.update(release=f"buckets of {size:,}", bucket_size=size, repetition=rep,
                         n_buckets_train=n_buckets,
                         smallest_class_per_bucket=smallest * share,
                         per_class_per_donor=smallest * share / DONORS,
                         median_class_per_donor=median * share / DONORS,
                         cas_overlaps_whole=overlaps(r["cas_ci"], whole["cas_ci"]),
                         worst_overlaps_whole=overlaps(r["worst_ci"], whole["worst_ci"]))
                rows.append(r)
            for r in rows[-1 - len(sizes):]:
                ratio = (f"{r['per_class_per_donor']:5.1f} (median class "
                         f"{r['median_class_per_donor']:5.1f})" if r["bucket_size"] else
                         "  all" + " " * 20)
                same = ("" if r["bucket_size"] is None else
                        f"  overlaps whole class: CAS {r['cas_overlaps_whole']}, worst "
                        f"{r['worst_overlaps_whole']}")
                print(f"rep {rep} {r['release']:<20} per class / donors {ratio}  CAS "
                      f"{r['cas']:.3f} [{r['cas_ci'][0]:.3f}, {r['cas_ci'][1]:.3f}]  worst "
                      f"(cross-fitted) {r['worst']:.3f} [{r['worst_ci'][0]:.3f}, "
                      f"{r['worst_ci'][1]:.3f}] ({' | '.join(r['worst_attackers'])})  chance "
                      f"{r['chance']:.3f}  control {r['control']:.3f}{same}  {r['seconds']:.0f} s"
                      f"  load {r['load']}", flush=True)
        summary = {}
        for size in [None, *sizes]:
            sel = [r for r in rows if r["bucket_size"] == size]
            summary["whole class" if size is None else f"buckets of {size:,}"] = {
                "cas_mean": float(np.mean([r["cas"] for r in sel])),
                "worst_mean": float(np.mean([r["worst"] for r in sel])),
                "all_overlap": None if size is None else
                all(r["cas_overlaps_whole"] and r["worst_overlaps_whole"] for r in sel)}
        for k, v in summary.items():
            print(f"  {k:<20} mean CAS {v['cas_mean']:.3f}  mean worst {v['worst_mean']:.3f}"
                  + ("" if v["all_overlap"] is None else
                     f"  every interval overlaps the whole-class one: {v['all_overlap']}"),
                  flush=True)
        result["datasets"][name] = {"n_records": table.n_records, "interest": interest,
                                    "sensitive": sensitive, "rows": rows, "summary": summary}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps(result, indent=2, default=str))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
