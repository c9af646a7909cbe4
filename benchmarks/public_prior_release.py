"""FSDD's owner half released as a user would, its public people given with and without labels.

Issue 43's owner half (``fsdd_owner_layout.py``'s table: 1,500 records, the owner's own names
``f0 … f399``) has its speakers split 50/50 by ``--seed`` (``basis_frontier.split_people``):
three speakers' 750 records are released, the other three's are the public records of
``--public-data``. ``bioanon release`` then runs as typed below — every method, the seed
given, at level ``basic`` (at 750 records and 3 speakers the plan shows the record-level
membership and inference targets of ``basic``, 0.14, and no level's identity targets or
record recognition, which are accepted by name) — twice per seed:

- ``labels``: the public table holds its records' interest (``digit``) and people
  (``speaker``): the search tries dp-cells' public prior (``prior="public"``) on one Gaussian
  per class at μ 2 in the public basis;
- ``features``: the same public records with their ``digit`` alone (no people): the same
  setting is tried without the prior.

Each run prints its outcome, the setting and, for a certified release, its CAS against the
clear data's (the consumer's pick against the clear pick, on the confirmation's fresh split)
with record membership and record inference (the judge's advantage, 95% interval, the
attacker that decided). Writes ``benchmarks/results/public_prior_release.json``.

    BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/public_prior_release.py
        [--seeds 0,1,2,3,4] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from basis_frontier import INTEREST, SENSITIVE, owner_table, split_people

from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "public_prior_release.json"
ACCEPTED = ("record-recognition", "identity-membership", "identity-inference")
REASON = "3 speakers: the plan cannot show it"


def command(released: Path, public: Path, out: Path, seed: int) -> list[str]:
    """The ``bioanon release`` command of one run (``--json``: one document on stdout)."""
    cmd = ["release", str(released), "-o", str(out), "--interest", INTEREST, "--sensitive",
           SENSITIVE, "--public-data", str(public), "--seed", str(seed), "--level", "basic",
           "--json"]
    for risk in ACCEPTED:
        cmd += ["--accept-risk", risk, "--reason", REASON]
    return cmd


def run(cmd: list[str]) -> dict[str, Any]:
    """One run's outcome, setting, utility and record-level figures, wall seconds and load."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "bioanon", *cmd], capture_output=True,
                          text=True)
    wall = time.perf_counter() - t0
    doc = json.loads(done.stdout)
    s = doc.get("summary") or {}
    cas, clear = (s.get("cas") or {}).get("value"), (s.get("utility") or {}).get("clear")
    risks = {r["name"]: r for r in s.get("risks") or []}
    out: dict[str, Any] = {"outcome": doc["outcome"], "setting": doc.get("setting"),
                           "message": doc.get("message"), "cas": cas, "clear": clear,
                           "ratio": cas / clear if cas and clear else None,
                           "seconds": wall, "load": os.getloadavg()[0]}
    for name in ("record-membership", "record-inference"):
        r = risks.get(name) or {}
        out[name] = {k: r.get(k) for k in ("value", "ci", "attacker", "status")}
    return out


def line(r: dict[str, Any]) -> str:
    ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f} ×"
    figs = " ".join(
        f"{name.split('-')[1]} {r[name]['value']:+.3f} [{r[name]['ci'][0]:+.3f}, "
        f"{r[name]['ci'][1]:+.3f}]" for name in ("record-membership", "record-inference")
        if r[name].get("value") is not None)
    return (f"seed {r['seed']} {r['public']:<8} {r['outcome']:<14} {r['setting']} "
            f"{ratio} {figs} | {r['seconds']:.0f} s, load {r['load']:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rows = []
    owner = owner_table()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for seed in [int(s) for s in args.seeds.split(",")]:
            public, released = split_people(owner, seed)
            src = folder / f"released{seed}.parquet"
            released.write(src)
            public.write(folder / f"public{seed}.parquet")
            bare = public.subset(range(public.n_records))
            bare.labels = bare.labels[[INTEREST]]
            bare.write(folder / f"public_features{seed}.parquet")
            for kind, pub in (("labels", f"public{seed}.parquet"),
                              ("features", f"public_features{seed}.parquet")):
                cmd = command(src, folder / pub, folder / f"out_{kind}{seed}.parquet", seed)
                row = {"seed": seed, "public": kind, **run(cmd),
                       "command": "bioanon " + " ".join(cmd)}
                rows.append(row)
                print(line(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(rows, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
