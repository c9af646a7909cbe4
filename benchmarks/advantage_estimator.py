"""How the cross-fitted membership advantage behaves: null calibration, planted leaks, dilution.

Simulated attacker scores (no release is made): ``n1`` members and ``n0`` non-members, ``A``
attackers of pure noise, and — for a planted leak — one attacker whose member scores are
shifted so its true largest TPR − FPR is ``leak``. For each configuration and many draws it
reports, per estimator:

* under no signal: the estimate's standard deviation and the interval's mean standard error,
  both per √(1/n1 + 1/n0) (the plan's ``smallest_showable`` rests on them), and how often a
  leak-free release passes the smallest target the plan says it can rule out;
* with a planted leak: the mean estimate against the true advantage (dilution: how far the
  choice among many attackers pulls the figure down) and the interval's coverage.

Run: ``python benchmarks/advantage_estimator.py [--draws 300] [--json out.json]``
(a table on stdout, JSON with ``--json``, the load average beside the timing).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from scipy.stats import norm

from bioanon.metrics.advantage import crossfit_advantage, smallest_showable


def draw(rng: np.random.Generator, n1: int, n0: int, attackers: int, leak: float
         ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    member = np.r_[np.ones(n1, bool), np.zeros(n0, bool)]
    scores = {f"noise{k:02d}": rng.normal(size=n1 + n0) for k in range(attackers)}
    if leak > 0:  # equal-variance normals: largest TPR − FPR = 2Φ(d/2) − 1
        d = 2 * norm.ppf((1 + leak) / 2)
        scores["leak"] = rng.normal(size=n1 + n0) + d * member
    return scores, member


def run(draws: int, configs: list[tuple[int, int, int, float]]) -> list[dict[str, float]]:
    rows = []
    for n1, n0, attackers, leak in configs:
        rng = np.random.default_rng(12345)
        s = float(np.sqrt(1 / n1 + 1 / n0))
        est, ses, cover, passed = [], [], 0, 0
        target = smallest_showable(n1, n0)
        for _ in range(draws):
            scores, member = draw(rng, n1, n0, attackers, leak)
            r = crossfit_advantage(scores, member, rng=rng)
            est.append(r.value)
            ses.append(r.se)
            cover += r.ci[0] <= leak <= r.ci[1]
            passed += r.ci[1] <= target
        e = np.asarray(est)
        rows.append({"n1": n1, "n0": n0, "attackers": attackers, "leak": leak,
                     "mean": float(e.mean()), "sd_per_sqrtS": float(e.std() / s),
                     "se_per_sqrtS": float(np.mean(ses) / s), "coverage": cover / draws,
                     "smallest_showable": target,
                     "pass_rate_at_smallest": passed / draws})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    configs = [(n1, n0, a, 0.0) for n1, n0 in ((200, 200), (750, 2250), (2000, 2000))
               for a in (3, 45)]
    configs += [(750, 2250, a, leak) for a in (1, 45) for leak in (0.05, 0.087, 0.15)]
    t0, load = time.perf_counter(), os.getloadavg()[0]
    rows = run(args.draws, configs)
    wall = time.perf_counter() - t0
    head = ("n1", "n0", "attackers", "leak", "mean", "sd_per_sqrtS", "se_per_sqrtS",
            "coverage", "smallest_showable", "pass_rate_at_smallest")
    print(" ".join(f"{h:>12}" for h in head))
    for r in rows:
        print(" ".join(f"{r[h]:>12.4g}" if isinstance(r[h], float) else f"{r[h]:>12}"
                       for h in head))
    print(f"{args.draws} draws per row, {wall:.1f} s wall, load average {load:.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "draws": args.draws, "wall_s": wall, "load": load}, f,
                      indent=2)


if __name__ == "__main__":
    main()
