"""One full evaluation against the number of identities (issue 21), and the worst case on real
data with and without the panel's one-pass substitutes.

``synthetic``: ``make_biometric(n, 12 records each, 128 features)`` for each ``--sizes`` n;
``Evaluation(table, "expression", "identity")`` with the default models (forest, linear_svm,
knn), every attacker mode, membership and verification on; selective mean g=8, t=0.8, w=10,
r_p=0.01 (g=8: the 24-identity table has 18 test records per expression). Per size: wall and
process CPU seconds, the load average before and after, seconds per stage (from the progress
callback), the panel's fit seconds per recognizer, the substitutions and the worst case.
``--full-strength`` turns the substitutions off (the panel before issue 21).

``real``: FSDD (digit / speaker, selective mean g=64, r_p=0.01) and SP-SW-HAR (activity /
subject, 49 statistics per 2 s window, executions kept whole, g=16, r_p=0.1), each judged
twice: the default panel (6 and 23 identities: below the threshold, nothing substituted) and
with every recognizer substituted (threshold 1), to show the substitutes' worst case.

    PYTHONPATH=src BIOANON_DATA=../shared/datasets .venv/bin/python \\
        benchmarks/bench_panel_identities.py synthetic --sizes 24 300 3000
    ... benchmarks/bench_panel_identities.py real

Writes ``benchmarks/results/panel_identities_<mode>.json`` (or ``--out``). The load average is
printed beside every timing: other processes on the machine slow every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import time
from pathlib import Path
from typing import Any

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.attack import scalable
from bioanon.evaluation import Evaluation

RESULTS = Path(__file__).resolve().parent / "results"


def _load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


class StageClock:
    """Seconds per stage, from the evaluation's progress descriptions."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.current, self.start = "start", time.perf_counter()

    def __call__(self, done: int, total: int, desc: str) -> None:
        stage = desc.split(":")[0].split(" (")[0]
        if stage != self.current:
            now = time.perf_counter()
            self.stages[self.current] = self.stages.get(self.current, 0.0) + now - self.start
            self.current, self.start = stage, now

    def close(self) -> dict[str, float]:
        self("", 0, "end")
        return {k: round(v, 2) for k, v in self.stages.items() if k != "start"}


def judge(table: Any, interest: str, sensitive: str, anonymizer: Any, n_jobs: int,
          profile: Path | None = None, **kw: Any) -> dict[str, Any]:
    """One evaluation, timed; its worst case and the panel's substitutions."""
    clock = StageClock()
    load_before = _load()
    wall, cpu = time.perf_counter(), time.process_time()
    prof = cProfile.Profile() if profile is not None else None
    if prof is not None:
        prof.enable()
    ev = Evaluation(table, interest, sensitive, anonymizer=anonymizer, n_jobs=n_jobs,
                    progress=clock, random_state=0, **kw).evaluate()
    if prof is not None:
        prof.disable()
        prof.dump_stats(str(profile))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    w = ev.worst_case()
    per_mode: dict[str, dict[str, Any]] = {}
    for a in ev.attacks():
        if a.mode not in per_mode or a.rate.value > per_mode[a.mode]["accuracy"]:
            per_mode[a.mode] = {"recognizer": a.recognizer, "accuracy": a.rate.value}
    panel = ev.panel_
    return {
        "n_records": int(table.n_records), "n_identities": int(table.labels[sensitive].nunique()),
        "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load_before": load_before,
        "load_after": _load(), "stages_s": clock.close(),
        "fit_s": {m: round(sum(t.values()), 2) for m, t in panel["timing"].items()},
        "substitutions": [{k: s[k] for k in ("model", "substitute")}
                          for s in panel.get("substitutions", [])],
        "worst_case": {"attacker": f"{w.mode} / {w.recognizer}", "accuracy": w.rate.value,
                       "ci": list(w.rate.ci), "n": w.rate.n},
        "worst_per_mode": per_mode, "chance": ev.chance(),
        "verification_eer": {v.mode: [round(v.eer, 4), [round(c, 4) for c in v.ci]]
                             for v in ev.verification()},
    }


def synthetic(sizes: list[int], n_jobs: int, profile: Path | None) -> dict:
    from bioanon.datasets import make_biometric

    out = {}
    for n in sizes:
        t = make_biometric(n_identities=n, records_per_identity=12, n_features=128,
                           random_state=0)
        anon = SelectiveMeanAnonymizer("expression", g=8, t=0.8, w=10, r_p=0.01,
                                       random_state=0)
        prof = None if profile is None else profile / f"synthetic_{n}.prof"
        res = judge(t, "expression", "identity", anon, n_jobs, prof)
        out[str(n)] = res
        w = res["worst_case"]
        print(f"{n:>6} ids {res['n_records']:>6} records  {res['wall_s']:>7.1f} s wall "
              f"{res['cpu_s']:>7.1f} s cpu  load {res['load_before']} → {res['load_after']}  "
              f"worst {w['accuracy']:.3f} ({w['attacker']})  "
              f"substituted: {res['substitutions'] or 'none'}", flush=True)
        print(f"        stages: {res['stages_s']}", flush=True)
    return out


def real(n_jobs: int) -> dict:
    from bioanon.datasets.fsdd import load_fsdd
    from bioanon.datasets.sp_sw_har import load_sp_sw_har

    sets = {
        "fsdd": (load_fsdd(), "digit", "speaker",
                 SelectiveMeanAnonymizer("digit", g=64, t=0.8, w=10, r_p=0.01,
                                         random_state=0), {}),
        "sp_sw_har": (load_sp_sw_har(features="stats"), "activity", "subject",
                      SelectiveMeanAnonymizer("activity", g=16, t=0.8, w=10, r_p=0.1,
                                              random_state=0), {"group": "execution"}),
    }
    out: dict[str, Any] = {}
    default = scalable.SCALE_CLASSES
    for name, (table, interest, sensitive, anon, kw) in sets.items():
        out[name] = {}
        for label, threshold in (("default panel", default), ("all substituted", 1)):
            scalable.SCALE_CLASSES = threshold
            try:
                res = judge(table, interest, sensitive, anon, n_jobs, **kw)
            finally:
                scalable.SCALE_CLASSES = default
            out[name][label] = res
            w = res["worst_case"]
            print(f"{name:<10} {label:<16} worst {w['accuracy']:.3f} "
                  f"[{w['ci'][0]:.3f}, {w['ci'][1]:.3f}] ({w['attacker']})  "
                  f"{res['wall_s']:.1f} s wall, load {res['load_before']} → "
                  f"{res['load_after']}", flush=True)
            print("           per mode: " + ", ".join(
                f"{m} {v['accuracy']:.3f} ({v['recognizer']})"
                for m, v in res["worst_per_mode"].items()), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["synthetic", "real"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[24, 300, 3000])
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--full-strength", action="store_true",
                    help="never substitute a recognizer (the panel before issue 21)")
    ap.add_argument("--profile", type=Path, help="write a cProfile per size into this folder")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.full_strength:
        scalable.SCALE_CLASSES = None  # type: ignore[assignment]
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    result = {"cpus": os.cpu_count(), "full_strength": args.full_strength,
              "scale_classes": scalable.SCALE_CLASSES}
    if args.mode == "synthetic":
        result["synthetic"] = synthetic(args.sizes, args.jobs, args.profile)
    else:
        result["real"] = real(args.jobs)
    path = args.out or RESULTS / (f"panel_identities_{args.mode}"
                                  f"{'_full' if args.full_strength else ''}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
