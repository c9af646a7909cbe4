"""HTML rendering of a report: summary, tables and embedded charts, one self-contained file."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping
from typing import Any

from .charts import attack_chart, utility_chart

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.bad{color:#b00;font-weight:bold}.ok{color:#070}code{background:#f3f3f3;padding:0 3px}
"""


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return html.escape(str(v))


def _table(rows: list[Mapping[str, Any]], cols: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(r.get(c, ''))}</td>" for c in cols) + "</tr>"
                   for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_html(report: Mapping[str, Any]) -> str:
    """Return the report as a self-contained HTML page."""
    u, p = report["utility"], report["privacy"]
    w = p["worst_case"]
    verdict_cls = "ok" if w["accuracy"] <= p["chance"] + 0.1 else "bad"
    util_rows = [u["interest"], *u.get("additional", {}).values()]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>bioanon report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>bioanon evaluation report</h1>",
        f"<p>Data: {_fmt(report['dataset']['source'])} — {report['dataset']['n_records']} "
        f"records × {report['dataset']['n_features']} features; "
        f"{report['dataset']['n_test']} held-out records stand for the release.</p>",
        "<h2>Summary</h2>",
        f"<p>Utility U = <b>{u['U']:.3f}</b> (clear data: {u['U_clear']:.3f}). "
        f"Sensitive attribute <code>{html.escape(str(p['sensitive']))}</code>: chance "
        f"{p['chance']:.3f}; the strongest attack reached "
        f"<span class='{verdict_cls}'>{w['accuracy']:.3f}</span> "
        f"({html.escape(w['mode'])} attacker, {html.escape(w['model'])}).</p>",
        "<p>How to read this: <i>naive</i> attackers were trained on clear data, <i>parrot</i> "
        "attackers on data anonymized with the same method and parameters (they know the "
        "method), <i>linkage</i> matches each released record to its nearest clear record. "
        "Trust the worst case, not the naive number.</p>",
        "<h2>Utility</h2>", _img(utility_chart(report), "utility chart"),
        _table(util_rows, ["column", "model", "clear", "anonymized", "chance", "alpha"]),
        "<h2>Privacy</h2>", _img(attack_chart(report), "attack chart"),
        _table(p["attacks"], ["mode", "model", "train_data", "accuracy", "ci", "advantage",
                              "mixture", "kl_uniform"]),
        "<h3>Recognizers on clear data (reference)</h3>",
        _table(p.get("clear", []), ["model", "accuracy", "ci"]),
    ]
    link = [a for a in p["attacks"] if a["mode"] == "linkage"]
    if link:
        parts += ["<h3>Record linkage</h3><p>Top-k rate at which the nearest clear records "
                  "include the released record's own original, and the random-guess rate.</p>",
                  _table([{"k": k + 1, "hit rate": h, "random guess": c} for k, (h, c) in
                          enumerate(zip(link[0]["record_top_k"],
                                        link[0]["record_chance_top_k"], strict=True))],
                         ["k", "hit rate", "random guess"])]
    parts += ["<h2>Parameters</h2><pre>",
              html.escape(json.dumps(report["params"], indent=2, default=str)),
              "</pre></body></html>"]
    return "\n".join(parts)
