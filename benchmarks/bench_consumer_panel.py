"""Time the consumer's panel: one evaluation of FSDD with and without it (``consumer_panel``
``final`` against ``off``), wall and CPU seconds, with the load average beside each; prints
the panel (each model release → clear beside clear → clear, the picks) and the headline ratio.

The setting judged is the one ``release`` certifies on FSDD, ``dp-cells(cells=3, mu=6,
keep=4)`` (digit of interest, speaker sensitive, evaluation seed 0, one job). Writes
``benchmarks/results/bench_consumer_panel.json``.

    BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/bench_consumer_panel.py
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any

from bioanon.anonymize.registry import build_method
from bioanon.evaluation import Evaluation
from bioanon.report.build import build_report

OUT = Path(__file__).resolve().parent / "results" / "bench_consumer_panel.json"


def run(table: Any, panel: str, jobs: int, seed: int) -> dict[str, Any]:
    anon = build_method("dp-cells", {"cells": 3, "mu": 6.0, "keep": 4}, interest="digit",
                        sensitive="speaker", additional=[], random_state=None)
    load = os.getloadavg()[0]
    w0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = Evaluation(table, "digit", "speaker", anonymizer=anon, consumer_panel=panel,
                        n_jobs=jobs, random_state=seed).evaluate()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    u = build_report(ev)["utility"]
    return {"consumer_panel": panel, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2),
            "cas": u["cas"]["value"], "clear": u["interest"]["clear"],
            "ratio": u["cas"]["value"] / u["interest"]["clear"], "consumer": u["consumer"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from bioanon.datasets.fsdd import load_fsdd

    table = load_fsdd()
    rows = [run(table, panel, args.jobs, args.seed) for panel in ("off", "final")]
    for r in rows:
        print(f"consumer_panel={r['consumer_panel']:5s} wall {r['wall_s']:6.1f} s  CPU "
              f"{r['cpu_s']:6.1f} s  load {r['load_before']:.2f}→{r['load_after']:.2f}  CAS "
              f"{r['cas']:.3f} / clear {r['clear']:.3f} = {r['ratio']:.3f} ×")
    panel = rows[1]["consumer"]
    for m in panel["models"]:
        print(f"  {m['model']:7s} release→clear {m['release_to_clear']['value']:.3f}  "
              f"clear→clear {m['clear_to_clear']['value']:.3f}  CV release "
              f"{m['release_cv']['value']:.3f}  CV clear {m['clear_cv']['value']:.3f}")
    print(f"  pick {panel['pick']} (clear's pick {panel['clear_pick']})")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(rows, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
