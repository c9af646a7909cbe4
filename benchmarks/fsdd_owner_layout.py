"""FSDD's owner half with its own feature names, released with and without ``--layout``.

Builds the table another pipeline would write (1,500 records: the even takes of every speaker ×
digit; ``f0 … f399`` = 20 MFCC tracks × 16 steps, track-major, then the mean, standard
deviation, minimum and maximum of each coefficient) in a temporary folder, then runs
``bioanon release --methods dp-cells --seed SEED`` on it twice — without a layout (the
identity basis) and with ``--layout 20x16+80`` — with every risk the plan names accepted (at
1,500 records the standard level cannot be shown), and prints each outcome, setting and CAS
ratio (the consumer's pick against the clear data's pick). Writes
``benchmarks/results/fsdd_owner_layout.json``.

    BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/fsdd_owner_layout.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from bioanon.datasets.home import dataset_dir
from bioanon.features.voice import mfcc, on_time_grid
from bioanon.features.wav import read_wav
from bioanon.table import FeatureTable

OUT = Path(__file__).resolve().parent / "results" / "fsdd_owner_layout.json"
RISKS = ("record-recognition", "record-membership", "record-inference", "identity-membership",
         "identity-inference")


def owner_table() -> FeatureTable:
    folder = dataset_dir("fsdd", None)
    labels = pd.read_csv(folder / "labels.csv")
    labels = labels[labels["take"] % 2 == 0].sort_values(
        ["speaker", "digit", "take"]).reset_index(drop=True)
    rows = []
    for f in labels["file"]:  # one file at a time; the maths inside is vectorised
        data, sr = read_wav(folder / f)
        m = mfcc(data, sr, n_mfcc=20)
        stats = np.concatenate([m.mean(0), m.std(0), m.min(0), m.max(0)])
        rows.append(np.concatenate([on_time_grid(m, 16).T.ravel(), stats]))
    return FeatureTable(np.asarray(rows, np.float32),
                        labels[["speaker", "digit"]].astype({"digit": str}),
                        [f"f{i}" for i in range(400)])


def release(path: Path, out: Path, seed: int, layout: str | None) -> dict:
    cmd = [sys.executable, "-m", "bioanon", "release", str(path), "-o", str(out),
           "--interest", "digit", "--sensitive", "speaker", "--methods", "dp-cells",
           "--seed", str(seed), "--json", "--reason", "owner-half measurement"]
    for r in RISKS:
        cmd += ["--accept-risk", r]
    if layout:
        cmd += ["--layout", layout]
    doc = json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout)
    s = doc.get("summary") or {}
    c = s.get("consumer") or {}
    cas, clear = (s.get("cas") or {}).get("value"), (s.get("utility") or {}).get("clear")
    return {"layout": layout, "outcome": doc["outcome"], "setting": doc.get("setting"),
            "cas": cas, "clear": clear, "ratio": cas / clear if cas and clear else None,
            "pick": c.get("pick"), "clear_pick": c.get("clear_pick"),
            "command": " ".join(cmd[1:])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "owner.csv"
        owner_table().write(path)
        for i, layout in enumerate((None, "20x16+80")):
            rows.append(release(path, Path(tmp) / f"rel{i}.parquet", args.seed, layout))
    for r in rows:
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.3f} ×"
        print(f"layout {r['layout'] or 'none':9s} {r['outcome']:15s} {r['setting']}: CAS "
              f"{r['cas']} ({r['pick']}) / clear {r['clear']} ({r['clear_pick']}) = {ratio}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(rows, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
