"""When the audit finds that a release is INPUT's records under a general linear map (wave 6,
twenty-third session): :func:`bioanon.auditing.linear_map.linear_release` over table sizes.

For each width (32, 128 features) and INPUT size (1,000 to 8,000 records of
``make_biometric``, half the people; HOLDOUT the other half), releases under one random
invertible map ``A`` (Gaussian entries) plus a shift, each shuffled:

- **copy**: INPUT mapped;
- **noise 0.05** / **noise 0.1** / **noise 0.2**: INPUT plus Gaussian noise of that share of
  each feature's sd, mapped;
- **90 %**: a random 90 % of INPUT's records, mapped;
- **HOLDOUT**: the other people's records mapped (leak-free: must not be mapped back);
- **Gaussian**: a per-class Gaussian fitted on INPUT (full covariance), drawn and mapped
  (leak-free at this size: must not be mapped back).

Each cell says whether the map was found (``yes`` / ``no``) and its seconds, beside the load
average. Prints a table and writes JSON::

    PYTHONPATH=src python benchmarks/audit_linear.py [--out benchmarks/results/audit_linear.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.auditing.linear_map import linear_release
from bioanon.datasets import make_biometric
from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "audit_linear.json"
WIDTHS = (32, 128)
SIZES = (1000, 2000, 4000, 8000)
NAMES = ("copy", "noise 0.05", "noise 0.1", "noise 0.2", "90 %", "HOLDOUT", "Gaussian")


def releases(d: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                      dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(INPUT, its classes, HOLDOUT, the releases with their classes) for ``d`` features
    and ``n`` INPUT records."""
    t = make_biometric(n_identities=n // 5, records_per_identity=10, n_features=d,
                       random_state=0)
    X = t.X.astype(np.float64)
    y = t.labels["expression"].to_numpy(str)
    member = np.isin(t.labels["identity"].to_numpy(), np.unique(t.labels["identity"])[::2])
    M, yM, F, yF = X[member], y[member], X[~member], y[~member]
    rng = np.random.default_rng(0)
    A, shift, sd = rng.normal(size=(d, d)), rng.normal(size=d), M.std(axis=0)
    rel = {f"noise {s}": ((M + s * sd * rng.normal(size=M.shape)), yM) for s in (0.05, 0.1, 0.2)}
    part = rng.random(M.shape[0]) < 0.9
    gauss = np.vstack([rng.multivariate_normal(M[yM == c].mean(axis=0),
                                               np.cov(M[yM == c], rowvar=False),
                                               size=int((yM == c).sum()))
                       for c in np.unique(yM)])
    rel = {"copy": (M, yM), **rel, "90 %": (M[part], yM[part]), "HOLDOUT": (F, yF),
           "Gaussian": (gauss, np.sort(yM))}
    out = {}
    for name, (R, yR) in rel.items():
        perm = rng.permutation(R.shape[0])
        out[name] = (R[perm] @ A + shift, yR[perm])
    return M, yM, F, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    print(f"{'features':>8s} {'INPUT':>6s}  " + " ".join(f"{n:>12s}" for n in NAMES) + "  load")
    for d in WIDTHS:
        for n in SIZES:
            M, yM, F, rel = releases(d, n)
            row: dict[str, Any] = {"features": d, "input_records": int(M.shape[0])}
            for name, (R, yR) in rel.items():
                t0 = time.perf_counter()
                found = linear_release(R, yR, M, yM, F) is not None
                row[name] = {"found": found, "seconds": round(time.perf_counter() - t0, 2)}
            row["load"] = round(os.getloadavg()[0], 2)
            rows.append(row)
            cells = [f"{'yes' if row[k]['found'] else 'no'} ({row[k]['seconds']:.1f} s)"
                     for k in NAMES]
            print(f"{d:8d} {M.shape[0]:6d}  " + " ".join(f"{c:>12s}" for c in cells)
                  + f"  {row['load']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(rows, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
