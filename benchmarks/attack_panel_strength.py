"""How strong each attacker of the panel is on real data: accuracy per mode and recognizer.

Runs the full panel (every attacker mode × every recognizer, identity selection) and writes a
report folder per experiment under ``benchmarks/results/panel/`` plus ``panel_summary.json``,
and prints the accuracy table per mode and recognizer.

Experiments:

- ``fsdd``: FSDD MFCC (3,000 × 400), interest digit, sensitive speaker, selective mean
  g=64, t=0.8, w=10 at r_p = 1% and 10%;
- ``har``: SP-SW-HAR phone windows (2 s, hop 1 s, 49 statistics per window), interest
  activity, sensitive subject, selective mean g=16, t=0.8, w=10, r_p=10%; the split keeps each
  execution (recording) whole on one side, so overlapping windows never straddle the split;
- ``har_gender``: the same windows with sensitive gender; whole subjects on one side (the
  dataset README's warning), so a recognizer cannot answer by recognizing the person.

    BIOANON_DATA=../shared/datasets .venv/bin/python benchmarks/attack_panel_strength.py \
        [fsdd har har_gender]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bioanon import evaluate
from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.attack import ModelCache

OUT = Path(__file__).resolve().parent / "results" / "panel"


def table_md(report) -> str:
    """Markdown table: accuracy per attacker mode (rows) and recognizer (columns)."""
    p = report["privacy"]
    models = list(dict.fromkeys(a["model"] for a in p["attacks"] if a["mode"] != "linkage"))
    modes = list(dict.fromkeys(a["mode"] for a in p["attacks"] if a["mode"] != "linkage"))
    acc = {(a["mode"], a["model"]): a["accuracy"] for a in p["attacks"]}
    lines = ["| mode | " + " | ".join(models) + " |", "|---" * (len(models) + 1) + "|"]
    clear = {c["model"]: c["accuracy"] for c in p["clear"]}
    lines.append("| clear data | " + " | ".join(f"{clear[m]:.3f}" for m in models) + " |")
    for mode in modes:
        lines.append(f"| {mode} | " + " | ".join(f"{acc[(mode, m)]:.3f}" for m in models) + " |")
    link = [a for a in p["attacks"] if a["mode"] == "linkage"]
    w = p["worst_case"]
    u = report["utility"]["interest"]
    tail = [f"chance {p['chance']:.3f}; worst case {w['accuracy']:.3f} "
            f"[{w['ci'][0]:.3f}, {w['ci'][1]:.3f}] ({w['attacker']})"]
    if link:
        tail.append(f"linkage (cosine_nn) {link[0]['accuracy']:.3f}, record top-1 "
                    f"{link[0]['record_top_k'][0]:.3f}")
    tail.append(f"utility {u['column']}: clear {u['clear']:.3f}, clear→anon "
                f"{u['anonymized']:.3f}, anon→clear {u['anonymized_to_clear']:.3f}, "
                f"anon→anon {u['anonymized_to_anonymized']:.3f} (chance {u['chance']:.3f})")
    sel = p.get("selection") or {}
    for name, pts in (sel.get("strategies") or {}).items():
        tail.append(f"selection {name}: " + ", ".join(
            f"{pt['n_identities']} ids → {pt['accuracy']:.3f}"
            + (f" ± {pt['std']:.3f}" if "std" in pt else "") + f" (chance {pt['chance']:.3f})"
            for pt in pts))
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {t}" for t in tail)


def run(name: str, table, interest: str, sensitive: str, anon, cache: ModelCache,
        summary: dict, **kw) -> None:
    start = time.perf_counter()
    report = evaluate(table, interest, sensitive, anonymizer=anon, models="all",
                      attackers="all", random_state=0, cache=cache, **kw)
    seconds = time.perf_counter() - start
    report.write(OUT / name)
    text = table_md(report)
    print(f"\n## {name} ({seconds:.0f} s)\n\n{text}\n", flush=True)
    summary[name] = {"seconds": seconds, "table": text,
                     "worst_case": report["privacy"]["worst_case"],
                     "utility": report["utility"]["interest"],
                     "params": report["params"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    every = ["fsdd", "har", "har_gender"]
    ap.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                    help=f"experiments to run, of {', '.join(every)} (default: all)")
    which = ap.parse_args().experiments or every
    if unknown := sorted(set(which) - set(every)):
        ap.error(f"unknown experiments {unknown}; choose from {', '.join(every)}")
    OUT.mkdir(parents=True, exist_ok=True)
    summary_path = OUT / "panel_summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    if "fsdd" in which:
        from bioanon.datasets.fsdd import load_fsdd

        fsdd = load_fsdd()
        cache = ModelCache()  # the clear-trained attackers serve both r_p
        for rp in (0.01, 0.1):
            anon = SelectiveMeanAnonymizer(interest="digit", g=64, t=0.8, w=10, r_p=rp,
                                           random_state=0)
            run(f"fsdd_rp{round(rp * 100)}", fsdd, "digit", "speaker", anon, cache, summary,
                selection="auto")
    if {"har", "har_gender"} & set(which):
        from bioanon.datasets.sp_sw_har import load_sp_sw_har

        har = load_sp_sw_har(features="stats")
        anon = SelectiveMeanAnonymizer(interest="activity", g=16, t=0.8, w=10, r_p=0.1,
                                       random_state=0)
        if "har" in which:
            run("har_subject", har, "activity", "subject", anon, ModelCache(), summary,
                group="execution", selection="auto")
        if "har_gender" in which:
            run("har_gender", har, "activity", "gender", anon, ModelCache(), summary,
                group="subject", selection="none")
    summary_path.write_text(json.dumps(summary, indent=2, default=str))
    print(f"wrote {OUT}/<experiment>/report.html and {summary_path}")


if __name__ == "__main__":
    main()
