"""Re-judge a certified setting on fresh games, as an independent judge would.

A certificate says "record-membership upper bound ≤ target at 95%". This benchmark takes the
setting a release certified (its manifest's ``method`` and ``params``, or ``--method`` and
``--param``) and judges it again, away from the search, on fresh games: for each seed, half
the records (by a split stratified by identity and interest) are given to the method as its
release's members, the other half are the attacker's clear reference records and the
non-member candidates. bioanon's record-membership attackers — every registered one, the
model-aware families that refit the method's declared model among them — score every
candidate; the figure is the cross-fitted advantage (TPR − FPR, 5 folds, attacker chosen by
AUC on the other four) with its 95% interval, against the target of the level. One game per
seed (not the certificate's two pooled games), so the figure is the independent game the
issue asks for.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/rejudge_certified.py \
        --dataset fsdd --manifest fsdd_rel.parquet.manifest.json [--seeds 0,1,2,3,4]
    python benchmarks/rejudge_certified.py --dataset synthetic300 \
        --method dp-cells --param cells=0 --param mu=4 --param keep=4

Prints a line per seed and a summary (how many seeds keep the upper bound within the
target), with the wall time and the load average; ``--json FILE`` writes the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recertify import CASES, load  # noqa: E402

from bioanon.anonymize.registry import build_method  # noqa: E402
from bioanon.evaluation.risks.base import RecordGame, RiskContext  # noqa: E402
from bioanon.evaluation.risks.membership import MembershipRisk  # noqa: E402
from bioanon.evaluation.split import split_table  # noqa: E402
from bioanon.levels import resolve_level  # noqa: E402
from bioanon.table import FeatureTable  # noqa: E402


def setting_of(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.manifest:
        doc = json.loads(Path(args.manifest).read_text(encoding="utf-8"))
        return str(doc["method"]), dict(doc.get("params") or {})
    if not args.method:
        raise SystemExit("error: give --manifest PATH or --method NAME [--param K=V ...]")
    params = dict(p.split("=", 1) for p in args.param or [])
    return args.method, params


def one_game(table: FeatureTable, interest: str, sensitive: str, method: str,
             params: dict[str, Any], seed: int, level: str) -> dict[str, Any]:
    tr, te = split_table(table, interest, sensitive, 0.5, seed)
    train, test = table.subset(tr), table.subset(te)
    est = build_method(method, {k: v for k, v in params.items() if v is not None},
                       interest=interest, sensitive=sensitive, random_state=seed + 1000)
    rel = est.fit_transform(test, test.labels)
    X = np.asarray(rel.X if isinstance(rel, FeatureTable) else rel, dtype=np.float32)
    ctx = RiskContext(train, test, X, est, interest, sensitive, [interest], None, seed,
                      max_candidates=10_000)
    n_tr, n_te = train.n_records, test.n_records
    ctx._games = [RecordGame(ctx, np.arange(n_tr), n_tr + np.arange(n_te))]  # one game
    r = MembershipRisk(ctx, level).evaluate().results()[0]
    target = resolve_level(level).target("record")
    return {"seed": seed, "value": r.value, "ci": list(r.ci), "attacker": r.attacker,
            "target": target, "within": bool(r.ci[1] <= target),
            "n_members": r.extras.get("n_members"), "n_nonmembers": r.extras.get("n_nonmembers")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=sorted(CASES), required=True)
    ap.add_argument("--manifest", default=None)
    ap.add_argument("--method", default=None)
    ap.add_argument("--param", action="append")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--level", default="standard")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    case = CASES[args.dataset]
    method, params = setting_of(args)
    table = load(case.name)
    rows, load0, t0 = [], os.getloadavg()[0], time.perf_counter()
    for seed in (int(s) for s in args.seeds.split(",")):
        r = one_game(table, case.interest, case.sensitive, method, params, seed, args.level)
        rows.append(r)
        print(f"seed {seed}: record membership {r['value']:.3f} [{r['ci'][0]:.3f}, "
              f"{r['ci'][1]:.3f}] vs target {r['target']:g} "
              f"({'within' if r['within'] else 'ABOVE'}); attacker {r['attacker']}",
              flush=True)
    wall = time.perf_counter() - t0
    within = sum(r["within"] for r in rows)
    print(f"{args.dataset} {method} {params}: upper bound within target at {within} of "
          f"{len(rows)} seeds; {wall:.0f} s wall, load average {load0:.2f} -> "
          f"{os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"dataset": args.dataset, "method": method,
                                               "params": params, "rows": rows,
                                               "wall_s": wall}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
