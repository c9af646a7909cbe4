"""The judge's calibration: how often does a release that leaks nothing fail a risk?

A leak-free release draws every record from a per-class Gaussian whose moments are fixed
before the evaluation (taken from the whole table, so members and non-members weigh the same
and the release holds nothing that sets a member apart). Over ``--seeds`` evaluations (each
seed a fresh split, fresh control identities, fresh draws) it reports, per risk and level:

- the mean and standard deviation of the judged figure (AUC: 0.5 is no signal; advantage: 0);
- the mean half-width of its 95% interval, beside 1.96 × the standard deviation across seeds
  (an honest interval is about as wide as the spread it claims);
- coverage: the share of intervals that hold the no-signal value (95% is the promise);
- the false-fail rate: the share of seeds where the risk was judged "not met" or "not covered"
  although nothing leaked, and the share where any risk failed (the verdict's false refusal).

Prints a table (with the load average) and writes JSON.

    PYTHONPATH=src python benchmarks/judge_calibration.py [--dataset synthetic300] [--seeds 20]

``--levels`` calibrates the named privacy levels (issue 27) instead: for each table size
(synthetic populations) and seed, one leak-free evaluation re-judged at every named level
(:data:`bioanon.levels.LEVELS`), counting, among the risks the plan calls showable at that
size and level, how often a leak-free release passes; an identity copy and vp-mix g=8 at the
same sizes, counting how often the verdict refuses them; and at 6 identities, how often the
leak-free release's recognition is failed ("not met": it should be met or inconclusive).

    PYTHONPATH=src python benchmarks/judge_calibration.py --levels [--seeds 30]

``--model-aware`` calibrates the attackers that know the method (issue 34) on the demo's
table, the 300-person population and FSDD. Per seed, a share of the records
(``--held-out``, stratified by class) is set aside and never evaluated; the leak-free release
draws every record from per-class Gaussians whose moments come from those held-out records
(nothing of a candidate in it). The membership and inference risks are judged as an
evaluation judges them (the same split, candidates, targets of the ``standard`` level), once
with every registered attacker and once with the new attackers alone (the model-aware
likelihood ratio and labels, the shadow model), so their own intervals are read. It reports,
per table and risk: how often the leak-free release passes where the plan calls the level
showable (the promise: ≥ 95%), the coverage of zero by the intervals (all attackers; new
attackers alone), and on a few seeds the verdict on a copy of the members and on a per-class
diagonal Gaussian fitted on the members (both must fail). Prints a table, writes JSON.

    PYTHONPATH=src python benchmarks/judge_calibration.py --model-aware [--seeds 30]
        [--tables demo,synthetic300,fsdd] [--leaky-seeds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from bioanon.anonymize.base import AnonymizerMixin, label_values, split_input
from bioanon.evaluation import Evaluation
from bioanon.io import write_text_atomic

OUT = Path(__file__).resolve().parent / "results" / "judge_calibration.json"
NULL = {"AUC": 0.5, "advantage": 0.0}


class FixedClassGaussian(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """Each record → a fresh draw from its class's Gaussian, the moments fixed in advance.

    ``moments`` maps a class to (mean, sd); nothing is learnt from the records released, so
    the release cannot tell a member from a non-member.
    """

    def __init__(self, interest: str = "expression", moments: Any = None,
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.moments = moments
        self.random_state = random_state

    def fit(self, X: Any, labels: Any = None) -> FixedClassGaussian:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, labels = split_input(X, labels)
        y = label_values(labels, self.interest, X.shape[0]).astype(str)
        classes = np.array(sorted(self.moments))
        mean = np.stack([self.moments[c][0] for c in classes])
        sd = np.stack([self.moments[c][1] for c in classes])
        codes = np.searchsorted(classes, y)
        rng = np.random.default_rng(self.random_state)
        return (mean[codes] + rng.normal(size=X.shape) * sd[codes]).astype(np.float32)


def moments_of(table: Any, interest: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    y = table.labels[interest].astype(str).to_numpy()
    X = np.asarray(table.X, np.float64)
    return {c: (X[y == c].mean(0), X[y == c].std(0)) for c in np.unique(y)}


def load(name: str) -> tuple[Any, str, str, str | None]:
    if name == "synthetic300":
        from bioanon.datasets import make_biometric

        t = make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                           random_state=0)
        return t, "expression", "identity", None
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker", None


#: the sizes of the levels' calibration: (identities, records per identity)
SIZES = ((60, 20), (300, 12), (520, 10))
FAST_PANEL = {"models": "knn", "attackers": "naive,parrot,reverse", "n_jobs": 1,
              "verification": False, "selection": None}


class Copy(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """The identity copy: releases the records themselves (every risk should fail)."""

    def fit(self, X: Any, labels: Any = None) -> Copy:
        return self

    def transform(self, X: Any, labels: Any = None) -> np.ndarray:
        X, _ = split_input(X, labels)
        return np.asarray(X, np.float32).copy()


def levels_main(seeds: int, out: Path, sizes: tuple[tuple[int, int], ...] = SIZES,
                leaky_seeds: int = 3) -> None:
    """Pass rates of leak-free releases per named level and size (showable risks only),
    refusal rates of the identity copy and vp-mix g=8, recognition at 6 identities."""
    from bioanon.anonymize.registry import build_method
    from bioanon.datasets import make_biometric
    from bioanon.evaluation.verdict import verdict
    from bioanon.levels import LEVELS
    from bioanon.plan import SHOWABLE, make_plan

    start = time.perf_counter()
    result: dict[str, Any] = {"seeds": seeds, "leaky_seeds": leaky_seeds, "sizes": []}
    for n_id, per in sizes:
        t = make_biometric(n_identities=n_id, records_per_identity=per, random_state=0)
        anon = FixedClassGaussian("expression", moments_of(t, "expression"))
        plans = {name: make_plan(t, "expression", "identity", level=name) for name in LEVELS}
        passes: dict[str, dict[str, list[bool]]] = {name: {} for name in LEVELS}
        for seed in range(1, seeds + 1):
            ev = Evaluation(t, "expression", "identity", anonymizer=anon, random_state=seed,
                            **FAST_PANEL).evaluate()
            for name, plan in plans.items():
                v = verdict(ev, level=name)
                for r in v.risks:
                    row = plan.row(r.name)
                    if row is not None and row.status == SHOWABLE:
                        passes[name].setdefault(r.name, []).append(r.passes)
            print(f"{n_id}x{per} seed {seed}: showable risks passed " + "  ".join(
                f"{name} {sum(v[-1] for v in d.values())}/{len(d)}"
                for name, d in passes.items() if d)
                + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
        refused: dict[str, dict[str, int]] = {}
        for label, make in (("identity copy", lambda: Copy()),
                            ("vp-mix g=8", lambda: build_method(
                                "vp-mix", {"g": 8}, interest="expression",
                                sensitive="identity", additional=[], random_state=None))):
            for seed in range(1, leaky_seeds + 1):
                ev = Evaluation(t, "expression", "identity", anonymizer=make(),
                                random_state=seed, **FAST_PANEL).evaluate()
                for name in LEVELS:
                    d = refused.setdefault(label, {}).setdefault(name, 0)
                    refused[label][name] = d + (not verdict(ev, level=name).met)
        entry = {"identities": n_id, "records_per_identity": per, "records": t.n_records,
                 "plan": {n: [r.name for r in p.rows if r.status == SHOWABLE]
                          for n, p in plans.items()},
                 "leak_free_pass_rate": {n: {k: float(np.mean(v)) for k, v in d.items()}
                                         for n, d in passes.items()},
                 "leak_free_all_showable_pass_rate": {
                     n: float(np.mean([all(v[i] for v in d.values())
                                       for i in range(seeds)])) if d else None
                     for n, d in passes.items()},
                 "leaky_refusal_rate": {lab: {n: c / leaky_seeds for n, c in d.items()}
                                        for lab, d in refused.items()}}
        result["sizes"].append(entry)
        print(json.dumps({k: v for k, v in entry.items()}, indent=1), flush=True)
    # recognition at 6 identities (the issue's case): a release with no identity information
    t6 = make_biometric(n_identities=6, records_per_identity=100, random_state=0)
    anon6 = FixedClassGaussian("expression", moments_of(t6, "expression"))
    statuses = []
    for seed in range(1, seeds + 1):
        ev = Evaluation(t6, "expression", "identity", anonymizer=anon6, random_state=seed,
                        membership=False, inference=False, **FAST_PANEL).evaluate()
        statuses.append(next(r.status for r in ev.risks() if r.risk == "recognition"))
    result["six_identities_recognition"] = {s: statuses.count(s) for s in set(statuses)}
    result["seconds"] = time.perf_counter() - start
    result["load_average"] = os.getloadavg()[0]
    print(json.dumps(result["six_identities_recognition"]),
          f"{result['seconds']:.0f} s (load {result['load_average']:.2f})")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2))
    print(f"wrote {out}")


# ---------------------------------------------------------------------- model-aware
MODEL_AWARE_TABLES = ("demo", "synthetic300", "fsdd")


def _model_aware_table(name: str) -> tuple[Any, str, str]:
    from bioanon.datasets import make_biometric

    if name == "demo":  # what `bioanon demo` certifies (cli/demo.py's sizes)
        return (make_biometric(n_identities=520, records_per_identity=10, random_state=0),
                "expression", "identity")
    if name == "synthetic300":
        return (make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                               random_state=0), "expression", "identity")
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker"


def _new_only() -> tuple[list[Any], list[Any]]:
    from bioanon.attack import parametric, shadow

    return ([parametric.MEMBERSHIP, shadow.MEMBERSHIP], [parametric.INFERENCE])


def _judge_release(table: Any, interest: str, sensitive: str, anonymizer: Any, seed: int,
                   new_only: bool) -> list[Any]:
    """The membership and inference risks of one release, as an evaluation judges them at
    the standard level (same split, candidates, caps and seeds), with every registered
    attacker or (``new_only``) with the new ones alone."""
    import dataclasses

    from bioanon.attack import registry
    from bioanon.evaluation.options import EvaluationOptions
    from bioanon.evaluation.protocol import _with_seed
    from bioanon.evaluation.risks.base import RiskContext
    from bioanon.evaluation.risks.inference import InferenceRisk
    from bioanon.evaluation.risks.membership import MembershipRisk
    from bioanon.evaluation.split import split_table
    from bioanon.levels import resolve_level
    from bioanon.table import FeatureTable

    opts = EvaluationOptions.of()
    tr, te = split_table(table, interest, sensitive, opts.test_size, seed)
    train, test = table.subset(tr), table.subset(te)
    anon = _with_seed(anonymizer, seed)
    from sklearn.base import clone

    out = clone(anon).fit_transform(test, test.labels)
    X = np.asarray(out.X if isinstance(out, FeatureTable) else out, np.float32)
    ctx = RiskContext(train, test, X, anon, interest, sensitive, [interest], None, seed,
                      max_candidates=opts.max_candidates)
    level = resolve_level("standard")
    saved = (registry.MEMBERSHIP, registry.INFERENCE)
    res: list[Any] = []
    try:
        if new_only:
            registry.MEMBERSHIP, registry.INFERENCE = _new_only()
            ctx = dataclasses.replace(ctx, attack_cache={})
        res += MembershipRisk(ctx, level).evaluate().results()
        res += InferenceRisk(ctx, level).evaluate().results()
    finally:
        registry.MEMBERSHIP, registry.INFERENCE = saved
    return res


def _held_out(table: Any, interest: str, share: float, seed: int) -> tuple[Any, Any]:
    """(moments of a stratified ``share`` of the records, the table without them)."""
    rng = np.random.default_rng(10_000 + seed)
    y = table.labels[interest].astype(str).to_numpy()
    out = np.zeros(y.size, bool)
    for c in np.unique(y):  # a loop over classes
        rows = np.flatnonzero(y == c)
        out[rng.choice(rows, max(2, int(round(share * rows.size))), replace=False)] = True
    held = table.subset(np.flatnonzero(out))
    return moments_of(held, interest), table.subset(np.flatnonzero(~out))


def model_aware_main(tables: list[str], seeds: int, leaky_seeds: int, share: float,
                     out: Path) -> None:
    """Leak-free pass rates and coverage of the new attackers; a copy and a diagonal
    Gaussian of the members refused (see the module docstring)."""
    from bioanon.anonymize import SyntheticAnonymizer
    from bioanon.plan import SHOWABLE, make_plan

    start = time.perf_counter()
    result: dict[str, Any] = {"seeds": seeds, "leaky_seeds": leaky_seeds,
                              "held_out_share": share, "level": "standard", "tables": {}}
    for name in tables:
        full, interest, sensitive = _model_aware_table(name)
        rows: dict[str, dict[str, list[Any]]] = {}
        t0 = time.perf_counter()
        for seed in range(1, seeds + 1):
            moments, table = _held_out(full, interest, share, seed)
            plan = make_plan(table, interest, sensitive, level="standard")
            anon = FixedClassGaussian(interest, moments, random_state=seed)
            for panel in ("all", "new"):
                for r in _judge_release(table, interest, sensitive, anon, seed,
                                        panel == "new"):
                    row = plan.row(r.name)
                    d = rows.setdefault(r.name, {"showable": [], "all": [], "new": []})
                    if panel == "all":
                        d["showable"].append(row is not None and row.status == SHOWABLE)
                    d[panel].append({"seed": seed, "value": r.value, "ci": list(r.ci),
                                     "status": r.status, "attacker": r.attacker})
            print(f"{name} seed {seed}: " + "  ".join(
                f"{k} {v['all'][-1]['value']:+.3f}/{v['new'][-1]['value']:+.3f} "
                f"{v['all'][-1]['status']}" for k, v in rows.items()
                if np.isfinite(v["all"][-1]["value"]))
                + f"  ({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f})",
                flush=True)
        summary = {}
        for risk, d in rows.items():
            entry: dict[str, Any] = {"showable_share": float(np.mean(d["showable"]))}
            for panel in ("all", "new"):
                v = np.array([x["value"] for x in d[panel]], float)
                lo = np.array([x["ci"][0] for x in d[panel]], float)
                hi = np.array([x["ci"][1] for x in d[panel]], float)
                ok = np.isfinite(v)
                passed = [x["status"] == "met" for x, sh in zip(d[panel], d["showable"],
                                                                strict=True) if sh]
                entry[panel] = {
                    "mean": float(v[ok].mean()) if ok.any() else None,
                    "sd": float(v[ok].std(ddof=1)) if ok.sum() > 1 else None,
                    "coverage_of_zero": float(np.mean((lo[ok] <= 0) & (0 <= hi[ok])))
                    if ok.any() else None,
                    "pass_rate_where_showable": float(np.mean(passed)) if passed else None,
                    "showable_seeds": len(passed)}
            entry["seeds"] = d
            summary[risk] = entry
        leaky: dict[str, Any] = {}
        for label, leak in (("copy of the members", Copy()),
                            ("diagonal Gaussian fitted on the members",
                             SyntheticAnonymizer(interest, covariance="diag"))):
            got = []
            for seed in range(1, leaky_seeds + 1):
                res = _judge_release(full, interest, sensitive, leak, seed, False)
                rec = next(r for r in res if r.name == "record-membership")
                got.append({"seed": seed, "value": rec.value, "ci": list(rec.ci),
                            "status": rec.status, "attacker": rec.attacker,
                            "failed": [r.name for r in res if r.status == "not met"]})
            leaky[label] = {"refused": sum(bool(g["failed"]) for g in got) / len(got),
                            "record_membership_not_met": float(np.mean(
                                [g["status"] == "not met" for g in got])),
                            "seeds": got}
        result["tables"][name] = {"records": full.n_records, "features": full.n_features,
                                  "risks": summary, "leaky": leaky,
                                  "seconds": time.perf_counter() - t0}
        _print_model_aware(name, summary, leaky)
    result["seconds"] = time.perf_counter() - start
    result["load_average"] = os.getloadavg()[0]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2))
    print(f"{result['seconds']:.0f} s (load {result['load_average']:.2f}); wrote {out}")


def _print_model_aware(name: str, summary: dict[str, Any], leaky: dict[str, Any]) -> None:
    def f(v: Any, fmt: str = ".3f") -> str:
        return "—" if v is None else format(v, fmt)

    print(f"\n{name}: leak-free release (moments from held-out records), standard level")
    print(f"{'risk':<22} {'showable':>8} {'pass (all)':>10} {'mean (all)':>10} "
          f"{'cover 0':>8} {'mean (new)':>10} {'cover 0 (new)':>13}")
    for risk, e in summary.items():
        a, n = e["all"], e["new"]
        rate = f(a["pass_rate_where_showable"], ".2f")
        print(f"{risk:<22} {e['showable_share']:>8.2f} {rate:>10} {f(a['mean'], '+.3f'):>10} "
              f"{f(a['coverage_of_zero'], '.2f'):>8} {f(n['mean'], '+.3f'):>10} "
              f"{f(n['coverage_of_zero'], '.2f'):>13}")
    for label, d in leaky.items():
        vals = ", ".join(f"{g['value']:+.3f} [{g['ci'][0]:+.3f}, {g['ci'][1]:+.3f}] "
                         f"{g['status']} ({g['attacker'][:40]})" for g in d["seeds"])
        print(f"{label}: refused {d['refused']:.0%}; record membership {vals}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", action="store_true",
                    help="calibrate the named privacy levels per table size (issue 27)")
    ap.add_argument("--dataset", default="synthetic300", choices=["synthetic300", "fsdd"])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--models", default="logreg,knn")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--model-aware", action="store_true",
                    help="calibrate the attackers that know the method (issue 34)")
    ap.add_argument("--tables", default=",".join(MODEL_AWARE_TABLES),
                    help="--model-aware: tables among demo, synthetic300, fsdd")
    ap.add_argument("--leaky-seeds", type=int, default=3)
    ap.add_argument("--held-out", type=float, default=0.2,
                    help="--model-aware: share of records the leak-free moments come from")
    args = ap.parse_args()
    if args.model_aware:
        model_aware_main([t for t in args.tables.split(",") if t], args.seeds,
                         args.leaky_seeds, args.held_out,
                         args.out.with_name("judge_calibration_model_aware.json"))
        return
    if args.levels:
        levels_main(args.seeds, args.out.with_name("judge_calibration_levels.json"))
        return
    table, interest, sensitive, group = load(args.dataset)
    anon = FixedClassGaussian(interest, moments_of(table, interest))
    per: dict[str, list[dict[str, Any]]] = {}
    any_fail = 0
    start = time.perf_counter()
    for seed in range(1, args.seeds + 1):
        ev = Evaluation(table, interest, sensitive, anonymizer=anon, models=args.models,
                        attackers="naive,parrot,reverse,linkage", random_state=seed,
                        n_jobs=1, verification=False, selection=None, group=group).evaluate()
        failed = False
        for r in ev.risks():
            per.setdefault(r.name, []).append(
                {"seed": seed, "value": r.value, "ci": list(r.ci), "status": r.status,
                 "statistic": r.statistic, "attacker": r.attacker})
            failed |= r.status not in ("met", "accepted")
        any_fail += failed
        print(f"seed {seed}: " + "  ".join(f"{k} {v[-1]['value']:.3f} {v[-1]['status']}"
                                           for k, v in per.items())
              + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    sec = time.perf_counter() - start
    rows = []
    print(f"\n{args.dataset}, leak-free release, {args.seeds} seeds, {sec:.0f} s "
          f"(load {os.getloadavg()[0]:.2f})")
    print(f"{'risk':<22} {'mean':>7} {'sd':>6} {'half-width':>10} {'1.96·sd':>8} "
          f"{'coverage':>8} {'fails':>6}")
    for name, vals in per.items():
        v = np.array([x["value"] for x in vals], float)
        ok = np.isfinite(v)
        null = NULL[vals[0]["statistic"]]
        lo = np.array([x["ci"][0] for x in vals], float)
        hi = np.array([x["ci"][1] for x in vals], float)
        cover = float(np.mean((lo[ok] <= null) & (null <= hi[ok]))) if ok.any() else float("nan")
        fails = float(np.mean([x["status"] not in ("met", "accepted") for x in vals]))
        row = {"risk": name, "null": null, "mean": float(v[ok].mean()) if ok.any() else None,
               "sd": float(v[ok].std(ddof=1)) if ok.sum() > 1 else None,
               "half_width": float(np.mean((hi - lo)[ok]) / 2) if ok.any() else None,
               "coverage": cover, "false_fail_rate": fails, "seeds": vals}
        rows.append(row)
        if ok.sum() > 1:
            print(f"{name:<22} {row['mean']:>7.3f} {row['sd']:>6.3f} {row['half_width']:>10.3f} "
                  f"{1.96 * row['sd']:>8.3f} {cover:>8.2f} {fails:>6.2f}")
        else:
            print(f"{name:<22} not measured ({vals[0]['status']})")
    print(f"any risk failed (false refusal): {any_fail}/{args.seeds}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(
        {"dataset": args.dataset, "seeds": args.seeds, "models": args.models,
         "seconds": sec, "load_average": os.getloadavg()[0],
         "false_refusal_rate": any_fail / args.seeds, "rows": rows}, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
