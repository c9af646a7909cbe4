"""Membership against CAS for the mixing and synthetic variants, and the peer tool (SDV).

On synthetic-300 (``make_biometric(n_identities=300, records_per_identity=12, n_features=128,
random_state=0)``, interest expression, sensitive identity) and FSDD (digit / speaker) it
judges each variant with :class:`bioanon.evaluation.Evaluation` (attack panel naive, parrot,
reverse, linkage × logreg, kNN; ``n_jobs=1``) and reads CAS / clear, the worst attack's
advantage over max(chance, control) with its 95% interval, and membership disclosure (the
judge's attackers ``nearest_released``, ``calibrated``, ``euclidean``: record level, and
identity level where at least 10 identities exist), each AUC with its 95% interval.
Every method is built from the registry (as ``bioanon release`` builds it) and timed in the
same run (``seconds``: the whole evaluation; ``release_s``: one fit + release of the full
table).

The goal (issue 20): advantage ≤ 0.05, membership AUC ≤ 0.6 at record and identity level,
CAS ≥ 0.95 × clear.

Findings of the run of 24 Nov 2026 (seed 1; see the report of branch i20mix for the table):
bounded donor use alone does not lower membership (vp-mix g=64: 0.719 → 0.730 on
synthetic-300); the DP mix does (ε=30: record 0.526, identity 0.541 at CAS 0.957 × clear on
synthetic-300) but costs CAS on FSDD (≤ 0.883 × clear at any ε tried); few factors
(``covariance="factor"``, rank 2–4) or Ledoit-Wolf shrinkage memorize less than the full
covariance at little CAS cost; pooling across classes does not help; SDV's copula traces
like the full-covariance Gaussian (0.698 / 0.817 on synthetic-300, 0.864 on FSDD).

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/mix_membership.py [--datasets synth300 fsdd]
        [--only LABEL ...] [--seed 1] [--out DIR]

Prints a table and writes ``mix_membership.json`` (default benchmarks/results/mix_membership/).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bioanon.anonymize.registry import build_method
from bioanon.attack import ModelCache
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.table import FeatureTable

ATTACKERS = ["naive", "parrot", "reverse", "linkage"]
MODELS = ["logreg", "knn"]

#: label -> (method, parameters); every variant of issue 20 and the references
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("vp-mix g=8", "vp-mix", {"g": 8}),
    ("vp-mix g=64", "vp-mix", {"g": 64}),
    ("vp-mix g=8 bounded", "vp-mix", {"g": 8, "design": "bounded"}),
    ("vp-mix g=64 bounded", "vp-mix", {"g": 64, "design": "bounded"}),
    ("synthetic full", "synthetic", {}),
    ("synthetic diag", "synthetic", {"covariance": "diag"}),
    ("synthetic ledoit-wolf", "synthetic", {"covariance": "ledoit-wolf"}),
    ("synthetic factor r=8", "synthetic", {"covariance": "factor", "rank": 8}),
    ("synthetic pooled", "synthetic", {"covariance": "pooled"}),
    ("dp-mix g=64 eps=10", "dp-mix", {"g": 64, "epsilon": 10.0}),
    ("dp-mix g=64 eps=100", "dp-mix", {"g": 64, "epsilon": 100.0}),
    ("dp-mix g=64 eps=1000", "dp-mix", {"g": 64, "epsilon": 1000.0}),
    ("sdv-copula", "sdv-copula", {}),
    # exploration (FSDD: few records per class, many correlated features)
    ("synthetic factor r=2", "synthetic", {"covariance": "factor", "rank": 2}),
    ("synthetic factor r=4", "synthetic", {"covariance": "factor", "rank": 4}),
    ("synthetic factor r=8 s=.5", "synthetic", {"covariance": "factor", "rank": 8,
                                                "shrinkage": 0.5}),
    ("synthetic full s=.5", "synthetic", {"shrinkage": 0.5}),
    ("synthetic full s=.8", "synthetic", {"shrinkage": 0.8}),
    ("vp-mix g=64 shrink=.5", "vp-mix", {"g": 64, "shrinkage": 0.5}),
    ("dp-mix g=16 eps=100", "dp-mix", {"g": 16, "epsilon": 100.0}),
    ("dp-mix g=64 eps=30", "dp-mix", {"g": 64, "epsilon": 30.0}),
]


def _synth300() -> FeatureTable:
    from bioanon.datasets import make_biometric

    return make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                          random_state=0)


def _fsdd() -> FeatureTable:
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd()


DATASETS: dict[str, tuple[str, str, Callable[[], FeatureTable]]] = {
    "synth300": ("expression", "identity", _synth300),
    "fsdd": ("digit", "speaker", _fsdd),
}


def run_one(table: FeatureTable, name: str, label: str, method: str, point: dict[str, Any],
            seed: int, cache: ModelCache) -> dict[str, Any]:
    interest, sensitive, _ = DATASETS[name]
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in point.items()}
    anon = build_method(method, params, interest=interest, sensitive=sensitive)
    t0 = time.perf_counter()
    build_method(method, params, interest=interest, sensitive=sensitive).fit_transform(
        table.X, table.labels)
    release_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=MODELS,
                    attackers=ATTACKERS, random_state=seed, n_jobs=1, cache=cache,
                    verification=False).evaluate()
    u = ev.utility()[interest]
    worst, adv = ev.worst_case(), ev.advantage()
    mem = {m.level: {"auc": m.auc, "ci": list(m.ci), "attacker": m.attacker}
           for m in ev.membership()}
    row = {
        "dataset": name, "label": label, "method": method, "params": dict(point),
        "clear": u.clear.value, "cas": u.cas.value, "cas_ci": list(u.cas.ci),
        "cas_ratio": u.cas.value / u.clear.value if u.clear.value else float("nan"),
        "worst": worst.rate.value, "worst_attacker": f"{worst.mode} / {worst.recognizer}",
        "baseline": ev.baseline()[0], "advantage": adv.value, "advantage_ci": list(adv.ci),
        "membership": mem, "seed": seed, "release_s": release_s,
        "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0],
    }
    return row


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (f"{'dataset':<9} {'variant':<24} {'clear':>5} {'CAS':>5} {'/clr':>5} "
            f"{'adv [95% CI]':<22} {'worst attacker':<18} {'MIA rec [95% CI]':<20} "
            f"{'MIA id [95% CI]':<20} {'rel s':>6} {'eval s':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        def mia(level: str, r: dict[str, Any] = r) -> str:
            m = r["membership"].get(level)
            return "n/a" if m is None else f"{m['auc']:.3f} [{m['ci'][0]:.3f},{m['ci'][1]:.3f}]"
        adv = f"{r['advantage']:+.3f} [{r['advantage_ci'][0]:+.3f},{r['advantage_ci'][1]:+.3f}]"
        print(f"{r['dataset']:<9} {r['label']:<24.24} {r['clear']:>5.3f} {r['cas']:>5.3f} "
              f"{r['cas_ratio']:>5.3f} {adv:<22} {r['worst_attacker']:<18.18} "
              f"{mia('record'):<20} {mia('identity'):<20} {r['release_s']:>6.2f} "
              f"{r['seconds']:>6.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--only", nargs="+", default=None,
                    help="run only variants whose label contains one of these strings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "mix_membership")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "mix_membership.json"
    print(f"load average at start {os.getloadavg()}", flush=True)
    rows: list[dict[str, Any]] = []
    for name in args.datasets:
        table = DATASETS[name][2]()
        cache = ModelCache()
        for label, method, point in VARIANTS:
            if args.only and not any(o in label for o in args.only):
                continue
            try:
                row = run_one(table, name, label, method, point, args.seed, cache)
            except Exception as exc:  # noqa: BLE001 - a failed variant is reported, not fatal
                print(f"{name} {label}: skipped ({type(exc).__name__}: {exc})", flush=True)
                continue
            rows.append(row)
            print_table([row])
            write_text_atomic(out, json.dumps(rows, indent=2))
    print()
    print(f"load average {os.getloadavg()}; panel: {', '.join(ATTACKERS)} × "
          f"{', '.join(MODELS)}; seed {args.seed}")
    print_table(rows)
    write_text_atomic(out, json.dumps(rows, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
