"""Time ``bioanon release`` on FSDD, SP-SW-HAR and a 1M-row Parquet table, stage by stage.

Each release runs as a user runs it: the ``bioanon`` command in a subprocess, its progress on
stderr (one timestamped line per stage when stderr is not a terminal). The stages are timed
from those lines (a stage lasts until the next one starts), so what the table shows is what
the command itself spent, not a re-implementation of it. The load average is printed beside
every figure: other jobs may share the cores, and ratios mean something only within one run.

Tables:

- ``fsdd``: the README's table, ``bioanon extract voice ... --features mfcc`` (3,000 × 400),
  released as the README's example (digit / speaker, the identity level accepted: 6 speakers
  cannot show it);
- ``sp-sw-har``: :func:`bioanon.datasets.load_sp_sw_har` written to Parquet, released
  activity / subject with executions whole (``--group execution``), the identity level
  accepted where the plan says it cannot be shown;
- ``1m``: ``bench_scale.write_parquet`` (1,000,000 × 256 float32, 10,000 identities),
  ``release --dask`` at the default ``--sample-records``;
- ``e2e``: ``bench_scale.py --e2e-only`` (``anonymize`` end to end against a pyarrow copy).

A refusal (exit 1: nothing certified) is a result, not a failure: its time and last line are
recorded. ``--evaluate`` also times one full evaluation (``bioanon evaluate``: the default
method at its paper's setting, the whole panel with its selection curve) of each in-memory
table in the same run, for the ratio release / evaluation (issue 29: ≤ 4 ×).
``--exhaustive`` also runs each in-memory release with ``--exhaustive`` (every setting judged
by the full panel) and compares the two: the chosen setting and the confirmation's worst case
(the staged search must not drop it). Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/bench_release.py [--tables fsdd,1m]
        [--methods selective-mean] [--budget-minutes 10] [--workdir DIR] [--keep]
        [--evaluate] [--exhaustive]

Prints a table and writes JSON (default benchmarks/results/bench_release.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "bench_release.json"
TABLES = ("fsdd", "sp-sw-har", "1m", "e2e")
WHY = "bench_release: the plan says this level cannot be shown on this table"
#: a progress line of the command: "HH:MM:SS <bar title>: <stage> [i/n, elapsed]"
LINE = re.compile(r"^(\d\d):(\d\d):(\d\d) (?:[^:]*: )?(.*?)(?: \[\d+/\d+, [^\]]*\])?$")


def load() -> str:
    """The 1-minute load average, as printed beside each figure."""
    return f"{os.getloadavg()[0]:.2f}"


def stage_times(text: str) -> list[dict[str, Any]]:
    """Stages and their seconds from the command's timestamped progress lines.

    Examples
    --------
    >>> log = ("02:06:17 certifying: reading the label columns [0/1, 0.0 s]\\n"
    ...        "02:06:18 certifying: reading a sample [0/1, 0.7 s]\\n"
    ...        "02:06:59 certifying: setting 1 (1/3) [0/4, 42.4 s]\\n"
    ...        "02:08:00 done\\n")
    >>> [(s["stage"], s["seconds"]) for s in stage_times(log)]
    [('reading the label columns', 1), ('reading a sample', 41), ('setting 1 (1/3)', 61)]
    """
    marks: list[tuple[int, str]] = []
    for raw in text.splitlines():
        m = LINE.match(raw.strip())
        if m:
            h, mi, s, what = m.groups()
            marks.append((int(h) * 3600 + int(mi) * 60 + int(s), what.strip()))
    out = []
    for (t0, what), (t1, _) in zip(marks, marks[1:], strict=False):
        out.append({"stage": what, "seconds": (t1 - t0) % 86400})
    return out


def run_cli(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``bioanon ARGS`` in a subprocess: wall seconds, exit code, stages, last lines."""
    t0 = time.perf_counter()
    load0 = load()
    proc = subprocess.run([sys.executable, "-m", "bioanon", *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    seconds = time.perf_counter() - t0
    tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-3:]
    return {"args": args, "seconds": round(seconds, 1), "exit_code": proc.returncode,
            "load_before": load0, "load_after": load(), "stages": stage_times(proc.stdout),
            "last_lines": tail}


def fsdd_table(work: Path, env: dict[str, str], data: Path) -> tuple[Path, list[str]]:
    path = work / "voice.parquet"
    if not path.exists():
        run = run_cli(["extract", "voice", str(data / "fsdd"), "--labels",
                       str(data / "fsdd" / "labels.csv"), "--features", "mfcc", "-o",
                       str(path)], env)
        if run["exit_code"]:
            raise RuntimeError(f"extract failed: {run['last_lines']}")
    return path, ["--interest", "digit", "--sensitive", "speaker"]


def har_table(work: Path, env: dict[str, str], data: Path) -> tuple[Path, list[str]]:
    from bioanon.datasets import load_sp_sw_har

    path = work / "har.parquet"
    if not path.exists():
        load_sp_sw_har(data).write(path)
    return path, ["--interest", "activity", "--sensitive", "subject", "--group", "execution"]


def big_table(work: Path, n: int) -> tuple[Path, list[str]]:
    sys.path.insert(0, str(HERE))
    import bench_scale

    path = work / f"big-{n}.parquet"
    if not path.exists():
        bench_scale.write_parquet(path, n)
    return path, ["--interest", "p", "--sensitive", "id", "--dask"]


def release(name: str, path: Path, roles: list[str], work: Path, env: dict[str, str],
            extra: list[str]) -> dict[str, Any]:
    out = work / f"{name}-release.parquet"
    for p in work.glob(f"{name}-release.parquet*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    accept = ["--accept-risk", "identity-membership", "--reason", WHY,
              "--accept-risk", "identity-inference", "--reason", WHY]
    run = run_cli(["release", str(path), "-o", str(out), *roles, "--seed", "1", *extra,
                   *accept], env)
    named = [m for ln in run["last_lines"] for m in re.findall(r"--accept-risk (\S+)", ln)]
    if run["exit_code"] == 2 and named:  # the plan names other levels (e.g. a group's)
        names = dict.fromkeys(["identity-membership", "identity-inference", *named])
        accept = [a for name in names for a in ("--accept-risk", name, "--reason", WHY)]
        run = run_cli(["release", str(path), "-o", str(out), *roles, "--seed", "1", *extra,
                       *accept], env)
    run["table"] = name
    run["released"] = out.exists()
    return run


def evaluate_once(name: str, path: Path, roles: list[str], work: Path,
                  env: dict[str, str]) -> dict[str, Any]:
    """One full evaluation of the table (the default method, the whole panel)."""
    out = work / f"{name}-evaluate"
    shutil.rmtree(out, ignore_errors=True)
    role_args = [a for a in roles if a != "--dask"]
    # the default method's paper setting (g=32) needs 26 records per class: SP-SW-HAR's
    # smallest activity class has 17, so its evaluation takes g=8
    setting = ["--g", "8"] if name == "sp-sw-har" else []
    run = run_cli(["evaluate", str(path), *role_args, "-o", str(out), "--seed", "1",
                   *setting], env)
    run["table"] = f"{name} (one evaluation)"
    return run


def chosen_of(out: Path) -> dict[str, Any]:
    """The chosen setting and the confirmation's worst case, from a release's report."""
    rep = out.parent / (out.name + ".report") / "report.json"
    if not rep.exists():
        return {}
    data = json.loads(rep.read_text())
    v = data.get("verdict", {})
    search = data.get("search", {})
    rows = search.get("rows", []) if isinstance(search, dict) else []
    chosen = search.get("chosen") if isinstance(search, dict) else None
    worst = v.get("worst_case", {})
    rec = [r for r in v.get("risks", []) if r.get("name") == "record-recognition"]
    return {"chosen": rows[chosen]["setting"] if chosen is not None and rows else None,
            "certified": bool(v.get("met")),
            "worst_case": worst.get("accuracy"), "worst_case_ci": worst.get("ci"),
            "worst_attacker": worst.get("attacker"),
            "recognition_advantage_ci": rec[0]["ci"] if rec else None}


def say_run(r: dict[str, Any]) -> None:
    status = {0: "released", 1: "refused (nothing certified)"}.get(r["exit_code"],
                                                                    f"exit {r['exit_code']}")
    print(f"\n{r['table']}: {r['seconds']:.1f} s wall, {status}; load {r['load_before']} → "
          f"{r['load_after']}")
    print(f"  {'stage':<70}{'s':>7}")
    for s in r["stages"]:
        print(f"  {s['stage'][:70]:<70}{s['seconds']:>7}")
    for ln in r["last_lines"]:
        print(f"  | {ln[:110]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default=",".join(TABLES),
                    help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument("--methods", default=None, help="--methods passed to release")
    ap.add_argument("--budget-minutes", type=float, default=None)
    ap.add_argument("--n", type=int, default=1_000_000, help="rows of the 1m table")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated tables")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--evaluate", action="store_true",
                    help="also time one full evaluation of each in-memory table")
    ap.add_argument("--exhaustive", action="store_true",
                    help="also run each in-memory release with --exhaustive and compare")
    args = ap.parse_args()
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    bad = [t for t in tables if t not in TABLES]
    if bad:
        ap.error(f"unknown table {bad[0]}; choose from {', '.join(TABLES)}")
    data = Path(os.environ.get("BIOANON_DATA") or HERE.parent.parent / "shared" / "datasets")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_release-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    extra = (["--methods", args.methods] if args.methods else []) + (
        ["--budget-minutes", str(args.budget_minutes)] if args.budget_minutes else [])
    doc: dict[str, Any] = {"cpu_count": os.cpu_count(), "runs": [], "load_start": load()}
    print(f"bench_release: {', '.join(tables)}; {os.cpu_count()} cores; load {load()}")
    try:
        for name in tables:
            if name == "e2e":
                res = work / "bench_scale.json"
                t0 = time.perf_counter()
                subprocess.run([sys.executable, str(HERE / "bench_scale.py"), "--e2e-only",
                                "--out", str(res)], env=env, check=True)
                doc["e2e"] = {"seconds": round(time.perf_counter() - t0, 1), "load": load(),
                              **json.loads(res.read_text())}
                continue
            if name == "fsdd":
                path, roles = fsdd_table(work, env, data)
            elif name == "sp-sw-har":
                path, roles = har_table(work, env, data)
            else:
                path, roles = big_table(work, args.n)
            r = release(name, path, roles, work, env, extra)
            r["choice"] = chosen_of(work / f"{name}-release.parquet")
            say_run(r)
            doc["runs"].append(r)
            if name == "1m":
                continue
            if args.evaluate:
                e = evaluate_once(name, path, roles, work, env)
                say_run(e)
                r["evaluation_seconds"] = e["seconds"]
                r["ratio_to_evaluation"] = round(r["seconds"] / max(e["seconds"], 1e-9), 2)
                print(f"  release / one evaluation: {r['ratio_to_evaluation']:.2f} ×")
                doc["runs"].append(e)
            if args.exhaustive:
                x = release(name, path, roles, work, env, [*extra, "--exhaustive"])
                x["table"] = f"{name} (--exhaustive)"
                x["choice"] = chosen_of(work / f"{name}-release.parquet")
                say_run(x)
                same = x["choice"].get("chosen") == r["choice"].get("chosen")
                r["exhaustive"] = {"seconds": x["seconds"], "choice": x["choice"],
                                   "same_choice": same}
                print(f"  staged: {r['choice']}\n  exhaustive: {x['choice']}\n  same "
                      f"choice: {same}")
                doc["runs"].append(x)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    doc["load_end"] = load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
