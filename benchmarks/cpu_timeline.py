"""The CPU a command uses each moment, beside the phase its progress names: where cores idle.

Runs one ``bioanon`` command in a fresh process (default: ``bioanon demo --seed 0 -v``, its
output in a temporary folder) with its progress piped (plain lines, one per step), samples the
CPU seconds of that process and of every child (loky's stage-1 workers) through psutil every
``--interval`` seconds, and gives each interval to the phase the last progress line named
(those lines start with the time; the results printed at the end move no phase): start-up
and plan, stage 1, stage 2 (the recognition panel), the consumer's gate, the confirmation,
the trade-off, the closest setting's report, the release and its report.

Per phase it prints the wall seconds, the CPU seconds, the cores busy on average and the idle
core-seconds (wall × cores − CPU: what better overlap could win at most), with the load average
before and after, and the expected time the command said after its plan; the JSON holds the
phases and every sample (``series``: seconds since the start, cores busy in the interval,
phase). A process that ends between two samples keeps the CPU it had at the last one (its
last interval is under-counted).

Usage::

    .venv/bin/python benchmarks/cpu_timeline.py [--interval 0.5] [--cores N]
        [--out FILE] [-- bioanon ARGS...]

e.g. ``-- release voice.parquet -o rel.parquet --interest digit --sensitive speaker -v``.
Prints a table and writes JSON (default benchmarks/results/cpu_timeline.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: the phase a progress line starts, by the first pattern it matches (in this order)
PHASES = (
    ("stage 1 again", "stage 1 again (the floor's settings)"),
    (r"stage 1\b", "stage 1"),
    (r"stage 2\b", "stage 2 (the panel)"),
    ("consumer's whole panel", "the consumer's gate"),
    ("confirming ", "the confirmation"),
    ("trade-off", "the trade-off"),
    ("reporting the closest", "the closest setting's report"),
    (r"certifying: fitting|anonymizing: fitting", "the release and its report"),
)
START = "start-up and plan"


def phase_of(line: str, current: str) -> str:
    """The phase after ``line`` (``current`` when it names none, or when it is not a
    progress line: those start with the time, the results printed at the end do not).

    >>> phase_of("16:47:00 certifying: stage 1: 9 settings in 2 worker processes", START)
    'stage 1'
    >>> phase_of("16:48:14 evaluating: membership: record game 1 of 4", "the confirmation")
    'the confirmation'
    >>> phase_of("trade-off on the tuning split (best CAS ...):", "the release and its report")
    'the release and its report'
    """
    if not re.match(r"\d\d:\d\d:\d\d ", line):
        return current
    for pattern, name in PHASES:
        if re.search(pattern, line):
            return name
    return current


def bioanon_command() -> list[str]:
    """The ``bioanon`` entry point of this environment."""
    exe = Path(sys.executable).with_name("bioanon")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "bioanon"]


def sample(args: list[str], interval: float) -> dict[str, Any]:
    """Run ``bioanon ARGS`` and sample its process tree's CPU every ``interval`` seconds."""
    import psutil

    state = {"phase": START}
    lines: list[tuple[float, str]] = []
    t0 = time.perf_counter()
    proc = subprocess.Popen([*bioanon_command(), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.perf_counter() - t0, line.rstrip("\n")))
            state["phase"] = phase_of(line, state["phase"])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    root = psutil.Process(proc.pid)
    seen: dict[int, float] = {}
    points: list[tuple[float, float, str]] = []
    while True:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            tree = []
        for p in tree:
            try:
                t = p.cpu_times()
                seen[p.pid] = t.user + t.system
            except psutil.Error:
                pass
        points.append((time.perf_counter() - t0, sum(seen.values()), state["phase"]))
        if proc.poll() is not None:
            break
        time.sleep(interval)
    reader.join(timeout=5)
    pairs = list(zip(points[:-1], points[1:], strict=True))
    series = [{"t": round(b[0], 2), "cores": round((b[1] - a[1]) / max(b[0] - a[0], 1e-9), 3),
               "phase": a[2]} for a, b in pairs]
    spans = [(b[0] - a[0], b[1] - a[1], a[2]) for a, b in pairs]
    return {"exit_code": proc.returncode, "wall_s": round(points[-1][0], 2),
            "cpu_s": round(points[-1][1], 2), "series": series, "spans": spans,
            "expected": next((t.strip() for _, t in lines if "expected time:" in t), None),
            "last_lines": [text for _, text in lines[-3:]]}


def by_phase(spans: list[tuple[float, float, str]], cores: int) -> list[dict[str, Any]]:
    """Wall, CPU, busy cores and idle core-seconds of each phase, in the order they came.

    >>> by_phase([(1.0, 1.0, "a"), (1.0, 2.0, "b"), (1.0, 1.5, "b")], 2)[1]["idle_core_s"]
    0.5
    """
    order: list[str] = []
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for w, c, name in spans:
        if name not in wall:
            order.append(name)
            wall[name], cpu[name] = 0.0, 0.0
        wall[name] += w
        cpu[name] += c
    return [{"phase": n, "wall_s": round(wall[n], 2), "cpu_s": round(cpu[n], 2),
             "cores_busy": round(cpu[n] / wall[n], 2) if wall[n] > 0 else 0.0,
             "idle_core_s": round(max(cores * wall[n] - cpu[n], 0.0), 2)} for n in order]


def main() -> None:
    argv = sys.argv[1:]
    rest: list[str] = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                    help="cores the idle core-seconds are counted against")
    ap.add_argument("--out", default="benchmarks/results/cpu_timeline.json")
    opts = ap.parse_args(argv)
    try:
        import psutil  # noqa: F401
    except ImportError:
        sys.exit("error: psutil is needed to read the workers' CPU (pip install psutil, or "
                 "the scale extra)")
    with tempfile.TemporaryDirectory() as tmp:
        args = rest or ["demo", "--seed", "0", "-v", "-o", str(Path(tmp) / "demo")]
        load0 = os.getloadavg()[0]
        run = sample(args, opts.interval)
        load1 = os.getloadavg()[0]
    phases = by_phase(run.pop("spans"), opts.cores)
    idle = round(sum(p["idle_core_s"] for p in phases), 1)
    out = {"command": ["bioanon", *args], "cores": opts.cores, "interval_s": opts.interval,
           "load_before": load0, "load_after": load1, "phases": phases,
           "idle_core_s": idle, **run}
    print(f"bioanon {' '.join(args)}  (exit {run['exit_code']}; load {load0:.2f} -> "
          f"{load1:.2f}; {opts.cores} cores)")
    print(f"{'phase':<38}{'wall s':>8}{'CPU s':>8}{'busy':>7}{'idle core-s':>13}")
    for p in phases:
        print(f"{p['phase']:<38}{p['wall_s']:>8.1f}{p['cpu_s']:>8.1f}{p['cores_busy']:>7.2f}"
              f"{p['idle_core_s']:>13.1f}")
    print(f"{'the whole run':<38}{run['wall_s']:>8.1f}{run['cpu_s']:>8.1f}"
          f"{run['cpu_s'] / max(run['wall_s'], 1e-9):>7.2f}{idle:>13.1f}")
    if run["expected"]:
        print(f"said after the plan: {run['expected']}")
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {opts.out}")


if __name__ == "__main__":
    main()
