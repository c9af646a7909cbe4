"""Re-certify what users run: ``bioanon release`` on FSDD, SP-SW-HAR, the 300-person
synthetic population and Yale, as a user would (issue 35's goals).

Each run is the command line a data owner types, at the default level, accepting only what
the plan says the table cannot show: the command first runs without ``--accept-risk``; when
the plan refuses, the risks it calls "inconclusive at this size" are accepted by name (one
``--reason``) and the command runs again. Each row records the certified setting (or the
refusal line), CAS / clear CAS with the CAS interval, every risk's estimate and upper bound
with its attacker and target, the trade-off table per level, the wall time and the load
average (1 min) before and after — timings on a shared machine are under load.

The strict-DP rows (``--strict``) run ``release --epsilon 4 --public-data AUX``, AUX being a
held-aside sixth of the people (``benchmarks/frontier.py``'s :func:`split_auxiliary`), the
release made from the rest.

Usage::

    BIOANON_DATA=../shared/datasets nice -n 10 python benchmarks/recertify.py \
        [--datasets fsdd har synthetic300 yale] [--strict] [--seed 0] [--out DIR]

Prints a line per run and writes ``DIR/recertify.json`` (default DIR:
benchmarks/results/recertify; one entry per run, appended as each run ends, so a long session
keeps the runs done).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bioanon.table import FeatureTable


@dataclass
class Case:
    name: str
    interest: str
    sensitive: str
    group: str | None


CASES = {
    "fsdd": Case("fsdd", "digit", "speaker", None),
    "har": Case("har", "activity", "subject", "execution"),
    "synthetic300": Case("synthetic300", "expression", "identity", None),
    "yale": Case("yale", "expression", "subject", None),
}


def load(name: str) -> FeatureTable:
    """The table a user would extract (the loaders behind ``bioanon extract``)."""
    if name == "fsdd":
        from bioanon.datasets.fsdd import load_fsdd

        return load_fsdd()
    if name == "har":
        from bioanon.datasets.sp_sw_har import load_sp_sw_har

        return load_sp_sw_har(features="stats")
    if name == "yale":
        from bioanon.datasets.yale_faces import load_yale_faces

        return load_yale_faces(features="eigen", subset="expression")
    from bioanon.datasets import make_biometric

    return make_biometric(n_identities=300, records_per_identity=12, n_features=128,
                          random_state=0)


def split_auxiliary(table: FeatureTable, sensitive: str) -> tuple[FeatureTable, FeatureTable]:
    """(held-aside people, the rest), as benchmarks/frontier.py holds them aside."""
    sys.path.insert(0, str(Path(__file__).parent))
    from frontier import split_auxiliary as split

    return split(table, sensitive)


def release_cmd(case: Case, table: Path, out: Path, seed: int,
                extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "bioanon", "-q", "release", str(table), "-o", str(out),
           "--interest", case.interest, "--sensitive", case.sensitive, "--seed", str(seed),
           "--json", "--budget-minutes", "60", *extra]
    if case.group:
        cmd += ["--group", case.group]
    return cmd


def run(cmd: list[str]) -> tuple[dict[str, Any], float, float, float]:
    """(the --json document, wall seconds, load before, load after)."""
    before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        doc = {"outcome": "crash", "message": proc.stderr[-2000:]}
    return doc, wall, before, os.getloadavg()[0]


def accepts_from_plan(plan: dict[str, Any] | None) -> list[str]:
    """``--accept-risk`` for each risk the plan cannot show, with one ``--reason``."""
    names = [r["name"] for r in (plan or {}).get("rows", []) if not r.get("ok", True)]
    if not names:
        return []
    out: list[str] = []
    for n in names:
        out += ["--accept-risk", n]
    return out + ["--reason", "the plan: inconclusive at this size"]


def summarise(doc: dict[str, Any]) -> dict[str, Any]:
    """The figures of a --json document: setting, CAS / clear with the CAS interval (the
    confirmation's, or the closest setting's on a fresh split), every risk (estimate, upper
    bound, target, attacker), the trade-off table and the refusal."""
    verdict = doc.get("verdict") or {}
    summary = doc.get("summary") or {}
    cas = (summary.get("cas") or {})
    clear = (summary.get("utility") or {}).get("clear")
    risks = [{k: r.get(k) for k in ("name", "value", "ci", "target", "status", "attacker")}
             for r in verdict.get("risks", [])]
    rows = []
    report = (doc.get("output") or {}).get("report")
    if report and (Path(report) / "report.json").exists():
        rep = json.loads((Path(report) / "report.json").read_text())
        rows = [{"setting": r["setting"], "fraction": (None if r["cas"] is None  # screened
                                                    else r["cas"] / r["clear"]),
                 "judged_by": r.get("judged_by"), "met": r["met"],
                 "failed": [(x["name"], x["value"], x["ci"][1], x["target"])
                            for x in r["risks"] if x["name"] in r.get("failed_risks", [])]}
                for r in rep["search"]["rows"]]
        if not risks:
            risks = [{k: r.get(k) for k in ("name", "value", "ci", "target", "status",
                                             "attacker")}
                     for r in rep.get("verdict", {}).get("risks", [])]
    return {"outcome": doc.get("outcome"), "setting": doc.get("setting"),
            "message": doc.get("message"), "refusal": doc.get("refusal"),
            "cas": cas.get("value"), "cas_ci": cas.get("ci"), "clear": clear,
            "fraction": None if cas.get("value") is None or not clear
            else cas["value"] / clear, "risks": risks, "tradeoff": doc.get("tradeoff"),
            "search_rows": sorted(rows, key=lambda r: -(r["fraction"] or -1.0))}


def one(case: Case, table: Path, work: Path, seed: int, extra: list[str]) -> dict[str, Any]:
    out = work / f"{case.name}{'_dp' if extra else ''}_rel.parquet"
    doc, wall, l0, l1 = run(release_cmd(case, table, out, seed, extra))
    accepted: list[str] = []
    if doc.get("outcome") == "plan refused":
        accepted = accepts_from_plan(doc.get("plan"))
        if accepted:
            doc, wall, l0, l1 = run(release_cmd(case, table, out, seed, extra + accepted))
    return {"dataset": case.name, "strict_dp": bool(extra), "accepted": accepted[1::2][:-1],
            "wall_s": round(wall, 1), "load_before": round(l0, 2), "load_after": round(l1, 2),
            "command": " ".join(release_cmd(case, table, out, seed, extra + accepted)[1:]),
            **summarise(doc), "document": doc}


def risks_text(risks: list[dict[str, Any]]) -> str:
    """Every measured risk: estimate, upper bound, target and attacker."""
    return "; ".join(f"{x['name']} {x['value']:.3f} [ub {x['ci'][1]:.3f}] /{x['target']} "
                     f"({x.get('attacker')})" for x in risks
                     if isinstance(x.get("value"), float) and x.get("ci"))


def line(r: dict[str, Any]) -> str:
    frac = "—" if r["fraction"] is None else (
        f"{r['fraction']:.3f}× (CAS {r['cas']:.3f} [{r['cas_ci'][0]:.3f}, "
        f"{r['cas_ci'][1]:.3f}] / clear {r['clear']:.3f})")
    risks = risks_text(r["risks"])
    return (f"{r['dataset']}{' dp' if r['strict_dp'] else ''}: {r['outcome']} "
            f"{r['setting']} CAS/clear {frac}; {risks}; {r['wall_s']} s "
            f"(load {r['load_before']}→{r['load_after']})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--strict", action="store_true", help="also --epsilon 4 --public-data")
    ap.add_argument("--strict-only", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/recertify"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "recertify.json"
    done: list[dict[str, Any]] = json.loads(path.read_text()) if path.exists() else []
    for name in args.datasets:
        case = CASES[name]
        full = load(name)
        table = args.out / f"{name}.parquet"
        if not args.strict_only:
            full.write(table)
            done.append(one(case, table, args.out, args.seed, []))
            print(line(done[-1]), flush=True)
            path.write_text(json.dumps(done, indent=1, default=str))
        if args.strict or args.strict_only:
            aux, rest = split_auxiliary(full, case.sensitive)
            aux.write(args.out / f"{name}_aux.parquet")
            rest.write(args.out / f"{name}_rest.parquet")
            extra = ["--epsilon", "4", "--public-data", str(args.out / f"{name}_aux.parquet")]
            done.append(one(case, args.out / f"{name}_rest.parquet", args.out, args.seed,
                            extra))
            print(line(done[-1]), flush=True)
            path.write_text(json.dumps(done, indent=1, default=str))


if __name__ == "__main__":
    main()
