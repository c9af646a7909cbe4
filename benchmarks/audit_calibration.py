"""``bioanon audit`` calibrated on three known releases, over seeds (issue 45's Done-when).

Per table and seed, the population is cut in three (a fresh cut per seed): INPUT (given to
the release process), HOLDOUT (the audit's control) and an auxiliary part that neither sees.
Three releases of INPUT are audited (``bioanon.audit``, the judge's seed = the seed):

- **copy**: INPUT itself, every label column kept (identity included): record membership
  must read ≥ 0.9 and recognition about the clear level (the same recognizers trained on
  INPUT);
- **leak-free**: a per-class Gaussian whose moments and class labels come from the auxiliary
  part (nothing of INPUT or HOLDOUT in it, not even INPUT's class counts): every advantage
  interval must cover 0 at ≥ 19 of 20 seeds;
- **Gaussian on INPUT**: bioanon's per-class diagonal Gaussian synthesizer fitted on INPUT
  (``SyntheticAnonymizer(covariance="diag")``): record membership must read ≥ 0.10.

Cuts: ``synthetic300`` (300 people × 12 records, 128 features): half the people give half
their records to INPUT and the other half to HOLDOUT, 40% of the people are only in HOLDOUT,
10% are the auxiliary part, so every risk is measured (recognition on the HOLDOUT records of
INPUT's people, identity membership against HOLDOUT's other people); ``fsdd`` (6 speakers):
thirds of each speaker's recordings (identity membership cannot be measured with 6 people).

Prints a table (with the load average and the time per audit) and writes JSON::

    PYTHONPATH=src python benchmarks/audit_calibration.py [--tables synthetic300,fsdd]
        [--seeds 20] [--releases copy,leak-free,"Gaussian on INPUT"]
        [--out benchmarks/results/audit_calibration.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from bioanon import audit
from bioanon.anonymize import SyntheticAnonymizer
from bioanon.io import write_text_atomic
from bioanon.table import FeatureTable

OUT = Path(__file__).resolve().parent / "results" / "audit_calibration.json"
RELEASES = ("copy", "leak-free", "Gaussian on INPUT")
#: the risks read as an advantage (an interval that must cover 0 when nothing leaks)
ADVANTAGE_RISKS = ("record-recognition", "record-membership", "record-inference",
                   "identity-membership")


def load(name: str) -> tuple[FeatureTable, str, str]:
    """The table, its interest and its sensitive (identity) column."""
    if name == "synthetic300":
        from bioanon.datasets import make_biometric

        return (make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                               random_state=0), "expression", "identity")
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker"


def cut(table: FeatureTable, name: str, sensitive: str, seed: int
        ) -> tuple[FeatureTable, FeatureTable, FeatureTable]:
    """(INPUT, HOLDOUT, auxiliary) of one seed (see the module's text)."""
    rng = np.random.default_rng(seed)
    ids = table.labels[sensitive].astype(str).to_numpy()
    people, codes = np.unique(ids, return_inverse=True)
    order = rng.permutation(ids.size)
    order = order[np.argsort(codes[order], kind="stable")]
    rank = np.empty(ids.size, np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]
    counts = np.diff(np.r_[starts, ids.size])
    rank[order] = np.arange(ids.size) - np.repeat(starts, counts)
    size = np.empty(ids.size, np.int64)
    size[order] = np.repeat(counts, counts)
    if name == "fsdd":  # thirds of each speaker's recordings
        part = (3 * rank) // size
        return tuple(table.subset(np.flatnonzero(part == k)) for k in range(3))  # type: ignore
    role = rng.permutation(people.size)[codes] * 10 // people.size  # 0-4 / 5-8 / 9
    first = 2 * rank < size
    m = (role < 5) & first
    h = ((role < 5) & ~first) | ((role >= 5) & (role < 9))
    a = role == 9
    return table.subset(np.flatnonzero(m)), table.subset(np.flatnonzero(h)), \
        table.subset(np.flatnonzero(a))


def class_gaussian(fit_on: FeatureTable, like: FeatureTable, interest: str,
                   seed: int) -> FeatureTable:
    """A per-class diagonal Gaussian with ``fit_on``'s moments, one draw per ``like`` record
    (its interest kept)."""
    rng = np.random.default_rng(seed)
    y, y_fit = like.labels[interest].astype(str).to_numpy(), \
        fit_on.labels[interest].astype(str).to_numpy()
    X = np.empty(like.X.shape, np.float32)
    for c in np.unique(y):
        Z, w = fit_on.X[y_fit == c], y == c
        X[w] = Z.mean(0) + rng.standard_normal((int(w.sum()), Z.shape[1])) * Z.std(0)
    return FeatureTable(X, like.labels[[interest]].copy(), list(like.feature_names))


def leak_free(aux: FeatureTable, n: int, interest: str, seed: int) -> FeatureTable:
    """``n`` draws of the per-class Gaussian of the auxiliary part, their classes drawn from
    its labels: nothing of INPUT, not even its class counts (a release that copies INPUT's
    label column tells its class histogram, which a nearest-record or density attacker reads
    as a small, real membership and inference signal)."""
    rng = np.random.default_rng([seed, 1])
    like = aux.subset(np.sort(rng.choice(aux.n_records, size=n, replace=True)))
    return class_gaussian(aux, like, interest, seed)


def release(kind: str, m: FeatureTable, aux: FeatureTable, interest: str,
            seed: int) -> FeatureTable:
    if kind == "copy":
        return m
    if kind == "leak-free":  # labels drawn from the auxiliary part too (see leak_free)
        return leak_free(aux, m.n_records, interest, seed)
    X = SyntheticAnonymizer(interest, covariance="diag", random_state=seed).fit_transform(
        m, m.labels)
    return FeatureTable(np.asarray(getattr(X, "X", X)), m.labels[[interest]].copy(),
                        list(m.feature_names))


def one(table: FeatureTable, name: str, interest: str, sensitive: str, kind: str,
        seed: int) -> dict[str, Any]:
    m, h, aux = cut(table, name, sensitive, seed)
    rel = release(kind, m, aux, interest, seed)
    t0 = time.perf_counter()
    res = audit(m, rel, h, interest=interest, sensitive=sensitive, random_state=seed)
    risks = {r.name: {"value": r.value, "ci": list(r.ci), "status": r.status,
                      "attacker": r.attacker,
                      **({"accuracy": r.extras.get("accuracy"),
                          "clear": max(r.extras.get("clear_accuracy", {"": np.nan}).values())}
                         if r.risk == "recognition" else {})}
             for r in res.risks}
    return {"seed": seed, "seconds": time.perf_counter() - t0, "verdict": res.verdict.status,
            "copied_rows": res.findings["copied_rows"], "risks": risks,
            "cas": res.utility["cas"]["value"], "clear": res.utility["clear"]["value"]}


def summarize(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    mem = np.array([r["risks"]["record-membership"]["value"] for r in rows])
    covered = []
    for r in rows:
        ok = [x["ci"][0] <= 0.0 <= x["ci"][1] for k, x in r["risks"].items()
              if k in ADVANTAGE_RISKS and np.isfinite(x["value"])]
        covered.append(all(ok))
    out: dict[str, Any] = {
        "seeds": len(rows), "record_membership_mean": float(mem.mean()),
        "record_membership_min": float(mem.min()),
        "all_intervals_cover_0": int(np.sum(covered)),
        "membership_ge_0.9": int(np.sum(mem >= 0.9)),
        "membership_ge_0.10": int(np.sum(mem >= 0.10)),
        "refused": int(np.sum([r["verdict"] != "met" for r in rows])),
        "seconds_mean": float(np.mean([r["seconds"] for r in rows])),
        "measured": sorted({k for r in rows for k, x in r["risks"].items()
                            if np.isfinite(x["value"])})}
    rec = [r["risks"]["record-recognition"] for r in rows]
    if kind == "copy" and all(np.isfinite(x["value"]) for x in rec):
        out["recognition_accuracy_mean"] = float(np.mean([x["accuracy"] for x in rec]))
        out["recognition_clear_mean"] = float(np.mean([x["clear"] for x in rec]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="synthetic300,fsdd")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--releases", default=",".join(RELEASES))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    result: dict[str, Any] = {"seeds": args.seeds, "tables": {}}
    for name in args.tables.split(","):
        table, interest, sensitive = load(name)
        result["tables"][name] = {}
        for kind in [k for k in args.releases.split(",") if k]:
            rows = [one(table, name, interest, sensitive, kind, s)
                    for s in range(1, args.seeds + 1)]
            summary = summarize(rows, kind)
            result["tables"][name][kind] = {"summary": summary, "seeds": rows}
            print(f"{name:<13} {kind:<18} membership mean {summary['record_membership_mean']:+.3f}"
                  f" (min {summary['record_membership_min']:+.3f}), ≥0.9: "
                  f"{summary['membership_ge_0.9']}/{args.seeds}, ≥0.10: "
                  f"{summary['membership_ge_0.10']}/{args.seeds}, every interval covers 0: "
                  f"{summary['all_intervals_cover_0']}/{args.seeds}, refused "
                  f"{summary['refused']}/{args.seeds}"
                  + (f", recognition {summary['recognition_accuracy_mean']:.3f} vs clear "
                     f"{summary['recognition_clear_mean']:.3f}"
                     if "recognition_accuracy_mean" in summary else "")
                  + f"; {summary['seconds_mean']:.1f} s/audit, load "
                    f"{os.getloadavg()[0]:.1f}", flush=True)
    result["load_average"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(result, indent=2, default=float))
    print(json.dumps({n: {k: v["summary"] for k, v in t.items()}
                      for n, t in result["tables"].items()}, indent=2, default=float))


if __name__ == "__main__":
    main()
