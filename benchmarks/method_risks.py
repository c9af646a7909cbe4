"""Every method's best setting against every risk: CAS / clear, each risk [95% CI], met or not.

For each dataset and each method, every setting of the method's ``search_space`` (or those
named with ``--settings``) is judged by :class:`bioanon.evaluation.Evaluation` on one split
(recognition, membership/tracing at record and identity level, inference on members); the
method's best setting is the one meeting every risk with the highest CAS, else the one with
the fewest failed risks (then the highest CAS). Prints a table (with the load average beside
the timings) and writes ``benchmarks/results/method_risks_<dataset>.json``.

    PYTHONPATH=src python benchmarks/method_risks.py --dataset synthetic300
    BIOANON_DATA=../shared/datasets PYTHONPATH=src python benchmarks/method_risks.py --dataset fsdd
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bioanon.anonymize.registry import build_method, methods
from bioanon.errors import BioanonError
from bioanon.evaluation import Evaluation

OUT = Path(__file__).resolve().parent / "results"

#: dataset → (loader, interest, sensitive, group)
DATASETS = {
    "synthetic300": ("synthetic", "expression", "identity", None),
    "fsdd": ("fsdd", "digit", "speaker", None),
    "sp_sw_har": ("sp_sw_har", "activity", "subject", "execution"),
    "yale": ("yale", "expression", "subject", None),
}


def load(name: str) -> Any:
    if name == "synthetic300":
        from bioanon.datasets import make_biometric

        return make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                              random_state=0)
    if name == "fsdd":
        from bioanon.datasets.fsdd import load_fsdd

        return load_fsdd()
    if name == "sp_sw_har":
        from bioanon.datasets.sp_sw_har import load_sp_sw_har

        return load_sp_sw_har()
    from bioanon.datasets.yale_faces import load_yale_faces

    return load_yale_faces()


def risk_cells(ev: Evaluation) -> dict[str, Any]:
    return {r.name: {"statistic": r.statistic, "value": r.value, "ci": list(r.ci),
                     "attacker": r.attacker, "status": r.status,
                     "tpr_at_fpr": r.extras.get("tpr_at_fpr")} for r in ev.risks()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="synthetic300", choices=sorted(DATASETS))
    ap.add_argument("--methods", default="vp-mix,synthetic,selective-mean,noise")
    ap.add_argument("--settings", default=None,
                    help="only these settings, e.g. 'vp-mix:g=8;synthetic:covariance=diag'")
    ap.add_argument("--models", default="logreg,knn")
    ap.add_argument("--attackers", default="naive,parrot,reverse,linkage")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    _, interest, sensitive, group = DATASETS[args.dataset]
    table = load(args.dataset)
    known = methods()
    plan: list[tuple[str, dict[str, Any]]] = []
    if args.settings:
        for item in args.settings.split(";"):
            name, _, kv = item.partition(":")
            params: dict[str, Any] = {}
            for pair in filter(None, kv.split(",")):
                k, _, v = pair.partition("=")
                params[k] = int(v) if v.isdigit() else (float(v) if v.replace(".", "", 1)
                                                         .isdigit() else v)
            plan.append((name.strip(), params))
    else:
        for name in args.methods.split(","):
            plan += [(name, dict(p)) for p in known[name].search_space]
    rows = []
    print(f"{args.dataset}: {table.n_records} records × {table.n_features} features; "
          f"interest '{interest}', sensitive '{sensitive}', group {group}; models "
          f"{args.models}; attackers {args.attackers}; seed {args.seed}", flush=True)
    for name, params in plan:
        label = f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})"
        try:
            anon = build_method(name, params, interest=interest, sensitive=sensitive,
                                additional=[], random_state=None)
            start = time.perf_counter()
            ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=args.models,
                            attackers=args.attackers, random_state=args.seed,
                            n_jobs=args.jobs, verification=False, selection=None,
                            group=group).evaluate()
        except BioanonError as exc:
            print(f"  {label}: skipped ({exc})", flush=True)
            continue
        sec = time.perf_counter() - start
        u = ev.utility()[interest]
        risks = risk_cells(ev)
        failed = [k for k, r in risks.items() if r["status"] not in ("met", "accepted")]
        row = {"method": name, "setting": label, "cas": u.cas.value, "cas_ci": list(u.cas.ci),
               "clear": u.clear.value, "risks": risks, "failed": failed, "met": not failed,
               "seconds": round(sec, 1), "load_average": round(os.getloadavg()[0], 2)}
        rows.append(row)
        cells = "  ".join(f"{k} {r['value']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] "
                          f"{r['status']}" for k, r in risks.items())
        print(f"  {label}: CAS {u.cas.value:.3f} / clear {u.clear.value:.3f}  {cells}  "
              f"{sec:.1f} s (load {row['load_average']})", flush=True)
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = (r["met"], -len(r["failed"]), r["cas"])
        b = best.get(r["method"])
        if b is None or key > (b["met"], -len(b["failed"]), b["cas"]):
            best[r["method"]] = r
    print("\nbest setting per method (every risk met first, then fewest failed, then CAS):")
    for r in best.values():
        print(f"  {r['setting']}: CAS {r['cas']:.3f} / clear {r['clear']:.3f}; "
              + "; ".join(f"{k} {c['value']:.3f} [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}] "
                          f"{c['status']} ({c['attacker']})" for k, c in r["risks"].items())
              + f" -> {'MET' if r['met'] else 'not met: ' + ', '.join(r['failed'])}")
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"method_risks_{args.dataset}.json"
    out.write_text(json.dumps({"dataset": args.dataset, "models": args.models,
                               "attackers": args.attackers, "seed": args.seed,
                               "rows": rows, "best": list(best.values())}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
