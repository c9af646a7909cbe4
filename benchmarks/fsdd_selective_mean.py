"""FSDD (real voice): the selective-mean anonymizer at r_p = 1% and 10%, several seeds.

Interest digit, sensitive speaker, t=0.8, w=10, g=64 (near the paper's AudioMNIST setting; a
30% test split holds about 90 records per digit). Prints accuracy per attacker next to chance
and writes JSON.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/fsdd_selective_mean.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets.fsdd import load_fsdd
from bioanon.io import write_text_atomic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rp", type=float, nargs="+", default=[0.01, 0.10])
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "fsdd_selective_mean.json")
    args = ap.parse_args()
    table = load_fsdd()
    rows = []
    for rp in args.rp:
        for seed in args.seeds:
            anon = SelectiveMeanAnonymizer("digit", g=64, t=0.8, w=10, r_p=rp,
                                           random_state=seed)
            r = evaluate(table, "digit", "speaker", anonymizer=anon, random_state=seed)
            row = {"r_p": rp, "seed": seed, "chance": r["privacy"]["chance"],
                   "digit_clear": r["utility"]["interest"]["clear"],
                   "digit_anonymized": r["utility"]["interest"]["anonymized"],
                   "worst_case": r["privacy"]["worst_case"]}
            for a in r["privacy"]["attacks"]:
                row[f"{a['mode']}/{a['model']}"] = a["accuracy"]
            for c in r["privacy"]["clear"]:
                row[f"clear/{c['model']}"] = c["accuracy"]
            rows.append(row)
    keys = [k for k in rows[0] if "/" in k]
    print(f"{'measure':<24}" + "".join(f"{'r_p=' + format(rp, '.0%'):>18}" for rp in args.rp))
    for k in ["digit_clear", "digit_anonymized", "chance", *keys]:
        cells = []
        for rp in args.rp:
            v = np.array([r[k] for r in rows if r["r_p"] == rp])
            cells.append(f"{v.mean():>11.3f} ± {v.std():.3f}")
        print(f"{k:<24}" + "".join(f"{c:>18}" for c in cells))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(rows, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
