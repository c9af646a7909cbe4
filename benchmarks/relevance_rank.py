"""Forest relevance on the default 2,000-record sample against a fit on ten times more.

On ``bench_scale``'s synthetic table (d = 256; features f0-f7 carry the interest ``p``,
f8-f15 the identity, the rest are noise), ``--n`` records: relevance scores (a random
forest's Gini importances, :func:`bioanon.anonymize.relevance.relevance_scores`) fitted on
a stratified sample of 2,000 records (``MAX_RECORDS``, what ``anonymize`` fits on) and of
``--big`` records, two forest seeds each. Printed: Spearman's rank correlation of the
scores over all features and over f0-f15 (the noise features' ranks are ties in all but
name), the features each fit ranks top 8, their share of the relevance, and the r_p = 0.01
selection (3 features), with the CPU seconds of each fit and the load.

Usage::

    python benchmarks/relevance_rank.py [--n 200000] [--big 20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import chunk  # noqa: E402

from bioanon.anonymize.relevance import MAX_RECORDS, relevance_scores, top_fraction  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--big", type=int, default=20_000)
    args = ap.parse_args()
    X, p, _ = chunk(args.n, np.random.default_rng(3))
    fits = {}
    for cap in (MAX_RECORDS, args.big):
        for seed in (1, 2):
            c0 = time.process_time()
            fits[(cap, seed)] = relevance_scores(X, p, "forest", seed, cap)
            print(f"fit on {cap:,} records, seed {seed}: CPU {time.process_time() - c0:.1f} s "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
    pairs = [((MAX_RECORDS, 1), (args.big, 1)), ((MAX_RECORDS, 2), (args.big, 2)),
             ((MAX_RECORDS, 1), (MAX_RECORDS, 2)), ((args.big, 1), (args.big, 2))]
    for a, b in pairs:
        rho = spearmanr(fits[a], fits[b]).statistic
        rho16 = spearmanr(fits[a][:16], fits[b][:16]).statistic
        print(f"{a[0]:>6,} seed {a[1]} vs {b[0]:>6,} seed {b[1]}: Spearman {rho:.3f} over all "
              f"{X.shape[1]} features, {rho16:.3f} over f0-f15")
    for (cap, seed), s in fits.items():
        top8 = sorted(np.argsort(-s)[:8].tolist())
        print(f"{cap:>6,} seed {seed}: top 8 {top8}, their share {s[top8].sum():.3f}; "
              f"r_p=0.01 selects {top_fraction(s, 0.01).tolist()}")


if __name__ == "__main__":
    main()
