"""Feature kinds on the real datasets: extraction throughput, clear-data accuracy, first release.

For each dataset × feature kind: records/s of the extraction; cross-validated clear-data
accuracy of the identity and of the interest attribute with a linear SVM and a random forest;
and ``bioanon.evaluation.evaluate`` with the selective-mean anonymizer (naive and parrot
attackers, forest + linear SVM, 30 % held out). Prints one Markdown table and writes
``benchmarks/results/feature_kinds[_ONLY].json``.

Run:  BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/feature_kinds.py
      (``--only yale`` / ``fsdd`` / ``sp_sw_har`` to run one dataset; ``--fsdd-takes N``)
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, cross_val_score

from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.attack import make_recognizer
from bioanon.datasets import load_fsdd, load_sp_sw_har, load_yale_faces

MODELS = ("linear_svm", "forest")
RESULTS = Path(__file__).resolve().parent / "results"


def clear_accuracy(table, column: str, groups: np.ndarray | None) -> dict[str, float]:
    y = table.labels[column].astype(str).to_numpy()
    if groups is None:
        cv, kw = StratifiedKFold(5, shuffle=True, random_state=0), {}
    else:
        cv, kw = StratifiedGroupKFold(5, shuffle=True, random_state=0), {"groups": groups}
    return {m: float(cross_val_score(make_recognizer(m, 0), table.X, y, cv=cv, **kw).mean())
            for m in MODELS}


def first_release(table, interest: str, sensitive: str, anon: dict) -> dict:
    anonymizer = SelectiveMeanAnonymizer(interest=interest, random_state=0, **anon)
    rep = evaluate(table, interest, sensitive, anonymizer=anonymizer, models=list(MODELS),
                   random_state=0)
    attacks = rep["privacy"]["attacks"]
    best = {mode: max(a["accuracy"] for a in attacks if a["mode"] == mode)
            for mode in ("naive", "parrot")}
    return {"interest_clear": rep["utility"]["interest"]["clear"],
            "interest_anon": rep["utility"]["interest"]["anonymized"],
            "chance": rep["privacy"]["chance"], "naive": best["naive"],
            "parrot": best["parrot"], "worst_case": rep["privacy"]["worst_case"]["accuracy"],
            "params": anon}


def run(name: str, loader, interest: str, sensitive: str, anon: dict,
        group_col: str | None = None) -> dict:
    t0 = time.perf_counter()
    table = loader()
    secs = time.perf_counter() - t0
    groups = None if group_col is None else table.labels[group_col].to_numpy()
    row = {"dataset": name, "n": table.n_records, "d": table.n_features,
           "records_per_s": table.n_records / secs, "extract_s": secs,
           "identity": clear_accuracy(table, sensitive, groups),
           "interest": clear_accuracy(table, interest, groups),
           "release": first_release(table, interest, sensitive, anon)}
    print(f"  {name}: {table.n_records}×{table.n_features} in {secs:.1f} s", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["yale", "fsdd", "sp_sw_har"])
    ap.add_argument("--fsdd-takes", type=int, default=20,
                    help="takes per speaker × digit (50 = all 3,000 recordings)")
    args = ap.parse_args()
    jobs = []
    if args.only in (None, "yale"):
        yale_anon = {"g": 4, "t": 0.5, "w": 100, "r_p": 0.01, "allow_replacement": True}
        for kind in ("pixels", "eigen", "landmarks", "embedding"):
            jobs.append((f"yale expression / {kind}",
                         lambda k=kind: load_yale_faces(features=k, subset="expression",
                                                        random_state=0),
                         "expression", "subject", yale_anon, None))
    if args.only in (None, "fsdd"):
        fsdd_anon = {"g": 32, "t": 0.8, "w": 10, "r_p": 0.01}
        for kind in ("mfcc", "speaker"):
            jobs.append((f"fsdd takes<{args.fsdd_takes} / {kind}",
                         lambda k=kind: load_fsdd(limit=args.fsdd_takes, features=k),
                         "digit", "speaker", fsdd_anon, None))
    if args.only in (None, "sp_sw_har"):
        har_anon = {"g": 16, "t": 0.9, "w": 100, "r_p": 0.1, "allow_replacement": True}
        for device in ("smartphone", "smartwatch"):
            for kind in ("raw", "stats"):
                jobs.append((f"sp_sw_har {device} / {kind}",
                             lambda d=device, k=kind: load_sp_sw_har(device=d, features=k),
                             "activity", "subject", har_anon, "execution"))
    rows = [run(*job) for job in jobs]
    RESULTS.mkdir(exist_ok=True)
    suffix = f"_{args.only}" if args.only else ""
    (RESULTS / f"feature_kinds{suffix}.json").write_text(json.dumps(rows, indent=2))
    print("\n| dataset / features | n × d | rec/s | identity SVM / RF | interest SVM / RF "
          "| release: interest clear→anon | naive | parrot | chance |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rel = r["release"]
        print(f"| {r['dataset']} | {r['n']}×{r['d']} | {r['records_per_s']:.0f} | "
              f"{r['identity']['linear_svm']:.3f} / {r['identity']['forest']:.3f} | "
              f"{r['interest']['linear_svm']:.3f} / {r['interest']['forest']:.3f} | "
              f"{rel['interest_clear']:.3f} → {rel['interest_anon']:.3f} | "
              f"{rel['naive']:.3f} | {rel['parrot']:.3f} | {rel['chance']:.3f} |")


if __name__ == "__main__":
    main()
