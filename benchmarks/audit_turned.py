"""When the audit finds that a release is INPUT's records turned (this wave's nineteenth
session): :func:`bioanon.auditing.isometry.turned_release` over table sizes.

For each width (32, 128 features) and INPUT size (1,000 to 8,000 records of
``make_biometric``, half the people; HOLDOUT the other half), three releases:

- **rotated**: INPUT turned by a random rotation about its mean, plus noise of 0.1;
- **rotated half**: every other INPUT record, turned by the rotation (no noise);
- **HOLDOUT**: the other people's records (leak-free: must not be turned).

Each cell says whether the map was found (``yes`` / ``no``) and its seconds, beside the load
average. Prints a table and writes JSON::

    PYTHONPATH=src python benchmarks/audit_turned.py [--out benchmarks/results/audit_turned.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.auditing.isometry import turned_release
from bioanon.datasets import make_biometric
from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "audit_turned.json"
WIDTHS = (32, 128)
SIZES = (1000, 2000, 4000, 8000)


def halves(d: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``make_biometric``'s table for ``d`` features and ``n`` INPUT records: its features,
    its expression labels, and which records are INPUT's (every other person)."""
    t = make_biometric(n_identities=n // 5, records_per_identity=10, n_features=d,
                       random_state=0)
    ids = t.labels["identity"].to_numpy()
    return (t.X.astype(np.float64), t.labels["expression"].to_numpy(str),
            np.isin(ids, np.unique(ids)[::2]))


def releases(d: int, n: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(INPUT, HOLDOUT, the releases) for ``d`` features and ``n`` INPUT records."""
    X, _, member = halves(d, n)
    M, F = X[member], X[~member]
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    return M, F, {"rotated": (M - M.mean(axis=0)) @ Q + rng.normal(scale=0.1, size=M.shape),
                  "rotated half": M[::2] @ Q, "HOLDOUT": F}


def grid(names: Sequence[str], width: int, cases: Callable[[int, int], Any],
         found: Callable[[Any, Any], bool], out: Path) -> None:
    """For every width and INPUT size: ``cases(d, n)`` gives (INPUT, {name: release}), and
    ``found(release, INPUT)`` whether the audit finds its map, timed. Prints a row per size
    (each cell ``width`` wide, the load beside it) and writes the rows as JSON to ``out``."""
    rows: list[dict[str, Any]] = []
    print(f"{'features':>8s} {'INPUT':>6s}  " + " ".join(f"{k:>{width}s}" for k in names)
          + "  load")
    for d in WIDTHS:
        for n in SIZES:
            M, rel = cases(d, n)
            row: dict[str, Any] = {"features": d, "input_records": int(M.shape[0])}
            for name, R in rel.items():
                t0 = time.perf_counter()
                hit = found(R, M)
                row[name] = {"found": hit, "seconds": round(time.perf_counter() - t0, 2)}
            row["load"] = round(os.getloadavg()[0], 2)
            rows.append(row)
            cells = [f"{'yes' if row[k]['found'] else 'no'} ({row[k]['seconds']:.1f} s)"
                     for k in names]
            print(f"{d:8d} {M.shape[0]:6d}  " + " ".join(f"{c:>{width}s}" for c in cells)
                  + f"  {row['load']}")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(rows, indent=1) + "\n")
    print(f"wrote {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    def cases(d: int, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        M, F, rel = releases(d, n)
        return M, {k: (R, F) for k, R in rel.items()}

    grid(("rotated", "rotated half", "HOLDOUT"), 14, cases,
         lambda release, M: turned_release(release[0], M, release[1]) is not None, args.out)


if __name__ == "__main__":
    main()
