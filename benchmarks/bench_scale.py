"""Scale: the in-memory transform against the memory floor, and the dask path out of core.

Measured in one run, on synthetic data (10 interest classes, 10,000 identities):

1. the sequential-read floor: GB/s of a float32 sum over 1 GiB (best of 3);
2. the in-memory selective-mean transform at ``--n-mem`` × 256, g=32 (numba kernel and the
   SciPy fallback), its ratio to the floor (n·g·d·4 bytes at the floor's bandwidth / time),
   and the same transform with sets drawn in cache-sized buckets (``--cache-bucket``);
3. ``bioanon anonymize`` end to end (read + fit + transform + write) on ``--n-mem`` records
   from Parquet, in a subprocess;
4. ``--n-big`` × 256 float32 generated to Parquet in row groups (never held in memory) and
   released end to end through dask (``bioanon anonymize --dask``) with 1 and 2 workers;
   peak resident memory is the largest sum of VmRSS over the CLI process and every
   descendant (scheduler, nannies, workers), sampled every 0.1 s from /proc.

The machine's load average is printed beside every timing: other jobs share the cores.
Generated data lives in ``--workdir`` (default a folder under /tmp) and is deleted at the end
unless ``--keep``.

Usage::

    python benchmarks/bench_scale.py [--n-big 10000000] [--n-mem 1000000] [--workers 1 2]

Prints a table and writes JSON (default benchmarks/results/bench_scale.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

D, G, T, W, N_CLASSES, N_IDS = 256, 32, 0.8, 10.0, 10, 10_000
ROW_GROUP = 100_000


def load() -> str:
    """The 1-minute load average (other jobs share the cores)."""
    return f"{os.getloadavg()[0]:.2f}"


# ---------------------------------------------------------------------- memory sampling
def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler(threading.Thread):
    """Peak of the summed VmRSS of a process and all its descendants."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak_kib = 0
        self.peak_processes = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids, todo = [], [self.pid]
            while todo:
                p = todo.pop()
                pids.append(p)
                todo += _children(p)
            total = sum(_rss_kib(p) for p in pids)
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
            time.sleep(self.every)

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return self.peak_kib / 2**20  # GiB


def run_cli(args: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``bioanon`` in a subprocess; wall time, peak summed RSS, load average."""
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "from bioanon.cli import app; app()", *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    sampler = RssSampler(proc.pid)
    sampler.start()
    out, _ = proc.communicate()
    seconds = time.perf_counter() - t0
    peak = sampler.stop()
    if proc.returncode:
        raise RuntimeError(f"bioanon {' '.join(args)} failed:\n{out[-3000:]}")
    return {"seconds": seconds, "peak_rss_gib": peak, "processes": sampler.peak_processes,
            "load": load()}


# ---------------------------------------------------------------------- data
def chunk(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic float32 features, 10 interest classes, 10,000 identities (synthetic data)."""
    p = rng.integers(0, N_CLASSES, n)
    ids = rng.integers(0, N_IDS, n)
    X = rng.standard_normal((n, D), dtype=np.float32)
    X[:, :8] += (p[:, None] * 0.3).astype(np.float32)  # a few interest-relevant features
    X[:, 8:16] += ((ids % 97)[:, None] * 0.05).astype(np.float32)
    return X, p, ids


def write_parquet(path: Path, n: int, seed: int = 0) -> float:
    """Write n × 256 records in row groups of 100k (never the whole table in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = ["p", "id", *[f"f{j}" for j in range(D)]]
    t0 = time.perf_counter()
    writer = None
    for start in range(0, n, ROW_GROUP):
        X, p, ids = chunk(min(ROW_GROUP, n - start), rng)
        tab = pa.Table.from_arrays([pa.array(p), pa.array(ids),
                                    *[pa.array(X[:, j]) for j in range(D)]], names=names)
        if writer is None:
            writer = pq.ParquetWriter(path, tab.schema, compression="none")
        writer.write_table(tab, row_group_size=ROW_GROUP)
    writer.close()
    return time.perf_counter() - t0


# ---------------------------------------------------------------------- in memory
def bandwidth_floor() -> float:
    """GB/s of a sequential float32 sum over 1 GiB (best of 3)."""
    a = np.ones(1 << 28, dtype=np.float32)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - t0)
    return a.nbytes / best / 1e9


def in_memory(n: int, floor: float, cache_bucket: int) -> list[dict]:
    """The transform at n × 256 (numba kernel, SciPy fallback, cache-sized buckets)."""
    from bioanon.anonymize import SelectiveMeanAnonymizer, mix_kernel

    X, p, _ = chunk(n, np.random.default_rng(1))
    labels = {"p": p}
    anon = SelectiveMeanAnonymizer("p", g=G, t=T, w=W, r_p=0.01, relevance="mutual_info",
                                   random_state=0).fit(X[:5000], {"p": p[:5000]})
    floor_s = n * G * D * 4 / (floor * 1e9)
    rows = []

    def timed(name: str, fn) -> None:
        anon.transform(X[:25_000], {"p": p[:25_000]})  # warm-up: numba compiles or loads
        t0 = time.perf_counter()
        fn()
        s = time.perf_counter() - t0
        rows.append({"case": name, "n": n, "seconds": s, "gb_s": n * G * D * 4 / s / 1e9,
                     "floor_seconds": floor_s, "ratio_to_floor": floor_s / s, "load": load()})

    kernel = mix_kernel.gather_kernel()
    timed("transform, numba kernel" if kernel else "transform (numba missing)",
          lambda: anon.transform(X, labels))
    os.environ["BIOANON_KERNEL"] = "numpy"
    mix_kernel.gather_kernel.cache_clear()
    timed("transform, SciPy fallback", lambda: anon.transform(X, labels))
    del os.environ["BIOANON_KERNEL"]
    mix_kernel.gather_kernel.cache_clear()
    # sets drawn within cache-sized buckets (the bucketed release's rule, in memory)
    from bioanon.scale import assign_buckets, n_buckets_for

    b = assign_buckets(p, n_buckets_for(n, cache_bucket), np.random.default_rng(2))
    order = np.argsort(b, kind="stable")
    bounds = np.flatnonzero(np.diff(b[order])) + 1

    def bucketed() -> np.ndarray:
        out = np.empty_like(X)
        for rows_b in np.split(order, bounds):  # one step per bucket
            out[rows_b] = anon.transform(X[rows_b], {"p": p[rows_b]})
        return out

    timed(f"transform in {cache_bucket:,}-record buckets", bucketed)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-big", type=int, default=10_000_000)
    ap.add_argument("--n-mem", type=int, default=1_000_000)
    ap.add_argument("--n-scaling", type=int, default=None,
                    help="records for the 1-worker run (default: --n-big)")
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 1])
    ap.add_argument("--bucket-size", type=int, default=50_000)
    ap.add_argument("--cache-bucket", type=int, default=32_768)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--skip-memory", action="store_true", help="skip parts 2-3")
    ap.add_argument("--skip-dask", action="store_true", help="skip part 4")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bench_scale.json")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bioanon-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    result: dict = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "numpy": np.__version__,
                                "note": "shared machine: other jobs use the same cores"}}
    from bioanon.io import write_text_atomic

    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after every stage: an interrupted run keeps what it measured
        write_text_atomic(args.out, json.dumps(result, indent=2))

    try:
        floor = bandwidth_floor()
        result["bandwidth_floor_gb_s"] = floor
        print(f"sequential-read floor: {floor:.1f} GB/s (load {load()})", flush=True)
        if not args.skip_memory:
            result["in_memory"] = in_memory(args.n_mem, floor, args.cache_bucket)
            for r in result["in_memory"]:
                print(f"{r['case']:<44} n={r['n']:>9,} {r['seconds']:7.2f} s "
                      f"{r['gb_s']:5.1f} GB/s  floor {r['floor_seconds']:.2f} s  "
                      f"ratio {r['ratio_to_floor']:.2f}  load {r['load']}", flush=True)
            mem_in = work / "mem.parquet"
            write_parquet(mem_in, args.n_mem, seed=3)
            e2e = run_cli(["anonymize", str(mem_in), "-o", str(work / "mem-out.parquet"),
                           "--interest", "p", "--sensitive", "id", "--seed", "1"], env)
            e2e.update(n=args.n_mem, records_per_s=args.n_mem / e2e["seconds"])
            result["anonymize_in_memory"] = e2e
            print(f"{'anonymize end to end (in memory)':<44} n={args.n_mem:>9,} "
                  f"{e2e['seconds']:7.2f} s  {e2e['records_per_s']:,.0f} rec/s  "
                  f"peak RSS {e2e['peak_rss_gib']:.2f} GiB  load {e2e['load']}", flush=True)
            save()
        if args.skip_dask:
            return
        big = work / "big.parquet"
        gen_s = write_parquet(big, args.n_big, seed=4)
        result["generate"] = {"n": args.n_big, "seconds": gen_s,
                              "bytes": big.stat().st_size, "load": load()}
        print(f"generated {args.n_big:,} × {D} to Parquet: {big.stat().st_size / 1e9:.1f} GB "
              f"in {gen_s:.0f} s (load {load()})", flush=True)
        small = None
        if args.n_scaling and args.n_scaling != args.n_big:
            small = work / "scaling.parquet"
            write_parquet(small, args.n_scaling, seed=5)
        result["dask"] = []
        for w in args.workers:
            src, n = (big, args.n_big) if w == max(args.workers) or small is None else \
                (small, args.n_scaling)
            out = work / f"dask-out-{w}"
            r = run_cli(["anonymize", str(src), "-o", str(out), "--interest", "p",
                         "--sensitive", "id", "--seed", "1", "--dask", "--workers", str(w),
                         "--bucket-size", str(args.bucket_size)], env)
            r.update(n=n, workers=w, records_per_s=n / r["seconds"])
            result["dask"].append(r)
            shutil.rmtree(out, ignore_errors=True)
            print(f"{'dask bucketed release, ' + str(w) + ' worker(s)':<44} n={n:>9,} "
                  f"{r['seconds']:7.1f} s  {r['records_per_s']:,.0f} rec/s  "
                  f"peak RSS {r['peak_rss_gib']:.2f} GiB ({r['processes']} processes)  "
                  f"load {r['load']}", flush=True)
            save()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    save()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
