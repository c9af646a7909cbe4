"""Time the full judge on FSDD-sized data (3,000 × 400): every attacker mode, every recognizer
of the zoo (hgb included), membership disclosure and the verification view.

Runs :class:`bioanon.evaluation.Evaluation` on FSDD MFCC features (digit of interest, speaker
sensitive), anonymized by the selective mean (g=64, t=0.8, w=10, r_p=1%). Prints the wall time
per stage, the fit time of each recognizer per training set and the load average (other jobs
share the cores), and writes ``benchmarks/results/bench_evaluate.json``.

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
from bioanon.evaluation import Evaluation
from bioanon.report.build import build_report

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
    ap.add_argument("--selection", action="store_true", help="add the selection curves")
    ap.add_argument("--models", default="all")
    ap.add_argument("--rp", type=float, default=0.01)
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    t0 = time.perf_counter()
    table, interest, sensitive, name = load(args.synthetic)
    load_s = time.perf_counter() - t0
    anon = SelectiveMeanAnonymizer(interest=interest, g=64, t=0.8, w=10, r_p=args.rp)
    stages: dict[str, float] = {}
    last = {"t": time.perf_counter(), "desc": "start"}

    def progress(done: int, total: int, desc: str) -> None:
        now = time.perf_counter()
        key = last["desc"].split(":")[0].split(" (")[0]
        stages[key] = stages.get(key, 0.0) + now - last["t"]
        last.update(t=now, desc=desc)

    cache = ModelCache()
    load0 = os.getloadavg()[0]
    cpu0 = time.process_time()
    start = time.perf_counter()
    ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=args.models,
                    attackers="all", selection="auto" if args.selection else None,
                    random_state=args.seed, n_jobs=args.jobs, progress=progress,
                    cache=cache).evaluate()
    report = build_report(ev)
    total_s = time.perf_counter() - start
    cpu_s = time.process_time() - cpu0
    load1 = os.getloadavg()[0]

    # a second configuration on the same split reuses the clear-trained models
    anon2 = SelectiveMeanAnonymizer(interest=interest, g=64, t=0.8, w=10, r_p=0.1)
    start = time.perf_counter()
    Evaluation(table, interest, sensitive, anonymizer=anon2, models=args.models,
               attackers="all", random_state=args.seed, n_jobs=args.jobs,
               cache=cache).evaluate()
    second_s = time.perf_counter() - start

    timing = report["privacy"]["timing"]
    print(f"data: {name}; loaded in {load_s:.1f} s; cores: {os.cpu_count()}; "
          f"load average (1 min) before / after: {load0:.2f} / {load1:.2f}")
    print(f"{'stage':<48}{'seconds':>10}")
    for k, v in stages.items():
        print(f"{k:<48}{v:>10.2f}")
    sets = list(next(iter(timing.values())).keys())
    print(f"\nfit seconds per recognizer and training set (wall, {args.jobs} jobs in parallel)")
    print(f"{'recognizer':<16}" + "".join(f"{s:>16}" for s in sets) + f"{'sum':>10}")
    for rec in [*RECOGNIZERS, "dlib_embedding", "cosine_nn"]:
        if rec not in timing:
            continue
        row = timing[rec]
        print(f"{rec:<16}" + "".join(f"{row.get(s, float('nan')):>16.2f}" for s in sets)
              + f"{sum(row.values()):>10.2f}")
    w = report["privacy"]["worst_case"]
    print(f"\nfull panel (all modes, {len(timing)} recognizers, membership, verification"
          f"{', selection' if args.selection else ''}): {total_s:.1f} s wall (target ≤ 60 s) "
          f"at load average {load1:.2f}; {cpu_s:.1f} CPU-s in this process")
    print(f"second configuration (r_p=0.1, clear models reused {cache.hits}×): {second_s:.1f} s")
    print(f"worst: {w['attacker']} {w['accuracy']:.3f}; {report['verdict']['sentence']}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "data": name, "cpu_count": os.cpu_count(), "machine": platform.machine(),
        "load_average_before": load0, "load_average_after": load1,
        "selection": args.selection,
        "backend": os.environ.get("BIOANON_BACKEND", "threading"), "n_jobs": args.jobs,
        "total_seconds": total_s, "cpu_seconds": cpu_s,
        "second_configuration_seconds": second_s,
        "stages": stages, "fit_seconds": timing,
        "worst_case": w, "membership": report["privacy"]["membership"],
        "verification": report["privacy"]["verification"], "verdict": report["verdict"],
    }, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
