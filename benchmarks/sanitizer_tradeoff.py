"""Sanitizer on real data: leakage, utility, CAS and Pareto AuC next to the baselines.

Each dataset is split BY IDENTITY into an auxiliary half (trains the decoupler) and an owner
half (the data to release). Every method sanitizes the whole owner half as one release; the
released records are then split 50/50 (stratified by the sensitive attribute) to measure:

- leakage: parrot attackers (forest, logreg, knn) trained on released records with their true
  sensitive labels, scored on the other released records; the worst (highest) accuracy is
  reported. On SP-SW-HAR (gender is shared by both halves) also the paper's attacker, trained
  on the sanitized auxiliary half;
- utility: a forest trained on clear owner records, scored on released records, for each
  utility attribute (activity and age group / digit);
- CAS: a forest trained on released records, scored on clear records (classification
  accuracy score);
- receiver utility: a forest trained on released records, scored on other released records
  (the paper's utility: what a data receiver learns from the release alone);
- AuC: area under the privacy–utility Pareto staircase of each method over its sweep, with
  privacy = 1 − leakage over the range [1 − clear leakage, 1 − chance].

Usage::

    python benchmarks/sanitizer_tradeoff.py [--data DIR] [--datasets har,fsdd] [--quick]

Prints one table per dataset and writes benchmarks/results/sanitizer_tradeoff.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.anonymize.sanitizer import SanitizerAnonymizer, train_decoupler
from bioanon.attack import make_recognizer
from bioanon.metrics import accuracy, chance_level, pareto_auc
from bioanon.table import FeatureTable

ATTACKERS = ("forest", "logreg", "knn")
RESULTS = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------------------ data
def load(name: str, root: str) -> tuple[FeatureTable, dict[str, Any]]:
    if name == "har":
        from bioanon.datasets.sp_sw_har import load_sp_sw_har

        t = load_sp_sw_har(root, features="stats")
        age = t.labels["age"].astype(float)
        t.labels["age_group"] = np.where(age >= age.median(), "older", "younger")
        return t, {"identity": "subject", "sensitive": "gender",
                   "utility": ["activity", "age_group"], "interest": "activity",
                   "title": "SP-SW-HAR phone windows (49 stats features)"}
    from bioanon.datasets.fsdd import load_fsdd

    t = load_fsdd(root)
    return t, {"identity": "speaker", "sensitive": "speaker", "utility": ["digit"],
               "interest": "digit", "title": "FSDD (400 MFCC features)"}


def identity_split(t: FeatureTable, identity: str, sensitive: str, seed: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Record positions of the auxiliary and owner halves; identities never cross."""
    rng = np.random.default_rng(seed)
    aux_ids: list[str] = []
    if identity == sensitive:  # e.g. speakers: half of them on each side
        names = rng.permutation(np.unique(t.labels[identity].to_numpy()))
        aux_ids = list(names[: len(names) // 2])
    else:  # half of each sensitive group on each side
        ids = t.labels[[identity, sensitive]].drop_duplicates(identity)
        for _, grp in ids.groupby(sensitive):
            names = rng.permutation(grp[identity].to_numpy())
            aux_ids += list(names[: len(names) // 2])
    is_aux = t.labels[identity].isin(aux_ids).to_numpy()
    return np.flatnonzero(is_aux), np.flatnonzero(~is_aux)


def release_split(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    return train_test_split(np.arange(len(y)), test_size=0.5, stratify=y, random_state=seed)


# ------------------------------------------------------------------------------ measures
def measure(released: np.ndarray, owner: FeatureTable, spec: dict[str, Any], a: np.ndarray,
            b: np.ndarray, seed: int, aux_released: np.ndarray | None = None,
            aux: FeatureTable | None = None) -> dict[str, Any]:
    """Leakage (parrot), utility (clear-trained) and CAS of one release of the owner half."""
    s = owner.labels[spec["sensitive"]].to_numpy()
    out: dict[str, Any] = {"parrot": {}}
    for m in ATTACKERS:
        rec = make_recognizer(m, seed).fit(released[a], s[a])
        out["parrot"][m] = accuracy(s[b], rec.predict(released[b]))
    if aux_released is not None and aux is not None:
        s_aux = aux.labels[spec["sensitive"]].to_numpy()
        rec = make_recognizer("forest", seed).fit(aux_released, s_aux)
        out["aux_parrot_forest"] = accuracy(s[b], rec.predict(released[b]))
    out["leakage"] = max([*out["parrot"].values(), out.get("aux_parrot_forest", 0.0)])
    out["utility"], out["cas"], out["receiver"] = {}, {}, {}
    for col in spec["utility"]:
        u = owner.labels[col].to_numpy()
        clear_model = make_recognizer("forest", seed).fit(owner.X[a], u[a])
        out["utility"][col] = accuracy(u[b], clear_model.predict(released[b]))
        cas_model = make_recognizer("forest", seed).fit(released[a], u[a])
        out["cas"][col] = accuracy(u[b], cas_model.predict(owner.X[b]))
        out["receiver"][col] = accuracy(u[b], cas_model.predict(released[b]))
    return out


# ------------------------------------------------------------------------------ methods
DECOUPLERS: dict[str, dict[str, Any]] = {
    "default (β=5, α=1/10/100/10)": {},
    "β=0.5": {"beta": 0.5},
    "β=1": {"beta": 1.0},
    "α2=α4=1 (paper)": {"alpha_aligner": 1.0, "alpha_adversary": 1.0},
    "α2=α4=30": {"alpha_aligner": 30.0, "alpha_adversary": 30.0},
    "α3=0 (no dcorr)": {"alpha_dcorr": 0.0},
    "α3=1000": {"alpha_dcorr": 1000.0},
}
EPSILONS = (0.1, 1.0, 10.0)


#: Epochs per dataset at batch size 64 (about 3,400 and 2,300 steps).
EPOCHS = {"har": 200, "fsdd": 100}


def run_dataset(name: str, root: str, quick: bool, seed: int, epochs: int | None
                ) -> dict[str, Any]:
    t, spec = load(name, root)
    epochs = epochs or EPOCHS[name]
    aux_idx, own_idx = identity_split(t, spec["identity"], spec["sensitive"], seed)
    aux, owner = t.subset(aux_idx), t.subset(own_idx)
    s_own = owner.labels[spec["sensitive"]].to_numpy()
    a, b = release_split(s_own, seed)
    rows: list[dict[str, Any]] = []

    def add(method: str, setting: str, released: np.ndarray, train_s: float | None = None,
            aux_released: np.ndarray | None = None) -> None:
        use_aux = aux_released is not None and spec["identity"] != spec["sensitive"]
        res = measure(released, owner, spec, a, b, seed,
                      aux_released if use_aux else None, aux if use_aux else None)
        rows.append({"method": method, "setting": setting, "train_seconds": train_s, **res})
        u = ", ".join(f"{k} {v:.3f}" for k, v in res["utility"].items())
        print(f"  {method:<22} {setting:<30} leak {res['leakage']:.3f}  util {u}  "
              f"cas {res['cas'][spec['interest']]:.3f}  "
              f"receiver {res['receiver'][spec['interest']]:.3f}", flush=True)

    print(f"{spec['title']}: aux {aux.n_records} records, owner {owner.n_records} records",
          flush=True)
    add("clear", "no anonymization", owner.X)
    # baselines on the same split
    scale = owner.X.std(axis=0)
    rng = np.random.default_rng()
    for sigma in ((0.5, 2.0) if quick else (0.25, 0.5, 1.0, 2.0, 4.0)):
        add("gaussian noise", f"σ={sigma}·std",
            (owner.X + rng.normal(size=owner.X.shape) * sigma * scale).astype(np.float32))
    for g, rp in (((8, 0.2),) if quick else ((8, 0.2), (16, 0.05), (32, 0.05), (32, 0.2))):
        sm = SelectiveMeanAnonymizer(interest=spec["interest"], g=g, t=0.8, w=10, r_p=rp,
                                     random_state=seed)
        add("selective mean", f"g={g}, r_p={rp}", sm.fit_transform(owner.X, owner.labels))
    # the sanitizer: one decoupler per training setting, every sampler on each
    decouplers = dict(list(DECOUPLERS.items())[:2]) if quick else DECOUPLERS
    for setting, cfg in decouplers.items():
        config = {"epochs": epochs, "batch_size": 64, **cfg}
        start = time.perf_counter()
        dec = train_decoupler(aux.X, aux.labels[spec["sensitive"]].to_numpy(),
                              spec["sensitive"], aux.feature_names, config, seed)
        train_s = time.perf_counter() - start
        print(f"  decoupler {setting}: {train_s:.1f} s, last epoch "
              f"{ {k: round(v, 3) for k, v in dec.info['final'].items()} }", flush=True)
        add("reconstruction", f"{setting}, z_S kept (reference)",
            dec.decode(dec.encode(owner.X)), train_s)
        samplers = [("suppress", None)] + [(smp, e) for smp in ("dp-obfuscate", "dp-sample")
                                           for e in EPSILONS]
        for sampler, eps in samplers:
            san = SanitizerAnonymizer(spec["sensitive"], sampler=sampler,
                                      epsilon=1.0 if eps is None else eps, decoupler=dec)
            san.fit(aux.X, aux.labels)
            released = san.transform(owner.X, owner.labels)
            aux_released = san.transform(aux.X, aux.labels)
            method = "suppression" if sampler == "suppress" else f"sanitizer {sampler}"
            label = setting + ("" if eps is None else f", ε={eps:g}")
            add(method, label, released, train_s, aux_released)
    clear = rows[0]
    chance = chance_level(s_own[b])
    lo, hi = 1.0 - clear["leakage"], 1.0 - chance
    auc: dict[str, dict[str, float]] = {}
    families = sorted({r["method"] for r in rows} - {"clear", "reconstruction"})
    sanitizer_all = [r for r in rows if r["method"].startswith(("sanitizer", "suppression"))]
    for fam in [*families, "sanitizer (all samplers)"]:
        pts = sanitizer_all if fam.startswith("sanitizer (") else [
            r for r in rows if r["method"] == fam]
        pts = pts + [clear]  # every method may release the clear data
        priv = [1.0 - r["leakage"] for r in pts]
        auc[fam] = {
            "utility": pareto_auc(priv, [r["utility"][spec["interest"]] for r in pts],
                                  (lo, hi) if hi > lo else (0.0, 1.0)),
            "cas": pareto_auc(priv, [r["cas"][spec["interest"]] for r in pts],
                              (lo, hi) if hi > lo else (0.0, 1.0)),
            "receiver": pareto_auc(priv, [r["receiver"][spec["interest"]] for r in pts],
                                   (lo, hi) if hi > lo else (0.0, 1.0)),
            "n_settings": len(pts) - 1,
        }
    return {"dataset": spec["title"], "spec": spec, "n_aux": aux.n_records,
            "n_owner": owner.n_records, "chance": chance, "rows": rows, "auc": auc}


def print_table(res: dict[str, Any]) -> None:
    spec = res["spec"]
    print(f"\n## {res['dataset']} — sensitive '{spec['sensitive']}' (chance {res['chance']:.3f})")
    cols = " | ".join(f"util {c}" for c in spec["utility"])
    interest = spec["interest"]
    print(f"| method | setting | leakage (worst parrot) | {cols} | CAS {interest} | "
          f"receiver {interest} | decoupler training s |")
    print("|---|---|---|" + "---|" * len(spec["utility"]) + "---|---|---|")
    for r in res["rows"]:
        u = " | ".join(f"{r['utility'][c]:.3f}" for c in spec["utility"])
        ts = "" if r["train_seconds"] is None else f"{r['train_seconds']:.1f}"
        print(f"| {r['method']} | {r['setting']} | {r['leakage']:.3f} | {u} | "
              f"{r['cas'][interest]:.3f} | {r['receiver'][interest]:.3f} | {ts} |")
    print("\n| method | AuC (utility) | AuC (CAS) | AuC (receiver) | settings |")
    print("|---|---|---|---|---|")
    for fam, v in res["auc"].items():
        print(f"| {fam} | {v['utility']:.3f} | {v['cas']:.3f} | {v['receiver']:.3f} | "
              f"{v['n_settings']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("BIOANON_DATA", "../shared/datasets"))
    ap.add_argument("--datasets", default="har,fsdd")
    ap.add_argument("--quick", action="store_true", help="fewer settings (a smoke run)")
    ap.add_argument("--epochs", type=int, default=None,
                    help="decoupler epochs (default: 200 for har, 100 for fsdd)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"command": "python benchmarks/sanitizer_tradeoff.py "
                                      + " ".join(sys.argv[1:] if argv is None else argv),
                           "results": [], "cpus": os.cpu_count(),
                           "load_average_start": os.getloadavg()}
    for name in args.datasets.split(","):
        res = run_dataset(name.strip(), args.data, args.quick, args.seed, args.epochs)
        print_table(res)
        out["results"].append(res)
    out["load_average_end"] = os.getloadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "sanitizer_tradeoff.json"
    path.write_text(json.dumps(out, indent=2, default=str))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
