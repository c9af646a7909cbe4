"""How the cost of each stage-1 attacker and utility model grows with the table's size.

Stage 1 of the search judges every setting with the utility model (CAS: a forest trained on
the release) and every registered membership and inference attacker
(:data:`bioanon.attack.registry.MEMBERSHIP`, :data:`~bioanon.attack.registry.INFERENCE`).
This script times each of them, alone and single-threaded, in CPU seconds, on
``make_biometric`` tables of 10 records per person and 128 features (default 5,000 and
20,000 records; ``--sizes 5000,20000,50000`` for the third point), on the evaluation's own
split (closed set, 25% held out) and its first record-level game (the members: the released
held-out records; the non-members: the training records, at most ``max_candidates`` per
side, the judge's default), for two methods: the selective mean (no release model: the
shadow attacker runs) and a Gaussian synthesizer (a release model: the model-aware attacker
runs).

For each component the table gives the CPU seconds per size and the growth exponent
``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes, beside the exponent n log n would
have; a component growing faster than n log n (by more than :data:`SLACK`) is flagged. The
1-minute load average is printed beside each size (CPU seconds are the steadier figure on a
shared machine). Usage::

    python benchmarks/attacker_cost.py [--sizes 5000,20000] [--seed 0] [--out FILE]

Writes JSON (default ``benchmarks/results/attacker_cost.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "attacker_cost.json"
#: how much faster than n log n a component may grow before it is flagged (timing noise)
SLACK = 0.25


def load() -> float:
    """The 1-minute load average."""
    return round(os.getloadavg()[0], 2)


def cpu(func: Any, *args: Any) -> tuple[float, Any]:
    """(CPU seconds of this process, result) of ``func(*args)``."""
    t0 = time.process_time()
    out = func(*args)
    return time.process_time() - t0, out


def nlogn_exponent(n1: int, n2: int) -> float:
    """The growth exponent n log n shows between n1 and n2."""
    return math.log((n2 * math.log(n2)) / (n1 * math.log(n1))) / math.log(n2 / n1)


def methods() -> dict[str, Any]:
    from bioanon.anonymize import SelectiveMeanAnonymizer
    from bioanon.anonymize.registry import build_method

    return {"selective-mean": SelectiveMeanAnonymizer("expression", g=32, t=0.8, w=10,
                                                      r_p=0.01, random_state=0),
            "synthetic": build_method("synthetic", {}, interest="expression",
                                      sensitive="identity", random_state=0)}


def measure(n: int, seed: int) -> dict[str, Any]:
    """CPU seconds of every component on a table of ``n`` records."""
    from bioanon.attack import make_recognizer, registry
    from bioanon.attack.recognizers import single_threaded
    from bioanon.datasets import make_biometric
    from bioanon.evaluation.caps import capped_rows
    from bioanon.evaluation.options import EvaluationOptions
    from bioanon.evaluation.protocol import anonymize_splits
    from bioanon.evaluation.risks.base import RiskContext
    from bioanon.evaluation.risks.membership import game_of
    from bioanon.evaluation.split import split_table

    opts = EvaluationOptions.of()
    t = make_biometric(n_identities=n // 10, records_per_identity=10, n_features=128,
                       random_state=seed)
    tr, te = split_table(t, "expression", "identity", opts.test_size, seed)
    train, test = t.subset(tr), t.subset(te)
    out: dict[str, Any] = {"n": n, "load": load(), "components": {}}
    comp = out["components"]
    for name, anon in methods().items():
        s, (a_tr, a_te) = cpu(anonymize_splits, anon, train, test)
        a_tr, a_te = np.asarray(a_tr, np.float32), np.asarray(a_te, np.float32)
        comp[f"{name}: anonymize both splits"] = s
        y = train.labels["expression"].to_numpy()
        rows = capped_rows(y, opts.max_fit_records, seed, "utility/expression")
        X_fit, y_fit = (a_tr, y) if rows is None else (a_tr[rows], y[rows])

        def forest(X: np.ndarray = X_fit, y: np.ndarray = y_fit) -> Any:
            est = single_threaded(make_recognizer(opts.utility_model, seed))
            return est.fit(X, y).predict(test.X)

        comp[f"{name}: utility model ({opts.utility_model}, trained on the release)"] = \
            cpu(forest)[0]
        ctx = RiskContext(train, test, a_te, anon, "expression", "identity", ["expression"],
                          None, seed, max_candidates=opts.max_candidates)
        m_rows, n_rows = ctx.candidate_rows()
        mem, non = test.subset(m_rows), train.subset(n_rows)
        cand = np.vstack([mem.X, non.X])
        lab = np.r_[mem.labels["expression"].astype(str).to_numpy(),
                    non.labels["expression"].astype(str).to_numpy()]
        who = np.r_[mem.labels["identity"].astype(str).to_numpy(),
                    non.labels["identity"].astype(str).to_numpy()]
        in_ref = np.r_[-np.ones(m_rows.size, int), n_rows]
        out.setdefault("candidates", int(cand.shape[0]))
        out.setdefault("released", int(a_te.shape[0]))
        for risk, panel, labels in (("membership", registry.MEMBERSHIP, {"expression": lab}),
                                    ("inference", registry.INFERENCE, {})):
            game = game_of(ctx, cand, labels, who, a_te, test.labels, in_ref, None, "record",
                           {}, targets=("expression",) if risk == "inference" else ())
            so_far: dict[str, np.ndarray] = {}
            for a in panel:
                game.cache["panel"], game.cache["scores so far"] = panel, so_far
                _clear_reference_cache()
                s, res = cpu(_run, a, game)
                so_far.update({k: np.asarray(v) for k, v in res.items()})
                if res:  # an attacker that does not apply to the method returns nothing
                    comp[f"{name}: {risk}: {a.name}"] = s
    return out


def _run(attacker: Any, game: Any) -> dict[str, Any]:
    return dict(attacker.run(game))


def _clear_reference_cache() -> None:
    """Each attacker timed from cold (the density attacker's reference side included)."""
    import importlib

    importlib.import_module("bioanon.attack.density")._REFERENCE.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,20000",
                    help="records per table, comma-separated (10 per person, 128 features)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    sizes = [int(s) for s in args.sizes.split(",")]
    runs = []
    with threadpool_limits(limits=1):
        for n in sizes:
            t0 = time.perf_counter()
            r = measure(n, args.seed)
            r["wall_s"] = round(time.perf_counter() - t0, 1)
            runs.append(r)
            print(f"{n} records: {r['candidates']} candidates × {r['released']} released, "
                  f"{r['wall_s']} s wall, load {r['load']}", flush=True)
    names = list(dict.fromkeys(k for r in runs for k in r["components"]))
    rows = []
    for name in names:
        secs = [r["components"].get(name) for r in runs]
        growth = []
        pairs = zip(zip(sizes, secs, strict=True), zip(sizes[1:], secs[1:], strict=True),
                    strict=False)
        for (n1, s1), (n2, s2) in pairs:
            if s1 and s2 and s1 > 0.01:
                growth.append(round(math.log(s2 / s1) / math.log(n2 / n1), 2))
            else:
                growth.append(None)
        ref = [round(nlogn_exponent(a, b), 2) for a, b in zip(sizes, sizes[1:], strict=False)]
        flagged = any(g is not None and g > r + SLACK for g, r in zip(growth, ref, strict=True))
        rows.append({"component": name, "cpu_s": [None if s is None else round(s, 3)
                                                  for s in secs],
                     "exponent": growth, "nlogn_exponent": ref,
                     "faster_than_nlogn": flagged})
    width = max(len(r["component"]) for r in rows)
    head = "  ".join(f"{n:>8}" for n in sizes)
    print(f"\n{'component':<{width}}  {head}  exponent (n log n)  flag")
    for r in rows:
        cells = "  ".join("       —" if s is None else f"{s:8.2f}" for s in r["cpu_s"])
        exps = ", ".join("—" if g is None else f"{g:.2f}" for g in r["exponent"])
        refs = ", ".join(f"{g:.2f}" for g in r["nlogn_exponent"])
        flag = "FASTER than n log n" if r["faster_than_nlogn"] else ""
        print(f"{r['component']:<{width}}  {cells}  {exps} ({refs})  {flag}")
    doc = {"sizes": sizes, "seed": args.seed, "features": 128, "records_per_person": 10,
           "unit": "CPU seconds, one thread, one setting's first record-level game",
           "runs": [{k: v for k, v in r.items() if k != "components"} for r in runs],
           "rows": rows, "machine": platform.platform(), "cpus": os.cpu_count()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
