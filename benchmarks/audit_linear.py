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
import sys
from pathlib import Path

import numpy as np

from bioanon.auditing.linear_map import linear_release

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_turned import grid, halves  # noqa: E402  (the same tables, split and grid)

OUT = Path(__file__).resolve().parent / "results" / "audit_linear.json"
NAMES = ("copy", "noise 0.05", "noise 0.1", "noise 0.2", "90 %", "HOLDOUT", "Gaussian")


def releases(d: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                      dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(INPUT, its classes, HOLDOUT, the releases with their classes) for ``d`` features
    and ``n`` INPUT records."""
    X, y, member = halves(d, n)
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

    def cases(d: int, n: int) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, ...]]]:
        M, yM, F, rel = releases(d, n)
        return M, {k: (R, yR, yM, F) for k, (R, yR) in rel.items()}

    grid(NAMES, 12, cases,
         lambda r, M: linear_release(r[0], r[1], M, r[2], r[3]) is not None, args.out)


if __name__ == "__main__":
    main()
