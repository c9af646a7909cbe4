"""The headline figures of an evaluation: one dict, shown as a terminal table, printed by
``--json`` and written as ``report.json``'s ``summary``.

The dict holds figures and names only: no seed, no path, nothing that undoes a release.
Stable keys (later versions may add, never rename): ``method``, ``interest``, ``sensitive``,
``cas``, ``utility`` (each view's accuracy, and ``ci``: each view's 95% interval),
``consumer`` (the consumer's panel: the picks, each model's release → clear and clear →
clear accuracy; None where it did not run), ``chance``, ``control`` (the label-only control
attacker's accuracy), ``control_ci`` (its 95% interval), ``attacks``, ``worst_case``,
``worst_case_crossfit``, ``advantage``, ``membership``, ``contributors``, ``verification``,
``selection``, ``verdict``, ``risks`` (one entry per risk and level: name, statistic, value,
ci, attacker, status).

Examples
--------
>>> SUMMARY_KEYS[:3]
('method', 'interest', 'sensitive')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..metrics.intervals import interval_words, rate_words
from .intervals import view_interval

SUMMARY_KEYS = ("method", "interest", "sensitive", "cas", "utility", "consumer", "chance",
                "control", "control_ci", "attacks", "worst_case", "worst_case_crossfit",
                "advantage", "membership", "contributors", "verification", "selection",
                "verdict", "risks")


def _pick(d: Mapping[str, Any] | None, *keys: str) -> dict[str, Any] | None:
    return None if not d else {k: d[k] for k in keys if k in d}


#: the utility views of an attribute the summary gives, each with its 95% interval
VIEWS = ("clear", "anonymized", "anonymized_to_clear", "anonymized_to_anonymized")


def _view_cis(entry: Mapping[str, Any], n: int | None) -> dict[str, list[float]]:
    """The 95% interval of each utility view ``entry`` holds (the one it carries, else
    Wilson's on the held-out records it was scored on: :func:`.intervals.view_interval`);
    a view not measured (NaN) has none."""
    out = {}
    for view in VIEWS:
        ci = view_interval(entry, view, n) if view in entry else None
        if ci is not None:
            out[view] = [float(ci[0]), float(ci[1])]
    return out


def summary(data: Mapping[str, Any]) -> dict[str, Any]:
    """The summary of a report (a :class:`~bioanon.report.document.Report` or its dict)."""
    u, p = data["utility"], data["privacy"]
    interest = u["interest"]
    best: dict[str, dict[str, Any]] = {}
    for att in p["attacks"]:  # one entry per mode: its strongest recognizer
        if att["mode"] not in best or att["accuracy"] > best[att["mode"]]["accuracy"]:
            best[att["mode"]] = att
    selection = {name: _pick(points[-1], "n_identities", "accuracy", "ci", "min", "max",
                             "chance")
                 for name, points in (p.get("selection") or {}).get("strategies", {}).items()
                 if points}
    control = p.get("control")
    n_test = (data.get("dataset") or {}).get("n_test")
    return {
        "method": (data.get("params") or {}).get("method"),
        "interest": interest["column"],
        "sensitive": p["sensitive"],
        "cas": _pick(u["cas"], "value", "ci") if isinstance(u.get("cas"), Mapping) else None,
        "utility": {
            **{k: interest[k] for k in ("clear", "anonymized", "anonymized_to_clear",
                                        "anonymized_to_anonymized") if k in interest},
            "ci": _view_cis(interest, n_test),
            "U": u["U"], "U_clear": u["U_clear"],
            "additional": {col: {**(_pick(a, "alpha", "clear", "anonymized") or {}),
                                 "ci": _view_cis(_pick(a, "clear", "anonymized", "ci", "n")
                                                 or {}, n_test)}
                           for col, a in u.get("additional", {}).items()},
        },
        "consumer": _consumer(u.get("consumer")),
        "chance": p["chance"],
        "control": control["value"] if isinstance(control, Mapping) else control,
        "control_ci": (list(control["ci"]) if isinstance(control, Mapping) and control.get("ci")
                       else None),
        "attacks": [_pick(a, "mode", "model", "accuracy", "ci") for a in best.values()],
        "worst_case": _pick(p["worst_case"], "mode", "model", "accuracy", "ci"),
        "worst_case_crossfit": _pick(p.get("worst_case_crossfit"), "accuracy", "ci"),
        "advantage": _pick(p.get("advantage"), "over", "value", "ci"),
        "membership": [_pick(m, "level", "attacker", "auc", "ci")
                       for m in p.get("membership", [])],
        "contributors": _pick(p.get("contributors"), "attacker", "rate", "ci", "base_rate"),
        "verification": [_pick(v, "voiceprivacy", "mode", "eer", "ci")
                         for v in p.get("verification", [])],
        "selection": selection,
        "verdict": _pick(data.get("verdict"), "met", "target_advantage", "level", "failed",
                         "accepted_risks", "sentence"),
        "risks": [_pick(r, "name", "statistic", "value", "ci", "attacker", "status")
                  for r in data.get("risks") or []],
        # the plan a certification ran under (release): what this size can show, per risk
        **({"plan": [_pick(r, "name", "target", "smallest_showable", "status")
                     for r in data["plan"]["rows"]]} if data.get("plan") else {}),
        **({"setting": data["setting"]} if data.get("setting") else {}),
        # a refused run: the figure that decided (split, risk, value, 95% CI, target)
        **({"deciding": _pick(data["deciding"], "split", "setting", "name", "risk", "level",
                              "statistic", "value", "ci", "target", "attacker", "text")}
           if data.get("deciding") else {}),
        # a declared budget (release --epsilon): stated beside the risks, strict or not
        **({"differential_privacy": _pick(data["differential_privacy"], "epsilon", "delta",
                                          "privacy_unit", "strict")}
           if data.get("differential_privacy") else {}),
    }


def _consumer(panel: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The consumer's panel in short: the picks and each model's two accuracies."""
    if not panel:
        return None
    return {"pick": panel["pick"], "clear_pick": panel["clear_pick"],
            "models": [{"model": m["model"],
                        "release_to_clear": _pick(m["release_to_clear"], "value", "ci"),
                        "clear_to_clear": _pick(m["clear_to_clear"], "value", "ci")}
                       for m in panel["models"]]}


def of_clear(cas: float, clear: Any) -> str:
    """The headline utility's ratio to clear, as every view says it (terminal, verdict,
    report banner): ``(0.91 × clear 0.963)``; empty without a clear accuracy.

    >>> of_clear(0.872, 0.963)
    '(0.91 × clear 0.963)'
    """
    if not isinstance(clear, int | float) or not clear > 0:
        return ""
    return f"({cas / clear:.2f} × clear {clear:.3f})"


def _selection_rate(pt: Mapping[str, Any]) -> str:
    """A selection point's accuracy with its 95% interval, or, for random subsets drawn
    repeatedly (their mean), the range over the draws, as the report names it.

    >>> _selection_rate({"accuracy": 0.9, "min": 0.85, "max": 0.95})
    '0.900, draws [0.850, 0.950]'
    """
    if pt.get("ci") is None and "min" in pt and "max" in pt:
        return f"{pt['accuracy']:.3f}, draws [{pt['min']:.3f}, {pt['max']:.3f}]"
    return rate_words(pt["accuracy"], pt.get("ci"))


#: the label of the one headline utility figure, and of every other utility figure
HEADLINE, SECONDARY = "headline utility", "secondary"


def summary_rows(s: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Short (label, value) rows of a :func:`summary` for a terminal table: CAS first as the
    headline utility (with its ratio to clear), the other utility figures labelled
    secondary."""
    u, col = s["utility"], s["interest"]
    rows = []
    if s["cas"]:
        cas = s["cas"]["value"]
        c = s.get("consumer")
        by = f", the consumer's pick: {c['pick']}" if c else ""
        rows.append((f"{HEADLINE}: {col} CAS (trained on release, scored on clear{by})",
                     f"{rate_words(cas, s['cas']['ci'])} {of_clear(cas, u['clear'])}".rstrip()
                     + (f" (clear's pick: {c['clear_pick']})" if c else "")))
    for m in (s.get("consumer") or {}).get("models", []):
        rc, cc = m["release_to_clear"], m["clear_to_clear"]
        rows.append((f"{SECONDARY}: panel {m['model']}, release → clear (clear → clear)",
                     f"{rate_words(rc['value'], rc['ci'])} "
                     f"(clear {rate_words(cc['value'], cc['ci'])})"))
    ci = u.get("ci") or {}
    rows.append((f"{SECONDARY}: {col}, trained on clear → scored on clear / on release",
                 f"{rate_words(u['clear'], ci.get('clear'))} → "
                 f"{rate_words(u['anonymized'], ci.get('anonymized'))}"))
    for name, a in u["additional"].items():
        aci = a.get("ci") or {}
        rows.append((f"{SECONDARY}: {name} (alpha {a['alpha']:g}), clear → release",
                     f"{rate_words(a['clear'], aci.get('clear'))} → "
                     f"{rate_words(a['anonymized'], aci.get('anonymized'))}"))
    rows.append((f"{SECONDARY}: utility U (weighted over the kept attributes)",
                 f"{u['U']:.3f} (clear {u['U_clear']:.3f})"))
    if "anonymized_to_clear" in u:
        rows.append((f"{SECONDARY}: {col}, trained on release → scored on clear / on release",
                     " / ".join(rate_words(u[view], ci.get(view)) for view in
                                ("anonymized_to_clear", "anonymized_to_anonymized"))))
    rows.append((f"chance for '{s['sensitive']}'", f"{s['chance']:.3f}"))
    if s["control"] is not None:
        rows.append(("control (released labels only)",
                     rate_words(s["control"], s.get("control_ci"))))
    for att in s["attacks"]:
        rows.append((f"attack {att['mode']} (best: {att['model']})",
                     rate_words(att["accuracy"], att.get("ci"))))
    w = s["worst_case"]
    rows.append(("worst case, plain (chosen on the records it is scored on)",
                 f"{rate_words(w['accuracy'], w.get('ci'))} ({w['mode']} / {w['model']})"))
    if s["worst_case_crossfit"]:
        c = s["worst_case_crossfit"]
        rows.append(("worst case, cross-fitted (no winner's curse)",
                     rate_words(c["accuracy"], c["ci"])))
    if s["advantage"]:
        a = s["advantage"]
        rows.append((f"advantage over {a['over']}",
                     f"{a['value']:+.3f}{interval_words(a['ci'], '+.3f')}"))
    for m in s["membership"]:
        rows.append((f"membership AUC, plain ({m['level']}, {m['attacker']})",
                     rate_words(m["auc"], m["ci"])))
    if s["contributors"]:
        c = s["contributors"]
        rows.append((f"contributor disclosure ({c['attacker']})",
                     f"{rate_words(c['rate'], c.get('ci'))} (base rate {c['base_rate']:.3f})"))
    for v in s["verification"]:
        rows.append((f"EER {v['voiceprivacy']} ({v['mode']})", rate_words(v["eer"], v["ci"])))
    for name, pt in s["selection"].items():
        rows.append((f"selection {name}: {pt['n_identities']} identities",
                     f"{_selection_rate(pt)} (chance {pt['chance']:.3f})"))
    return rows
