"""``bioanon audit`` beside Anonymeter on the same files (issue 45's peer table).

Per table, the population is cut once (seeded) into INPUT (given to the release process),
HOLDOUT (the audit's ``--control`` and Anonymeter's ``control``) and an auxiliary part that
neither sees (the leak-free release's source). Five releases of INPUT are written as CSV files,
as a user would hold them:

- **SDV GaussianCopula**: ``GaussianCopulaSynthesizer`` fitted on INPUT's features and its
  interest column (categorical), normal marginals (SDV's default, beta, is several times
  slower on hundreds of columns), as many rows as INPUT;
- **copy of INPUT**: INPUT itself with its interest and sensitive columns;
- **leak-free Gaussian**: a per-class diagonal Gaussian fitted on the auxiliary part (held
  out, neither INPUT nor HOLDOUT: fitted on HOLDOUT itself, its draws would sit on the
  audit's non-member candidates and read as a negative advantage), as many rows as INPUT
  with classes drawn from the auxiliary part's labels (INPUT's own label column would tell
  its class histogram: a small, real signal);
- **diagonal Gaussian on INPUT**: bioanon's ``SyntheticAnonymizer(covariance="diag")``
  fitted on INPUT;
- **dp-cells**: bioanon's ``dp-cells`` at epsilon 1 (the box from the data: DP in name only,
  a PrivacyLeakWarning; the audit judges it empirically either way).

Asked for by name (``--releases``), releases of the same INPUT by the tools that do the same job:

- **synthcity dpgan / adsgan / tvae** (synthcity's plugins, run in synthcity's own environment:
  ``--synthcity-python``, or ``BIOANON_SYNTHCITY_PYTHON``; it pins torch < 2.3 and numpy < 2,
  so it cannot share bioanon's): fitted on INPUT's features and interest (the interest the
  target column), as many rows as INPUT; ``dpgan`` at ``--epsilon`` (δ = 1/n²), ``adsgan``
  with its identifiability penalty, ``tvae`` plain. ``--synthcity-iterations`` caps their
  training (the plugins' defaults, 1,000 to 10,000 iterations, take hours on two cores): the
  cap is written beside each row;
- **bioanon release**: ``bioanon release INPUT`` as a user runs it (``--seed``), accepting by
  name only what its plan says this table cannot show (``benchmarks/recertify.py``'s rule);
  **bioanon release dp**: the same at ``--epsilon`` with the auxiliary part as
  ``--public-data`` (strict DP at the record level). A refused release has no row to audit:
  its refusal line is printed instead.

Each release is audited by ``bioanon audit`` (the command line, ``-q --json``, timed wall and
CPU) and by Anonymeter 1.x (singling out, multivariate; linkability, the features in two
halves, 10 neighbours; inference of the interest from the features), ``n_attacks`` each, on
the same files. A peer that is not installed is skipped with a line saying so (SDV: that
release is left out; Anonymeter: its columns are empty).

Tables: ``fsdd`` (the MFCC table ``bioanon extract voice`` writes; 6 speakers, so the cut is
by recording: thirds of each speaker's recordings) and ``synthetic300`` (300 people × 12
records × 128 features; cut by person: 45% INPUT, 45% HOLDOUT, 10% auxiliary).

    python benchmarks/audit_peers.py [--tables fsdd,synthetic300] [--fsdd /tmp/audit-voice.parquet]
        [--releases KIND,...] [--synthcity-python PATH] [--synthcity-iterations 300]
        [--epsilon 4] [--n-attacks 200] [--seed 0] [--out benchmarks/results/audit_peers.json]

SDV and Anonymeter are not bioanon dependencies: run it from a virtual environment that has
them (see docs/audit.md, "Peers").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bioanon.anonymize import SyntheticAnonymizer
from bioanon.anonymize.registry import get_method
from bioanon.io import write_text_atomic
from bioanon.table import FeatureTable

OUT = Path(__file__).resolve().parent / "results" / "audit_peers.json"
RELEASES = ("SDV GaussianCopula", "copy of INPUT", "leak-free Gaussian",
            "diagonal Gaussian on INPUT", "dp-cells")
#: the release kinds asked for by name only (each needs more than this environment, or minutes)
SYNTHCITY = ("synthcity dpgan", "synthcity adsgan", "synthcity tvae")
BIOANON = ("bioanon release", "bioanon release dp")
#: synthcity's side: read INPUT's CSV, fit one plugin, write as many rows as INPUT (run by
#: synthcity's own interpreter; argv: input, output, interest, plugin, iterations, epsilon,
#: seed)
SYNTHCITY_WORKER = """
import sys, warnings
warnings.filterwarnings("ignore")
import pandas as pd
from synthcity.plugins import Plugins
from synthcity.plugins.core.dataloader import GenericDataLoader
src, dst, interest, plugin, iters, eps, seed = sys.argv[1:8]
frame = pd.read_csv(src)
frame[interest] = frame[interest].astype(str)
kw = {"n_iter": int(iters), "random_state": int(seed)}
if plugin == "dpgan":
    kw.update(epsilon=float(eps), delta=1.0 / len(frame) ** 2)
model = Plugins().get(plugin, **kw)
model.fit(GenericDataLoader(frame, target_column=interest))
out = model.generate(count=len(frame)).dataframe()
out[list(frame.columns)].to_csv(dst, index=False)
"""


def have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def load(name: str, fsdd: Path | None) -> tuple[FeatureTable, str, str]:
    """The table, its interest and its sensitive (identity) column."""
    if name == "synthetic300":
        from bioanon.datasets import make_biometric

        return (make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                               random_state=0), "expression", "identity")
    if fsdd is not None and fsdd.exists():
        return FeatureTable.read(fsdd), "digit", "speaker"
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(), "digit", "speaker"


def cut(table: FeatureTable, name: str, sensitive: str, seed: int
        ) -> tuple[FeatureTable, FeatureTable, FeatureTable]:
    """(INPUT, HOLDOUT, auxiliary): see the module's text."""
    rng = np.random.default_rng(seed)
    ids = table.labels[sensitive].astype(str).to_numpy()
    people, codes = np.unique(ids, return_inverse=True)
    if name == "fsdd":  # thirds of each speaker's recordings
        order = rng.permutation(ids.size)
        order = order[np.argsort(codes[order], kind="stable")]
        starts = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]
        counts = np.diff(np.r_[starts, ids.size])
        rank = np.empty(ids.size, np.int64)
        rank[order] = np.arange(ids.size) - np.repeat(starts, counts)
        size = np.empty(ids.size, np.int64)
        size[order] = np.repeat(counts, counts)
        part = (3 * rank) // size
    else:  # by person: 45% / 45% / 10%
        role = rng.permutation(people.size)[codes] * 20 // people.size
        part = np.where(role < 9, 0, np.where(role < 18, 1, 2))
    return tuple(table.subset(np.flatnonzero(part == k)) for k in range(3))  # type: ignore


def class_gaussian(fit_on: FeatureTable, like: FeatureTable, interest: str,
                   seed: int) -> np.ndarray:
    """A per-class diagonal Gaussian with ``fit_on``'s moments, one draw per ``like`` row."""
    rng = np.random.default_rng(seed)
    y, y_fit = like.labels[interest].astype(str).to_numpy(), \
        fit_on.labels[interest].astype(str).to_numpy()
    X = np.empty(like.X.shape, np.float32)
    for c in np.unique(y):
        Z, w = fit_on.X[y_fit == c], y == c
        X[w] = Z.mean(0) + rng.standard_normal((int(w.sum()), Z.shape[1])) * Z.std(0)
    return X


def sdv_copula(m: FeatureTable, interest: str, seed: int) -> pd.DataFrame:
    """SDV's GaussianCopulaSynthesizer on INPUT's features and interest, as a user runs it."""
    from sdv.metadata import Metadata
    from sdv.single_table import GaussianCopulaSynthesizer

    names = list(m.feature_names)
    frame = pd.DataFrame(m.X.astype(np.float64), columns=names)
    frame[interest] = m.labels[interest].astype(str).to_numpy()
    cols = {c: {"sdtype": "numerical"} for c in names}
    cols[interest] = {"sdtype": "categorical"}
    meta = Metadata.load_from_dict({"tables": {"table": {"columns": cols}}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = GaussianCopulaSynthesizer(meta, enforce_rounding=False,
                                          default_distribution="norm")
        try:  # SDV 2 takes {table name: frame}; SDV 1 the frame itself
            synth.fit({"table": frame})
        except Exception:  # noqa: BLE001 - the other calling convention
            synth.fit(frame)
        synth._set_random_state(seed)
        out = synth.sample(num_rows=m.n_records)
    if isinstance(out, dict):
        out = next(iter(out.values()))
    return out[[interest, *names]]


def frame_of(X: np.ndarray, like: FeatureTable, columns: list[str]) -> pd.DataFrame:
    out = like.labels[columns].astype(str).reset_index(drop=True)
    return pd.concat([out, pd.DataFrame(np.asarray(X, np.float32),
                                        columns=list(like.feature_names))], axis=1)


def release(kind: str, m: FeatureTable, aux: FeatureTable, interest: str, sensitive: str,
            seed: int) -> pd.DataFrame:
    if kind == "SDV GaussianCopula":
        return sdv_copula(m, interest, seed)
    if kind == "copy of INPUT":
        return frame_of(m.X, m, [interest, sensitive])
    if kind == "leak-free Gaussian":  # classes drawn from the auxiliary part's labels too
        like = aux.subset(np.sort(np.random.default_rng([seed, 1]).choice(
            aux.n_records, size=m.n_records, replace=True)))
        return frame_of(class_gaussian(aux, like, interest, seed), like, [interest])
    if kind == "diagonal Gaussian on INPUT":
        est = SyntheticAnonymizer(interest, covariance="diag", random_state=seed)
    else:
        est = get_method("dp-cells")(interest=interest, epsilon=1.0, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dp-cells: the box from the data (said above)
        X = est.fit_transform(m, m.labels)
    return frame_of(np.asarray(getattr(X, "X", X)), m, [interest])


def synthcity_release(kind: str, m: FeatureTable, interest: str, seed: int, python: str,
                      iterations: int, epsilon: float, work: Path) -> pd.DataFrame:
    """One synthcity plugin fitted on INPUT's features and interest, in synthcity's own
    interpreter (:data:`SYNTHCITY_WORKER`); its rows as a frame."""
    src, dst = work / "synthcity-input.csv", work / (kind.replace(" ", "-") + ".raw.csv")
    frame_of(m.X, m, [interest]).to_csv(src, index=False)
    res = subprocess.run([python, "-c", SYNTHCITY_WORKER, str(src), str(dst), interest,
                          kind.split()[1], str(iterations), str(epsilon), str(seed)],
                         capture_output=True, text=True, check=False,
                         cwd=work)  # synthcity caches its metrics in ./workspace
    if res.returncode != 0:
        raise RuntimeError((res.stderr.strip().splitlines() or ["no message"])[-1])
    return pd.read_csv(dst)


def bioanon_release(kind: str, name: str, files: dict[str, Path], work: Path, seed: int,
                    epsilon: float) -> tuple[Path | None, dict[str, Any]]:
    """``bioanon release`` of INPUT as a user runs it (``benchmarks/recertify.py``): the file
    it wrote (None when it refused) and recertify's summary of the run."""
    sys.path.insert(0, str(Path(__file__).parent))
    import recertify

    extra = [] if kind == "bioanon release" else [
        "--epsilon", f"{epsilon:g}", "--public-data", str(files["auxiliary"])]
    run = recertify.one(recertify.CASES[name], files["input"], work, seed, extra)
    run.pop("document", None)
    out = work / f"{name}{'_dp' if extra else ''}_rel.parquet"
    return (out if run["outcome"] == "certified" and out.exists() else None), run


def bioanon_audit(files: dict[str, Path], interest: str, sensitive: str) -> dict[str, Any]:
    """``bioanon -q audit ... --json`` in a fresh process: its document, wall and CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "bioanon", "-q", "audit", str(files["input"]),
                          str(files["released"]), "--control", str(files["holdout"]),
                          "--interest", interest, "--sensitive", sensitive, "--json"],
                         capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in (0, 1):
        raise RuntimeError(res.stderr.strip().splitlines()[-1])
    doc = json.loads(res.stdout)
    risks = {r["name"]: {"value": r["value"], "ci": r["ci"], "status": r["status"],
                         "attacker": r["attacker"]} for r in doc["risks"]}
    return {"verdict": doc["verdict"]["status"], "risks": risks,
            "cas": doc["utility"]["cas"]["value"], "clear": doc["utility"]["clear"]["value"],
            "copied_rows": doc["findings"]["copied_rows"], "seconds": wall,
            "cpu_seconds": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime), "load": load}


def anonymeter_audit(files: dict[str, Path], interest: str, n_attacks: int, seed: int
                     ) -> dict[str, Any]:
    """Anonymeter's three evaluators on the same files (features and the interest)."""
    from anonymeter.evaluators import (
        InferenceEvaluator,
        LinkabilityEvaluator,
        SinglingOutEvaluator,
    )

    def read(p: Path) -> pd.DataFrame:
        t = FeatureTable.read(p) if p.suffix == ".parquet" else None
        f = pd.read_csv(p) if t is None else t.to_frame()
        f[interest] = f[interest].astype(str).str.replace(r"\.0$", "", regex=True)
        return f

    ori, syn, ctrl = read(files["input"]), read(files["released"]), read(files["holdout"])
    feats = [c for c in syn.columns if c in ori.columns and c != interest
             and pd.api.types.is_numeric_dtype(syn[c])]
    cols = [interest, *feats]
    ori, syn, ctrl = ori[cols], syn[cols], ctrl[cols]
    out: dict[str, Any] = {"n_attacks": n_attacks, "load": os.getloadavg()[0]}
    t0 = time.perf_counter()
    half = len(feats) // 2
    evaluators = {
        "singling out": lambda: SinglingOutEvaluator(
            ori, syn, n_attacks=n_attacks, control=ctrl, seed=seed).evaluate("multivariate"),
        "linkability": lambda: LinkabilityEvaluator(
            ori, syn, (feats[:half], feats[half:]), n_attacks=n_attacks, n_neighbors=10,
            control=ctrl).evaluate(n_jobs=1),
        "inference": lambda: InferenceEvaluator(
            ori, syn, feats, interest, n_attacks=n_attacks, control=ctrl).evaluate(n_jobs=1),
    }
    for name, make in evaluators.items():
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ev = make()
                r = ev.risk(confidence_level=0.95)
                out[name] = {"risk": float(r.value), "ci": [float(x) for x in r.ci],
                             "seconds": time.perf_counter() - t1}
            except Exception as exc:  # noqa: BLE001 - reported, not fatal
                out[name] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    out["seconds"] = time.perf_counter() - t0
    return out


def fmt(x: dict[str, Any] | None, key: str = "value") -> str:
    v = None if not x or "error" in x else x.get(key)
    if v is None or not np.isfinite(v):
        return "—"
    return f"{x[key]:+.3f} [{x['ci'][0]:+.2f}, {x['ci'][1]:+.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="fsdd,synthetic300")
    ap.add_argument("--fsdd", type=Path, default=Path("/tmp/audit-voice.parquet"))
    ap.add_argument("--releases", default=",".join(RELEASES),
                    help="release kinds, comma-separated: " + ", ".join(
                        RELEASES + SYNTHCITY + BIOANON) + " (default: the first five)")
    ap.add_argument("--synthcity-python", default=os.environ.get("BIOANON_SYNTHCITY_PYTHON"),
                    help="interpreter of an environment with synthcity (its pins clash "
                         "with bioanon's)")
    ap.add_argument("--synthcity-iterations", type=int, default=300)
    ap.add_argument("--epsilon", type=float, default=4.0,
                    help="epsilon of synthcity's dpgan and of 'bioanon release dp'")
    ap.add_argument("--n-attacks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    kinds = [k for k in args.releases.split(",") if k]
    if not have("sdv") and "SDV GaussianCopula" in kinds:
        print("skipping SDV GaussianCopula: SDV is not installed (pip install sdv)",
              flush=True)
        kinds.remove("SDV GaussianCopula")
    unknown = sorted(set(kinds) - set(RELEASES + SYNTHCITY + BIOANON))
    if unknown:
        ap.error(f"unknown release kind(s) {unknown}")
    if not args.synthcity_python and any(k in SYNTHCITY for k in kinds):
        print("skipping synthcity: no --synthcity-python (its environment's interpreter)",
              flush=True)
        kinds = [k for k in kinds if k not in SYNTHCITY]
    peer = have("anonymeter")
    if not peer:
        print("skipping Anonymeter: it is not installed (pip install anonymeter)", flush=True)
    result: dict[str, Any] = {"n_attacks": args.n_attacks, "seed": args.seed, "tables": {},
                              "cores": os.cpu_count()}
    for name in args.tables.split(","):
        table, interest, sensitive = load(name, args.fsdd)
        m, h, aux = cut(table, name, sensitive, args.seed)
        result["tables"][name] = {"n_input": m.n_records, "n_holdout": h.n_records,
                                  "n_auxiliary": aux.n_records,
                                  "n_features": table.n_features, "releases": {}}
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            m.write(d / "input.parquet")
            h.write(d / "holdout.parquet")
            aux.write(d / "auxiliary.parquet")
            base = {"input": d / "input.parquet", "holdout": d / "holdout.parquet",
                    "auxiliary": d / "auxiliary.parquet"}
            for kind in kinds:
                row: dict[str, Any] = {}
                t0 = time.perf_counter()
                if kind in BIOANON:
                    rel, run = bioanon_release(kind, name, base, d, args.seed, args.epsilon)
                    row["release"] = run
                    if rel is None:
                        print(f"{name:<12} {kind:<27} refused: {run.get('message')}",
                              flush=True)
                        result["tables"][name]["releases"][kind] = row
                        continue
                else:
                    if kind in SYNTHCITY:
                        frame = synthcity_release(kind, m, interest, args.seed,
                                                  args.synthcity_python,
                                                  args.synthcity_iterations, args.epsilon, d)
                        row["iterations"] = args.synthcity_iterations
                    else:
                        frame = release(kind, m, aux, interest, sensitive, args.seed)
                    rel = d / (kind.replace(" ", "-") + ".csv")
                    frame.to_csv(rel, index=False)
                row["release_seconds"] = time.perf_counter() - t0
                files = {**base, "released": rel}
                row["bioanon"] = bioanon_audit(files, interest, sensitive)
                row["anonymeter"] = anonymeter_audit(files, interest, args.n_attacks,
                                                     args.seed) if peer else None
                result["tables"][name]["releases"][kind] = row
                b, a = row["bioanon"], row["anonymeter"] or {}
                r = b["risks"]
                print(f"{name:<12} {kind:<27} bioanon: {b['verdict']}; membership "
                      f"{fmt(r.get('record-membership'))}; identity "
                      f"{fmt(r.get('identity-membership'))}; inference "
                      f"{fmt(r.get('record-inference'))}; recognition "
                      f"{fmt(r.get('record-recognition'))}; CAS {b['cas']:.3f} "
                      f"(clear {b['clear']:.3f}); {b['seconds']:.1f} s "
                      f"({b['cpu_seconds']:.1f} s CPU, load {b['load']:.1f}); made in "
                      f"{row['release_seconds']:.0f} s"
                      + ("" if not a else
                         f" | Anonymeter: singling out {fmt(a.get('singling out'), 'risk')};"
                         f" linkability {fmt(a.get('linkability'), 'risk')}; inference "
                         f"{fmt(a.get('inference'), 'risk')}; {a['seconds']:.1f} s "
                         f"(load {a['load']:.1f})"), flush=True)
    result["load_average"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(result, indent=2, default=float))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
