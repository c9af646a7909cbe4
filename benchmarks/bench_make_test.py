"""The README's two commands on a fresh clone: ``make test`` (and ``make demo``), step by step.

Clones the repository's committed ``HEAD`` into a new folder (what CI gets: nothing of the
working tree, no virtual environment, no caches), runs ``make test`` there and, with
``--demo``, ``make demo`` after it. Each step is timed from make's own step lines
(``==> [HH:MM:SS] ...``: the virtual environment, torch, bioanon with its test extras,
resemblyzer, ruff and mypy, the suite, the demo), each with the 1-minute load average
sampled every few seconds while it ran (mean and max). Beside them: the suite's count line,
the CPU seconds of the processes make waited for, and this machine's workload factor
(:func:`bioanon.certification.estimate.machine_factor`, 1 on the machine class the
expected-time model was fitted on) before and after, so that runs on machines of other
speeds can be read side by side. Usage::

    python benchmarks/bench_make_test.py [--demo] [--repo .] [--keep DIR] [--out FILE]

``BIOANON_DATA`` is passed on (default: ``../shared/datasets`` beside the repository).
Writes JSON (default ``benchmarks/results/bench_make_test.json``) and each command's whole
output beside it (``bench_make_test.json.test.log``, ``... .demo.log``). Exits with the
status of the first command that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "results" / "bench_make_test.json"
#: a step line of the Makefile (its STEP macro)
STEP = re.compile(r"^==> \[\d\d:\d\d:\d\d\] (.*)$")
#: pytest's closing count line
COUNTS = re.compile(r"^=*\s*(\d+ passed.*) in ([\d.]+)s")
#: seconds between two samples of the load average
SAMPLE_SECONDS = 5.0


class LoadSampler(threading.Thread):
    """The 1-minute load average every :data:`SAMPLE_SECONDS`, with the time it was read."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.samples.append((time.perf_counter(), os.getloadavg()[0]))
            self._done.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def between(self, t0: float, t1: float) -> dict[str, float | None]:
        """Mean and max of the samples read from ``t0`` to ``t1``."""
        got = [v for t, v in self.samples if t0 <= t <= t1]
        if not got:
            return {"mean": None, "max": None}
        return {"mean": round(sum(got) / len(got), 2), "max": round(max(got), 2)}


def cpu_seconds() -> float:
    """User and system seconds of the processes this one waited for, so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_make(target: str, clone: Path, env: dict[str, str], load: LoadSampler,
             log: Path) -> dict[str, Any]:
    """``make TARGET`` in ``clone``: its steps (each from its step line to the next one, or
    to the end), the suite's count line, wall and CPU seconds, the exit status."""
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    marks: list[tuple[float, str]] = [(t0, f"make {target} (before its first step)")]
    counts: dict[str, Any] = {}
    said: list[str] = []
    with log.open("w", buffering=1) as sink, subprocess.Popen(
            ["make", target], cwd=clone, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.write(line)
            text = line.rstrip("\n")
            step = STEP.match(text)
            if step:  # a reading at each step's start: a short step has one too
                now = time.perf_counter()
                marks.append((now, step.group(1)))
                load.samples.append((now, os.getloadavg()[0]))
                print(f"{time.strftime('%H:%M:%S')} make {target}: {step.group(1)}",
                      flush=True)
            found = COUNTS.search(text)
            if found:
                counts = {"line": found.group(1), "seconds": float(found.group(2))}
            if text.startswith("verdict:"):
                said.append(text)
        rc = proc.wait()
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    steps = []
    for k, ((start, name), (end, _)) in enumerate(zip(marks, [*marks[1:], (t1, "")],
                                                       strict=True)):
        if k == 0 and end - start < 0.1:  # make's own start, before its first step line
            continue
        steps.append({"step": name, "seconds": round(end - start, 1),
                      "load": load.between(start, end)})
    return {"target": target, "rc": rc, "seconds": round(t1 - t0, 1),
            "cpu_seconds": round(cpu1 - cpu0, 1), "load": load.between(t0, t1),
            "steps": steps,
            "suite": counts or None, "verdict": said[-1] if said else None}


def factor() -> float | None:
    """This machine's workload factor now (None where bioanon is not importable here)."""
    try:
        from bioanon.certification.estimate import machine_factor
    except ImportError:
        return None
    return round(machine_factor(), 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="the repository to clone")
    ap.add_argument("--demo", action="store_true", help="run make demo after make test")
    ap.add_argument("--keep", type=Path, default=None,
                    help="clone into this new folder and keep it (default: a temporary one)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    env = dict(os.environ)
    env.setdefault("BIOANON_DATA", str(args.repo.resolve().parent / "shared" / "datasets"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        clone = args.keep if args.keep is not None else Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(args.repo.resolve()), str(clone)],
                       check=True)
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, check=True,
                              capture_output=True, text=True).stdout.strip()
        print(f"cloned {head} into {clone}; BIOANON_DATA={env['BIOANON_DATA']}", flush=True)
        before = factor()
        load = LoadSampler()
        load.start()
        runs = []
        for target in ["test", *(["demo"] if args.demo else [])]:
            log = args.out.parent / f"{args.out.name}.{target}.log"
            runs.append(run_make(target, clone, env, load, log))
            if runs[-1]["rc"] != 0:
                break
        load.stop()
        after = factor()
        for r in runs:
            print(f"\nmake {r['target']}: {r['seconds']:.0f} s wall, {r['cpu_seconds']:.0f} CPU-s, "
                  f"load {r['load']['mean']} (max {r['load']['max']}), exit {r['rc']}")
            for s in r["steps"]:
                ld = s["load"]
                print(f"  {s['seconds']:8.1f} s  load {ld['mean'] or '-':>5} / "
                      f"{ld['max'] or '-':>5}  {s['step'][:70]}")
            if r["suite"]:
                print(f"  the suite: {r['suite']['line']} in {r['suite']['seconds']:.0f} s")
            if r["verdict"]:
                print(f"  {r['verdict']}")
        print(f"workload factor: {before} before, {after} after")
        args.out.write_text(json.dumps({
            "machine": platform.platform(), "cores": os.cpu_count(), "commit": head,
            "workload_factor": {"before": before, "after": after}, "runs": runs}, indent=2))
        print(f"wrote {args.out}")
    return next((r["rc"] for r in runs if r["rc"] != 0), 0)


if __name__ == "__main__":
    raise SystemExit(main())
