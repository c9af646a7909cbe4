"""The frontier: every method at a small grid on FSDD, SP-SW-HAR and Yale, judged by one panel.

For each dataset (interest / sensitive) and method setting it runs ``bioanon.evaluation.evaluate``
with the attack panel naive, parrot, reverse, linkage × forest, linear SVM, kNN, logistic
regression and gradient boosting, and adds three measures of its own (small functions in
:data:`MEASURES`, to be swapped for the judge's evaluator when it lands):

- ``cas``: train on the release of the training split, score on clear held-out records
  (``utility.interest.anonymized_to_clear``);
- ``control``: a classifier that sees only the released label columns (interest, additional)
  and predicts the sensitive attribute (majority sensitive value per label combination,
  learned on the training split, scored on the held-out split);
- ``membership_auc``: an attacker holding clear records of members (the released held-out
  split) and of non-members (the training split) scores each by its similarity to the release
  (max cosine similarity after standardizing, and the mean of the 8 highest); the AUC of
  members against non-members, the larger of the two scores reported.

The goal (issue 14): CAS ≥ 0.95 × clear, every attack ≤ 1.2 × max(chance, control), membership
AUC ≤ 0.6. One Pareto chart per dataset (CAS / clear against the worst attack's advantage over
max(chance, control), 95% intervals), a table printed, JSON written.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/frontier.py [--datasets fsdd har-subject
        har-gender yale] [--methods vp-mix synthetic ...] [--seed 1] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bioanon.methods import MethodOptions, build_method
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from bioanon.attack import ModelCache
from bioanon.evaluation import evaluate, group_split, split_table
from bioanon.io import write_text_atomic
from bioanon.metrics.scores import wilson_interval
from bioanon.table import FeatureTable

ATTACKERS = ["naive", "parrot", "reverse", "linkage"]


def gradient_boosting() -> Any:
    """The panel's gradient-boosting recognizer (until the judge adds one by name)."""
    return HistGradientBoostingClassifier(max_iter=60, learning_rate=0.15, random_state=0)


MODELS: list[Any] = ["forest", "linear_svm", "knn", "logreg", gradient_boosting()]


@dataclass
class Dataset:
    name: str
    interest: str
    sensitive: str
    group: str | None
    load: Callable[[], FeatureTable]
    grid: dict[str, list[dict[str, Any]]]  # method -> list of option overrides


def _fsdd() -> FeatureTable:
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd()


def _har() -> FeatureTable:
    from bioanon.datasets.sp_sw_har import load_sp_sw_har

    return load_sp_sw_har(features="stats")


def _yale() -> FeatureTable:
    from bioanon.datasets.yale_faces import load_yale_faces

    return load_yale_faces(features="eigen", subset="expression")


def _grid(g_mix: list[int], g_sm: int, k: int, small: bool = False,
          g_leace: int | None = None, shrink: tuple[int, list[str]] | None = None
          ) -> dict[str, Any]:
    rep = {"allow_replacement": True} if small else {}
    shrunk = [] if shrink is None else [{"g": shrink[0], "extra": {"shrinkage": a}, **rep}
                                        for a in shrink[1]]
    return {
        "selective-mean": [{"g": g_sm, "t": 0.8, "w": 10.0, "rp": 0.01, **rep},
                           {"g": g_sm, "t": 0.8, "w": 10.0, "rp": 0.0,
                            "extra": {"include_self": "false"}, **rep}],
        "ksame-select": [{"k": k}],
        "cluster-mix": [{"k": k}],
        "noise": [{"sigma": 1.0}],
        "laplace": [{"epsilon": 1.0}],
        "leace": [{}],
        "synthetic": [{}],
        "vp-mix": [{"g": g, **rep} for g in g_mix] + shrunk,
        "vp-mix+leace": [{"g": g_leace or g_mix[0], **rep}],
    }


DATASETS = {
    "fsdd": Dataset("fsdd", "digit", "speaker", None, _fsdd,
                    _grid([8, 32, 64], 64, 5, g_leace=32,
                          shrink=(64, ["0.5", "0.9"]))),
    "har-subject": Dataset("har-subject", "activity", "subject", "execution", _har,
                           _grid([4, 8, 16], 16, 5, g_leace=8, shrink=(8, ["0.5"]))),
    "har-gender": Dataset("har-gender", "activity", "gender", "subject", _har,
                          _grid([2, 3, 4, 8, 16], 16, 5, g_leace=8)),
    "yale": Dataset("yale", "expression", "subject", None, _yale,
                    _grid([2, 3, 8], 3, 2, small=True)),
}


# ---------------------------------------------------------------------- own measures
def split_indices(table: FeatureTable, ds: Dataset, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The evaluation's own split (same function, same seed)."""
    if ds.group is None:
        return split_table(table, ds.interest, ds.sensitive, 0.25, seed)
    return group_split(table, ds.group, ds.sensitive, 0.25, seed)


def control_accuracy(train: FeatureTable, test: FeatureTable, columns: list[str],
                     sensitive: str) -> float:
    """Label-only control: the majority sensitive value of each released label combination."""
    key_tr = train.labels[columns].astype(str).agg("|".join, axis=1)
    key_te = test.labels[columns].astype(str).agg("|".join, axis=1)
    s_tr = train.labels[sensitive].astype(str)
    table = s_tr.groupby(key_tr).agg(lambda v: v.value_counts().index[0])
    fallback = s_tr.value_counts().index[0]
    pred = key_te.map(table).fillna(fallback)
    return float((pred.to_numpy() == test.labels[sensitive].astype(str).to_numpy()).mean())


def _cosine_scores(P: np.ndarray, R: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    Pn = P / np.maximum(np.linalg.norm(P, axis=1, keepdims=True), 1e-12)
    Rn = R / np.maximum(np.linalg.norm(R, axis=1, keepdims=True), 1e-12)
    S = Pn @ Rn.T
    k = min(top, S.shape[1])
    part = np.partition(S, S.shape[1] - k, axis=1)[:, -k:]
    return S.max(axis=1), part.mean(axis=1)


def membership_auc(train: FeatureTable, test: FeatureTable, released: np.ndarray,
                   top: int = 8) -> dict[str, Any]:
    """AUC of members (released held-out records) against non-members (training records).

    The attacker standardizes with the clear statistics, then scores every clear record by its
    similarity to the release. Returns the larger AUC of two scores, with a Hanley-McNeil 95%
    interval.
    """
    mu, sd = train.X.mean(axis=0), train.X.std(axis=0) + 1e-9
    R = (released - mu) / sd
    members, non = (test.X - mu) / sd, (train.X - mu) / sd
    best = {"auc": -1.0}
    y = np.r_[np.ones(len(members)), np.zeros(len(non))]
    for i, name in enumerate(["max cosine", f"mean of top-{top} cosine"]):
        s = np.r_[_cosine_scores(members, R, top)[i], _cosine_scores(non, R, top)[i]]
        auc = float(roc_auc_score(y, s))
        if auc > best["auc"]:
            best = {"auc": auc, "score": name}
    a, n1, n0 = best["auc"], len(members), len(non)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = np.sqrt((a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0))
    best["ci"] = [max(0.0, a - 1.96 * se), min(1.0, a + 1.96 * se)]
    return best


MEASURES = {"control": control_accuracy, "membership": membership_auc}


# ---------------------------------------------------------------------- one run
def build(ds: Dataset, method: str, point: dict[str, Any], seed: int) -> Any:
    opts = MethodOptions(method=method, interest=ds.interest, sensitive=ds.sensitive, seed=seed)
    for key, value in point.items():
        setattr(opts, key, value)
    return build_method(opts)


def run_one(table: FeatureTable, ds: Dataset, method: str, point: dict[str, Any], seed: int,
            control: float, n_jobs: int, cache: ModelCache | None = None) -> dict[str, Any]:
    anon = build(ds, method, point, seed)
    t0 = time.perf_counter()
    r = evaluate(table, ds.interest, ds.sensitive, anonymizer=anon, models=MODELS,
                 attackers=ATTACKERS, random_state=seed, group=ds.group, n_jobs=n_jobs,
                 cache=cache)
    tr, te = split_indices(table, ds, seed)
    train, test = table.subset(tr), table.subset(te)
    out = clone(anon).fit_transform(test, test.labels)
    released = np.asarray(out.X if isinstance(out, FeatureTable) else out, dtype=np.float32)
    mem = MEASURES["membership"](train, test, released)
    u, p = r["utility"]["interest"], r["privacy"]
    n_test = test.n_records
    cas = u["anonymized_to_clear"]
    base = max(p["chance"], control)
    worst = max(p["attacks"], key=lambda a: a["accuracy"])
    row = {
        "dataset": ds.name, "method": method,
        "params": {k: v for k, v in point.items()},
        "clear": u["clear"], "cas": cas,
        "cas_ci": list(wilson_interval(int(round(cas * n_test)), n_test)),
        "cas_ratio": cas / u["clear"] if u["clear"] else float("nan"),
        "chance": p["chance"], "control": control, "baseline": base,
        "worst": worst["accuracy"], "worst_ci": list(worst["ci"]),
        "worst_attacker": f"{worst['mode']} / {worst['model']}",
        "worst_ratio": worst["accuracy"] / base,
        "membership_auc": mem["auc"], "membership_ci": mem["ci"],
        "membership_score": mem["score"],
        "attacks": {f"{a['mode']}/{a['model']}": a["accuracy"] for a in p["attacks"]},
        "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0],
    }
    row["goal"] = {"utility": row["cas_ratio"] >= 0.95, "attacks": row["worst_ratio"] <= 1.2,
                   "membership": row["membership_auc"] <= 0.6}
    return row


def label(row: dict[str, Any]) -> str:
    params = ",".join(f"{k}={v}" for k, v in row["params"].items()
                      if k not in ("allow_replacement", "extra"))
    extra = ",".join(f"{k}={v}" for k, v in row["params"].get("extra", {}).items())
    return f"{row['method']}({','.join(x for x in (params, extra) if x)})"


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (f"{'dataset':<12} {'method':<44} {'clear':>5} {'CAS':>5} {'/clr':>5} "
            f"{'worst':>5} {'base':>5} {'/base':>5} {'attacker':<26} {'MIA':>5} goal")
    print(head)
    print("-" * len(head))
    for r in rows:
        goal = "".join("U" if r["goal"]["utility"] else "-") + \
            ("A" if r["goal"]["attacks"] else "-") + ("M" if r["goal"]["membership"] else "-")
        print(f"{r['dataset']:<12} {label(r):<44.44} {r['clear']:>5.3f} {r['cas']:>5.3f} "
              f"{r['cas_ratio']:>5.2f} {r['worst']:>5.3f} {r['baseline']:>5.3f} "
              f"{r['worst_ratio']:>5.2f} {r['worst_attacker']:<26.26} "
              f"{r['membership_auc']:>5.3f} {goal}")


def pareto_chart(rows: list[dict[str, Any]], path: Path) -> None:
    """CAS / clear against the worst attack's advantage over max(chance, control)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for r in rows:
        x = r["worst"] - r["baseline"]
        xerr = [[x - (r["worst_ci"][0] - r["baseline"])], [r["worst_ci"][1] - r["baseline"] - x]]
        y = r["cas_ratio"]
        yerr = [[y - r["cas_ci"][0] / r["clear"]], [r["cas_ci"][1] / r["clear"] - y]]
        new = r["method"].startswith(("vp-mix", "synthetic", "leace"))
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o" if new else "s", capsize=2, ms=5)
        ax.annotate(label(r), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    base = rows[0]["baseline"]
    ax.axhline(0.95, ls="--", c="gray", lw=0.8)
    ax.axvline(0.2 * base, ls="--", c="gray", lw=0.8)
    ax.set_xlabel("worst attack − max(chance, control)  (advantage; goal ≤ "
                  f"{0.2 * base:.3f})")
    ax.set_ylabel("CAS / clear accuracy (goal ≥ 0.95)")
    ax.set_title(f"{rows[0]['dataset']}: utility (train on release, score on clear) vs. "
                 "worst attack, 95% intervals", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    ap.add_argument("--gb-iter", type=int, default=60, help="gradient-boosting iterations")
    ap.add_argument("--methods", nargs="+", default=None,
                    help="methods to run (default: every method of the grid)")
    ap.add_argument("--only", nargs="+", default=None,
                    help="run only settings whose label contains one of these strings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "frontier")
    ap.add_argument("--from-json", type=Path, nargs="+", default=None,
                    help="no run: merge earlier frontier.json files, print, chart, write")
    args = ap.parse_args()
    MODELS[-1].set_params(max_iter=args.gb_iter)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        for f in args.from_json:  # later files replace earlier rows of the same setting
            for r in json.loads(f.read_text()):
                merged[(r["dataset"], label(r))] = r
        rows = sorted(merged.values(), key=lambda r: list(DATASETS).index(r["dataset"]))
        for name in dict.fromkeys(r["dataset"] for r in rows):
            pareto_chart([r for r in rows if r["dataset"] == name], args.out / f"pareto_{name}.png")
        print_table(rows)
        write_text_atomic(args.out / "frontier.json", json.dumps(rows, indent=2))
        print(f"wrote {args.out / 'frontier.json'} and pareto_*.png")
        return
    rows: list[dict[str, Any]] = []
    for name in args.datasets:
        ds = DATASETS[name]
        table = ds.load()
        tr, te = split_indices(table, ds, args.seed)
        control = MEASURES["control"](table.subset(tr), table.subset(te), [ds.interest],
                                      ds.sensitive)
        part = []
        cache = ModelCache()  # clear-trained attackers fitted once per dataset
        for method, points in ds.grid.items():
            if args.methods and method not in args.methods:
                continue
            for point in points:
                if args.only and not any(o in label({"method": method, "params": point})
                                         for o in args.only):
                    continue
                try:
                    row = run_one(table, ds, method, point, args.seed, control, args.n_jobs,
                                  cache)
                except Exception as exc:  # noqa: BLE001 - a failed setting is reported, not fatal
                    print(f"{name} {method} {point}: skipped ({exc})", flush=True)
                    continue
                part.append(row)
                print_table([row])
                write_text_atomic(args.out / "frontier.json", json.dumps(rows + part, indent=2))
        rows.extend(part)
        if part:
            pareto_chart(part, args.out / f"pareto_{name}.png")
    print()
    print(f"load average {os.getloadavg()}; panel: {', '.join(ATTACKERS)} × forest, linear_svm, "
          "knn, logreg, gradient boosting; seed", args.seed)
    print_table(rows)
    write_text_atomic(args.out / "frontier.json", json.dumps(rows, indent=2))
    print(f"wrote {args.out / 'frontier.json'} and pareto_*.png")


if __name__ == "__main__":
    main()
