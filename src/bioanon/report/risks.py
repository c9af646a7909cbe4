"""The risk table a data owner reads in ten seconds: one row per risk and level.

Columns: risk, attacker, figure [95% CI], baseline, target, status (met / not met /
inconclusive at this size / covered by the guarantee / accepted). Membership and inference are
read as a membership advantage (TPR − FPR); the AUC and the TPR at FPR 1% stand beside it.
Built from the ``risks`` entries of a report (the typed
:class:`~bioanon.metrics.results.RiskResult` as written by ``to_dict``), so the HTML page and
the terminal print the same rows; what each risk asks comes from its registry entry
(:data:`bioanon.evaluation.risks.registry.REGISTRY`).

Examples
--------
>>> r = {"risk": "membership", "level": "identity", "statistic": "AUC", "value": 0.52,
...      "ci": [0.45, 0.59], "attacker": "tracing", "baseline": 0.5,
...      "baseline_name": "no membership signal (AUC 0.5)", "target": 0.6, "status": "met",
...      "reason": "upper 95% bound 0.590 ≤ target 0.6", "extras": {}}
>>> risk_rows({"risks": [r]})[0]["figure"]
'AUC 0.520 [0.450, 0.590]'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..evaluation.risks import registry

COLUMNS = ("risk", "attacker", "figure", "baseline", "target", "status")


def question(risk: str) -> str:
    """What a registered risk asks, in the data owner's words (its registry entry's
    ``question``; empty for a risk no longer registered).

    >>> question("membership")
    'is X in the release?'
    """
    spec = registry.spec_of(risk)
    return spec.question if spec is not None else ""


def _num(v: Any, fmt: str = ".3f") -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(f) else format(f, fmt)


def risk_rows(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """One plain-text row per risk of a report (empty for a report without risks)."""
    raw = report.get("risks") or (report.get("verdict") or {}).get("risks") or []
    rows = []
    for r in raw:
        stat = r.get("statistic", "")
        signed = "+.3f" if stat == "advantage" else ".3f"
        ci = r.get("ci") or [float("nan")] * 2
        figure = (f"{stat} {_num(r.get('value'), signed)} [{_num(ci[0], signed)}, "
                  f"{_num(ci[1], signed)}]")
        unit = (r.get("extras") or {}).get("unit")
        if _num(r.get("value")) == "—":
            figure = "not measured"
        ex0 = r.get("extras") or {}
        beside = []
        if ex0.get("auc") is not None and _num(ex0.get("auc")) != "—" and \
                figure != "not measured":
            aci = ex0.get("auc_ci") or [float("nan")] * 2
            beside.append(f"AUC {_num(ex0['auc'])} [{_num(aci[0])}, {_num(aci[1])}]")
        tpr = ex0.get("tpr_at_fpr") or {}
        if "0.01" in tpr:
            t = tpr["0.01"]
            beside.append(f"TPR@1%FPR {t['tpr']:.3f} [{t['ci'][0]:.3f}, {t['ci'][1]:.3f}]")
        if ex0.get("guarantee"):
            g = ex0["guarantee"]
            beside.append(f"proven bound {_num(g.get('advantage_bound'))} "
                          f"{g.get('words', '')}".rstrip())
        if beside:
            figure += "; " + "; ".join(beside)
        if unit:
            ex = r["extras"]
            figure += f" ({ex.get('n_members')} vs {ex.get('n_nonmembers')} {unit})"
        op = "AUC ≤" if stat == "AUC" else "upper bound ≤"
        value = f"{_num(r.get('value'), signed)} [{_num(ci[0], signed)}, {_num(ci[1], signed)}]"
        rows.append({
            "value": "—" if figure == "not measured" else value,
            "beside": "; ".join(beside),
            "baseline_value": _num(r.get("baseline")),
            "target_short": f"≤ {_num(r.get('target'), 'g')}",
            "statistic": stat,
            "risk": f"{r['level']} {r['risk']}",
            "question": question(r["risk"]),
            "attacker": str(r.get("attacker", "")),
            "figure": figure,
            "baseline": f"{_num(r.get('baseline'))} ({r.get('baseline_name', '')})"
            if _num(r.get("baseline")) != "—" else str(r.get("baseline_name") or "—"),
            "target": f"{op} {_num(r.get('target'), 'g')}",
            "status": str(r.get("status", "")),
            "reason": str(r.get("reason", "")),
        })
    return rows
