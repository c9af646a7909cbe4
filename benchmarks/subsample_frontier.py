"""dp-cells released from a random subsample, measured before choosing (issue 43).

Issue 43 lists privacy amplification by subsampling among the candidates for more utility per
unit of privacy at 1,000-3,000 records. Here dp-cells fits its noisy model on a Poisson
subsample of the records it is given (each record kept with probability ``q``, drawn from the
noise stream, never written) and releases one record per input record from that model, as it
does with every record. A member left out of the subsample leaves nothing in the release,
so the judge's record-membership advantage over all members should be about ``q`` times
the advantage over the members that were kept. That leaves room for less noise (a larger
``mu``). The cost is a model fitted on ``q·n`` records.

Each row is judged the way ``basis_frontier.py`` judges it: on the same released half of
the FSDD table (the people split 50/50 by ``--seed``), by the library's stage-1 evaluation
(the consumer's pick against the clear data's pick; the judge's record-membership and
record-inference advantages over every attacker, the model-aware likelihood ratios that refit
dp-cells' declared model in its stated basis among them). The attackers know ``q`` and the
model, but not which records were kept. Only the empirical figures are compared here: the
``mu`` printed is the mechanism's own on the subsample. An adopted subsample would also need
the amplified guarantee worked out for the privacy statement, and this script does not do
that.

Usage (from the repository root; about half a CPU minute per row)::

    BIOANON_DATA=../shared/datasets python benchmarks/subsample_frontier.py [--tables
        fsdd-readme fsdd-owner] [--seed 0] [--grid Q,CELLS,MU ...] [--out FILE]
        [--from-json FILE ...]
"""

from __future__ import annotations

import argparse
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
    owner_table,
    readme_table,
    split_people,
)

from bioanon.anonymize.dp_cells import DPCellsAnonymizer
from bioanon.attack import ModelCache
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.table import FeatureTable

OUT = Path(__file__).resolve().parent / "results" / "frontier" / "subsample.json"
#: (q, cells, mu): the search's settings and less noise on every record (q = 1), then at
#: half and a quarter of the records with less noise
GRID: tuple[tuple[float, int, float], ...] = (
    (1.0, 0, 2.0), (1.0, 0, 4.0), (1.0, 0, 8.0), (1.0, 3, 6.0), (1.0, 3, 9.0), (1.0, 3, 12.0),
    (0.5, 0, 4.0), (0.5, 0, 8.0), (0.5, 0, 12.0), (0.5, 3, 6.0), (0.5, 3, 12.0),
    (0.5, 3, 18.0), (0.25, 0, 8.0), (0.25, 0, 16.0), (0.25, 3, 12.0), (0.25, 3, 24.0),
    (0.25, 3, 36.0))
#: the basis of each table: its best in docs/dp-cells.md (README: the temporal DCT; the
#: owner's table: the public people's principal directions)
BASIS = {"fsdd-readme": {"keep": 4}, "fsdd-owner": {"basis": "public", "rank": PUBLIC_RANK}}


def subsampled(q: float) -> type[DPCellsAnonymizer]:
    """dp-cells whose model is fitted on a Poisson subsample of rate ``q`` (a class of its
    own, so that scikit-learn's ``clone`` keeps the rate)."""

    def _model(self: Any, B: np.ndarray, U: np.ndarray, P: np.ndarray, strat: np.ndarray,
               S: int, rng: np.random.Generator) -> dict[str, Any]:
        keep = rng.random(B.shape[0]) < q
        return DPCellsAnonymizer._model(self, B[keep], U[keep], P, strat[keep], S, rng)

    if q >= 1.0:
        return DPCellsAnonymizer
    return type(f"DPCellsSample{int(round(q * 100))}", (DPCellsAnonymizer,),
                {"_model": _model, "sample_rate": q})


def judge(released: FeatureTable, public: FeatureTable, name: str, q: float, cells: int,
          mu: float, seed: int, cache: ModelCache) -> dict[str, Any]:
    """One row judged on ``released`` (stage 1: utility by the consumer's pick, membership
    and inference)."""
    params: dict[str, Any] = {"cells": cells, "mu": mu, **BASIS[name]}
    if name == "fsdd-owner":
        params["public_data"] = public.X
    est = subsampled(q)(INTEREST, **params)
    t0 = time.perf_counter()
    ev = Evaluation(released, INTEREST, SENSITIVE, anonymizer=est, random_state=seed,
                    n_jobs=1, cache=cache).evaluate(recognition=False)
    u = ev.utility()[INTEREST]
    risks = {r.name: r for r in ev.risks()}
    mem, inf = risks["record-membership"], risks.get("record-inference")
    return {"table": name, "q": q, "cells": cells, "mu": mu, "seed": seed,
            "basis": params.get("basis", "dct"), "n_released": released.n_records,
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
    return (f"{r['table']:<11} q={r['q']:<4g} cells={r['cells']} mu={r['mu']:<4g} "
            f"CAS/clear {r['cas']:.3f}/{r['clear']:.3f} = {r['ratio']:.3f} | record MIA "
            f"{r['membership']:+.3f} [{lo:+.3f},{hi:+.3f}] {'ok' if hi <= 0.10 else 'NO'}"
            f"{inf} | {r['seconds']:.0f} s, load {r['load']:.1f}")


def summary(rows: list[dict[str, Any]]) -> None:
    """Per table and (q, cells, mu), over the seeds run: mean CAS / clear, mean record
    membership and the mean and largest upper end, and the seeds whose upper end (of record
    membership and of record inference) meets the standard level's 0.10."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["table"], r["q"], r["cells"], r["mu"]), []).append(r)
    print(f"{'table':<11} {'q':>5} {'cells':>5} {'mu':>4} {'CAS/clear':>9} {'min':>5} "
          f"{'MIA':>6} {'hi':>6} {'max hi':>6} {'inf hi':>6} met")
    for key in sorted(groups):
        part = groups[key]
        hi = [r["membership_ci"][1] for r in part]
        ihi = [r["inference_ci"][1] if r["inference_ci"] else 0.0 for r in part]
        met = sum(h <= 0.10 and i <= 0.10 for h, i in zip(hi, ihi, strict=True))
        print(f"{key[0]:<11} {key[1]:>5g} {key[2]:>5} {key[3]:>4g} "
              f"{np.mean([r['ratio'] for r in part]):>9.3f} "
              f"{np.min([r['ratio'] for r in part]):>5.3f} "
              f"{np.mean([r['membership'] for r in part]):>+6.3f} {np.mean(hi):>+6.3f} "
              f"{max(hi):>+6.3f} {max(ihi):>+6.3f} {met}/{len(part)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", nargs="+", default=["fsdd-readme", "fsdd-owner"],
                    choices=["fsdd-readme", "fsdd-owner"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--voice", type=Path, default=Path("/tmp/util-voice.parquet"),
                    help="the README's FSDD table (built here when missing)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--grid", nargs="+", default=None, metavar="Q,CELLS,MU",
                    help="these rows instead of GRID (e.g. 0.5,3,18)")
    ap.add_argument("--from-json", type=Path, nargs="+", default=None,
                    help="no run: print the rows and the summary of these files")
    args = ap.parse_args()
    if args.from_json:
        rows = [r for f in args.from_json for r in json.loads(f.read_text())]
        for r in rows:
            print(line(r))
        print()
        summary(rows)
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"load average at start {os.getloadavg()}", flush=True)
    grid = GRID if args.grid is None else [
        (float(q), int(c), float(m)) for q, c, m in (g.split(",") for g in args.grid)]
    rows: list[dict[str, Any]] = []
    for name in args.tables:
        table = readme_table(args.voice) if name == "fsdd-readme" else owner_table()
        public, released = split_people(table, args.seed)
        cache = ModelCache()
        for q, cells, mu in grid:
            rows.append(judge(released, public, name, q, cells, mu, args.seed, cache))
            print(line(rows[-1]), flush=True)
            write_text_atomic(args.out, json.dumps(rows, indent=2))
    print()
    summary(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
