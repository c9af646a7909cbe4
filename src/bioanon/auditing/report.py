"""The audit's report: ``report.json`` (:meth:`AuditResult.to_dict`) and ``report.html``.

The page opens with the verdict (the level, met / not met / not showable, and the copied
rows when there are any), then the risk table and the plan of the evaluation reports
(:mod:`bioanon.report.html`: the same rows and words), the data and how HOLDOUT was split,
the attackers that ran and those that could not, utility, and each risk in detail.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..io import mark_output, write_text_atomic
from ..report.html import plan_section, render_html, risk_details_section, risk_table_section
from ..report.html_cells import rate_text
from .risks import above_target_words
from .run import AuditResult

FILES = ("report.json", "report.html")


def _e(x: Any) -> str:
    return html.escape(str(x))


def headline_section(report: Mapping[str, Any]) -> str:
    """The verdict, first: the level and its status, per risk, and the copied rows."""
    v = report["verdict"]
    lv = v["level"]
    targets = {k: x["target_advantage"] for k, x in lv["levels"].items()}
    cls = "" if v["met"] else " class='fails'"
    words = {"met": "meets", "not met": "does not meet",
             "not showable at this size": "cannot be shown to meet"}.get(v["status"], "")
    per = "".join(f"<li>{_e(k)}: <b>{_e(s)}</b></li>" for k, s in v["risks"].items())
    f = report["findings"]
    copied = (f"<p class='bad'>Finding: {_e(f['copied_note'])}.</p>"
              if f.get("copied_rows") else "")
    if f.get("named_note"):
        copied += f"<p class='bad'>Finding: {_e(f['named_note'])}.</p>"
    above = above_target_words(list(v.get("above_target") or []))
    if above:
        copied += f"<p class='bad'>Not showable is not safe: {_e(above)}.</p>"
    u = report["utility"]
    util = (f"<p>Utility: CAS {rate_text(u['cas']['value'], u['cas'].get('ci'))} (trained "
            "on RELEASED, scored on HOLDOUT) against "
            f"{rate_text(u['clear']['value'], u['clear'].get('ci'))} trained on INPUT; chance "
            f"{u['chance']:.3f} ('{_e(u['column'])}').</p>")
    return (f"<div id='headline'{cls}><p class='status'>The release {words} level "
            f"'<b>{_e(lv['name'])}</b>' (record {targets['record']:g}, identity "
            f"{targets['identity']:g}): <b>{_e(v['status'])}</b>.</p><ul>{per}</ul>{copied}{util}"
            f"<p class='note'>{_e(v['rule'])}.</p></div>")


def data_section(report: Mapping[str, Any]) -> str:
    """The three tables, the HOLDOUT split, the threat model and the attackers."""
    d, a = report["data"], report["attackers"]
    rows = "".join(f"<tr><td class='text'>{_e(k)}</td><td class='text'>{_e(v)}</td></tr>"
                   for k, v in d.items())
    not_run = "".join(f"<li>{_e(x)}</li>" for x in a.get("not_run") or [])
    notes = "".join(f"<li>{_e(x)}</li>" for x in report.get("notes") or [])
    return (f"<h2 id='data'>What was judged</h2><table>{rows}</table>"
            f"<p>{_e(d['holdout_split'])}.</p>"
            f"<h2 id='threat-model'>Threat model</h2><p>{_e(report['threat_model'])}</p>"
            f"<p>Membership attackers: {_e(', '.join(a['membership']))}. Inference "
            f"attackers: {_e(', '.join(a['inference']))}. Recognition: "
            f"{_e(a['recognition'])}.</p>"
            + (f"<p>Links between a person's released records, pooled by the pooled release "
               f"attackers: {_e(', '.join(a['linking']))}.</p>" if a.get("linking") else "")
            + (f"<p>{_e(a['reproduce'])}.</p>" if a.get("reproduce") else "")
            + (f"<p>Could not run:</p><ul>{not_run}</ul>" if not_run else "")
            + (f"<p>Notes:</p><ul>{notes}</ul>" if notes else ""))


SECTIONS = [headline_section, risk_table_section, plan_section, data_section,
            risk_details_section]


def render(report: Mapping[str, Any]) -> str:
    """report.html of an audit (its dict)."""
    page = render_html(report, SECTIONS)
    return page.replace("bioanon evaluation report", "bioanon audit report")


def write_report(result: AuditResult, out: str | os.PathLike) -> dict[str, Path]:
    """Write report.json and report.html into ``out`` (created; each file atomically)."""
    folder = Path(out)
    doc = result.to_dict()
    text, page = json.dumps(doc, indent=2), render(doc)  # both made before either is written
    paths = {"json": folder / FILES[0], "html": folder / FILES[1]}
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(paths["json"], text)
    write_text_atomic(paths["html"], page)
    mark_output(folder)
    return paths


__all__ = ["FILES", "SECTIONS", "render", "write_report"]
