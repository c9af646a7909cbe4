"""How long a command takes to start: every command's ``--help`` and a refused plan.

Each figure is the wall time of a fresh ``python -m bioanon ...`` process (the fastest of
``--repeat`` runs: a stray pause is not the start-up), the packages it imported beside it
(scikit-learn, SciPy's statistics, pandas), and the 1-minute load average when it ran. The
refused plan is ``release`` on a table of 10 people × 60 records, which no level can show:
it reads the table, prints the plan and stops with exit 2 before the search. Usage::

    python benchmarks/bench_startup.py [--repeat 5] [--out FILE]

Writes JSON (default ``benchmarks/results/bench_startup.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "bench_startup.json"
#: prints the modules a command imported, after it ran (its own output discarded)
PROBE = """
import json, sys
from bioanon.cli import app
try:
    app(sys.argv[1:], prog_name="bioanon")
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(sys.modules)))
"""
#: the packages whose presence the table shows
WATCHED = ("sklearn", "scipy.stats", "pandas", "torch")


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def timed(args: list[str], repeat: int) -> float:
    """The fastest wall time of ``python -m bioanon ARGS`` over ``repeat`` fresh processes."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bioanon", *args], capture_output=True,
                       check=False)
        best = min(best, time.perf_counter() - t0)
    return best


def imported(args: list[str]) -> list[str]:
    """Which of :data:`WATCHED` a fresh process running ``bioanon ARGS`` imported."""
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                         text=True, check=False)
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return [w for w in WATCHED if w in modules]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes per command")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    from bioanon.cli.app import COMMANDS
    from bioanon.datasets import make_biometric

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.parquet"
        make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                       random_state=0).write(tiny)
        runs = [("bioanon --help", ["--help"])]
        runs += [(f"bioanon {c} --help", [c, "--help"]) for c in COMMANDS]
        runs.append(("release, refused by its plan",
                     ["release", str(tiny), "--sensitive", "identity", "--interest",
                      "expression", "-o", str(Path(tmp) / "out.parquet")]))
        for name, argv in runs:
            before = load()
            seconds = timed(argv, args.repeat)
            rows.append({"run": name, "seconds": round(seconds, 3), "load": before,
                         "imports": imported(argv)})
            print(f"{name:38s} {seconds:6.2f} s  load {before:4.2f}  "
                  f"{', '.join(rows[-1]['imports']) or '-'}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": platform.platform(), "cores": os.cpu_count(),
                                    "repeat": args.repeat, "rows": rows}, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
