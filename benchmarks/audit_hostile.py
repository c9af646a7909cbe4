"""``bioanon audit`` on releases that hide their leak in plain sight (this wave's seventeenth
session).

INPUT is 260 people × 4 records of ``make_biometric`` (32 features), HOLDOUT the other 260
people's records. Each release below is audited with ``bioanon.audit`` (the judge's seed 1)
at the standard level; the table gives record and identity membership, record inference,
the attacker that read each, the verdict and the findings and notes:

- **noise**: INPUT's class means plus noise as large as the features' spread (tells little);
- **noise + names**: the same, carrying INPUT's identity column;
- **noise + pseudonyms**: the same, its identity values none of INPUT's;
- **rescaled copy**: INPUT itself, standardized, times 3 plus 7 (an export in other units);
- **noise + file names**: the noise release with a file-name column ``<person>_<k>.wav``;
- **noise + padded names**: the noise release carrying INPUT's identity values padded with
  spaces and in capitals (the names, written another way);
- **shuffled copy**: INPUT itself plus noise of 0.01, its feature columns holding each
  other's values (a shuffled or renamed export);
- **rotated copy**: INPUT itself turned by a random rotation about its mean, plus noise of
  0.05 (a rotation perturbation: every distance between records kept);
- **reflected copy**: INPUT itself with about half its features' signs flipped about their
  means (each column's marginal keeps its spread);
- **copy**: INPUT itself without its identity column (the reference case);
- **noisy copy**: INPUT's records plus noise 3 times the features' spread (thirty-fourth
  session), alone and beside codes that link each person's records: **+ pseudonyms** in the
  identity column, **+ subject codes** in a column no role names, **+ pseudonymous file
  names** ``s<code>_<k>.wav``, **+ numeric ids** (the code as a feature column INPUT lacks);
- **noise + hashed names**: the noise release, its identity column the SHA-256 digests of
  INPUT's names (no salt).

Prints a table (with the load average and each audit's seconds) and writes JSON::

    PYTHONPATH=src python benchmarks/audit_hostile.py [--out benchmarks/results/audit_hostile.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bioanon import audit
from bioanon.datasets import make_biometric
from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "audit_hostile.json"
RISKS = ("record-membership", "identity-membership", "record-inference")


def tables() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """INPUT, HOLDOUT and the releases, as DataFrames."""
    df = make_biometric(n_identities=520, records_per_identity=4, n_features=32,
                        random_state=0).to_frame()
    ids = df["identity"].astype(str)
    first = ids.isin(sorted(ids.unique())[:260]).to_numpy()
    members, holdout = df[first].reset_index(drop=True), df[~first].reset_index(drop=True)
    feats = [c for c in df.columns if c.startswith("f")]
    rng = np.random.default_rng(0)
    means = members.groupby("expression")[feats].transform("mean").to_numpy()
    noise = members[["expression"]].copy()
    noise[feats] = means + rng.normal(size=means.shape) * members[feats].std().to_numpy()
    z = (members[feats] - members[feats].mean()) / members[feats].std()
    rescaled = members[["expression"]].copy()
    rescaled[feats] = z.to_numpy() * 3.0 + 7.0
    shuffled = members[["expression"]].copy()
    shuffled[feats] = (members[feats].to_numpy()[:, rng.permutation(len(feats))]
                       + rng.normal(scale=0.01, size=(len(members), len(feats))))
    X = members[feats].to_numpy(np.float64)
    mu = X.mean(axis=0)
    rotated = members[["expression"]].copy()
    rotated[feats] = ((X - mu) @ np.linalg.qr(rng.normal(size=(len(feats), len(feats))))[0]
                      + rng.normal(scale=0.05, size=X.shape))
    reflected = members[["expression"]].copy()
    reflected[feats] = (X - mu) * np.where(rng.random(len(feats)) < 0.5, -1.0, 1.0) + mu
    names = members["identity"].astype(str)
    releases = {
        "noise": noise,
        "noise + names": noise.assign(identity=names.to_numpy()),
        "noise + pseudonyms": noise.assign(identity=("p" + names + "x").to_numpy()),
        "rescaled copy": rescaled,
        "noise + file names": noise.assign(
            file=[f"{p}_{k}.wav" for k, p in enumerate(names)]),
        "noise + padded names": noise.assign(identity=(" " + names.str.upper() + " ").to_numpy()),
        "shuffled copy": shuffled,
        "rotated copy": rotated,
        "reflected copy": reflected,
        "copy": members.drop(columns=["identity"]),
    }
    # the noisy copy and its linking codes (their own generator: the rows above are as before)
    rng2 = np.random.default_rng(1)
    noisy = members[["expression"]].copy()
    noisy[feats] = X + rng2.normal(size=X.shape) * 3.0 * members[feats].std().to_numpy()
    people = np.unique(names.to_numpy())
    code = dict(zip(people, rng2.permutation(people.size) + 1000, strict=True))
    codes = names.map(code).to_numpy()
    releases.update({
        "noisy copy": noisy,
        "noisy + pseudonyms": noisy.assign(identity=[f"s{c}" for c in codes]),
        "noisy + subject codes": noisy.assign(subject=[f"s{c}" for c in codes]),
        "noisy + file names": noisy.assign(
            file=[f"s{c}_{k}.wav" for k, c in enumerate(codes)]),
        "noisy + numeric ids": noisy.assign(pid=codes.astype(np.float64)),
        "noise + hashed names": noise.assign(identity=[
            hashlib.sha256(str(p).encode()).hexdigest() for p in names]),
    })
    return members, holdout, releases


def one(members: pd.DataFrame, holdout: pd.DataFrame, release: pd.DataFrame) -> dict[str, Any]:
    t0 = time.perf_counter()
    res = audit(members, release, holdout, interest="expression", sensitive="identity",
                random_state=1)
    doc = res.to_dict()
    by = {r.name: r for r in res.risks}
    return {"seconds": round(time.perf_counter() - t0, 1),
            "load": round(os.getloadavg()[0], 2),
            "verdict": res.verdict.status,
            "risks": {k: {"value": by[k].value, "ci": list(by[k].ci),
                          "attacker": by[k].attacker} for k in RISKS if k in by},
            "findings": {k: v for k, v in doc["findings"].items() if k.endswith("note") and v},
            "notes": doc["notes"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    members, holdout, releases = tables()
    rows = {name: one(members, holdout, rel) for name, rel in releases.items()}
    print(f"{'release':20s} {'record membership':>26s} {'identity membership':>26s} "
          f"{'record inference':>26s}  verdict  s (load)")
    for name, r in rows.items():
        cells = []
        for k in RISKS:
            x = r["risks"].get(k)
            cells.append("—" if x is None else
                         f"{x['value']:+.3f} [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}]")
        print(f"{name:20s} {cells[0]:>26s} {cells[1]:>26s} {cells[2]:>26s}  "
              f"{r['verdict']}  {r['seconds']} ({r['load']})")
        for k in RISKS:
            if k in r["risks"]:
                print(f"    {k}: {r['risks'][k]['attacker']}")
        for words in [*r["findings"].values(), *r["notes"]]:
            print(f"    {words}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(rows, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
