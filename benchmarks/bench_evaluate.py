"""Time the full attack panel on FSDD-sized data (3,000 × 400).

Runs ``bioanon.evaluation.evaluate`` with every attacker mode and every recognizer of the zoo
(and, unless ``--no-selection``, the identity-selection curves) on FSDD MFCC features (digit of
interest, speaker sensitive), anonymized by the selective mean (g=64, t=0.8, w=10, r_p=1%).
Prints the wall time per stage and the fit time of each recognizer per training set, and
writes ``benchmarks/results/bench_evaluate.json``.

    BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/bench_evaluate.py
    .venv/bin/python benchmarks/bench_evaluate.py --synthetic   # no dataset needed
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.attack import RECOGNIZERS, ModelCache
from bioanon.datasets import make_biometric
from bioanon.evaluation import evaluate

OUT = Path(__file__).resolve().parent / "results" / "bench_evaluate.json"


def load(synthetic: bool):
    if synthetic:
        t = make_biometric(n_identities=6, records_per_identity=500, n_features=400,
                           n_expressions=10, random_state=0)
        return t, "expression", "identity", "synthetic 6 × 500 × 400"
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker", "FSDD MFCC (3000 × 400)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synthetic", action="store_true", help="synthetic data of FSDD's size")
    ap.add_argument("--no-selection", action="store_true", help="skip the selection curves")
    ap.add_argument("--rp", type=float, default=0.01)
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    t0 = time.perf_counter()
    table, interest, sensitive, name = load(args.synthetic)
    load_s = time.perf_counter() - t0
    anon = SelectiveMeanAnonymizer(interest=interest, g=64, t=0.8, w=10, r_p=args.rp,
                                   random_state=args.seed)
    stages: dict[str, float] = {}
    last = {"t": time.perf_counter(), "desc": "start"}

    def progress(done: int, total: int, desc: str) -> None:
        now = time.perf_counter()
        key = last["desc"].split(":")[0]
        stages[key] = stages.get(key, 0.0) + now - last["t"]
        last.update(t=now, desc=desc)

    cache = ModelCache()
    cpu0 = time.process_time()
    start = time.perf_counter()
    report = evaluate(table, interest, sensitive, anonymizer=anon, models="all",
                      attackers="all", selection=None if args.no_selection else "auto",
                      random_state=args.seed, n_jobs=args.jobs, progress=progress, cache=cache)
    total_s = time.perf_counter() - start
    cpu_s = time.process_time() - cpu0

    # a second configuration on the same split reuses the clear-trained models
    anon2 = SelectiveMeanAnonymizer(interest=interest, g=64, t=0.8, w=10, r_p=0.1,
                                    random_state=args.seed)
    start = time.perf_counter()
    evaluate(table, interest, sensitive, anonymizer=anon2, models="all", attackers="all",
             selection=None, random_state=args.seed, n_jobs=args.jobs, cache=cache)
    second_s = time.perf_counter() - start

    timing = report["privacy"]["timing"]
    print(f"data: {name}; loaded in {load_s:.1f} s; cores: {os.cpu_count()}; "
          f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'stage':<40}{'seconds':>10}")
    for k, v in stages.items():
        print(f"{k:<40}{v:>10.2f}")
    sets = list(next(iter(timing.values())).keys())
    print(f"\nfit seconds per recognizer and training set (wall, {args.jobs} jobs in parallel)")
    print(f"{'recognizer':<12}" + "".join(f"{s:>16}" for s in sets) + f"{'sum':>10}")
    for rec in [*RECOGNIZERS, "cosine_nn"]:
        row = timing.get(rec, {})
        print(f"{rec:<12}" + "".join(f"{row.get(s, float('nan')):>16.2f}" for s in sets)
              + f"{sum(row.values()):>10.2f}")
    print(f"\nfull panel ({'no selection' if args.no_selection else 'with selection'}): "
          f"{total_s:.1f} s wall (target ≤ 60 s), {cpu_s:.1f} CPU-s in this process "
          f"(≈ {cpu_s / (os.cpu_count() or 1):.1f} s on {os.cpu_count()} idle cores)")
    print(f"second configuration (r_p=0.1, no selection, clear models reused "
          f"{cache.hits}×): {second_s:.1f} s")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "data": name, "cpu_count": os.cpu_count(), "machine": platform.machine(),
        "load_average": os.getloadavg()[0], "selection": not args.no_selection,
        "backend": os.environ.get("BIOANON_BACKEND", "threading"), "n_jobs": args.jobs,
        "total_seconds": total_s, "cpu_seconds": cpu_s,
        "second_configuration_seconds": second_s,
        "stages": stages, "fit_seconds": timing,
        "worst_case": report["privacy"]["worst_case"],
    }, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
