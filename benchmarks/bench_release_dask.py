"""``bioanon release --dask`` end to end: certify on a panel sample, release bucket by bucket.

Synthetic data (``bench_scale.write_parquet``: ``--n`` × 256 float32, 10 interest classes,
10,000 identities, row groups of 100k, never held in memory) is certified and released by the
command itself in a subprocess: the search and confirmation on a stratified panel sample of
``--sample-records`` records (judging the bucketed rule), then the certified setting released
bucket by bucket on a local cluster of ``--workers`` workers. Peak resident memory is the
largest sum of VmRSS over the command and every descendant (scheduler, nannies, workers),
sampled every 0.1 s from /proc. The manifest is read back: every row released, both sizes.

The search panel is kept small so that the run fits a shared machine (``--models knn``,
attackers naive, parrot and reverse, ``--methods selective-mean``); the release itself is the
full one. The load average is printed beside the timing: other jobs may share the cores.

On this synthetic table the only bucketable method (the selective mean) misses the membership
and inference risks, so nothing is released unless those are accepted by name
(``--accept-risk record-membership record-inference``): the run then times the release path
and the manifest records the acceptance.

With ``--epsilon E`` the run is the streamed DP release instead (``release --dask --epsilon E
--public-data FILE --methods dp-basis``): a public table of ``--public-n`` records drawn from
the same generator with another seed (people not in the release) gives the box, centre and
clip radii; the search judges dp-basis on the panel sample as the stream applies it, then the
table is released in streaming passes over its partitions in this one process (no cluster).
No risk needs accepting on this table at ε = 1 (the record level is covered by the
guarantee, the identity level met on the sample); at ε = 4 the guarantee no longer covers the
record level and its measured bound sits near the target (a 300k × 256 run with a 5,000-record
sample missed it on the confirmation, 0.101 > 0.1).

Usage::

    python benchmarks/bench_release_dask.py [--n 1000000] [--sample-records 10000]
        [--accept-risk LEVEL-RISK ...]
    python benchmarks/bench_release_dask.py --n 10000000 --epsilon 1     # issue 28's goal
    python benchmarks/bench_release_dask.py --n 2000000 --d 64 --identities 20000 --epsilon 1

Prints a table and writes JSON (default benchmarks/results/bench_release_dask.json).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scale  # noqa: E402
from bench_scale import D, RssSampler, _children, _rss_kib, load, say, write_parquet  # noqa: E402


class PhaseSampler(RssSampler):
    """The peak summed VmRSS, and the peak while the command ran alone (the search phase:
    no cluster yet) against the peak with its cluster (the release phase)."""

    def run(self) -> None:
        self.alone_kib = self.cluster_kib = 0
        while not self._halt.is_set():
            pids, todo = [], [self.pid]
            while todo:
                p = todo.pop()
                pids.append(p)
                todo += _children(p)
            total = sum(_rss_kib(p) for p in pids)
            if len(pids) == 1:
                self.alone_kib = max(self.alone_kib, total)
            else:
                self.cluster_kib = max(self.cluster_kib, total)
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
            time.sleep(self.every)


def chunk(n: int, d: int, ids: int, rng: Any) -> tuple[Any, Any, Any]:
    """``bench_scale.chunk`` with ``d`` features and ``ids`` identities (the same draws in
    the same order: d = 256 and 10,000 identities give its records)."""
    import numpy as np

    p = rng.integers(0, bench_scale.N_CLASSES, n)
    who = rng.integers(0, ids, n)
    X = rng.standard_normal((n, d), dtype=np.float32)
    X[:, :8] += (p[:, None] * 0.3).astype(np.float32)
    X[:, 8:16] += ((who % 97)[:, None] * 0.05).astype(np.float32)
    return X, p, who


def write_table(path: Path, n: int, d: int, ids: int) -> float:
    """``n`` × ``d`` records of ``ids`` identities in row groups of 100k (pyarrow's default
    encoding); ``bench_scale.write_parquet`` for its own shape."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if d == D and ids == bench_scale.N_IDS:
        return write_parquet(path, n)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    writer = None
    for start in range(0, n, bench_scale.ROW_GROUP):
        X, p, who = chunk(min(bench_scale.ROW_GROUP, n - start), d, ids, rng)
        tab = pa.Table.from_arrays([pa.array(p), pa.array(who),
                                    *[pa.array(X[:, j]) for j in range(d)]],
                                   names=["p", "id", *[f"f{j}" for j in range(d)]])
        if writer is None:
            writer = pq.ParquetWriter(path, tab.schema)
        writer.write_table(tab, row_group_size=bench_scale.ROW_GROUP)
    assert writer is not None
    writer.close()
    return time.perf_counter() - t0


def write_public(path: Path, n: int, d: int) -> None:
    """``n`` records of other people (the same generator, another seed): the public table,
    the interest as its one label column."""
    import numpy as np
    import pandas as pd

    from bioanon.table import FeatureTable

    X, p, _ = chunk(n, d, bench_scale.N_IDS, np.random.default_rng(12345))
    FeatureTable(X, pd.DataFrame({"p": p}), [f"f{j}" for j in range(d)]).write(path)


class StreamPhaseSampler(RssSampler):
    """The peak summed VmRSS before the streamed release stages its output folder (the
    search) and after (the passes over the partitions), and when the stream began."""

    staged: Path = Path(".")

    def run(self) -> None:
        self.alone_kib = self.cluster_kib = 0
        self.stream_start: float | None = None
        t0 = time.perf_counter()
        while not self._halt.is_set():
            pids, todo = [], [self.pid]
            while todo:
                p = todo.pop()
                pids.append(p)
                todo += _children(p)
            total = sum(_rss_kib(p) for p in pids)
            if self.stream_start is None and any(self.staged.parent.glob(
                    f".{self.staged.name}.*.tmp*")):
                self.stream_start = time.perf_counter() - t0
            if self.stream_start is None:
                self.alone_kib = max(self.alone_kib, total)
            else:
                self.cluster_kib = max(self.cluster_kib, total)
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
            time.sleep(self.every)


def run_cli(args: list[str], env: dict[str, str], staged: Path | None = None
            ) -> dict[str, Any]:
    """Run ``bioanon`` in a subprocess: wall time, peak summed RSS (whole, per phase: the
    search alone, then the cluster's release; or, with ``staged`` (the streamed release's
    output), the search, then the stream and when it began)."""
    if staged is None:
        return bench_scale.run_cli(args, env, PhaseSampler, lambda s: {
            "search_phase_gib": s.alone_kib / 2**20,
            "release_phase_gib": s.cluster_kib / 2**20})
    sampler = type("Sampler", (StreamPhaseSampler,), {"staged": staged})
    return bench_scale.run_cli(args, env, sampler, lambda s: {
        "search_phase_gib": s.alone_kib / 2**20, "release_phase_gib": s.cluster_kib / 2**20,
        "stream_start_s": s.stream_start})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--sample-records", type=int, default=10_000)
    ap.add_argument("--bucket-size", type=int, default=50_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget-minutes", type=float, default=5.0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--accept-risk", nargs="*", default=[],
                    help="risks (LEVEL-RISK) accepted explicitly so that the release path can "
                         "be timed on data the search cannot certify; recorded in the JSON "
                         "and the manifest")
    ap.add_argument("--epsilon", type=float, default=None,
                    help="the streamed DP release (dp-basis at this epsilon, public bounds "
                         "from a generated public table) instead of the bucketed one")
    ap.add_argument("--public-n", type=int, default=20_000)
    ap.add_argument("--d", type=int, default=D, help="feature columns of the generated table")
    ap.add_argument("--identities", type=int, default=bench_scale.N_IDS,
                    help="identities of the generated table")
    ap.add_argument("--table", type=Path, default=None,
                    help="an existing table written by bench_scale.write_parquet (n from its "
                         "metadata; kept) instead of generating one")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", type=Path, default=None,
                    help="JSON to write (default results/bench_release_dask.json, or "
                         "bench_release_dask_stream.json with --epsilon)")
    args = ap.parse_args()
    if args.out is None:
        args.out = Path(__file__).parent / "results" / (
            "bench_release_dask.json" if args.epsilon is None else
            "bench_release_dask_stream.json")
    work = Path(tempfile.mkdtemp(prefix="bench_release_dask-", dir=args.workdir))
    try:
        if args.table is not None:
            import pyarrow.parquet as pq

            src, gen_s = args.table, 0.0
            meta = pq.ParquetFile(src).metadata
            args.n, args.d = meta.num_rows, meta.num_columns - 2
            say(f"using {src} ({args.n:,} × {args.d})")
        else:
            src = work / "big.parquet"
            say(f"writing {args.n:,} × {args.d} ({args.identities:,} identities) to {src} "
                f"(load {load()})")
            gen_s = write_table(src, args.n, args.d, args.identities)
        env = dict(os.environ)
        cmd = ["release", str(src), "-o", str(work / "certified"), "--interest", "p",
               "--sensitive", "id", "--models", "knn",
               "--attackers", "naive,parrot,reverse", "--jobs", "1", "--target-advantage",
               "0.05", "--seed", "1", "--dask", "--sample-records",
               str(args.sample_records), "--budget-minutes", str(args.budget_minutes)]
        if args.epsilon is None:
            cmd += ["--methods", "selective-mean", "--workers", str(args.workers),
                    "--bucket-size", str(args.bucket_size)]
        else:
            pub = work / "public.parquet"
            write_public(pub, args.public_n, args.d)
            cmd += ["--methods", "dp-basis", "--epsilon", str(args.epsilon), "--public-data",
                    str(pub)]
        for name in args.accept_risk:
            cmd += ["--accept-risk", name, "--reason",
                    "benchmark of the release path at scale on synthetic Gaussian data"]
        say(f"bioanon {' '.join(cmd)}")
        load_start = load()
        run = run_cli(cmd, env, work / "certified" if args.epsilon is not None else None)
        man = json.loads((work / "certified.manifest.json").read_text())
        judged = man["certification"]["judged_on"]
        streamed = args.epsilon is not None
        row = {"n": args.n, "d": args.d, "identities": args.identities,
               "workers": 0 if streamed else args.workers,
               "path": "streamed DP" if streamed else "bucketed",
               "epsilon": args.epsilon, "generate_s": round(gen_s, 1),
               "seconds": round(run["seconds"], 1), "peak_rss_gib": round(run["peak_rss_gib"], 2),
               "processes": run["processes"], "load": run["load"], "load_start": load_start,
               "search_phase_gib": round(run["search_phase_gib"], 2),
               "search_s": None if not streamed or run["stream_start_s"] is None
               else round(run["stream_start_s"], 1),
               "stream_s": None if not streamed or run["stream_start_s"] is None
               else round(run["seconds"] - run["stream_start_s"], 1),
               "release_phase_gib": round(run["release_phase_gib"], 2),
               "certified": man["certified"], "setting": man["certification"]["search"]["chosen"],
               "released_records": man["output"]["n_records"],
               "sample_records": judged["n_records"], "sample_identities": judged["n_identities"],
               "table_records": judged["total_records"],
               "table_identities": judged["total_identities"],
               "n_buckets": None if streamed else man["scale"]["n_buckets"],
               "n_parts": man["stream"]["partitions"] if streamed else None,
               "passes": man["stream"]["passes"] if streamed else None,
               "dp": man.get("differential_privacy"),
               "verdict": man["verdict"]["sentence"], "accepted_risks": args.accept_risk}
        assert row["released_records"] == args.n, "not every row was released"
        say(f"{'n':>10} {'workers':>7} {'seconds':>8} {'peak GiB':>9} {'search':>7} "
            f"{'release':>7} {'procs':>5} {'load':>5} {'released':>10} {'sample':>7} setting")
        say(f"{row['n']:>10,} {row['workers']:>7} {row['seconds']:>8} "
            f"{row['peak_rss_gib']:>9} {row['search_phase_gib']:>7} "
            f"{row['release_phase_gib']:>7} {row['processes']:>5} {row['load']:>5} "
            f"{row['released_records']:>10,} {row['sample_records']:>7,} {row['setting']}")
        if streamed:
            say(f"streamed DP: search {row['search_s']} s (peak {row['search_phase_gib']} "
                f"GiB), stream {row['stream_s']} s (peak {row['release_phase_gib']} GiB), "
                f"{row['n_parts']} parts, {row['passes']} passes; load {row['load_start']} at "
                f"the start, {row['load']} at the end")
        say(row["verdict"])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(row, indent=2))
        say(f"wrote {args.out}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
