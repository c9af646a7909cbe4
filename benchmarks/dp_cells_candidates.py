"""Two of issue 43's candidates for dp-cells, measured before choosing: a subsample, a public prior.

Issue 43 lists, among the candidates for more utility per unit of privacy at 1,000-3,000
records, privacy amplification by subsampling and a prior from public people's records as the
shrinkage target. The subsample is a variant of dp-cells defined here (a class of its own, so
that scikit-learn's ``clone`` keeps it); the prior became dp-cells' ``prior="public"``:

- ``--candidate subsample`` (rows ``q``): the noisy model is fitted on a Poisson subsample of
  the records, each kept with probability ``q`` (drawn from the noise stream, never written),
  and one record is still released per input record. A member left out of the subsample
  leaves nothing in the release, so the judge's record membership over all members should be
  about ``q`` times what it reads on the members that were kept. That is room for a larger
  ``mu`` (less noise), at the price of a model fitted on ``q·n`` records.
- ``--candidate prior`` (rows ``prior`` 0 / 1; one Gaussian per class, ``cells=0``; since
  measured, dp-cells' ``prior="public"``, which the rows now run): each noisy
  class mean is shrunk, coordinate by coordinate, towards the public people's class mean in
  the same whitened basis, ``m = w·noisy + (1 − w)·prior`` with ``w = τ² / (τ² + (σ_sums /
  n_c)²)``. The noise variance is public (σ from μ; the class sizes are released labels). τ²
  is how far one group of people's class means lies from another's, read off the public
  speakers' own class means. The shrinkage is post-processing of the noisy statistics and
  public records, so it spends no privacy.

Every row is judged as ``basis_frontier.py`` judges its rows. It runs on the same released
half of FSDD's README table (DCT basis, 1,500 records) or owner half (the public people's
principal directions, 750 records), the people split 50/50 by ``--seed``. The judge is the
library's stage-1 evaluation: the consumer's pick against the clear data's pick, and record
membership and record inference over every attacker, the model-aware likelihood ratios that
refit dp-cells' declared model among them. The attackers know the variant and its parameters.
They do not know which records a subsample kept. Only the empirical figures are compared: an
adopted subsample would need its amplified guarantee worked out for the privacy statement.

Usage (from the repository root; a quarter to half a CPU minute per row)::

    BIOANON_DATA=../shared/datasets python benchmarks/dp_cells_candidates.py --candidate
        subsample|prior [--tables fsdd-readme fsdd-owner] [--seed 0] [--grid V,CELLS,MU ...]
        [--rank K] [--covariance diag|pooled|class] [--out FILE] [--from-json FILE ...]

``--rank`` and ``--covariance`` change the model the rows fit (the owner table's public
directions; each cell's covariance), to read what the model keeps without noise (``mu``
1000) beside what it keeps at the search's noise.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from basis_frontier import (
    INTEREST,
    PUBLIC_RANK,
    SENSITIVE,
    earlier_rows,
    frontier_args,
    owner_table,
    readme_table,
    split_people,
)

from bioanon.anonymize.dp_cells import DPCellsAnonymizer
from bioanon.attack import ModelCache
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.table import FeatureTable

OUT = Path(__file__).resolve().parent / "results" / "frontier" / "dp_cells_candidates.json"
#: (variant value, cells, mu) per candidate. subsample: the search's settings and less noise
#: on every record (q = 1), then half and a quarter of the records with less noise. prior:
#: one Gaussian per class without (0) and with (1) the public prior
GRIDS: dict[str, tuple[tuple[float, int, float], ...]] = {
    "subsample": (
        (1.0, 0, 2.0), (1.0, 0, 4.0), (1.0, 0, 8.0), (1.0, 3, 6.0), (1.0, 3, 9.0),
        (1.0, 3, 12.0), (0.5, 0, 4.0), (0.5, 0, 8.0), (0.5, 0, 12.0), (0.5, 3, 6.0),
        (0.5, 3, 12.0), (0.5, 3, 18.0), (0.25, 0, 8.0), (0.25, 0, 16.0), (0.25, 3, 12.0),
        (0.25, 3, 24.0), (0.25, 3, 36.0)),
    "prior": ((0.0, 0, 1.0), (1.0, 0, 1.0), (0.0, 0, 2.0), (1.0, 0, 2.0), (0.0, 0, 4.0),
              (1.0, 0, 4.0)),
}
#: the name of each candidate's variant value in the rows
VALUE = {"subsample": "q", "prior": "prior"}
#: the basis of each table: its best in docs/dp-cells.md (README: the temporal DCT; the
#: owner's table: the public people's principal directions)
BASIS: dict[str, dict[str, Any]] = {"fsdd-readme": {"keep": 4},
                                   "fsdd-owner": {"basis": "public", "rank": PUBLIC_RANK}}


def subsampled(q: float) -> type[DPCellsAnonymizer]:
    """dp-cells whose model is fitted on a Poisson subsample of rate ``q``."""

    def _model(self: Any, B: np.ndarray, U: np.ndarray, P: np.ndarray, strat: np.ndarray,
               S: int, rng: np.random.Generator) -> dict[str, Any]:
        keep = rng.random(B.shape[0]) < q
        return DPCellsAnonymizer._model(self, B[keep], U[keep], P, strat[keep], S, rng)

    return type(f"DPCellsSample{int(round(q * 100))}", (DPCellsAnonymizer,), {"_model": _model})


def variant(candidate: str, value: float) -> type[DPCellsAnonymizer]:
    """The anonymizer class of one row (dp-cells itself but for a subsample, ``q < 1``)."""
    if candidate == "subsample" and value < 1.0:
        return subsampled(value)
    return DPCellsAnonymizer


def prior_params(public: FeatureTable) -> dict[str, Any]:
    """dp-cells' public prior (``prior="public"``, the library's since it was measured here):
    the public records' interest labels and people."""
    return {"prior": "public", "public_data": public.X,
            "public_labels": public.labels[INTEREST].to_numpy(),
            "public_groups": public.labels[SENSITIVE].to_numpy()}


def judge(released: FeatureTable, public: FeatureTable, name: str, candidate: str,
          value: float, cells: int, mu: float, seed: int, cache: ModelCache) -> dict[str, Any]:
    """One row judged on ``released`` (stage 1: utility by the consumer's pick, membership
    and inference)."""
    params: dict[str, Any] = {"cells": cells, "mu": mu, **BASIS[name]}
    label = {k: v for k, v in BASIS[name].items() if k in ("rank", "covariance")}
    if name == "fsdd-owner":
        params["public_data"] = public.X
    if candidate == "prior" and value:
        params.update(prior_params(public))
    est = variant(candidate, value)(INTEREST, **params)
    t0 = time.perf_counter()
    ev = Evaluation(released, INTEREST, SENSITIVE, anonymizer=est, random_state=seed,
                    n_jobs=1, cache=cache).evaluate(recognition=False)
    u = ev.utility()[INTEREST]
    risks = {r.name: r for r in ev.risks()}
    mem, inf = risks["record-membership"], risks.get("record-inference")
    return {"table": name, "candidate": candidate, "value": value, "cells": cells, "mu": mu,
            "seed": seed, "basis": params.get("basis", "dct"), **label,
            "n_released": released.n_records,
            "cas": u.cas.value, "clear": u.clear.value, "ratio": u.cas.value / u.clear.value,
            "membership": mem.value, "membership_ci": list(mem.ci),
            "membership_attacker": mem.attacker,
            "inference": None if inf is None else inf.value,
            "inference_ci": None if inf is None else list(inf.ci),
            "inference_attacker": None if inf is None else inf.attacker,
            "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0]}


def line(r: dict[str, Any]) -> str:
    lo, hi = r["membership_ci"]
    inf = ("" if r["inference"] is None else
           f" | record inference {r['inference']:+.3f} (upper {r['inference_ci'][1]:+.3f})")
    shape = "".join(f" {k}={r[k]}" for k in ("rank", "covariance") if k in r)
    return (f"{r['table']:<11}{shape} {VALUE[r['candidate']]}={r['value']:<4g} cells={r['cells']} "
            f"mu={r['mu']:<4g} CAS/clear {r['cas']:.3f}/{r['clear']:.3f} = {r['ratio']:.3f} | "
            f"record MIA {r['membership']:+.3f} [{lo:+.3f},{hi:+.3f}] "
            f"{'ok' if hi <= 0.10 else 'NO'}{inf} | {r['seconds']:.0f} s, load {r['load']:.1f}")


def summary(rows: list[dict[str, Any]]) -> None:
    """Per table, candidate, value, cells and mu, over the seeds run: the mean CAS / clear
    (and the lowest), the mean record membership, the mean and largest upper end, the largest
    upper end of record inference, and the seeds whose two upper ends meet the standard
    level's 0.10."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["table"] + "".join(f" {k}={r[k]}" for k in ("rank", "covariance")
                                                if k in r),
                           r["candidate"], r["value"], r["cells"], r["mu"]), []).append(r)
    print(f"{'table':<11} {'variant':<9} {'cells':>5} {'mu':>4} {'CAS/clear':>9} {'min':>5} "
          f"{'MIA':>6} {'hi':>6} {'max hi':>6} {'inf hi':>6} met")
    for key in sorted(groups):
        part = groups[key]
        hi = [r["membership_ci"][1] for r in part]
        ihi = [r["inference_ci"][1] if r["inference_ci"] else 0.0 for r in part]
        met = sum(h <= 0.10 and i <= 0.10 for h, i in zip(hi, ihi, strict=True))
        name = f"{VALUE[key[1]]}={key[2]:g}"
        print(f"{key[0]:<11} {name:<9} {key[3]:>5} {key[4]:>4g} "
              f"{np.mean([r['ratio'] for r in part]):>9.3f} "
              f"{np.min([r['ratio'] for r in part]):>5.3f} "
              f"{np.mean([r['membership'] for r in part]):>+6.3f} {np.mean(hi):>+6.3f} "
              f"{max(hi):>+6.3f} {max(ihi):>+6.3f} {met}/{len(part)}")


def main() -> None:
    ap = frontier_args(__doc__.splitlines()[0], OUT)
    ap.add_argument("--candidate", choices=sorted(GRIDS), default="subsample")
    ap.add_argument("--grid", nargs="+", default=None, metavar="V,CELLS,MU",
                    help="these rows instead of the candidate's grid (e.g. 0.5,3,18)")
    ap.add_argument("--rank", type=int, default=PUBLIC_RANK,
                    help="the owner table's public directions (default the search's)")
    ap.add_argument("--covariance", default="diag", choices=["diag", "pooled", "class"],
                    help="each cell's covariance in the basis (default the search's, diag)")
    args = ap.parse_args()
    BASIS["fsdd-owner"] = {**BASIS["fsdd-owner"], "rank": args.rank}
    if args.covariance != "diag":
        for name in BASIS:
            BASIS[name] = {**BASIS[name], "covariance": args.covariance}
    if args.from_json:
        summary(earlier_rows(args.from_json, line))
        return
    grid = GRIDS[args.candidate] if args.grid is None else [
        (float(v), int(c), float(m)) for v, c, m in (g.split(",") for g in args.grid)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"load average at start {os.getloadavg()}", flush=True)
    rows: list[dict[str, Any]] = []
    for name in args.tables:
        table = readme_table(args.voice) if name == "fsdd-readme" else owner_table()
        public, released = split_people(table, args.seed)
        cache = ModelCache()
        for value, cells, mu in grid:
            rows.append(judge(released, public, name, args.candidate, value, cells, mu,
                              args.seed, cache))
            print(line(rows[-1]), flush=True)
            write_text_atomic(args.out, json.dumps(rows, indent=2))
    print()
    summary(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
