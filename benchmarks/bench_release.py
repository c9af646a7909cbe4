"""Time the certified release on FSDD, SP-SW-HAR and the demo with 1 and 2 workers, stage by
stage, with CPU time and the load average beside every figure.

Every run's phases (the checks and the plan, stage 1, stage 2, the confirmation, the
trade-off, the closest report, the release, the writing) are given in wall and CPU seconds with
the 1-minute load average when each began, in a table and in the JSON (``phases``,
``phase_table``), beside the expected time the release said after its plan
(:mod:`bioanon.certification.estimate`; ``expected``).

Each in-memory table is released once per worker count (``--workers 1,2``: ``n_jobs``, the
processes stage 1 judges the settings in), each in a fresh process so that no worker or
cache carries over. The run times its stages from the search's own progress (stage 1: every
setting without the panel; stage 2: the panel on the survivors; the confirmation on a fresh
split; the release), and measures CPU time (this process and its worker processes) beside
the wall time: on a machine other jobs share, CPU seconds are the steadier figure, and the
ratio wall(1 worker) / wall(2 workers) of stage 1 is the speed-up. The runs of one table must
certify the same setting with the same figures and release the same records (as a set): the
table says so (``same``).

Tables:

- ``fsdd``: the README's table, ``bioanon extract voice ../shared/datasets/fsdd --labels
  ../shared/datasets/fsdd/labels.csv --features mfcc`` (3,000 × 400), released as the
  README's example (digit / speaker, ``--accept-risk identity-membership`` and
  ``identity-inference``: 6 speakers cannot show the identity level), seed 1;
- ``sp-sw-har``: :func:`bioanon.datasets.load_sp_sw_har` (activity / subject, executions
  kept whole, ``group=execution``), the levels the plan says cannot be shown accepted;
- ``demo``: what ``bioanon demo`` certifies (its synthetic table, methods, panel, budget and
  seed);
- ``1m``: ``bench_scale.write_parquet`` (1,000,000 × 256), ``bioanon release --dask``;
- ``e2e``: ``bench_scale.py --e2e-only``.

``--curve 5000,20000,50000`` adds the cost curve: ``bioanon.datasets.make_biometric`` tables of
that many records (10 per person, 128 features: 500 / 2,000 / 5,000 people), each released in
a fresh process with the last ``--workers`` count (roles identity / expression, seed 1, the
levels its plan cannot show accepted), with wall and CPU seconds per phase beside the load,
CPU seconds per 1,000 records and the growth exponent between consecutive sizes (JSON:
``curve``). ``--tables ''`` runs the curve alone; 50,000 records take long on a small machine.

``--evaluate`` (on by default) times one full ``bioanon evaluate`` of the certified setting of
FSDD (or the default method when nothing was certified) in the same run: the ratio release /
evaluation. ``--cli`` also times the user's commands themselves (the README's ``bioanon
release`` of FSDD, ``bioanon demo``) with their default ``--jobs``. ``--exhaustive`` runs each
in-memory release with ``exhaustive=True`` too and compares the choice. Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/bench_release.py
        [--tables fsdd,sp-sw-har,demo] [--workers 1,2] [--budget-minutes 10] [--no-evaluate]
        [--cli] [--exhaustive] [--curve 5000,20000] [--workdir DIR]

Prints a table and writes JSON (default benchmarks/results/bench_release.json).
"""

from __future__ import annotations

import argparse
import hashlib
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
TABLES = ("fsdd", "sp-sw-har", "demo", "1m", "e2e")
IN_MEMORY = ("fsdd", "sp-sw-har", "demo")
WHY = "bench_release: the plan says this level cannot be shown on this table"
README_WHY = "6 speakers: too few to show the identity level"
#: a progress line of the command: "HH:MM:SS <bar title>: <stage> [i/n, elapsed]"
LINE = re.compile(r"^(\d\d):(\d\d):(\d\d) (?:[^:]*: )?(.*?)(?: \[\d+/\d+, [^\]]*\])?$")
#: the search's phases, by the first words of its progress text
PHASES = (("stage 1", "stage 1"), ("stage 2", "stage 2"), ("confirming", "confirmation"),
          ("trade-off", "trade-off"), ("reporting the closest", "closest report"),
          ("done", "release"))
#: every phase of a release, in order: the checks and the plan (until the search's first
#: step), the search's phases, the release (the whole table anonymized) and its writing
ALL_PHASES = ("plan", *dict.fromkeys(p for _, p in PHASES), "write")


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


# ---------------------------------------------------------------------- one release (child)
def cpu_seconds() -> float:
    """CPU seconds of this process and every process it started (living worker processes
    through psutil when it is installed; finished ones through the OS)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + done.ru_utime + done.ru_stime
    try:
        import psutil
    except ImportError:  # living workers uncounted: the JSON says so
        return total
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def worker_cpu(pids: set[int] | None = None) -> list[float]:
    """CPU seconds of each living worker process (loky's), through psutil (empty without);
    ``pids`` receives the process ids seen (a worker loky replaced shows as one more)."""
    try:
        import psutil
    except ImportError:
        return []
    out = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any("loky" in part for part in child.cmdline()):
                t = child.cpu_times()
                out.append(round(t.user + t.system, 2))
                if pids is not None:
                    pids.add(child.pid)
        except psutil.Error:
            pass
    return out


def read_table(name: str, path: str | None) -> tuple[Any, Any, dict[str, Any]]:
    """(table, roles, the judge's and search's options) of a benchmark table."""
    from bioanon.release import Roles
    from bioanon.table import FeatureTable

    if name == "demo":
        from bioanon.cli.demo import (
            DEMO_IDENTITIES,
            DEMO_METHODS,
            DEMO_MODELS,
            DEMO_RECORDS_PER_IDENTITY,
        )
        from bioanon.datasets import make_biometric

        table = make_biometric(n_identities=DEMO_IDENTITIES,
                               records_per_identity=DEMO_RECORDS_PER_IDENTITY, random_state=0)
        return (table, Roles(sensitive="identity", interest="expression"),
                {"methods": DEMO_METHODS, "models": DEMO_MODELS, "random_state": 0,
                 "budget_minutes": 2.0,
                 "report_closest": True})
    if name.startswith("curve-"):
        from bioanon.datasets import make_biometric

        n = int(name.split("-", 1)[1])
        table = make_biometric(n_identities=max(1, n // 10), records_per_identity=10,
                               n_features=128, random_state=0)
        return table, Roles(sensitive="identity", interest="expression"), {"random_state": 1}
    table = FeatureTable.read(str(path))
    if name == "fsdd":
        return (table, Roles(sensitive="speaker", interest="digit"),
                {"random_state": 1, "accept_risks": {"identity-membership": README_WHY,
                                                     "identity-inference": README_WHY}})
    return (table, Roles(sensitive="subject", interest="activity"),
            {"random_state": 1, "group": "execution"})


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One certified release in this process; its phases' wall and CPU seconds."""
    from joblib.externals.loky import get_reusable_executor

    from bioanon.certification import NotCertified, certify
    from bioanon.plan import PlanRefused

    table, roles, options = read_table(spec["table"], spec.get("path"))
    options.update(n_jobs=spec["jobs"], exhaustive=spec.get("exhaustive", False))
    if spec.get("budget_minutes") is not None:
        options["budget_minutes"] = spec["budget_minutes"]
    marks: list[tuple[str, float, float, float]] = []
    workers_at: dict[str, list[float]] = {}  # each worker's CPU seconds when a phase starts

    stage1_pids: set[int] = set()  # loky's processes seen during stage 1

    def hook(done: int, total: int, text: str) -> None:
        phase = next((p for start, p in PHASES if text.startswith(start)), None)
        if phase is not None and (not marks or marks[-1][0] != phase):
            marks.append((phase, time.perf_counter(), cpu_seconds(), load()))
            workers_at[phase] = worker_cpu()
        if text.startswith("stage 1"):
            worker_cpu(stage1_pids)

    load0, t0, c0 = load(), time.perf_counter(), cpu_seconds()
    out: dict[str, Any] = {"table": spec["table"], "workers": spec["jobs"], "load_before": load0}
    plans: list[Any] = []
    for _ in range(2):  # a level the plan cannot show is accepted as the README says
        marks[:] = [("plan", time.perf_counter(), cpu_seconds(), load())]
        try:
            rel = certify(table, roles, progress=hook, on_plan=plans.append, **options)
        except PlanRefused as exc:
            accept = dict(options.get("accept_risks") or {})
            accept.update({r.name: WHY for r in exc.plan.blocked})
            options["accept_risks"] = accept
            continue
        except NotCertified as exc:
            out.update(certified=False, setting=exc.setting, message=str(exc)[:300],
                       rows=exc.rows)
            break
        marks.append(("write", time.perf_counter(), cpu_seconds(), load()))
        rel.write(Path(spec["out"]))
        out.update(certified=True, setting=rel.setting, rows=rel.rows,
                   records=records_digest(rel.table), figures=figures_digest(rel.manifest),
                   n_records=rel.n_records)
        break
    if spec["jobs"] != 1:
        get_reusable_executor().shutdown(wait=True)  # the workers' CPU time is counted
    marks.append(("end", time.perf_counter(), cpu_seconds(), load()))
    out["wall_s"] = round(marks[-1][1] - t0, 2)
    out["cpu_s"] = round(marks[-1][2] - c0, 2)
    out["phases"] = [{"phase": a[0], "wall_s": round(b[1] - a[1], 2),
                      "cpu_s": round(b[2] - a[2], 2), "load": a[3]}
                     for a, b in zip(marks, marks[1:], strict=False)]
    # the expected time the release said after its plan, beside the measured one
    out["expected"] = plans[-1].expected if plans else None
    # stage 1's critical path: the busiest worker's CPU seconds (each runs on its own core
    # on an idle machine), beside the CPU seconds of the whole stage
    after = next((workers_at[p] for p in ("stage 2", "confirmation", "closest report",
                                          "release") if p in workers_at), [])
    out["stage1_worker_cpu_s"] = after
    # loky's processes seen during stage 1 (its workers and its resource tracker): more than
    # the workers and the tracker means a worker was replaced (its CPU seconds are not in the
    # list above; the phase's CPU seconds still count them)
    out["stage1_processes_seen"] = len(stage1_pids)
    rows = out.pop("rows", []) or []
    out["settings_judged"] = len(rows)
    out["panel_judged"] = sum(1 for r in rows if r.get("judged_by") == "the full panel")
    out["not_judged_by_budget"] = sum(1 for r in rows if "budget" in str(r.get("not_judged")))
    out["rows_digest"] = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str)
                                        .encode()).hexdigest()[:16]
    out["chosen_params"] = next((r["params"] for r in rows if r["setting"] == out["setting"]),
                                None) if out.get("setting") else None
    out["load_after"] = load()
    out["psutil"] = _has_psutil()
    return out


def _has_psutil() -> bool:
    try:
        import psutil  # noqa: F401
    except ImportError:
        return False
    return True


def records_digest(table: Any) -> str:
    """A digest of the released records as a set (the row order is shuffled by design)."""
    import numpy as np

    labels = table.labels.astype(str).to_numpy()
    rows = sorted(zip(map(tuple, labels), map(bytes, np.ascontiguousarray(table.X)),
                      strict=True))
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def figures_digest(manifest: dict[str, Any]) -> str:
    """A digest of the manifest without its clock readings (wall time, date)."""
    def drop(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: drop(v) for k, v in obj.items() if k not in ("wall_s", "created")}
        return [drop(v) for v in obj] if isinstance(obj, list) else obj

    return hashlib.sha256(json.dumps(drop(manifest), sort_keys=True).encode()
                          ).hexdigest()[:16]


# ---------------------------------------------------------------------- the runner (parent)
def run_child(spec: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                           json.dumps(spec)], env=env, text=True, capture_output=True,
                          check=False)
    last = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not last:
        raise RuntimeError(f"the run {spec} failed:\n{proc.stderr[-3000:]}")
    return json.loads(last[-1])


def stage_times(text: str) -> list[dict[str, Any]]:
    """Stages and their seconds from a command's timestamped progress lines.

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
    return [{"stage": what, "seconds": (t1 - t0) % 86400}
            for (t0, what), (t1, _) in zip(marks, marks[1:], strict=False)]


def run_cli(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """``bioanon ARGS`` in a subprocess: wall and CPU seconds, exit code, stages, last lines."""
    import resource

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    t0, c0, load0 = time.perf_counter(), cpu(), load()
    proc = subprocess.run([sys.executable, "-m", "bioanon", *args], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-3:]
    return {"args": args, "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round(cpu() - c0, 1), "exit_code": proc.returncode,
            "load_before": load0, "load_after": load(), "stages": stage_times(proc.stdout),
            "last_lines": tail}


def fsdd_table(work: Path, env: dict[str, str], data: Path) -> Path:
    path = work / "voice.parquet"
    if not path.exists():
        run = run_cli(["extract", "voice", str(data / "fsdd"), "--labels",
                       str(data / "fsdd" / "labels.csv"), "--features", "mfcc", "-o",
                       str(path)], env)
        if run["exit_code"]:
            raise RuntimeError(f"extract failed: {run['last_lines']}")
    return path


def har_table(work: Path, data: Path) -> Path:
    from bioanon.datasets import load_sp_sw_har

    path = work / "har.parquet"
    if not path.exists():
        load_sp_sw_har(data).write(path)
    return path


def evaluate_once(path: Path, work: Path, env: dict[str, str],
                  chosen: dict[str, Any] | None, method: str | None) -> dict[str, Any]:
    """One full ``bioanon evaluate`` of FSDD: the certified setting (or the default method)."""
    out = work / "fsdd-evaluate"
    shutil.rmtree(out, ignore_errors=True)
    setting = []
    if method:
        setting = ["--method", method]
        for k, v in (chosen or {}).items():
            if v is not None:
                setting += ["--param", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    run = run_cli(["evaluate", str(path), "--interest", "digit", "--sensitive", "speaker",
                   "-o", str(out), "--seed", "1", *setting], env)
    run["what"] = "fsdd: one full evaluate of " + (" ".join(setting) or "the default method")
    return run


def say_child(r: dict[str, Any]) -> None:
    verdict = f"certified {r['setting']}" if r.get("certified") else (
        f"NOT certified ({r.get('message', '')[:80]})")
    print(f"\n{r['table']}, {r['workers']} worker(s): {r['wall_s']:.1f} s wall, "
          f"{r['cpu_s']:.1f} s CPU, load {r['load_before']} → {r['load_after']}; "
          f"{r['settings_judged']} settings judged, {r['panel_judged']} by the panel; "
          f"{verdict}")
    print(f"  {'phase':<16}{'wall s':>9}{'CPU s':>9}{'load':>7}")
    for p in r["phases"]:
        print(f"  {p['phase']:<16}{p['wall_s']:>9.1f}{p['cpu_s']:>9.1f}{p['load']:>7.2f}")
    if r.get("stage1_worker_cpu_s"):
        print(f"  stage 1, CPU seconds of each living worker process: "
              f"{r['stage1_worker_cpu_s']} ({r.get('stage1_processes_seen', '?')} loky "
              "processes seen during stage 1, its resource tracker included)")
    one = next((p for p in r["phases"] if p["phase"] == "stage 1"), None)
    if one and one["wall_s"] > 0:
        print(f"  stage 1 kept {one['cpu_s'] / one['wall_s']:.2f} cores busy "
              f"(its CPU seconds over its wall seconds; {r['workers']} workers)")


def say_cli(r: dict[str, Any], what: str) -> None:
    status = {0: "released", 1: "refused (nothing certified)"}.get(
        r["exit_code"], f"exit {r['exit_code']}")
    print(f"\n{what}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, {status}; load "
          f"{r['load_before']} → {r['load_after']}")
    for ln in r["last_lines"]:
        print(f"  | {ln[:110]}")


def stage1_of(r: dict[str, Any]) -> tuple[float, float]:
    """(wall, CPU) seconds of a run's stage 1."""
    p = next((p for p in r["phases"] if p["phase"] == "stage 1"), None)
    return (p["wall_s"], p["cpu_s"]) if p else (float("nan"), float("nan"))


def compare(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Whether the runs of one table agree, and stage 1's speed-up (1 → 2 workers)."""
    keys = ("setting", "certified", "rows_digest", "figures", "records")
    same = all(all(r.get(k) == runs[0].get(k) for k in keys) for r in runs)
    by = {r["workers"]: r for r in runs}
    out: dict[str, Any] = {"same": same}
    if 1 in by and 2 in by:
        (w1, c1), (w2, c2) = stage1_of(by[1]), stage1_of(by[2])
        busiest = max(by[2].get("stage1_worker_cpu_s") or [float("nan")])
        out.update(stage1_speedup=round(w1 / w2, 2) if w2 else None,
                   stage1_cpu_ratio=round(c2 / c1, 2) if c1 else None,
                   # on idle cores stage 1 lasts about its busiest worker's CPU time
                   stage1_speedup_from_cpu=round(c1 / busiest, 2) if busiest == busiest
                   else None,
                   release_speedup=round(by[1]["wall_s"] / by[2]["wall_s"], 2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default="fsdd,sp-sw-har,demo",
                    help=f"comma-separated, from {', '.join(TABLES)}")
    ap.add_argument("--workers", default="1,2", help="worker counts of stage 1 (n_jobs)")
    ap.add_argument("--budget-minutes", type=float, default=None,
                    help="the search's time budget (default: each command's own)")
    ap.add_argument("--no-evaluate", dest="evaluate", action="store_false",
                    help="skip the one full evaluation of FSDD")
    ap.add_argument("--cli", action="store_true",
                    help="also time the README's release command and bioanon demo")
    ap.add_argument("--exhaustive", action="store_true",
                    help="also run each in-memory release with exhaustive=True")
    ap.add_argument("--curve", default=None,
                    help="the cost curve: records of make_biometric tables to release, "
                         "comma-separated (e.g. 5000,20000,50000)")
    ap.add_argument("--n", type=int, default=1_000_000, help="rows of the 1m table")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]  # '': the curve alone
    bad = [t for t in tables if t not in TABLES]
    if bad:
        ap.error(f"unknown table {bad[0]}; choose from {', '.join(TABLES)}")
    workers = [int(w) for w in args.workers.split(",")]
    data = Path(os.environ.get("BIOANON_DATA") or HERE.parent.parent / "shared" / "datasets")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_release-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    sys.path.insert(0, src)
    doc: dict[str, Any] = {"cpu_count": os.cpu_count(), "load_start": load(), "runs": [],
                           "tables": {}}
    print(f"bench_release: {', '.join(tables)}; workers {workers}; {os.cpu_count()} cores; "
          f"load {load()}")
    try:
        for name in tables:
            if name in IN_MEMORY:
                bench_in_memory(name, workers, args, work, env, data, doc)
            elif name == "1m":
                sys.path.insert(0, str(HERE))
                import bench_scale

                path = work / f"big-{args.n}.parquet"
                if not path.exists():
                    bench_scale.write_parquet(path, args.n)
                r = run_cli(["release", str(path), "-o", str(work / "1m-release.parquet"),
                             "--interest", "p", "--sensitive", "id", "--dask", "--seed", "1",
                             "--accept-risk", "identity-membership", "--reason", WHY,
                             "--accept-risk", "identity-inference", "--reason", WHY], env)
                say_cli(r, "1m: bioanon release --dask")
                doc["runs"].append({"table": "1m", **r})
            else:
                res = work / "bench_scale.json"
                t0 = time.perf_counter()
                subprocess.run([sys.executable, str(HERE / "bench_scale.py"), "--e2e-only",
                                "--out", str(res)], env=env, check=True)
                doc["e2e"] = {"seconds": round(time.perf_counter() - t0, 1), "load": load(),
                              **json.loads(res.read_text())}
        if args.curve:
            doc["curve"] = cost_curve([int(n) for n in args.curve.split(",") if n.strip()],
                                      workers[-1], args, work, env)
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    summary(doc)
    doc["load_end"] = load()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {args.out}")


def cost_curve(sizes: list[int], jobs: int, args: Any, work: Path, env: dict[str, str]
               ) -> list[dict[str, Any]]:
    """The release of a ``make_biometric`` table of each size (10 records per person, 128
    features) in a fresh process: wall and CPU seconds per phase with the load, CPU seconds
    per 1,000 records and the growth exponent of the CPU seconds from the size before."""
    import math

    out: list[dict[str, Any]] = []
    for n in sizes:
        spec = {"table": f"curve-{n}", "path": None, "jobs": jobs,
                "budget_minutes": args.budget_minutes, "out": str(work / f"curve-{n}.parquet")}
        r = run_child(spec, env)
        say_child(r)
        r["n_records"] = n
        r["phase_table"] = phase_table(r)
        r["cpu_s_per_1000"] = round(1000 * r["cpu_s"] / n, 2)
        if out and out[-1]["cpu_s"] > 0 and r["cpu_s"] > 0:
            r["cpu_exponent"] = round(math.log(r["cpu_s"] / out[-1]["cpu_s"])
                                      / math.log(n / out[-1]["n_records"]), 2)
        out.append(r)
    print(f"\ncost curve ({jobs} worker(s)):")
    print(f"  {'records':>8}{'wall s':>9}{'CPU s':>9}{'CPU s/1k':>10}{'exponent':>10}"
          f"{'load':>12}  verdict")
    for r in out:
        verdict = "certified" if r.get("certified") else "not certified"
        print(f"  {r['n_records']:>8}{r['wall_s']:>9.1f}{r['cpu_s']:>9.1f}"
              f"{r['cpu_s_per_1000']:>10.2f}{str(r.get('cpu_exponent', '—')):>10}"
              f"{r['load_before']:>6} → {r['load_after']:<4}  {verdict}")
    return out


def bench_in_memory(name: str, workers: list[int], args: Any, work: Path,
                    env: dict[str, str], data: Path, doc: dict[str, Any]) -> None:
    """The runs of one in-memory table: one per worker count, the comparison, and (FSDD)
    the full evaluation and the user's command."""
    path = (fsdd_table(work, env, data) if name == "fsdd" else
            har_table(work, data) if name == "sp-sw-har" else None)
    runs = []
    for jobs in workers:
        spec = {"table": name, "path": None if path is None else str(path), "jobs": jobs,
                "budget_minutes": args.budget_minutes,
                "out": str(work / f"{name}-{jobs}.parquet")}
        r = run_child(spec, env)
        say_child(r)
        runs.append(r)
        if args.exhaustive:
            x = run_child({**spec, "exhaustive": True}, env)
            x["table"] = f"{name} (exhaustive)"
            say_child(x)
            print(f"  staged: {r.get('setting')}; exhaustive: {x.get('setting')}")
            doc["runs"].append(x)
    doc["runs"] += runs
    entry = compare(runs)
    doc["tables"][name] = entry
    print(f"  {name}: the same setting, figures and records in every run: {entry['same']}")
    if "stage1_speedup" in entry:
        print(f"  stage 1, 1 → 2 workers: {entry['stage1_speedup']} × faster (wall), CPU "
              f"{entry['stage1_cpu_ratio']} ×; from CPU time (1 worker's CPU / the busiest "
              f"of 2 workers' CPU): {entry['stage1_speedup_from_cpu']} ×; the release "
              f"{entry['release_speedup']} ×")
    if name == "fsdd" and args.evaluate:
        best = runs[-1]
        method = best["setting"].split("(")[0] if best.get("certified") else None
        e = evaluate_once(path, work, env, best.get("chosen_params"), method)  # type: ignore
        say_cli(e, e["what"])
        entry["evaluate"] = e
        entry["ratio_to_evaluate"] = {r["workers"]: round(r["wall_s"] / e["wall_s"], 2)
                                      for r in runs}
        print(f"  release / one evaluate (wall, same run): {entry['ratio_to_evaluate']}")
    if args.cli and name in ("fsdd", "demo"):
        if name == "fsdd":
            out = work / "fsdd_rel.parquet"
            cmd = ["release", str(path), "-o", str(out), "--interest", "digit", "--sensitive",
                   "speaker", "--accept-risk", "identity-membership", "--reason", README_WHY,
                   "--accept-risk", "identity-inference", "--reason", README_WHY]
        else:
            cmd = ["demo", "--out", str(work / "demo-report")]
        c = run_cli(cmd, env)
        say_cli(c, f"bioanon {cmd[0]} (the user's command, default --jobs)")
        entry["cli"] = c


def phase_table(r: dict[str, Any]) -> dict[str, dict[str, float]]:
    """A run's wall and CPU seconds per phase (:data:`ALL_PHASES`; a phase that did not run
    is absent), with the 1-minute load average when it began.

    Examples
    --------
    >>> phase_table({"phases": [{"phase": "plan", "wall_s": 1.0, "cpu_s": 0.9, "load": 0.5},
    ...                         {"phase": "stage 1", "wall_s": 9.0, "cpu_s": 8.0, "load": 1}]})
    {'plan': {'wall_s': 1.0, 'cpu_s': 0.9, 'load': 0.5}, 'stage 1': {'wall_s': 9.0, \
'cpu_s': 8.0, 'load': 1}}
    """
    out: dict[str, dict[str, float]] = {}
    for p in r.get("phases", []):
        if p["phase"] in ALL_PHASES:
            prev = out.setdefault(p["phase"], {"wall_s": 0.0, "cpu_s": 0.0, "load": p["load"]})
            prev["wall_s"] = round(prev["wall_s"] + p["wall_s"], 2)
            prev["cpu_s"] = round(prev["cpu_s"] + p["cpu_s"], 2)
    return out


def summary(doc: dict[str, Any]) -> None:
    """One line per run, then each run's phases (wall / CPU seconds, the load when each
    began): the tables the JSON holds."""
    print(f"\n{'table':<22}{'workers':>8}{'wall s':>9}{'CPU s':>9}{'stage 1 s':>11}"
          f"{'load':>13}  setting")
    for r in doc["runs"]:
        if "phases" not in r:
            continue
        s1 = stage1_of(r)[0]
        print(f"{r['table']:<22}{r['workers']:>8}{r['wall_s']:>9.1f}{r['cpu_s']:>9.1f}"
              f"{s1:>11.1f}{r['load_before']:>6.2f}→{r['load_after']:<6.2f} "
              f"{(r.get('setting') or '-')[:60]}")
    cols = [p for p in ALL_PHASES if any(p in phase_table(r) for r in doc["runs"])]
    if not cols:
        return
    print(f"\nper phase: wall s / CPU s (load when it began)\n{'table':<22}{'workers':>8}"
          + "".join(f"{c:>22}" for c in cols))
    for r in doc["runs"]:
        table = phase_table(r)
        if not table:
            continue
        r["phase_table"] = table
        cells = [f"{t['wall_s']:.1f} / {t['cpu_s']:.1f} ({t['load']:.1f})" if (t := table.get(c))
                 else "-" for c in cols]
        print(f"{r['table']:<22}{r['workers']:>8}" + "".join(f"{x:>22}" for x in cells))
        if r.get("expected"):
            print(f"{'':<30}said after the plan: {r['expected']}; measured {r['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
