"""Scale: the in-memory transform against the memory floor and this machine's gather ceiling,
``anonymize`` end to end stage by stage, and the dask path out of core with 1 and 2 workers.

Measured in one run, on synthetic data (10 interest classes, 10,000 identities, d = 256):

1. **the machine**: the sequential-read floor (GB/s of a one-thread float32 sum over 1 GiB,
   best of 3); the cost of first touching 1 GiB of fresh memory (this virtual machine backs
   pages lazily); and, with numba, the random-gather ceiling: GB/s of summing random 1 KB rows
   (two threads) drawn from regions of 8k, 32k, 100k and 1M rows, the access pattern of a
   mixing transform whose donors are uniform over such a region;
2. **the in-memory transform** at ``--n-mem`` × 256, g=32 (median of 3 calls as a user makes
   them, fresh output each time; its parts: the random sets, and the mixing kernel on warm
   memory), the SciPy fallback, and the same transform with sets drawn in cache-sized buckets
   (the dask path's rule, in memory), each with its ratio to the floor (n·g·d·4 bytes at the
   floor's bandwidth / time);
3. **``bioanon anonymize`` end to end** on ``--n-mem`` records read from Parquet (written
   with pyarrow's defaults, as users' files are), against two references measured in the
   same run, interleaved with it: a pyarrow read + write of the same file with pyarrow's
   default writer (snappy, dictionary), and the same read + a write with the settings
   bioanon releases with (plain, uncompressed floats). The command runs as a user runs it
   (a subprocess, median of ``--cli-runs``, peak memory); the ratio the issue's target
   (≤ 1.3×) reads is the one to pyarrow's default writer, and both are written, beside the
   ratio of CPU seconds (every thread, user + system: less sensitive to other jobs on the
   cores than wall time). Then its
   stages in process (read, validate, fit, sets, kernel, shuffle, manifest, write with its
   hash) and the floor (the kernel's own time + the plain copy);
4. **the dask path**: ``--n-big`` × 256 float32 generated to Parquet in row groups (never held
   in memory) and released end to end (``bioanon anonymize --dask``) with 2 workers, and on
   ``--n-scaling`` records with 1 worker on 1 core, 1 worker on every core, and 2 workers
   (one core each); peak resident memory is the largest sum of VmRSS over the CLI process and
   every descendant (scheduler, nannies, workers), sampled every 0.1 s from /proc;
5. with ``--release``: ``bioanon release --dask`` on the ``--n-mem`` file (the search and its
   confirmation on the panel sample, then the release, ``--release-budget`` minutes), its
   stages timed from the command's own stage log.

The machine's load average is printed beside every timing: other jobs may share the cores.
Generated data lives in ``--workdir`` (default a folder under /tmp) and is deleted at the end
unless ``--keep``.

Usage::

    python benchmarks/bench_scale.py [--n-big 10000000] [--n-mem 1000000] [--n-scaling 2000000]
    python benchmarks/bench_scale.py --e2e-only            # part 3 alone (a few minutes)
    python benchmarks/bench_scale.py --skip-memory --skip-dask --release   # part 5 alone

Prints a table and writes JSON (default benchmarks/results/bench_scale.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

D, G, T, W, N_CLASSES, N_IDS = 256, 32, 0.8, 10.0, 10, 10_000
ROW_GROUP = 100_000


def load() -> str:
    """The 1-minute load average (other jobs may share the cores)."""
    return f"{os.getloadavg()[0]:.2f}"


def say(text: str) -> None:
    print(text, flush=True)


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


def run_cli(args: list[str], env: dict[str, str], sampler_cls: type[RssSampler] | None = None,
            extra: Callable[[Any], dict[str, Any]] | None = None) -> dict[str, Any]:
    """Run ``bioanon`` in a subprocess; wall time, peak summed RSS, load average (plus
    ``extra(sampler)`` for a sampler subclass that measures more)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "from bioanon.cli import app; app()", *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    sampler = (sampler_cls or RssSampler)(proc.pid)
    sampler.start()
    out, _ = proc.communicate()
    seconds = time.perf_counter() - t0
    peak = sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"bioanon {' '.join(args)} failed:\n{out[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"seconds": seconds, "cpu_seconds": cpu, "peak_rss_gib": peak,
            "processes": sampler.peak_processes, "load": load(),
            **(extra(sampler) if extra else {})}


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
    """Write n × 256 records in row groups of 100k with pyarrow's default encoding (snappy,
    dictionary tried first), as a user's file would be; never the whole table in memory."""
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
            writer = pq.ParquetWriter(path, tab.schema)
        writer.write_table(tab, row_group_size=ROW_GROUP)
    assert writer is not None
    writer.close()
    return time.perf_counter() - t0


# ---------------------------------------------------------------------- 1. the machine
def bandwidth_floor() -> float:
    """GB/s of a sequential one-thread float32 sum over 1 GiB (best of 3)."""
    a = np.ones(1 << 28, dtype=np.float32)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - t0)
    return a.nbytes / best / 1e9


def first_touch() -> float:
    """Seconds to allocate and first write 1 GiB (median of 3): the page-fault cost."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        a = np.empty(1 << 28, dtype=np.float32)
        a.fill(1.0)
        times.append(time.perf_counter() - t0)
        del a
    return statistics.median(times)


def gather_ceiling(X: np.ndarray) -> list[dict[str, Any]]:
    """GB/s of summing random rows of ``X`` (two threads) over regions of several sizes."""
    try:
        import numba as nb
    except ImportError:
        return []

    @nb.njit(parallel=True, fastmath=True)
    def gather_sum(X, idx):  # the mixing kernel's reads, nothing else
        m, d = idx.shape[0], X.shape[1]
        blocks = (m + 1023) // 1024
        acc = np.zeros((blocks, d), np.float32)
        for b in nb.prange(blocks):
            for i in range(b * 1024, min(m, (b + 1) * 1024)):
                r = X[idx[i]]
                for k in range(d):
                    acc[b, k] += r[k]
        return acc

    rows = []
    m = 8_000_000
    rng = np.random.default_rng(0)
    for region in sorted({8_192, 32_768, 100_000, X.shape[0]}):
        idx = rng.integers(0, region, m).astype(np.int32)
        gather_sum(X, idx[:1000])
        best = np.inf
        for _ in range(2):
            t0 = time.perf_counter()
            gather_sum(X, idx)
            best = min(best, time.perf_counter() - t0)
        rows.append({"region_rows": region, "gb_s": m * X.shape[1] * 4 / best / 1e9,
                     "threads": nb.get_num_threads(), "load": load()})
    return rows


# ---------------------------------------------------------------------- 2. in memory
def _timed(fn: Callable[[], Any], runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return statistics.median(times), times


def in_memory(X: np.ndarray, p: np.ndarray, floor: float, ceiling: float | None,
              buckets: list[int]) -> list[dict[str, Any]]:
    """The transform at n × 256 and its parts; the SciPy path; cache-sized buckets."""
    from bioanon.anonymize import SelectiveMeanAnonymizer, mix_kernel, random_sets
    from bioanon.anonymize import selective_mean as sm
    from bioanon.scale import BucketedMixing

    n = X.shape[0]
    labels = {"p": p}
    anon = SelectiveMeanAnonymizer("p", g=G, t=T, w=W, r_p=0.01, random_state=0)
    anon.fit(X[:5000], {"p": p[:5000]})
    anon.transform(X[:25_000], {"p": p[:25_000]})  # numba compiles or loads its cache
    floor_s = n * G * D * 4 / (floor * 1e9)
    rows: list[dict[str, Any]] = []

    def add(case: str, seconds: float, runs: list[float] | None = None, **extra: Any) -> None:
        row = {"case": case, "n": n, "seconds": seconds, "runs": runs or [seconds],
               "gb_s": n * G * D * 4 / seconds / 1e9, "floor_seconds": floor_s,
               "ratio_to_floor": floor_s / seconds, "load": load(), **extra}
        if ceiling:
            row["ratio_to_gather_ceiling"] = row["gb_s"] / ceiling
        rows.append(row)
        say(f"{case:<52} {seconds:7.2f} s {row['gb_s']:5.1f} GB/s  ratio to floor "
            f"{row['ratio_to_floor']:.2f}  load {row['load']}")

    compiled = mix_kernel.sets_kernel() is not None
    med, runs = _timed(lambda: anon.transform(X, labels), 3)
    add("transform" + (" (numba)" if compiled else " (numba missing: SciPy)"), med, runs)
    t0 = time.perf_counter()
    sets = anon.donor_sets(labels, n, 1)
    sets_s = time.perf_counter() - t0
    rows[-1]["random_sets_seconds"] = sets_s
    say(f"{'  of which the random sets':<52} {sets_s:7.2f} s")
    if compiled:
        out = np.empty_like(X)
        out.fill(0.0)  # warm: no page faults in the timing
        cols = np.flatnonzero(anon.mask_).astype(np.int64)
        lam = np.float32((W - 1) / (W - 1 + G))
        kern = mix_kernel.sets_kernel()
        kern(sets, X, cols, lam, out)
        med_k, runs_k = _timed(lambda: kern(sets, X, cols, lam, out), 3)
        add("  mixing kernel alone (warm memory, sets given)", med_k, runs_k)
        del out
    os.environ["BIOANON_KERNEL"] = "numpy"
    mix_kernel.sets_kernel.cache_clear()
    mix_kernel.set_filler.cache_clear()
    add("transform, SciPy fallback (no numba)", *_timed(lambda: anon.transform(X, labels), 1))
    del os.environ["BIOANON_KERNEL"]
    mix_kernel.sets_kernel.cache_clear()
    mix_kernel.set_filler.cache_clear()
    # sets drawn within buckets (the dask path's rule, in memory); the compiled paths are
    # forced on buckets smaller than their thresholds
    saved = sm.MIN_ROWS, random_sets.MIN_COMPILED_ROWS
    sm.MIN_ROWS = random_sets.MIN_COMPILED_ROWS = 1
    try:
        for size in buckets:
            bucketed = BucketedMixing(anon, "p", bucket_size=size, random_state=2)
            bucketed.anonymizer_ = anon  # fitted already: time the release alone
            bucketed.n_features_in_ = D
            med_b, runs_b = _timed(lambda b=bucketed: b.transform(X, labels), 3)
            add(f"transform in {size:,}-record buckets", med_b, runs_b, bucket_size=size)
    finally:
        sm.MIN_ROWS, random_sets.MIN_COMPILED_ROWS = saved
    return rows


# ---------------------------------------------------------------------- 3. end to end
def reference_copies(path: Path, work: Path) -> dict[str, tuple[float, float]]:
    """One run of each reference: a pyarrow read + write of ``path`` (seconds, and the CPU
    seconds of this process's threads meanwhile).

    ``pyarrow default``: ``pq.read_table`` + ``pq.write_table`` with pyarrow's defaults
    (snappy, dictionary tried on every column, statistics); ``bioanon plain writer``: the same
    read + ``pq.write_table`` with the settings bioanon writes releases with (label columns
    dictionary-encoded and snappy, float columns plain and uncompressed, no statistics on
    them). Neither converts to a matrix, transforms, shuffles or hashes.
    """
    import pyarrow.parquet as pq

    out: dict[str, tuple[float, float]] = {}
    for name in ("pyarrow default", "bioanon plain writer"):
        target = work / "ref-out.parquet"
        c0, t0 = time.process_time(), time.perf_counter()
        tab = pq.read_table(path)
        if name == "pyarrow default":
            pq.write_table(tab, target)
        else:
            labels = ["p", "id"]
            feats = [c for c in tab.column_names if c not in labels]
            pq.write_table(tab, target, use_dictionary=labels, write_statistics=labels,
                           compression={**{c: "snappy" for c in labels},
                                        **{f: "none" for f in feats}})
        out[name] = (time.perf_counter() - t0, time.process_time() - c0)
        del tab
        target.unlink()
    return out


#: library functions timed inside ``anonymize`` (module, attribute, stage name); a stage
#: may run inside another (the finite checks run inside the read and the release)
TIMED = (("bioanon.table", "check_finite", "validate: finite scans of X"),
         ("bioanon.anonymize.selective_mean", "relevance_scores", "fit: relevance forest"),
         ("bioanon.anonymize.selective_mean", "assemble_sets", "transform: random sets"),
         ("bioanon.anonymize.selective_mean", "apply_sets", "transform: mixing kernel"),
         ("bioanon.release", "shuffle", "shuffle (a separate pass)"),
         ("bioanon.release", "build_manifest", "manifest"),
         ("bioanon.table", "write_parquet", "write: encode + hash"))


def stages(path: Path, work: Path) -> dict[str, Any]:
    """The library steps of ``bioanon anonymize`` timed one by one, in this process.

    Top-level marks (read, release, input hash, write) add up to the total; the functions
    of :data:`TIMED` are wrapped to give their own seconds and calls.
    """
    import importlib

    from bioanon.anonymize import SelectiveMeanAnonymizer
    from bioanon.anonymize.mix_kernel import permute_kernel
    from bioanon.cli.common import read_release_input
    from bioanon.io import sha256_in_background
    from bioanon.release import Roles, release, write_release

    permute = permute_kernel()
    if permute is not None:  # load (or compile) it now: a first run pays that once
        permute(np.zeros((4, 2), np.float32), np.arange(4))
    spent: dict[str, list[float]] = {}
    saved = []

    def timed(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent.setdefault(label, []).append(time.perf_counter() - t)
        return wrapper

    for mod, attr, label in TIMED:
        m = importlib.import_module(mod)
        saved.append((m, attr, getattr(m, attr)))
        setattr(m, attr, timed(getattr(m, attr), label))
    marks: dict[str, float] = {}
    try:
        t0 = time.perf_counter()
        with sha256_in_background(path) as digest:
            table = read_release_input(path, ["p", "id"])
            marks["read (Parquet to a float32 matrix, checked)"] = time.perf_counter() - t0
            anon = SelectiveMeanAnonymizer("p", sensitive="id", random_state=1)
            t1 = time.perf_counter()
            anon.check_changes(table)
            res = release(table, anon, Roles(sensitive="id", interest="p"),
                          method="selective-mean", input_name=path.name)
            marks["release (fit, transform, shuffle, manifest)"] = time.perf_counter() - t1
            t2 = time.perf_counter()
            res.manifest["input"]["sha256"] = digest()
            marks["input hash (waited for)"] = time.perf_counter() - t2
        out = work / "stages-out.parquet"
        t3 = time.perf_counter()
        write_release(res.table, res.manifest, out)
        marks["write (hashed while written, renamed)"] = time.perf_counter() - t3
        marks["total"] = time.perf_counter() - t0
    finally:
        for m, attr, fn in saved:
            setattr(m, attr, fn)
    out.unlink()
    Path(str(out) + ".manifest.json").unlink()
    parts = {label: {"seconds": sum(v), "calls": len(v)} for label, v in spent.items()}
    return {"seconds": marks, "parts": parts, "load": load()}


def end_to_end(path: Path, work: Path, env: dict[str, str], n: int,
               cli_runs: int = 3) -> dict[str, Any]:
    """Both references (median of 3) and ``bioanon anonymize`` (CLI, median of
    ``cli_runs``), interleaved so that a change of load hits all three alike; then the
    stages in process."""
    refs: dict[str, list[dict[str, Any]]] = {"pyarrow default": [], "bioanon plain writer": []}
    cli: list[dict[str, Any]] = []
    for i in range(max(3, cli_runs)):
        for name, (seconds, cpu) in reference_copies(path, work).items():
            refs[name].append({"seconds": seconds, "cpu_seconds": cpu, "load": load()})
        if i < cli_runs:
            out = work / f"e2e-out-{i}.parquet"
            cli.append(run_cli(["anonymize", str(path), "-o", str(out), "--interest", "p",
                                "--sensitive", "id", "--g", str(G), "--seed", "1"], env))
            out.unlink()
            Path(str(out) + ".manifest.json").unlink()
    med = {name: statistics.median(r["seconds"] for r in runs) for name, runs in refs.items()}
    med_cpu = {name: statistics.median(r["cpu_seconds"] for r in runs)
               for name, runs in refs.items()}
    e2e = statistics.median(r["seconds"] for r in cli)
    e2e_cpu = statistics.median(r["cpu_seconds"] for r in cli)
    doc: dict[str, Any] = {
        "n": n, "d": D, "g": G,
        "references": {name: {"seconds": med[name], "cpu_seconds": med_cpu[name],
                              "runs": refs[name]} for name in refs},
        "anonymize_cli": {"seconds": e2e, "cpu_seconds": e2e_cpu, "runs": cli,
                          "peak_rss_gib": max(r["peak_rss_gib"] for r in cli),
                          "records_per_s": n / e2e},
        "ratio_to": {name: e2e / med[name] for name in med},
        # CPU seconds (every thread, user + system) depend less on what else runs on the
        # cores than wall time does: a second view of the same runs on a busy machine
        "cpu_ratio_to": {name: e2e_cpu / med_cpu[name] for name in med_cpu},
        "target": {"ratio": 1.3, "reference": "pyarrow default",
                   "met": e2e / med["pyarrow default"] <= 1.3},
        "load": load()}
    doc["stages"] = stages(path, work)
    return doc


def say_end_to_end(e: dict[str, Any]) -> None:
    for name, ref in e["references"].items():
        say(f"{'reference: read + write, ' + name:<52} {ref['seconds']:7.2f} s  (median of "
            f"{len(ref['runs'])}; loads {', '.join(r['load'] for r in ref['runs'])})  CPU "
            f"{ref['cpu_seconds']:.2f} s")
    a = e["anonymize_cli"]
    say(f"{'bioanon anonymize --g 32 (CLI, end to end)':<52} {a['seconds']:7.2f} s  (median of "
        f"{len(a['runs'])}; loads {', '.join(r['load'] for r in a['runs'])})  peak RSS "
        f"{a['peak_rss_gib']:.2f} GiB  CPU {a['cpu_seconds']:.2f} s")
    for name, ratio in e["ratio_to"].items():
        say(f"  ratio to {name:<42} {ratio:7.2f}×  (CPU seconds: "
            f"{e['cpu_ratio_to'][name]:.2f}×)")
    say(f"  target ≤ 1.3× {e['target']['reference']}: "
        f"{'met' if e['target']['met'] else 'missed'}")
    st = e["stages"]
    say(f"  stages in process (load {st['load']}):")
    for k, v in st["seconds"].items():
        say(f"    {k:<48} {v:7.2f} s")
    for k, v in st["parts"].items():
        say(f"      of which {k:<41} {v['seconds']:7.2f} s ({v['calls']} call"
            f"{'s' if v['calls'] != 1 else ''})")


# ---------------------------------------------------------------------- 5. release
def release_timed(path: Path, work: Path, env: dict[str, str], n: int, budget: float,
                  workers: int) -> dict[str, Any]:
    """``bioanon release --dask`` on ``path``: the search on the panel sample, the
    confirmation and the release, its stages timed from the command's own stage log (one
    line per stage with the elapsed time on stderr when stderr is not a terminal)."""
    import re

    out = work / "rel-out"
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "from bioanon.cli import app; app()", "release", str(path),
           "-o", str(out), "--interest", "p", "--sensitive", "id", "--dask", "--workers",
           str(workers), "--budget-minutes", str(budget), "--seed", "1",
           "--methods", "selective-mean", "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    sampler = RssSampler(proc.pid)
    sampler.start()
    lines: list[tuple[float, str]] = []

    def follow() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip()))

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    stdout = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    reader.join()
    seconds = time.perf_counter() - t0
    peak = sampler.stop()
    stage_lines = [(t, re.sub(r"^\d\d:\d\d:\d\d ", "", text)) for t, text in lines
                   if re.match(r"^\d\d:\d\d:\d\d ", text)]
    stages_s = []
    for (t, text), nxt in zip(stage_lines, [*stage_lines[1:], (seconds, "exit")],
                              strict=True):
        stages_s.append({"stage": re.sub(r" \[[^\]]*\]$", "", text), "start_s": t,
                         "seconds": nxt[0] - t})
    doc: dict[str, Any] = {"n": n, "budget_minutes": budget, "workers": workers,
                           "exit_status": proc.returncode, "seconds": seconds,
                           "peak_rss_gib": peak, "processes": sampler.peak_processes,
                           "stages": stages_s, "load": load()}
    try:
        doc["summary"] = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        doc["stdout_tail"] = stdout[-2000:]
    if proc.returncode:
        doc["stderr_tail"] = "\n".join(t for _, t in lines[-20:])
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(Path(str(out) + ".report"), ignore_errors=True)
    Path(str(out) + ".manifest.json").unlink(missing_ok=True)
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-big", type=int, default=10_000_000)
    ap.add_argument("--n-mem", type=int, default=1_000_000)
    ap.add_argument("--n-scaling", type=int, default=2_000_000,
                    help="records of the 1-worker / 2-worker comparison")
    ap.add_argument("--bucket-size", type=int, default=50_000)
    ap.add_argument("--cache-buckets", type=int, nargs="*", default=[8_192, 32_768, 50_000])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--skip-memory", action="store_true", help="skip parts 2-3")
    ap.add_argument("--skip-transform", action="store_true",
                    help="skip part 2 (the gather ceiling and the in-memory transform)")
    ap.add_argument("--skip-dask", action="store_true", help="skip part 4")
    ap.add_argument("--e2e-only", action="store_true",
                    help="only part 3 (anonymize end to end against both references): "
                         "--skip-transform --skip-dask")
    ap.add_argument("--cli-runs", type=int, default=3,
                    help="runs of the anonymize command (median; at least 2)")
    ap.add_argument("--input", type=Path, default=None,
                    help="an existing --n-mem × 256 Parquet file of chunk()'s columns "
                         "(p, id, f0..f255) for parts 3 and 5 instead of generating one")
    ap.add_argument("--release", action="store_true",
                    help="part 5: bioanon release --dask on --n-mem records, stages timed")
    ap.add_argument("--release-budget", type=float, default=3.0,
                    help="--budget-minutes of the release run")
    ap.add_argument("--release-workers", type=int, default=2)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bench_scale.json")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bioanon-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")])}
    result: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                          "numpy": np.__version__}}
    from bioanon.io import write_text_atomic

    args.out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after every stage: an interrupted run keeps what it measured
        write_text_atomic(args.out, json.dumps(result, indent=2))

    try:
        floor = bandwidth_floor()
        touch = first_touch()
        result["machine"].update(bandwidth_floor_gb_s=floor, first_touch_s_per_gib=touch,
                                 load=load())
        say(f"sequential-read floor: {floor:.1f} GB/s; first touch of 1 GiB of fresh memory: "
            f"{touch:.2f} s (load {load()})")
        if args.e2e_only:
            args.skip_transform = args.skip_dask = True
        ceiling = None
        if not args.skip_memory and not args.skip_transform:
            X, p, _ = chunk(args.n_mem, np.random.default_rng(1))
            result["gather_ceiling"] = gather_ceiling(X)
            for r in result["gather_ceiling"]:
                say(f"random 1 KB rows from a region of {r['region_rows']:>9,} rows, "
                    f"{r['threads']} threads: {r['gb_s']:5.1f} GB/s = {r['gb_s'] / floor:.2f} of "
                    f"the floor  load {r['load']}")
            if result["gather_ceiling"]:
                ceiling = result["gather_ceiling"][-1]["gb_s"]
            save()
            result["in_memory"] = in_memory(X, p, floor, ceiling, args.cache_buckets)
            del X, p
            save()
        mem_in = args.input or work / "mem.parquet"
        if (not args.skip_memory or args.release) and args.input is None:
            write_parquet(mem_in, args.n_mem, seed=3)
        if not args.skip_memory:
            e2e = end_to_end(mem_in, work, env, args.n_mem, max(2, args.cli_runs))
            kernel = e2e["stages"]["parts"].get("transform: mixing kernel", {}).get("seconds")
            e2e["floor"] = {
                "note": "what no end-to-end run can go under on this machine: the mixing "
                        "kernel's own time (n·g rows of d float32 gathered) plus the "
                        "bioanon-plain-writer reference (a read + a write of the same data)",
                "kernel_seconds": kernel,
                "seconds": None if kernel is None else
                kernel + e2e["references"]["bioanon plain writer"]["seconds"]}
            result["anonymize_end_to_end"] = e2e
            say_end_to_end(e2e)
            if kernel is not None:
                say(f"  floor: kernel {kernel:.2f} s + plain copy = "
                    f"{e2e['floor']['seconds']:.2f} s")
            save()
        if args.release:
            say(f"bioanon release --dask on {args.n_mem:,} × {D} (budget "
                f"{args.release_budget} min, {args.release_workers} workers) ...")
            rel = release_timed(mem_in, work, env, args.n_mem, args.release_budget,
                                args.release_workers)
            result["release"] = rel
            say(f"{'bioanon release --dask (CLI, end to end)':<52} {rel['seconds']:7.1f} s  "
                f"exit {rel['exit_status']}  peak RSS {rel['peak_rss_gib']:.2f} GiB "
                f"({rel['processes']} processes)  load {rel['load']}")
            for st in rel["stages"]:
                say(f"    {st['stage'][:70]:<70} {st['seconds']:7.1f} s")
            save()
        if args.input is None and mem_in.exists():
            mem_in.unlink()
        if args.skip_dask:
            return
        big = work / "big.parquet"
        gen_s = write_parquet(big, args.n_big, seed=4)
        result["generate"] = {"n": args.n_big, "seconds": gen_s,
                              "bytes": big.stat().st_size, "load": load()}
        say(f"generated {args.n_big:,} × {D} to Parquet: {big.stat().st_size / 1e9:.1f} GB "
            f"in {gen_s:.0f} s (load {load()})")
        result["dask"] = []

        def dask_run(src: Path, n: int, workers: int, numba_threads: int | None,
                     label: str) -> None:
            out = work / f"dask-out-{len(result['dask'])}"
            run_env = dict(env)
            if numba_threads:
                run_env["NUMBA_NUM_THREADS"] = str(numba_threads)
            r = run_cli(["anonymize", str(src), "-o", str(out), "--interest", "p",
                         "--sensitive", "id", "--seed", "1", "--dask", "--workers",
                         str(workers), "--bucket-size", str(args.bucket_size)], run_env)
            r.update(n=n, workers=workers, case=label, records_per_s=n / r["seconds"])
            result["dask"].append(r)
            shutil.rmtree(out, ignore_errors=True)
            Path(str(out) + ".manifest.json").unlink(missing_ok=True)
            say(f"{'dask, ' + label:<52} n={n:>10,} {r['seconds']:7.1f} s "
                f"{r['records_per_s']:>9,.0f} rec/s  peak RSS {r['peak_rss_gib']:.2f} GiB "
                f"({r['processes']} processes)  load {r['load']}")
            save()

        dask_run(big, args.n_big, 2, None, "2 workers (1 core each)")
        small = work / "scaling.parquet"
        write_parquet(small, args.n_scaling, seed=5)
        for workers, threads, label in ((1, 1, "1 worker on 1 core"),
                                        (1, None, "1 worker on every core"),
                                        (2, None, "2 workers (1 core each)")):
            dask_run(small, args.n_scaling, workers, threads, label)
        one = next(r for r in result["dask"][1:] if r["case"] == "1 worker on 1 core")
        two = result["dask"][-1]
        result["scaling_1_to_2_workers"] = two["records_per_s"] / one["records_per_s"]
        say(f"scaling from 1 to 2 workers (one core each): "
            f"{result['scaling_1_to_2_workers']:.2f}×")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        save()
        say(f"wrote {args.out}")


if __name__ == "__main__":
    main()
