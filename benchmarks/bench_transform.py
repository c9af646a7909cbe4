"""Speed and memory of the selective-mean transform (the sparse mixing matrix), and of the
frontier methods in the same run.

For n in {10k, 100k, 1M} records × d=256 features and g=32, it times the transform (random set
assembly + sparse mixing), measures its peak memory, the effective throughput n·g·d·4 bytes /
time, and compares with
(a) a per-record loop written straight from Algorithm 1 (run on a subsample, extrapolated), and
(b) a sequential NumPy reduction over a 1 GB float32 array: the machine's memory-bandwidth floor.

In the same run, each frontier method releases the same data (fit + release, as the owner
runs it): the variance-preserving mix (``vp-mix``, g=32), LEACE erasure of a 10-class label,
their composition, the class-conditional synthetic baseline and its differentially private
version (``dp-synthetic``, ε = 1, declared bounds); the table gives each one's time as a
multiple of the selective mean's (issue 14's bound: at most 2×). Issue 20's methods run in the
same loop: dp-synthetic, vp-mix with the bounded (circulant) donor design, the DP mix, the
synthesizer with Ledoit-Wolf / factor / pooled covariances, each also as a multiple of vp-mix's
time (bound: at most 2×), with its ``fit`` time alone; so do issue 28's ``dp-basis`` (ε = 4,
declared bounds, pooled and per-class covariance in 16 directions, and k and the split by
its stated rule) and ``basis-synthetic``;
SDV's Gaussian copula (``sdv-copula``, the peer, needs ``bioanon[peer]``) runs only up to
``--sdv-max`` records (it is far slower).

Usage::

    python benchmarks/bench_transform.py [--sizes 10000 100000 1000000] [--out FILE.json]
        [--frontier-only] [--methods NAME ...] [--sdv-max N]

Prints a table and writes JSON (default benchmarks/results/bench_transform.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc
from pathlib import Path

import numpy as np

from bioanon.anonymize import (
    BasisSyntheticAnonymizer,
    ComposedAnonymizer,
    DPBasisAnonymizer,
    DPMixAnonymizer,
    DPSyntheticAnonymizer,
    LeaceAnonymizer,
    SelectiveMeanAnonymizer,
    SyntheticAnonymizer,
    VarianceMixAnonymizer,
)
from bioanon.anonymize.peer_sdv import SDVCopulaAnonymizer
from bioanon.io import write_text_atomic

D, G, T, W, N_CLASSES = 256, 32, 0.8, 10.0, 10


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic float32 features and a 10-class interest label (synthetic data)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, D), dtype=np.float32), rng.integers(0, N_CLASSES, n)


def fitted_anonymizer(X: np.ndarray, y: np.ndarray) -> SelectiveMeanAnonymizer:
    """Fit relevance on 5,000 records (the transform's cost does not depend on it)."""
    anon = SelectiveMeanAnonymizer("p", g=G, t=T, w=W, r_p=0.01, relevance="mutual_info",
                                   random_state=0)
    return anon.fit(X[:5000], {"p": y[:5000]})


def loop_transform(X: np.ndarray, y: np.ndarray, mask: np.ndarray, rows: int,
                   rng: np.random.Generator) -> float:
    """Algorithm 1 as a per-record loop (set assembly + line 9) on ``rows`` records; seconds."""
    n_same = int(round(T * G))
    by_class = {c: np.flatnonzero(y == c) for c in range(N_CLASSES)}
    others = {c: np.flatnonzero(y != c) for c in range(N_CLASSES)}
    out = np.empty((rows, X.shape[1]), dtype=np.float32)
    start = time.perf_counter()
    for i in range(rows):
        c = y[i]
        same = by_class[c][by_class[c] != i]
        members = np.concatenate([[i], rng.choice(same, n_same - 1, replace=False),
                                  rng.choice(others[c], G - n_same, replace=False)])
        total = X[members].sum(axis=0)
        out[i] = np.where(mask, ((W - 1) * X[i] + total) / (W - 1 + G), total / G)
    return time.perf_counter() - start


def bandwidth_floor() -> float:
    """GB/s of a sequential float32 sum over a 1 GB array (best of 3)."""
    a = np.ones(1 << 28, dtype=np.float32)  # 1 GiB
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - t0)
    return a.nbytes / best / 1e9


def bench(n: int, loop_rows: int) -> dict[str, float]:
    X, y = make_data(n)
    anon = fitted_anonymizer(X, y)
    labels = {"p": y}
    anon.transform(X[:1000], {"p": y[:1000]})  # warm-up
    times = []
    for _ in range(3 if n <= 100_000 else 1):
        t0 = time.perf_counter()
        anon.transform(X, labels)
        times.append(time.perf_counter() - t0)
    seconds = min(times)
    tracemalloc.start()
    anon.transform(X, labels)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = min(loop_rows, n)
    loop_s = loop_transform(X, y, anon.mask_, rows, np.random.default_rng(1)) * n / rows
    return {"n": n, "d": D, "g": G, "seconds": seconds,
            "peak_mem_mb": peak / 2**20, "input_mb": X.nbytes / 2**20,
            "effective_gb_s": n * G * D * 4 / seconds / 1e9,
            "loop_seconds_extrapolated": loop_s, "speedup_vs_loop": loop_s / seconds}


def frontier_methods() -> dict[str, object]:
    """The new methods, with the selective mean's set size where they have one."""
    return {
        "vp-mix": VarianceMixAnonymizer("p", g=G, random_state=0),
        "leace": LeaceAnonymizer("s"),
        "vp-mix+leace": ComposedAnonymizer(VarianceMixAnonymizer("p", g=G, random_state=0),
                                           LeaceAnonymizer("s")),
        "synthetic": SyntheticAnonymizer("p", random_state=0),
        # declared (public) bounds: the synthetic features are standard normal
        "dp-synthetic": DPSyntheticAnonymizer("p", epsilon=1.0, bounds=(-5.0, 5.0),
                                              random_state=0),
        "vp-mix bounded": VarianceMixAnonymizer("p", g=G, design="bounded", random_state=0),
        "dp-mix": DPMixAnonymizer("p", g=G, epsilon=10.0, random_state=0),
        "synthetic lw": SyntheticAnonymizer("p", covariance="ledoit-wolf", random_state=0),
        "synthetic factor": SyntheticAnonymizer("p", covariance="factor", random_state=0),
        "synthetic pooled": SyntheticAnonymizer("p", covariance="pooled", random_state=0),
        "sdv-copula": SDVCopulaAnonymizer("p", random_state=0),
        # issue 28: the model in a small basis (declared bounds; the basis between the noisy
        # class means), DP at epsilon 4 and its non-DP counterpart
        "dp-basis": DPBasisAnonymizer("p", epsilon=4.0, bounds=(-5.0, 5.0), rank=16,
                                      random_state=0),
        "dp-basis class": DPBasisAnonymizer("p", epsilon=4.0, bounds=(-5.0, 5.0), rank=16,
                                            covariance="class", pool=0.5, random_state=0),
        # k and the split by the stated rule (rank_rule, share_rule)
        "dp-basis rule": DPBasisAnonymizer("p", epsilon=4.0, bounds=(-5.0, 5.0),
                                           random_state=0),
        "basis-synthetic": BasisSyntheticAnonymizer("p", rank=32, covariance="class",
                                                    pool=0.0, residual="class-diag",
                                                    residual_mean=True, random_state=0),
    }


def bench_frontier(n: int, only: list[str] | None = None, sdv_max: int = 10_000
                   ) -> list[dict[str, float | str]]:
    """Selective-mean transform and each frontier method's fit + release on the same data
    (and ``fit`` alone), with the time as a multiple of the selective mean's and vp-mix's."""
    X, y = make_data(n)
    s = np.random.default_rng(1).integers(0, 10, n)  # a 10-class sensitive label
    labels = {"p": y, "s": s}
    anon = fitted_anonymizer(X, y)
    runs = 3 if n <= 100_000 else 1
    rows: list[dict[str, float | str]] = []

    def best(fn) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    anon.transform(X[:1000], {"p": y[:1000]})  # warm-up
    ref = best(lambda: anon.transform(X, labels))
    rows.append({"n": n, "method": "selective-mean", "seconds": ref, "ratio": 1.0,
                 "load": os.getloadavg()[0]})
    vp = None
    for name, est in frontier_methods().items():
        if (only and name not in only and name != "vp-mix") or \
                (name == "sdv-copula" and n > sdv_max):
            continue
        fit = best(lambda est=est: est.fit(X, labels))
        sec = best(lambda est=est: est.fit_transform(X, labels))
        vp = sec if name == "vp-mix" else vp
        rows.append({"n": n, "method": name, "seconds": sec, "fit_seconds": fit,
                     "ratio": sec / ref, "ratio_vp_mix": sec / vp if vp else float("nan"),
                     "load": os.getloadavg()[0]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--loop-rows", type=int, default=2000)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bench_transform.json")
    ap.add_argument("--only", nargs="+", default=None,
                    help="frontier methods to time (default: all), e.g. vp-mix dp-synthetic")
    ap.add_argument("--frontier-only", action="store_true",
                    help="skip the loop and bandwidth comparisons of the selective mean")
    ap.add_argument("--methods", nargs="+", default=None,
                    help="frontier methods to time (vp-mix always runs: the reference)")
    ap.add_argument("--sdv-max", type=int, default=10_000,
                    help="largest n at which sdv-copula is timed")
    args = ap.parse_args()
    frontier = [r for n in args.sizes for r in bench_frontier(n, args.methods or args.only,
                                                              args.sdv_max)]
    print(f"{'n':>9} {'method':<16} {'seconds':>8} {'fit s':>8} {'× sel.mean':>10} "
          f"{'× vp-mix':>8} {'load avg':>8}")
    for r in frontier:
        print(f"{r['n']:>9} {r['method']:<16} {r['seconds']:>8.3f} "
              f"{r.get('fit_seconds', float('nan')):>8.3f} {r['ratio']:>10.2f} "
              f"{r.get('ratio_vp_mix', float('nan')):>8.2f} {r['load']:>8.2f}")
    if args.frontier_only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps({"frontier": frontier}, indent=2))
        print(f"wrote {args.out}")
        return
    floor = bandwidth_floor()
    rows = [bench(n, args.loop_rows) for n in args.sizes]
    print(f"memory-bandwidth floor (sequential float32 sum over 1 GiB): {floor:.1f} GB/s")
    print(f"{'n':>9} {'seconds':>8} {'peak MB':>8} {'input MB':>8} {'GB/s':>6} "
          f"{'loop s (extrap.)':>16} {'speed-up':>8} {'floor s':>8}")
    for r in rows:
        r["bandwidth_floor_seconds"] = r["n"] * G * D * 4 / (floor * 1e9)
        print(f"{r['n']:>9} {r['seconds']:>8.3f} {r['peak_mem_mb']:>8.0f} {r['input_mb']:>8.0f} "
              f"{r['effective_gb_s']:>6.1f} {r['loop_seconds_extrapolated']:>16.1f} "
              f"{r['speedup_vs_loop']:>7.0f}x {r['bandwidth_floor_seconds']:>8.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                          "numpy": np.__version__},
              "bandwidth_floor_gb_s": floor, "results": rows, "frontier": frontier}
    write_text_atomic(args.out, json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
