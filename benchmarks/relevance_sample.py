"""Relevance on a bounded sample against relevance on every record, on real data.

The selective mean (and ``vp-mix`` with ``r_p > 0``) weights the record's own value on the
features most relevant to the interest; relevance comes from a random forest's Gini
importances. ``anonymize`` fits that forest on a stratified sample of at most
``relevance_records`` records. This script measures what the sample changes:

1. **the selected features**: for retention ratios ``r_p`` of 1%, 5% and 10%, the Jaccard
   overlap of the features selected on a sample (each cap in ``--caps``) with those selected
   on every record, beside the overlap of two full-data fits with different forest seeds (the
   selection's own noise floor), and the share of the full-data relevance the sampled
   selection captures; with the forest's fit time on this machine;
2. **the release**: the evaluation panel (``bioanon.evaluation.Evaluation``; models
   ``--models``, every attacker mode) on a selective-mean release with relevance fitted on
   every record and on the default sample, same split and evaluation seed: CAS (trained on the
   release, scored on clear held-out data) with its 95% interval, and the cross-fitted worst
   case with its attacker and interval beside max(chance, control). Each repetition fixes the
   split, the forest's seed and the release's draws for both settings (a paired comparison).

Data: FSDD (MFCC, 3,000 × 400; interest digit, sensitive speaker) and SP-SW-HAR (both devices,
statistics windows, hop ``--har-hop`` rows; interest activity, sensitive subject, executions
kept whole on one side of the split).

``--ranks`` measures the scores themselves on a large synthetic table instead
(``bench_scale``'s: d = 256, features f0-f7 carry the interest ``p``, f8-f15 the identity,
the rest are noise; ``--n`` records): relevance fitted on the default sample of 2,000 records
and on ``--big`` records, two forest seeds each; Spearman's rank correlation of the scores
over all features and over f0-f15 (the noise features' ranks are ties in all but name), the
features each fit ranks top 8, their share of the relevance and the r_p = 0.01 selection,
with the CPU seconds of each fit and the load.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/relevance_sample.py [--skip-release]
    python benchmarks/relevance_sample.py --ranks [--n 200000] [--big 20000]

Prints tables (with the load average) and writes JSON (default
benchmarks/results/relevance_sample.json; with ``--ranks``, relevance_ranks.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.anonymize.relevance import MAX_RECORDS, relevance_scores, top_fraction
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.report.build import build_report
from bioanon.table import FeatureTable

RATIOS = (0.01, 0.05, 0.10)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def datasets(hop: int) -> dict[str, tuple[FeatureTable, str, str, str | None]]:
    from bioanon.datasets.fsdd import load_fsdd
    from bioanon.datasets.sp_sw_har import load_sp_sw_har

    har = load_sp_sw_har(device="both", features="stats", hop=hop)
    return {"FSDD (MFCC)": (load_fsdd(), "digit", "speaker", None),
            f"SP-SW-HAR (stats, hop {hop})": (har, "activity", "subject", "execution")}


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    a, b = set(a.tolist()), set(b.tolist())
    return len(a & b) / len(a | b) if a | b else 1.0


def selection(table: FeatureTable, interest: str, caps: list[int], seeds: int) -> list[dict]:
    """Overlap of sampled selections with full-data selections, per cap and ratio."""
    X, y = table.X, table.labels[interest].astype(str).to_numpy()
    fits: dict[int | None, list[np.ndarray]] = {}
    seconds: dict[int | None, float] = {}
    for cap in [None, *[c for c in caps if c < table.n_records]]:
        t0 = time.perf_counter()
        fits[cap] = [relevance_scores(X, y, "forest", s, max_records=cap) for s in range(seeds)]
        seconds[cap] = (time.perf_counter() - t0) / seeds
    rows = []
    full = fits[None]
    for r in RATIOS:
        sel_full = [top_fraction(f, r) for f in full]
        floor = float(np.mean([jaccard(a, b) for a, b in combinations(sel_full, 2)]))
        best = np.mean([f[s].sum() for f, s in zip(full, sel_full, strict=True)])
        for cap, scores in fits.items():
            if cap is None:
                continue
            sel = [top_fraction(f, r) for f in scores]
            overlap = float(np.mean([jaccard(a, b) for a in sel for b in sel_full]))
            captured = float(np.mean([f[s].sum() for f in full for s in sel]) / best)
            rows.append({"ratio": r, "n_selected": int(sel_full[0].size), "cap": cap,
                         "jaccard_vs_full": overlap, "jaccard_full_vs_full": floor,
                         "relevance_captured": captured, "fit_seconds": seconds[cap],
                         "full_fit_seconds": seconds[None], "load": load()})
    return rows


def release(table: FeatureTable, interest: str, sensitive: str, group: str | None,
            models: str, cap: int | None, rep: int) -> dict[str, Any]:
    """One evaluation; repetition ``rep`` fixes the split and the release's own draws, so the
    two relevance settings of a repetition differ only in the records relevance is fit on."""
    anon = SelectiveMeanAnonymizer(interest, g=32, t=0.8, w=10, r_p=0.05,
                                   relevance_records=cap, random_state=1000 + rep)
    t0 = time.perf_counter()
    ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=models,
                    attackers="all", group=group, n_jobs=-1, verification=False,
                    random_state=rep).evaluate()
    rep_ = build_report(ev)
    p, u = rep_["privacy"], rep_["utility"]
    cf = p["worst_case_crossfit"]
    return {"repetition": rep, "relevance_records": cap, "cas": u["cas"]["value"],
            "cas_ci": u["cas"]["ci"], "clear": u["interest"]["clear"],
            "worst_crossfit": cf["accuracy"], "worst_crossfit_ci": cf["ci"],
            "worst_crossfit_attackers": cf["attackers"],
            "max_over_panel": p["worst_case"]["accuracy"],
            "max_over_panel_attacker": p["worst_case"]["attacker"],
            "chance": p["chance"], "control": p["control"]["value"],
            "advantage": cf["advantage"], "seconds": time.perf_counter() - t0, "load": load()}


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def ranks(n: int, big: int, out: Path) -> None:
    """Relevance scores on the default sample against ``big`` records, synthetic data."""
    from scipy.stats import spearmanr

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_scale import chunk

    X, p, _ = chunk(n, np.random.default_rng(3))
    fits = {}
    for cap in (MAX_RECORDS, big):
        for seed in (1, 2):
            c0 = time.process_time()
            fits[(cap, seed)] = relevance_scores(X, p, "forest", seed, cap)
            print(f"fit on {cap:,} records, seed {seed}: CPU {time.process_time() - c0:.1f} s "
                  f"(load {load()})", flush=True)
    rows: list[dict[str, Any]] = []
    pairs = [((MAX_RECORDS, 1), (big, 1)), ((MAX_RECORDS, 2), (big, 2)),
             ((MAX_RECORDS, 1), (MAX_RECORDS, 2)), ((big, 1), (big, 2))]
    for a, b in pairs:
        rho = float(spearmanr(fits[a], fits[b]).statistic)
        rho16 = float(spearmanr(fits[a][:16], fits[b][:16]).statistic)
        rows.append({"a": list(a), "b": list(b), "spearman_all": rho, "spearman_f0_f15": rho16})
        print(f"{a[0]:>6,} seed {a[1]} vs {b[0]:>6,} seed {b[1]}: Spearman {rho:.3f} over all "
              f"{X.shape[1]} features, {rho16:.3f} over f0-f15")
    tops = []
    for (cap, seed), s in fits.items():
        top8 = sorted(np.argsort(-s)[:8].tolist())
        chosen = top_fraction(s, 0.01).tolist()
        tops.append({"records": cap, "seed": seed, "top8": top8,
                     "top8_share": float(s[top8].sum()), "selected_rp_0.01": chosen})
        print(f"{cap:>6,} seed {seed}: top 8 {top8}, their share {s[top8].sum():.3f}; "
              f"r_p=0.01 selects {chosen}")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps({"n": n, "sample": MAX_RECORDS, "big": big,
                                       "pairs": rows, "fits": tops}, indent=2))
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", action="store_true",
                    help="relevance scores on a large synthetic table (Spearman)")
    ap.add_argument("--n", type=int, default=200_000, help="--ranks: records of the table")
    ap.add_argument("--big", type=int, default=20_000, help="--ranks: the larger fit")
    ap.add_argument("--caps", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--har-hop", type=int, default=25)
    ap.add_argument("--models", default="logreg,knn,forest")
    ap.add_argument("--repeats", type=int, default=3,
                    help="evaluation repetitions (split and release draws), each paired")
    ap.add_argument("--skip-release", action="store_true")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "relevance_sample.json")
    args = ap.parse_args()
    if args.ranks:
        ranks(args.n, args.big, args.out.with_name("relevance_ranks.json"))
        return
    result: dict[str, Any] = {"default_relevance_records": MAX_RECORDS, "datasets": {}}
    for name, (table, interest, sensitive, group) in datasets(args.har_hop).items():
        print(f"\n{name}: {table.n_records} records × {table.n_features} features, "
              f"interest {interest}, sensitive {sensitive}", flush=True)
        rows = selection(table, interest, args.caps, args.seeds)
        print(f"{'r_p':>5} {'selected':>8} {'cap':>6} {'Jaccard vs full':>16} "
              f"{'full vs full':>13} {'relevance kept':>15} {'fit s':>7} {'full fit s':>10}")
        for r in rows:
            print(f"{r['ratio']:>5.2f} {r['n_selected']:>8} {r['cap']:>6} "
                  f"{r['jaccard_vs_full']:>16.2f} {r['jaccard_full_vs_full']:>13.2f} "
                  f"{r['relevance_captured']:>15.3f} {r['fit_seconds']:>7.2f} "
                  f"{r['full_fit_seconds']:>10.2f}  load {r['load']}", flush=True)
        entry: dict[str, Any] = {"n_records": table.n_records, "n_features": table.n_features,
                                 "interest": interest, "sensitive": sensitive,
                                 "selection": rows}
        if not args.skip_release:
            entry["release"] = []
            for rep in range(args.repeats):
                pair = [release(table, interest, sensitive, group, args.models, cap, rep)
                        for cap in (None, MAX_RECORDS)]
                entry["release"] += pair
                for r in pair:
                    adv = r["advantage"]
                    who = "every record" if r["relevance_records"] is None else \
                        f"{r['relevance_records']:,} records"
                    print(f"rep {rep} relevance on {who:<14} CAS {r['cas']:.3f} "
                          f"[{r['cas_ci'][0]:.3f}, {r['cas_ci'][1]:.3f}] (clear "
                          f"{r['clear']:.3f})  worst (cross-fitted) {r['worst_crossfit']:.3f} "
                          f"[{r['worst_crossfit_ci'][0]:.3f}, {r['worst_crossfit_ci'][1]:.3f}] "
                          f"({' | '.join(dict.fromkeys(r['worst_crossfit_attackers']))})  "
                          f"chance {r['chance']:.3f}  control {r['control']:.3f}  advantage "
                          f"{adv['value']:+.3f} [{adv['ci'][0]:+.3f}, {adv['ci'][1]:+.3f}]  "
                          f"max over panel {r['max_over_panel']:.3f} "
                          f"({r['max_over_panel_attacker']})  {r['seconds']:.0f} s  "
                          f"load {r['load']}", flush=True)
                full, part = pair
                print(f"      intervals overlap: CAS {overlaps(full['cas_ci'], part['cas_ci'])}, "
                      f"worst case {overlaps(full['worst_crossfit_ci'], part['worst_crossfit_ci'])}"
                      , flush=True)
        result["datasets"][name] = entry
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps(result, indent=2, default=str))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
