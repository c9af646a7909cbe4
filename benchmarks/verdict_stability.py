"""Is the verdict a draw? The same commands a user types, at several seeds and twice without.

Runs ``bioanon demo --seed S`` for each demo seed and the README's FSDD ``bioanon release``
(on a table made by ``bioanon extract voice … --features mfcc``) for each FSDD seed, plus each
command once more without ``--seed`` (twice in all), and reads every run's report: the verdict,
the setting, CAS against clear, the deciding figure of a refusal, the fingerprint of what was
judged, the wall time and the load average before and after. Prints a table and a summary
(how many seeds give the most common verdict and setting) and writes JSON.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/verdict_stability.py \
        [--demo-seeds 0-9] [--fsdd voice.parquet --fsdd-seeds 0-4] [--no-seedless] \
        [--busy N] [--out benchmarks/results/verdict_stability]

``--busy N`` runs every command beside N processes that keep a core each busy (a pure-Python
loop, started before the first command and stopped after the last): the verdict under load
(issue 44's "2 × the cores busy" is ``--busy 4`` on 2 cores) against the same seeds run
quiet, each row's ``busy`` saying which.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).with_name("bioanon")
FSDD_ARGS = ["--interest", "digit", "--sensitive", "speaker",
             "--accept-risk", "identity-membership", "--accept-risk", "identity-inference",
             "--reason", "6 speakers: too few to show the identity level"]


def seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",") if s.strip()]


def read_report(folder: Path) -> dict[str, Any]:
    doc = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    cas = doc["utility"]["cas"]["value"] if "cas" in doc.get("utility", {}) else None
    clear = doc["utility"].get("interest", {}).get("clear")
    search = doc.get("search") or {}
    setting = doc.get("setting")
    if isinstance(setting, dict):  # {"setting": label, "certified": ..., "judged": ...}
        setting = setting.get("setting")
    return {"setting": setting, "met": bool(search.get("certified")),
            "cas": cas, "clear": clear,
            "ratio": (cas / clear) if cas is not None and clear else None,
            "deciding": (doc.get("deciding") or {}).get("text"),
            "fingerprint": (search.get("judged") or {}).get("fingerprint")}


def run(kind: str, seed: int | None, work: Path, fsdd: Path | None) -> dict[str, Any]:
    tag = f"{kind}-{'noseed' if seed is None else seed}-{time.monotonic_ns()}"
    out = work / tag
    if kind == "demo":
        cmd = [str(BIN), "demo", "--out", str(out)]
        report = out
    else:
        assert fsdd is not None
        cmd = [str(BIN), "release", str(fsdd), "-o", str(out / "rel.parquet"), *FSDD_ARGS]
        out.mkdir(parents=True)
        report = out / "rel.parquet.report"
    if seed is not None:
        cmd += ["--seed", str(seed)]
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    row: dict[str, Any] = {"kind": kind, "seed": seed, "exit": proc.returncode,
                           "wall_s": round(wall, 1), "load_before": round(load0, 2),
                           "load_after": round(os.getloadavg()[0], 2)}
    try:
        row.update(read_report(report))
    except (OSError, ValueError, KeyError) as exc:
        row["error"] = f"{exc}: {proc.stderr.strip().splitlines()[-1:] }"
    return row


def _spin() -> None:
    while True:
        pass


def busy_processes(n: int) -> list[Any]:
    """``n`` started processes, each keeping one core busy until terminated."""
    import multiprocessing

    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    return procs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--demo-seeds", default="0-9")
    ap.add_argument("--fsdd", type=Path, default=None)
    ap.add_argument("--fsdd-seeds", default="0-4")
    ap.add_argument("--no-seedless", action="store_true")
    ap.add_argument("--busy", type=int, default=0,
                    help="processes keeping a core busy each while the commands run")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/verdict_stability"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    plan: list[tuple[str, int | None]] = [("demo", s) for s in seeds(args.demo_seeds)]
    if not args.no_seedless:
        plan += [("demo", None), ("demo", None)]
    if args.fsdd is not None:
        plan += [("fsdd", s) for s in seeds(args.fsdd_seeds)]
        if not args.no_seedless:
            plan += [("fsdd", None), ("fsdd", None)]
    rows = []
    spinners = busy_processes(args.busy)
    try:
        for kind, seed in plan:
            r = run(kind, seed, args.out, args.fsdd)
            r["busy"] = args.busy
            rows.append(r)
            report_row(r, args.out, rows)
    finally:
        for p in spinners:
            p.terminate()
    summarize(rows)


def report_row(r: dict[str, Any], out: Path, rows: list[dict[str, Any]]) -> None:
    """Print one run's line and rewrite the JSON with every run so far."""
    ratio = "—" if r.get("ratio") is None else f"{r['ratio']:.3f}"
    print(f"{r['kind']:5} seed {str(r['seed']):6} exit {r['exit']} "
          f"{'certified' if r.get('met') else 'REFUSED':9} {r.get('setting')} "
          f"CAS/clear {ratio} {r['wall_s']:.0f} s (load {r['load_before']:.1f}"
          f"->{r['load_after']:.1f}; {r['busy']} busy) {r.get('fingerprint') or ''}",
          flush=True)
    (out / "verdict_stability.json").write_text(json.dumps(rows, indent=2),
                                                encoding="utf-8")


def summarize(rows: list[dict[str, Any]]) -> None:
    """How many seeds of each command give its most common verdict and setting."""
    for kind in ("demo", "fsdd"):
        mine = [r for r in rows if r["kind"] == kind and r["seed"] is not None]
        if not mine:
            continue
        common = collections.Counter((r.get("met"), r.get("setting")) for r in mine)
        (met, setting), k = common.most_common(1)[0]
        print(f"{kind}: {k} of {len(mine)} seeds give the most common verdict "
              f"({'certified' if met else 'refused'} {setting})")


if __name__ == "__main__":
    main()
