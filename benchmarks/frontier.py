"""The frontier: every method at a small grid on FSDD, SP-SW-HAR and Yale, judged by the judge.

For each dataset (interest / sensitive) and method setting it runs the judge,
:class:`bioanon.evaluation.Evaluation`, with the attack panel naive, parrot, reverse, linkage ×
forest, linear SVM, kNN, logistic regression and gradient boosting (``hgb``), and reads its typed
results: CAS (train on the release, score on clear held-out records) and the clear accuracy,
chance and the label-only control, the worst attack with its 95% interval, the advantage over
max(chance, control) with its interval, membership disclosure (the judge's attacker holding clear
records of members and non-members; record and identity level, the larger AUC counts) and, for
mixing methods, contributor disclosure (how often an attacker names someone mixed into the
released record, beside its base rate).

Every row also carries the certificate's risks (issue 19: recognition, membership / tracing at
record and identity level, inference on members; each value, 95% interval, attacker and status
met / not met / not covered). Issue 20's methods are in the grid (the synthesizer's covariance
estimators, the DP mix, the DP class-conditional release) and so is the peer users would pick
instead, SDV's Gaussian copula (``sdv-copula``; run only when SDV is installed,
``pip install 'bioanon[peer]'``), on FSDD, SP-SW-HAR, Yale and the 300-person synthetic
population (``synthetic300``).

The goal (issues 14, 20 and 28): CAS ≥ 0.95 × clear and every risk of the certificate met at
the privacy level (``--level``, :mod:`bioanon.levels`, default ``standard``), accepting only
what the table is too small to show ("inconclusive at this size"). One Pareto chart per
dataset: CAS / clear against each risk (one panel per risk, 95% intervals, the level's target
marked, the rows passing every risk starred), a table printed, JSON written; a summary per
dataset (the best CAS / clear with every risk passed, the best overall and what fails: risk,
upper 95% bound against its target) printed and written to ``summary.json``.

``--quick`` runs the key rows only (vp-mix at its best g, the selective mean at the paper's
setting, synthetic) without gradient boosting.

Usage::

    BIOANON_DATA=../shared/datasets python benchmarks/frontier.py [--quick] [--datasets fsdd
        har-subject har-gender yale synthetic300] [--methods vp-mix synthetic ...]
        [--only LABEL-PART ...] [--level standard] [--seed 1] [--n-jobs 1] [--out DIR]
        [--from-json FILE ...]

Issue 43's measurement of dp-cells' stated bases (dct, identity, public, public-lda) on FSDD's
two tables, people split 50/50 into public and released, runs as ``frontier.py bases [its
flags]`` (:mod:`basis_frontier`: a table, JSON, ``--from-json`` to load and summarize)::

    BIOANON_DATA=../shared/datasets python benchmarks/frontier.py bases --seed 0 \
        [--bases dct identity public public-lda] [--from-json FILE ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bioanon.anonymize.registry import build_method
from bioanon.attack import ModelCache
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic
from bioanon.levels import DEFAULT_LEVEL, resolve_level
from bioanon.table import FeatureTable

ATTACKERS = ["naive", "parrot", "reverse", "linkage"]
MODELS = ["forest", "linear_svm", "knn", "logreg", "hgb"]
QUICK_MODELS = ["forest", "linear_svm", "knn", "logreg"]


@dataclass
class Dataset:
    name: str
    interest: str
    sensitive: str
    group: str | None
    load: Callable[[], FeatureTable]
    grid: dict[str, list[dict[str, Any]]]  # method -> list of registry parameters
    key: list[str]  # labels of the key rows (--quick)


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
          g_leace: int | None = None, shrink: tuple[int, list[float]] | None = None
          ) -> dict[str, Any]:
    rep = {"allow_replacement": True} if small else {}
    shrunk = [] if shrink is None else [{"g": shrink[0], "shrinkage": a, **rep}
                                        for a in shrink[1]]
    return {
        "selective-mean": [{"g": g_sm, "t": 0.8, "w": 10.0, "r_p": 0.01, **rep},
                           {"g": g_sm, "t": 0.8, "w": 10.0, "r_p": 0.0, "include_self": False,
                            **rep}],
        "ksame-select": [{"k": k}],
        "cluster-mix": [{"k": k}],
        "noise": [{"sigma": 1.0}],
        "leace": [{}],
        "synthetic": [{}],
        "vp-mix": [{"g": g, **rep} for g in g_mix] + shrunk,
        "vp-mix+leace": [{"g": g_leace or g_mix[0], **rep}],
    } | ISSUE20


#: issue 20's methods and the peer, at the settings its benchmarks found best
ISSUE20: dict[str, list[dict[str, Any]]] = {
    "synthetic": [{}, {"covariance": "diag"}, {"covariance": "factor", "rank": 2},
                  {"covariance": "ledoit-wolf"}],
    "dp-mix": [{"g": 64, "epsilon": 30.0}],
    "dp-synthetic": [{"covariance": "lowrank", "rank": 32, "clip": 0.3, "epsilon": 4.0},
                     {"covariance": "lowrank", "rank": 64, "clip": 0.5, "epsilon": 4.0},
                     {"covariance": "class", "rank": 8, "clip": 0.3, "epsilon": 4.0}],
    "sdv-copula": [{}],
} | {
    # issue 28: the model in a small basis, without noise and strict DP at epsilon 4 (the box,
    # centre, public part of the basis and clips from held-aside people: public_data=aux),
    # and the DP peer (SmartNoise's DP-CTGAN, in its own environment: BIOANON_PEER_PYTHON)
    "basis-synthetic": [{"rank": 32, "covariance": "class", "pool": 0.0,
                         "residual": "class-diag", "residual_mean": True},
                        {"rank": 32, "covariance": "class", "pool": 0.3,
                         "residual": "class-diag", "residual_mean": True},
                        {"rank": 16, "covariance": "class", "pool": 0.5}],
    # k and the split by the stated rule (rank_rule, share_rule: d and the classes only),
    # then the settings tuned on FSDD with their k and shares declared
    "dp-basis": [{"public_data": "aux", "epsilon": 4.0},
                 {"public_data": "aux", "covariance": "class", "pool": 0.5,
                  "clip_quantile": 0.7, "epsilon": 4.0},
                 {"public_data": "aux", "basis": "dp-lda", "rank": 16, "mean_share": 0.7,
                  "resid_share": 0.05, "epsilon": 4.0},
                 {"public_data": "aux", "basis": "dp-lda", "rank": 16, "covariance": "class",
                  "pool": 0.5, "mean_share": 0.5, "resid_share": 0.05, "clip_quantile": 0.7,
                  "epsilon": 4.0}],
    "smartnoise-dp": [{"public_data": "aux", "epsilon": 4.0, "epochs": 30}],
}
ISSUE20_KEY = ["synthetic(covariance=diag)", "synthetic(covariance=factor,rank=2)",
               "dp-mix(g=64,epsilon=30.0)",
               "dp-synthetic(covariance=lowrank,rank=32,clip=0.3,epsilon=4.0)",
               "dp-synthetic(covariance=lowrank,rank=64,clip=0.5,epsilon=4.0)",
               "dp-synthetic(covariance=class,rank=8,clip=0.3,epsilon=4.0)",
               "sdv-copula()",
               "basis-synthetic(rank=32,covariance=class,pool=0.0,residual=class-diag,"
               "residual_mean=True)",
               "basis-synthetic(rank=32,covariance=class,pool=0.3,residual=class-diag,"
               "residual_mean=True)",
               "basis-synthetic(rank=16,covariance=class,pool=0.5)",
               "dp-basis(public_data=aux,epsilon=4.0)",
               "dp-basis(public_data=aux,covariance=class,pool=0.5,clip_quantile=0.7,"
               "epsilon=4.0)",
               "dp-basis(public_data=aux,basis=dp-lda,rank=16,mean_share=0.7,"
               "resid_share=0.05,epsilon=4.0)",
               "dp-basis(public_data=aux,basis=dp-lda,rank=16,covariance=class,pool=0.5,"
               "mean_share=0.5,resid_share=0.05,clip_quantile=0.7,epsilon=4.0)",
               "smartnoise-dp(public_data=aux,epsilon=4.0,epochs=30)"]


#: issue 35: dp-cells (a few noisy Gaussian cells per class in a stated basis, mu-GDP) per
#: dataset: FSDD's trajectories are 10 time steps (the temporal DCT keeps 4 of them), the other
#: tables have no trajectory layout (the identity basis); the strict row takes its box from
#: held-aside people (public_data=aux) at epsilon 4
ISSUE35: dict[str, dict[str, list[dict[str, Any]]]] = {
    "fsdd": {"dp-cells": [{"block": 10, "keep": 4, "cells": 3, "mu": 5.0},
                          {"block": 10, "keep": 4, "cells": 3, "mu": 6.0},
                          {"block": 10, "keep": 4, "cells": 0, "mu": 4.0},
                          {"public_data": "aux", "block": 10, "keep": 4, "cells": 0,
                           "epsilon": 4.0}]},
    "har-subject": {"dp-cells": [{"basis": "identity", "cells": 2, "covariance": "class",
                                  "pool": 0.0, "mu": 16.0},
                                 {"basis": "identity", "cells": 0, "covariance": "class",
                                  "pool": 0.0, "mu": 16.0}]},
    "synthetic300": {"dp-cells": [{"basis": "identity", "cells": 0, "mu": 4.0},
                                  {"basis": "identity", "cells": 0, "mu": 6.0},
                                  {"basis": "identity", "cells": 2, "mu": 6.0}]},
    "yale": {"dp-cells": [{"basis": "identity", "cells": 0, "mu": 2.0}]},
}


def _issue35_key(name: str) -> list[str]:
    """The labels of a dataset's issue-35 rows (as :func:`label` writes them)."""
    return [f"{m}({','.join(f'{k}={v}' for k, v in p.items())})"
            for m, pts in ISSUE35.get(name, {}).items() for p in pts]


def _synthetic300() -> FeatureTable:
    from bioanon.datasets import make_biometric

    return make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                          random_state=0)


DATASETS = {
    "fsdd": Dataset("fsdd", "digit", "speaker", None, _fsdd,
                    _grid([8, 32, 64], 64, 5, g_leace=32, shrink=(64, [0.5, 0.9]))
                    | ISSUE35["fsdd"],
                    ["vp-mix(g=32)", "vp-mix(g=64)", "selective-mean(g=64,t=0.8,w=10.0,r_p=0.01)",
                     "synthetic()", *ISSUE20_KEY, *_issue35_key("fsdd")]),
    "har-subject": Dataset("har-subject", "activity", "subject", "execution", _har,
                           _grid([4, 8, 16], 16, 5, g_leace=8, shrink=(8, [0.5]))
                           | ISSUE35["har-subject"],
                           ["vp-mix(g=4)", "vp-mix(g=8)",
                            "selective-mean(g=16,t=0.8,w=10.0,r_p=0.01)", "synthetic()",
                            *ISSUE20_KEY, *_issue35_key("har-subject")]),
    "har-gender": Dataset("har-gender", "activity", "gender", "subject", _har,
                          _grid([2, 3, 4, 8, 16], 16, 5, g_leace=8),
                          ["vp-mix(g=4)", "selective-mean(g=16,t=0.8,w=10.0,r_p=0.01)",
                           "synthetic()"]),
    "yale": Dataset("yale", "expression", "subject", None, _yale,
                    _grid([2, 3, 8], 3, 2, small=True) | ISSUE35["yale"],
                    ["vp-mix(g=3)", "selective-mean(g=3,t=0.8,w=10.0,r_p=0.01)",
                     "synthetic()", *ISSUE20_KEY, *_issue35_key("yale")]),
    "synthetic300": Dataset("synthetic300", "expression", "identity", None, _synthetic300,
                            _grid([8, 64], 32, 5) | ISSUE35["synthetic300"],
                            ["vp-mix(g=8)", "vp-mix(g=64)", "synthetic()", *ISSUE20_KEY,
                             *_issue35_key("synthetic300")]),
}


# ---------------------------------------------------------------------- one run
def split_auxiliary(table: FeatureTable, sensitive: str, seed: int = 0
                    ) -> tuple[FeatureTable, FeatureTable]:
    """(auxiliary people, the rest): a random sixth of the identities, at least one (as
    benchmarks/dp_epsilon_sweep.py: FSDD one speaker, SP-SW-HAR held-aside subjects)."""
    ids = table.labels[sensitive].to_numpy()
    people = np.unique(ids)
    aux = np.random.default_rng(seed).choice(people, max(1, people.size // 6), replace=False)
    mask = np.isin(ids, aux)
    return table.subset(np.flatnonzero(mask)), table.subset(np.flatnonzero(~mask))


def build(ds: Dataset, method: str, point: dict[str, Any], public: Any = None) -> Any:
    """The method from the registry, as ``--method METHOD --param KEY=VALUE`` would build it
    (its random state is left unset: the judge derives it from the evaluation seed);
    ``public_data=aux`` takes the held-aside people's records (``public``)."""
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in point.items()
              if k != "public_data"}
    est = build_method(method, params, interest=ds.interest, sensitive=ds.sensitive)
    if point.get("public_data") == "aux":
        est.set_params(public_data=public)
    return est


def model_aware(table: FeatureTable, ds: Dataset, anon: Any, seed: int) -> dict[str, Any]:
    """The model-aware record membership of :mod:`leak_vs_utility` on the judge's split and
    release (same seed): label-aware Gaussian likelihood ratios (full d, the release's
    principal directions, the method's stated basis, mixtures of cells), cross-fitted."""
    from leak_vs_utility import Data
    from leak_vs_utility import evaluate as leak_evaluate

    from bioanon.errors import BioanonError

    basis = None
    if hasattr(anon, "stated_basis"):
        try:
            basis = anon.stated_basis(table.X.shape[1])
        except BioanonError:
            basis = None
    data = Data(ds.name, ds.interest, ds.sensitive, ds.group, lambda: table)
    r = leak_evaluate(table, data, anon, seed, basis=basis, cas=False)
    return {"value": r["membership"], "ci": r["membership_ci"], "attacker": r["attacker"],
            "per_attacker": r["per_attacker"], "unit": "groups" if ds.group else "records",
            "seconds": r["seconds"]}


def run_one(table: FeatureTable, ds: Dataset, method: str, point: dict[str, Any], seed: int,
            models: list[str], n_jobs: int, cache: ModelCache | None = None,
            level: str = DEFAULT_LEVEL, aware: bool = True) -> dict[str, Any]:
    public = None
    if point.get("public_data") == "aux":  # strict: evaluated on the people not held aside
        aux, table = split_auxiliary(table, ds.sensitive)
        public = aux.X
    anon = build(ds, method, point, public)
    t0 = time.perf_counter()
    ev = Evaluation(table, ds.interest, ds.sensitive, anonymizer=anon, models=models,
                    attackers=ATTACKERS, random_state=seed, group=ds.group, n_jobs=n_jobs,
                    cache=cache, verification=False, level=level).evaluate()
    u = ev.utility()[ds.interest]
    cas, clear = u.cas, u.clear
    chance, control = ev.chance(), ev.control()
    base, base_name = ev.baseline()
    worst, adv = ev.worst_case(), ev.advantage()
    mem = max(ev.membership(), key=lambda m: m.auc)
    contrib = ev.contributors()
    row = {
        "dataset": ds.name, "method": method, "params": dict(point),
        "clear": clear.value, "cas": cas.value, "cas_ci": list(cas.ci),
        "cas_ratio": cas.value / clear.value if clear.value else float("nan"),
        "chance": chance, "control": control.value, "control_ci": list(control.ci),
        "baseline": base, "baseline_name": base_name,
        "worst": worst.rate.value, "worst_ci": list(worst.rate.ci),
        "worst_attacker": f"{worst.mode} / {worst.recognizer}",
        "worst_ratio": worst.rate.value / base,
        "advantage": adv.value, "advantage_ci": list(adv.ci),
        "membership_auc": mem.auc, "membership_ci": list(mem.ci),
        "membership_level": mem.level, "membership_attacker": mem.attacker,
        "membership_all": {m.level: m.auc for m in ev.membership()},
        "contributors": None if contrib is None else contrib.to_dict(),
        "attacks": {f"{a.mode}/{a.recognizer}": a.rate.value for a in ev.attacks()},
        "risks": {r.name: {"statistic": r.statistic, "value": r.value, "ci": list(r.ci),
                           "attacker": r.attacker, "status": r.status, "target": r.target}
                  for r in ev.risks()},
        "models": list(models), "seed": seed, "level": _level(level),
        "evaluated_on": "the people not held aside" if public is not None else "every record",
        "differential_privacy": (anon.privacy_statement() if hasattr(anon, "privacy_statement")
                                 else None),
        "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0],
    }
    if aware:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a box from the data: said in the DP statement
            row["model_aware"] = model_aware(table, ds, anon, seed)
    row["goal"] = goals(row)
    return row


def _level(level: str) -> dict[str, Any]:
    lv = resolve_level(level)
    return {"name": lv.name, "record": lv.target("record"), "identity": lv.target("identity")}


#: the statuses the verdict counts as passed
PASSED = ("met", "accepted", "covered by the guarantee")
#: a level the plan says this table cannot show (too few people): what the goal accepts
UNSHOWABLE = "inconclusive at this size"


def goals(row: dict[str, Any]) -> dict[str, bool]:
    """The goals of one row: utility (CAS ≥ 0.95 × clear), attacks (worst ≤ 1.2 × its
    baseline), membership (every measured membership level passed: met, covered by the
    guarantee or accepted; the certificate's cross-fitted figures, not the plain maximum of
    the MIA column over attackers, biased upwards by the choice), every risk passed, and
    every risk passed or unshowable at this size (what the plan says the table cannot show:
    the issue's goal accepts only that).

    >>> r = {"cas_ratio": 0.96, "worst_ratio": 1.0, "risks": {
    ...     "record-membership": {"status": "met"}, "record-recognition": {"status": "met"}}}
    >>> goals(r)
    {'utility': True, 'attacks': True, 'membership': True, 'every_risk': True, 'showable': True}
    """
    risks = row["risks"]
    member = [r["status"] for k, r in risks.items() if k.endswith("-membership")]
    aware = aware_passed(row)
    return {"utility": row["cas_ratio"] >= 0.95, "attacks": row["worst_ratio"] <= 1.2,
            "membership": bool(member) and all(s in PASSED for s in member) and aware,
            "every_risk": all(r["status"] in PASSED for r in risks.values()) and aware,
            "showable": all(r["status"] in (*PASSED, UNSHOWABLE) for r in risks.values())
            and aware}


def aware_passed(row: dict[str, Any]) -> bool:
    """The model-aware record membership (when measured) within the record (or group)
    target: the upper 95% end ≤ the target, or a DP guarantee whose bound is within it.

    >>> aware_passed({"level": {"record": 0.1}, "model_aware": {"ci": [0.0, 0.09]}})
    True
    >>> aware_passed({"level": {"record": 0.1}, "model_aware": {"ci": [0.0, 0.12]}})
    False
    """
    ma = row.get("model_aware")
    if not ma:
        return True
    target = (row.get("level") or {}).get("record")
    if target is None:
        return True
    covered = any(r.get("status") == "covered by the guarantee"
                  for k, r in row.get("risks", {}).items() if k.endswith("membership"))
    return bool(covered or ma["ci"][1] <= target)


def failures(row: dict[str, Any]) -> list[str]:
    """What keeps a row off the goal: each risk not passed as ``name upper-bound > target``
    (its judged end of the 95% interval against the level's target; "unshowable" where the
    table is too small to show the level), and the utility.

    >>> failures({"cas_ratio": 0.9, "risks": {"record-membership": {
    ...     "status": "not met", "ci": [0.05, 0.2], "target": 0.1}}})
    ['utility 0.900 < 0.95', 'record-membership 0.200 > 0.1 (not met)']
    """
    out = [] if row["cas_ratio"] >= 0.95 else [f"utility {row['cas_ratio']:.3f} < 0.95"]
    if not aware_passed(row):
        out.append(f"model-aware record membership {row['model_aware']['ci'][1]:.3f} > "
                   f"{row['level']['record']:g}")
    for name, r in row["risks"].items():
        if r["status"] == UNSHOWABLE:
            out.append(f"{name} unshowable at this size (target {r['target']:g})")
        elif r["status"] not in PASSED:
            out.append(f"{name} {r['ci'][1]:.3f} > {r['target']:g} ({r['status']})")
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per dataset: the best CAS / clear among rows with every risk passed (and among rows
    with every showable risk passed: the goal accepts only what the table cannot show), and
    the best overall with what fails (risk: upper 95% bound against the level's target)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(r["dataset"] for r in rows):
        part = [r for r in rows if r["dataset"] == name]
        safe = [r for r in part if goals(r)["every_risk"]]
        best_safe = max(safe, key=lambda r: r["cas_ratio"], default=None)
        shown = [r for r in part if goals(r)["showable"]]
        best_shown = max(shown, key=lambda r: r["cas_ratio"], default=None)
        best = max(part, key=lambda r: r["cas_ratio"])
        out[name] = {
            "best_every_risk_met": None if best_safe is None else {
                "setting": label(best_safe), "cas_ratio": best_safe["cas_ratio"],
                "cas_ci": [c / best_safe["clear"] for c in best_safe["cas_ci"]],
                "goal_met": best_safe["cas_ratio"] >= 0.95},
            "best_every_showable_risk_met": None if best_shown is None else {
                "setting": label(best_shown), "cas_ratio": best_shown["cas_ratio"],
                "cas_ci": [c / best_shown["clear"] for c in best_shown["cas_ci"]],
                "unshowable": [k for k, v in best_shown["risks"].items()
                               if v["status"] == UNSHOWABLE],
                "goal_met": best_shown["cas_ratio"] >= 0.95},
            "best_overall": {"setting": label(best), "cas_ratio": best["cas_ratio"],
                             "cas_ci": [c / best["clear"] for c in best["cas_ci"]],
                             "fails": failures(best)},
            "meets_goal": [label(r) for r in part if goals(r)["showable"]
                           and r["cas_ratio"] >= 0.95],
        }
    return out


def print_summary(rows: list[dict[str, Any]]) -> None:
    """The per-dataset summary of :func:`summary`, one block per dataset."""
    for name, s in summary(rows).items():
        safe, shown, best = (s["best_every_risk_met"], s["best_every_showable_risk_met"],
                             s["best_overall"])
        print(f"{name}:")
        print("  best with every risk met: " + (
            "none" if safe is None else
            f"{safe['setting']}  CAS/clear {safe['cas_ratio']:.3f} "
            f"[{safe['cas_ci'][0]:.3f}, {safe['cas_ci'][1]:.3f}]"))
        print("  best with every showable risk met: " + (
            "none" if shown is None else
            f"{shown['setting']}  CAS/clear {shown['cas_ratio']:.3f} "
            f"[{shown['cas_ci'][0]:.3f}, {shown['cas_ci'][1]:.3f}]; unshowable: "
            + (", ".join(shown["unshowable"]) or "none")))
        print(f"  best overall: {best['setting']}  CAS/clear {best['cas_ratio']:.3f} "
              f"[{best['cas_ci'][0]:.3f}, {best['cas_ci'][1]:.3f}]; fails: "
              + ("nothing" if not best["fails"] else "; ".join(best["fails"])))
        print("  CAS >= 0.95 x clear with every showable risk met: "
              + (", ".join(s["meets_goal"]) or "none"))


def label(row: dict[str, Any]) -> str:
    params = ",".join(f"{k}={v}" for k, v in row["params"].items()
                      if k != "allow_replacement")
    return f"{row['method']}({params})"


#: the name the model-aware figure takes beside the certificate's risks (tables, charts)
AWARE = "model-aware record-membership"


def risk_view(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The certificate's risks plus the model-aware record membership (when measured), each
    with value, 95% interval, status and target: what the tables and charts show."""
    out = dict(row.get("risks", {}))
    ma = row.get("model_aware")
    if ma:
        target = (row.get("level") or {}).get("record")
        out[AWARE] = {"statistic": "advantage", "value": ma["value"], "ci": list(ma["ci"]),
                      "attacker": ma["attacker"], "target": target,
                      "status": "met" if aware_passed(row) else "not met"}
    return out


def print_risks(rows: list[dict[str, Any]]) -> None:
    """Each setting's CAS / clear against each risk, with 95% intervals and statuses (the
    model-aware record membership beside the certificate's risks)."""
    names = list(dict.fromkeys(k for r in rows for k in risk_view(r)))
    short = {k: k.replace("-membership", "-MIA").replace("-recognition", "-rec")
             .replace("-inference", "-inf").replace(AWARE, "model-aware") for k in names}
    head = f"{'dataset':<12} {'setting':<58} {'CAS/clear [95% CI]':<21} " + " ".join(
        f"{short[k]:<26}" for k in names)
    print(head)
    print("-" * len(head))
    for r in rows:
        lo, hi = (c / r["clear"] for c in r["cas_ci"])
        cells = []
        view = risk_view(r)
        for k in names:
            v = view.get(k)
            if v is None or v["value"] != v["value"]:
                cells.append(f"{'-':<26}")
                continue
            cells.append(f"{v['value']:+.3f} [{v['ci'][0]:+.2f},{v['ci'][1]:+.2f}] "
                         f"{STATUS.get(v['status'], '?'):<3}"[:26].ljust(26))
        print(f"{r['dataset']:<12} {label(r):<58.58} {r['cas_ratio']:.3f} [{lo:.3f},{hi:.3f}] "
              + " ".join(cells))


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (f"{'dataset':<11} {'method':<62} {'clear':>5} {'CAS':>5} {'/clr':>4} "
            f"{'worst [95% CI]':<19} {'attacker':<19} {'chnc':>5} {'ctrl':>5} "
            f"{'adv [95% CI]':<21} {'/base':>5} {'MIA':>5} {'contrib/base':>12} goal  risks")
    print(head)
    print("-" * len(head))
    for r in rows:
        goal = "".join("U" if r["goal"]["utility"] else "-") + \
            ("A" if r["goal"]["attacks"] else "-") + ("M" if r["goal"]["membership"] else "-") + \
            ("R" if r["goal"].get("every_risk") else "-")
        risks = " ".join(f"{k}={STATUS.get(v['status'], '?')}"
                         for k, v in r.get("risks", {}).items())
        c = r.get("contributors")
        contrib = "-" if not c else f"{c['rate']:.2f}/{c['base_rate']:.2f}"
        worst = f"{r['worst']:.3f} [{r['worst_ci'][0]:.3f},{r['worst_ci'][1]:.3f}]"
        adv = f"{r['advantage']:+.3f} [{r['advantage_ci'][0]:+.3f},{r['advantage_ci'][1]:+.3f}]"
        print(f"{r['dataset']:<11} {label(r):<62.62} {r['clear']:>5.3f} {r['cas']:>5.3f} "
              f"{r['cas_ratio']:>4.2f} {worst:<19} {r['worst_attacker']:<19.19} "
              f"{r['chance']:>5.3f} {r['control']:>5.3f} {adv:<21} {r['worst_ratio']:>5.2f} "
              f"{r['membership_auc']:>5.3f} {contrib:>12} {goal}  {risks}")


#: a risk's status in one letter, for the table
STATUS = {"met": "ok", "not met": "NO", "not covered": "n/c", "accepted": "acc",
          "inconclusive at this size": "inc", "covered by the guarantee": "cov"}


def pareto_chart(rows: list[dict[str, Any]], path: Path) -> None:
    """CAS / clear against each risk of the certificate (one panel per risk, 95% intervals).

    The dashed lines are the goals: CAS ≥ 0.95 × clear and each risk's target at the level
    (:mod:`bioanon.levels`, named in the title). Markers: a green star for a row that passes
    every risk of the certificate (met, covered by the guarantee or accepted; a level this
    table is too small to show, "inconclusive at this size", is all the goal accepts), a filled
    circle for this risk passed, a cross for this risk not passed (not met, or inconclusive
    at this size); the star is ringed where the row also reaches CAS ≥ 0.95 × clear.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(k for r in rows for k in risk_view(r)))
    panels = max(1, len(names))
    cols = min(3, panels)
    nrows = -(-panels // cols)
    key_h = 0.13 * len(rows) + 0.3  # inches for the key of the numbered rows
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows + key_h),
                             squeeze=False)
    for ax, name in zip(axes.ravel(), names, strict=False):
        target = next((risk_view(r)[name]["target"] for r in rows if name in risk_view(r)),
                      None)
        drawn = 0
        for i, r in enumerate(rows, 1):
            risk = risk_view(r).get(name)
            if risk is None or risk["value"] != risk["value"]:  # NaN: not measured
                continue
            drawn += 1
            x, (lo, hi) = risk["value"], risk["ci"]
            y = r["cas_ratio"]
            yerr = [[y - r["cas_ci"][0] / r["clear"]], [r["cas_ci"][1] / r["clear"] - y]]
            every = goals(r)["showable"]
            ok = risk["status"] in PASSED
            style = ({"fmt": "*", "color": "tab:green", "ms": 9} if every else
                     {"fmt": "o", "color": "tab:blue", "ms": 5} if ok else
                     {"fmt": "x", "color": "tab:red", "ms": 6})
            ax.errorbar(x, y, xerr=[[x - lo], [hi - x]], yerr=yerr, capsize=2, lw=0.8,
                        **style)
            if every and y >= 0.95:
                ax.plot(x, y, "o", mfc="none", mec="black", ms=13)
            ax.annotate(str(i), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
        if not drawn:
            why = next((risk_view(r)[name]["status"] for r in rows if name in risk_view(r)),
                       "not measured")
            ax.text(0.5, 0.5, f"not measured on any row:\n{why}", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
        ax.axhline(0.95, ls="--", c="gray", lw=0.8)
        if target is not None:
            ax.axvline(target, ls="--", c="tab:red", lw=0.8)
            ax.annotate(f"target {target:g}", (target, ax.get_ylim()[0]), fontsize=6,
                        color="tab:red", xytext=(2, 2), textcoords="offset points")
        stat = next((risk_view(r)[name]["statistic"] for r in rows if name in risk_view(r)),
                    "")
        ax.set_xlabel(f"{name} ({stat}; judged end of the 95% interval ≤ {target})",
                      fontsize=8)
        ax.set_ylabel("CAS / clear (goal ≥ 0.95)", fontsize=8)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    lv = rows[0].get("level") or {"name": DEFAULT_LEVEL}
    targets = ", ".join(f"{k} {v:g}" for k, v in lv.items() if k in ("record", "identity"))
    n_every = sum(goals(r)["showable"] for r in rows)
    fig.suptitle(f"{rows[0]['dataset']}: utility (train on release, score on clear) against "
                 f"each risk at level '{lv['name']}' (membership advantage targets: "
                 f"{targets}); 95% intervals\n* every risk passed or unshowable at this "
                 f"size ({n_every} of {len(rows)} rows; ringed: also CAS ≥ 0.95 × clear), "
                 "o this risk passed, x not passed",
                 fontsize=9)
    key = "\n".join(f"{i:>2}  {'*' if goals(r)['showable'] else ' '} {label(r)}  "
                    f"(CAS / clear {r['cas_ratio']:.3f})" for i, r in enumerate(rows, 1))
    fig.text(0.01, 0.005, key, fontsize=6, family="monospace", va="bottom")
    fig.tight_layout(rect=(0.0, key_h / (4.2 * nrows + key_h), 1.0, 0.95))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "bases":  # issue 43: dp-cells' bases
        from basis_frontier import main as bases_main

        sys.argv = [f"{sys.argv[0]} bases", *sys.argv[2:]]
        bases_main()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=None, choices=list(DATASETS),
                    help="default: every dataset (--quick: fsdd har-subject)")
    ap.add_argument("--quick", action="store_true",
                    help="key rows only (vp-mix at its best g, the selective mean at the "
                    "paper's setting, synthetic), no gradient boosting")
    ap.add_argument("--methods", nargs="+", default=None,
                    help="methods to run (default: every method of the grid)")
    ap.add_argument("--only", nargs="+", default=None,
                    help="run only settings whose label contains one of these strings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--level", default=DEFAULT_LEVEL,
                    help="the privacy level the risks are judged at (bioanon.levels; default "
                    f"{DEFAULT_LEVEL})")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--no-model-aware", action="store_true",
                    help="skip the model-aware record membership (leak_vs_utility's attacker)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "frontier")
    ap.add_argument("--from-json", type=Path, nargs="+", default=None,
                    help="no run: merge earlier frontier.json files, print, chart, write")
    args = ap.parse_args()
    models = QUICK_MODELS if args.quick else MODELS
    names = args.datasets or (["fsdd", "har-subject"] if args.quick else list(DATASETS))
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
        print_risks(rows)
        print_summary(rows)
        write_text_atomic(args.out / "frontier.json", json.dumps(rows, indent=2))
        write_text_atomic(args.out / "summary.json", json.dumps(summary(rows), indent=2))
        print(f"wrote {args.out / 'frontier.json'}, summary.json and pareto_*.png")
        return
    print(f"load average at start {os.getloadavg()}", flush=True)
    rows: list[dict[str, Any]] = []
    for name in names:
        ds = DATASETS[name]
        table = ds.load()
        part = []
        cache = ModelCache()  # clear-trained attackers fitted once per dataset
        for method, points in ds.grid.items():
            if args.methods and method not in args.methods:
                continue
            if method == "smartnoise-dp" and importlib.util.find_spec("snsynth") is None \
                    and not os.environ.get("BIOANON_PEER_PYTHON"):
                print(f"{name} smartnoise-dp: skipped (smartnoise-synth is not installed: "
                      "give its environment's python in BIOANON_PEER_PYTHON)", flush=True)
                continue
            if method == "sdv-copula" and importlib.util.find_spec("sdv") is None:
                print(f"{name} sdv-copula: skipped (SDV is not installed: pip install "
                      "'bioanon[peer]')", flush=True)
                continue
            for point in points:
                lab = label({"method": method, "params": point})
                if args.quick and lab not in ds.key:
                    continue
                if args.only and not any(o in lab for o in args.only):
                    continue
                try:
                    row = run_one(table, ds, method, point, args.seed, models, args.n_jobs,
                                  cache, args.level, not args.no_model_aware)
                except Exception as exc:  # noqa: BLE001 - a failed setting is reported, not fatal
                    print(f"{name} {lab}: skipped ({exc})", flush=True)
                    continue
                part.append(row)
                print_table([row])
                print(f"  {row['seconds']:.0f} s, load average {os.getloadavg()}", flush=True)
                write_text_atomic(args.out / "frontier.json", json.dumps(rows + part, indent=2))
        rows.extend(part)
        if part:
            pareto_chart(part, args.out / f"pareto_{name}.png")
    print()
    print(f"load average {os.getloadavg()}; panel: {', '.join(ATTACKERS)} × "
          f"{', '.join(models)}; seed {args.seed}")
    print_table(rows)
    if rows:
        print_risks(rows)
        print_summary(rows)
        write_text_atomic(args.out / "summary.json", json.dumps(summary(rows), indent=2))
    write_text_atomic(args.out / "frontier.json", json.dumps(rows, indent=2))
    print(f"wrote {args.out / 'frontier.json'}, summary.json and pareto_*.png")


if __name__ == "__main__":
    main()
