"""Time one setting judged on the 1M-row table's panel sample, stage by stage (issue 29, goal 3).

``release --dask`` judges each setting on a stratified panel sample of the Parquet table
(``--sample-records``, default 50,000). This runs one full evaluation of one setting there,
as the dask path runs it: the sample read as :func:`~bioanon.certification.parquet.certify_parquet`
reads it, the selective-mean setting applied by the bucketed rule
(:class:`~bioanon.scale.BucketedMixing`), the search's judge options (the full panel,
membership and inference; no verification, no selection curves). Every stage is printed with
its wall and CPU seconds and the load average; then the figures with their 95% intervals and
the sizes the caps left (``max_fit_records``, ``max_candidates``; pass ``--no-caps`` for the
former judge, every record used). Usage::

    python benchmarks/bench_judge_1m.py [--table PATH] [--no-caps] [--out JSON]

The table (``bench_scale.write_parquet``: 1,000,000 × 256 float32, 10,000 identities) is
written first when PATH does not exist (about 1.5 GB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", type=Path, default=Path("/tmp/bench_judge_1m/big.parquet"))
    ap.add_argument("--sample-records", type=int, default=50_000)
    ap.add_argument("--no-caps", action="store_true", help="every record (the former judge)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_judge_1m.json")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import bench_scale
    import pyarrow.parquet as pq

    from bioanon.attack import ModelCache
    from bioanon.certification.parquet import read_labels, read_rows
    from bioanon.certification.search import Candidate, build_candidate
    from bioanon.evaluation import Evaluation
    from bioanon.evaluation.caps import sizes
    from bioanon.evaluation.options import EvaluationOptions
    from bioanon.evaluation.seeds import derive_seed
    from bioanon.sampling import panel_sample
    from bioanon.scale.estimator import BucketedMixing

    if not args.table.exists():
        args.table.parent.mkdir(parents=True, exist_ok=True)
        print(f"writing {args.table} ...", flush=True)
        bench_scale.write_parquet(args.table, 1_000_000)
    t0 = time.perf_counter()
    labels = read_labels(args.table, ["p", "id"])
    ps = panel_sample(labels, sensitive="id", stratify="p", max_records=args.sample_records,
                      max_identities=1_000, random_state=derive_seed(1, "release/panel sample"))
    names = pq.ParquetFile(args.table).schema_arrow.names
    table = read_rows(args.table, ps.index, ["p", "id"], [c for c in names if c not in ("p", "id")])
    print(f"panel sample {table.n_records:,} × {table.n_features} read in "
          f"{time.perf_counter() - t0:.1f} s (load {load()})", flush=True)
    caps = {"max_fit_records": None, "max_candidates": None} if args.no_caps else {}
    opts = EvaluationOptions.of(released_labels=["p"], selection=None, membership=True,
                                verification=False, **caps)
    c = Candidate("selective-mean", {"g": 64, "t": 0.8, "w": 10, "r_p": 0.0,
                                     "include_self": False})
    anon = BucketedMixing(build_candidate(c, "p", "id", [], None), "p", bucket_size=50_000)
    stages: list[dict[str, Any]] = []
    mark = {"t": time.perf_counter(), "cpu": time.process_time(), "text": None}

    def progress(done: int, total: int, text: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if text == mark["text"]:
            return
        if mark["text"] is not None:
            st = {"stage": mark["text"], "wall_s": round(now - mark["t"], 1),
                  "cpu_s": round(cpu - mark["cpu"], 1), "load": load()}
            stages.append(st)
            print(f"  {st['wall_s']:7.1f} s wall {st['cpu_s']:7.1f} s cpu  {st['stage']}  "
                  f"(load {st['load']})", flush=True)
        mark.update(t=now, cpu=cpu, text=text)

    w0, c0, l0 = time.perf_counter(), time.process_time(), load()
    ev = Evaluation(table, "p", "id", {}, anon, random_state=derive_seed(1, "bench") % 2**31,
                    cache=ModelCache(), progress=progress, options=opts).evaluate()
    progress(0, 0, "end")
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"one setting judged: {wall:.1f} s wall, {cpu:.1f} s cpu; load {l0} → {load()}")
    fit = sizes(ev)
    cas = ev.cas()
    print(f"  CAS {cas.value:.4f} [{cas.ci[0]:.4f}, {cas.ci[1]:.4f}] on {cas.n:,} test records")
    risks = []
    for r in ev.risks():
        n = r.extras.get("n_members", r.extras.get("n"))
        print(f"  {r.name:22s} {r.value:+.4f} [{r.ci[0]:+.4f}, {r.ci[1]:+.4f}] {r.status} "
              f"(n={n})")
        risks.append({"name": r.name, "value": r.value, "ci": list(r.ci), "status": r.status,
                      "n": n})
    if fit["sentence"]:
        print("  " + fit["sentence"])
    doc = {"caps": not args.no_caps, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
           "load_before": l0, "load_after": load(), "cpu_count": os.cpu_count(),
           "stages": stages, "cas": [cas.value, *cas.ci], "risks": risks,
           "fit_sizes": {k: v for k, v in fit.items() if k != "sentence"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, default=str))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
