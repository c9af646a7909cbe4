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
table is released in streaming passes over its partitions, each pass a dask reduction on a
``LocalCluster`` of ``--workers`` single-threaded workers. In the same run the same command is
timed with its passes in the one process (``--engines dask,process``: the command itself, its
library call told ``local=False``), and both releases must be the same (the folders' SHA-256).
Per engine: the wall time, the stream's time (from the end of the search: the cluster's start
or the staged folder, whichever comes first), the peak resident memory of the command during
the search, of each worker process (VmRSS per process, sampled every 0.1 s) and of the command
during the stream, and the load average at the start, at the stream's start and at the end.
No risk needs accepting on this table at ε = 1 (the record level is covered by the
guarantee, the identity level met on the sample); at ε = 4 the guarantee no longer covers the
record level and its measured bound sits near the target (a 300k × 256 run with a 5,000-record
sample missed it on the confirmation, 0.101 > 0.1).

Usage::

    python benchmarks/bench_release_dask.py [--n 1000000] [--sample-records 10000]
        [--accept-risk LEVEL-RISK ...]
    python benchmarks/bench_release_dask.py --n 10000000 --epsilon 1     # issue 37's goal
    python benchmarks/bench_release_dask.py --n 2000000 --d 64 --identities 20000 --epsilon 1

Prints a table and writes JSON (default benchmarks/results/bench_release_dask.json, or
bench_release_dask_stream.json with --epsilon).
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


def _cmdline(pid: int) -> str:
    """The start of a process's command line (what a child of the command is)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return ""


def _cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used so far (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class StreamSampler(RssSampler):
    """Per process peak VmRSS of a streamed release: the command during the search, then
    (from the stream's start: its first child process, a dask worker, or its staged output
    folder, whichever comes first) the command and each child on its own; the load average
    at the stream's start; the CPU seconds of every process before and after it."""

    staged: Path = Path(".")

    def run(self) -> None:
        self.search_kib = self.stream_main_kib = 0
        self.children: dict[int, int] = {}
        self.cpu: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.search_cpu = 0.0
        self.stream_start: float | None = None
        self.load_stream = ""
        t0 = time.perf_counter()
        while not self._halt.is_set():
            pids, todo = [], [self.pid]
            while todo:
                p = todo.pop()
                pids.append(p)
                todo += _children(p)
            rss = {p: _rss_kib(p) for p in pids}
            for p in pids:
                cpu = _cpu_s(p)
                if cpu is not None:
                    self.cpu[p] = cpu
            if self.stream_start is None and (len(pids) > 1 or any(
                    self.staged.parent.glob(f".{self.staged.name}.*.tmp*"))):
                self.stream_start = time.perf_counter() - t0
                self.load_stream = load()
                self.search_cpu = self.cpu.get(self.pid, 0.0)
            if self.stream_start is None:
                self.search_kib = max(self.search_kib, rss[self.pid])
            else:
                self.stream_main_kib = max(self.stream_main_kib, rss[self.pid])
                for p in pids[1:]:
                    self.children[p] = max(self.children.get(p, 0), rss[p])
                    if p not in self.names:
                        self.names[p] = _cmdline(p)
            total = sum(rss.values())
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
            time.sleep(self.every)


#: the command with its streamed release's passes in this one process (``local=False``)
IN_PROCESS = """
import bioanon.certification.streamed as streamed
real = streamed.certify_streamed
def in_process(*args, **kwargs):
    kwargs.update(local=False, scheduler=None, n_workers=None)
    return real(*args, **kwargs)
streamed.certify_streamed = in_process
from bioanon.cli import app
app()
"""


def run_streamed(args: list[str], env: dict[str, str], staged: Path, engine: str
                 ) -> dict[str, Any]:
    """Run ``bioanon release ... --dask --epsilon E`` in a subprocess with its passes on dask
    (``engine="dask"``) or in the one process (``"process"``): times, per process peaks,
    load averages."""
    import subprocess

    code = "from bioanon.cli import app; app()" if engine == "dask" else IN_PROCESS
    cmd = [sys.executable, "-c", code, *args]
    load_start = load()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    sampler = type("Sampler", (StreamSampler,), {"staged": staged})(proc.pid)
    sampler.start()
    out, _ = proc.communicate()
    seconds = time.perf_counter() - t0
    sampler.stop()
    if proc.returncode:
        raise RuntimeError(f"bioanon {' '.join(args)} failed:\n{out[-3000:]}")
    workers = sorted(sampler.children.values(), reverse=True)
    start = sampler.stream_start
    stream_cpu = sum(sampler.cpu.values()) - sampler.search_cpu
    return {"engine": engine, "seconds": round(seconds, 1),
            "search_s": None if start is None else round(start, 1),
            "stream_s": None if start is None else round(seconds - start, 1),
            "search_cpu_s": round(sampler.search_cpu, 1), "stream_cpu_s": round(stream_cpu, 1),
            "search_gib": round(sampler.search_kib / 2**20, 2),
            "stream_main_gib": round(sampler.stream_main_kib / 2**20, 2),
            "worker_peak_gib": [round(k / 2**20, 2) for k in workers],
            "children": [{"peak_gib": round(k / 2**20, 2), "cmdline": sampler.names.get(p, "")}
                         for p, k in sorted(sampler.children.items(), key=lambda kv: -kv[1])],
            "peak_rss_gib": round(sampler.peak_kib / 2**20, 2),
            "load_start": load_start, "load_stream": sampler.load_stream, "load_end": load()}


def streamed_rows(args: Any, cmd: list[str], env: dict[str, str], work: Path
                  ) -> dict[str, Any]:
    """The streamed release on each engine of ``--engines`` (same command, same seed),
    their table and the ratio of their streams' times; the releases must be the same."""
    rows, digests = [], {}
    for engine in args.engines.split(","):
        out = work / f"certified-{engine}"
        run = cmd[:cmd.index("-o") + 1] + [str(out)] + cmd[cmd.index("-o") + 2:]
        if engine == "dask":
            run += ["--workers", str(args.workers)]
        say(f"[{engine}] bioanon {' '.join(run)} (load {load()})")
        row = run_streamed(run, env, out, engine)
        man = json.loads((work / f"certified-{engine}.manifest.json").read_text())
        row.update(workers=args.workers if engine == "dask" else 0,
                   certified=man["certified"],
                   setting=man["certification"]["search"]["chosen"],
                   released_records=man["output"]["n_records"],
                   n_parts=man["stream"]["partitions"], passes=man["stream"]["passes"])
        assert row["released_records"] == args.n, "not every row was released"
        digests[engine] = man["output"]["sha256"]
        rows.append(row)
        shutil.rmtree(out, ignore_errors=True)  # the next engine's disk
    same = len(set(digests.values())) == 1
    say(f"{'engine':>8} {'workers':>7} {'wall s':>7} {'search s':>8} {'stream s':>8} "
        f"{'stream cpu s':>12} {'search GiB':>10} {'worker GiB (each)':>18} "
        f"{'client GiB':>10} {'load start/stream/end':>22} parts passes")
    for r in rows:
        each = "/".join(str(w) for w in r["worker_peak_gib"]) or "-"
        say(f"{r['engine']:>8} {r['workers']:>7} {r['seconds']:>7} {r['search_s']:>8} "
            f"{r['stream_s']:>8} {r['stream_cpu_s']:>12} {r['search_gib']:>10} {each:>18} "
            f"{r['stream_main_gib']:>10} "
            f"{r['load_start'] + '/' + r['load_stream'] + '/' + r['load_end']:>22} "
            f"{r['n_parts']:>5} {r['passes']:>6}")
    by = {r["engine"]: r for r in rows}
    ratio = (round(by["dask"]["stream_s"] / by["process"]["stream_s"], 2)
             if {"dask", "process"} <= set(by) and by["process"]["stream_s"] else None)
    cpu = (round(by["dask"]["stream_cpu_s"] / by["process"]["stream_cpu_s"], 2)
           if {"dask", "process"} <= set(by) and by["process"]["stream_cpu_s"] else None)
    say(f"same release on every engine: {same}; dask stream / in-process stream: {ratio} "
        f"(goal <= 1.2) in wall time, {cpu} in CPU seconds (every process)")
    return {"n": args.n, "d": args.d, "identities": args.identities, "epsilon": args.epsilon,
            "sample_records": args.sample_records, "rows": rows, "same_release": same,
            "stream_ratio_dask_to_process": ratio, "stream_cpu_ratio_dask_to_process": cpu}


def run_cli(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``bioanon`` in a subprocess: wall time, peak summed RSS (whole, per phase: the
    search alone, then the cluster's release)."""
    return bench_scale.run_cli(args, env, PhaseSampler, lambda s: {
        "search_phase_gib": s.alone_kib / 2**20,
        "release_phase_gib": s.cluster_kib / 2**20})


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
    ap.add_argument("--engines", default="dask,process",
                    help="with --epsilon: where the stream's passes run, in this order (dask: "
                         "the command on a LocalCluster of --workers; process: the same "
                         "command with its passes in its one process)")
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
               str(args.sample_records), "--budget-minutes", str(args.budget_minutes),
               # the generated table's classes are barely separable (clear CAS ~0.32): the
               # run times the release path, so no utility floor is asked of it
               "--min-utility", "0"]
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
        if args.epsilon is not None:
            doc = streamed_rows(args, cmd, env, work)
            doc["generate_s"] = round(gen_s, 1)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(doc, indent=2))
            say(f"wrote {args.out}")
            return
        say(f"bioanon {' '.join(cmd)}")
        load_start = load()
        run = run_cli(cmd, env)
        man = json.loads((work / "certified.manifest.json").read_text())
        judged = man["certification"]["judged_on"]
        row = {"n": args.n, "d": args.d, "identities": args.identities,
               "workers": args.workers, "path": "bucketed", "generate_s": round(gen_s, 1),
               "seconds": round(run["seconds"], 1), "peak_rss_gib": round(run["peak_rss_gib"], 2),
               "processes": run["processes"], "load": run["load"], "load_start": load_start,
               "search_phase_gib": round(run["search_phase_gib"], 2),
               "release_phase_gib": round(run["release_phase_gib"], 2),
               "certified": man["certified"], "setting": man["certification"]["search"]["chosen"],
               "released_records": man["output"]["n_records"],
               "sample_records": judged["n_records"], "sample_identities": judged["n_identities"],
               "table_records": judged["total_records"],
               "table_identities": judged["total_identities"],
               "n_buckets": man["scale"]["n_buckets"],
               "verdict": man["verdict"]["sentence"], "accepted_risks": args.accept_risk}
        assert row["released_records"] == args.n, "not every row was released"
        say(f"{'n':>10} {'workers':>7} {'seconds':>8} {'peak GiB':>9} {'search':>7} "
            f"{'release':>7} {'procs':>5} {'load':>5} {'released':>10} {'sample':>7} setting")
        say(f"{row['n']:>10,} {row['workers']:>7} {row['seconds']:>8} "
            f"{row['peak_rss_gib']:>9} {row['search_phase_gib']:>7} "
            f"{row['release_phase_gib']:>7} {row['processes']:>5} {row['load']:>5} "
            f"{row['released_records']:>10,} {row['sample_records']:>7,} {row['setting']}")
        say(row["verdict"])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(row, indent=2))
        say(f"wrote {args.out}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
