"""Time the fixed-size clusterers on synthetic data; print a table and write JSON.

    .venv/bin/python benchmarks/bench_cluster.py [--n 20000] [--d 128] [--k 5 2] [--threads 1]

Target (issue 4): MDAV or k-member on 20,000 × 128 in at most 60 s on the 2-core dev machine.
Hierarchical partitioning needs the pairwise distances (8·n(n−1)/2 bytes); it is timed on a
smaller n and its memory limit is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from bioanon.anonymize.clustering import (
    HIERARCHICAL_MAX_RECORDS,
    HIERARCHICAL_MEMORY_BYTES,
    fixed_size_clusters,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--k", type=int, nargs="+", default=[5, 2])
    ap.add_argument("--hier-n", type=int, default=5000)
    ap.add_argument("--methods", nargs="+", default=["mdav", "kmember", "knn", "hierarchical"])
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads (1 avoids oversubscription on a shared 2-core machine)")
    args = ap.parse_args()
    with threadpool_limits(limits=args.threads):
        run(args)


def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    # clustered data (200 centres) rather than pure noise, closer to real embeddings
    centres = rng.normal(scale=3.0, size=(200, args.d))
    X = (centres[rng.integers(200, size=args.n)]
         + rng.normal(size=(args.n, args.d))).astype(np.float32)
    rows = []
    for method in args.methods:
        n = min(args.n, args.hier_n) if method == "hierarchical" else args.n
        for k in args.k:
            t0 = time.perf_counter()
            labels = fixed_size_clusters(X[:n], k, method, random_state=0)
            secs = time.perf_counter() - t0
            sizes = np.bincount(labels)
            rows.append({"method": method, "n": n, "d": args.d, "k": k,
                         "seconds": round(secs, 2), "min_size": int(sizes.min()),
                         "max_size": int(sizes.max()),
                         "target_s": 60 if method in ("mdav", "kmember") else None})
            print(f"{method:13s} n={n:6d} d={args.d} k={k:2d}  {secs:7.2f} s  "
                  f"sizes {sizes.min()}..{sizes.max()}", flush=True)
    load = os.getloadavg()[0]
    print(f"load average while measuring: {load:.1f} on {os.cpu_count()} cores")
    doc = {"machine": platform.platform(), "cpus": os.cpu_count(), "load_average": load,
           "blas_threads": args.threads, "rows": rows,
           "hierarchical_memory_limit_bytes": HIERARCHICAL_MEMORY_BYTES,
           "hierarchical_max_records": HIERARCHICAL_MAX_RECORDS}
    print(f"hierarchical partitioning: pairwise distances take 8·n(n−1)/2 bytes; limit "
          f"{HIERARCHICAL_MEMORY_BYTES / 2**30:.0f} GiB = {HIERARCHICAL_MAX_RECORDS} records")
    out = Path(__file__).parent / "results" / "bench_cluster.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
