"""HTML rendering of a report: summary, tables and embedded charts, one self-contained file."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping
from typing import Any

from .charts import attack_chart, selection_chart, top_k_chart, utility_chart

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


def _attack_matrix(p: Mapping[str, Any]) -> str:
    """Accuracy per mode (rows) and recognizer (columns), with the clear baseline."""
    attacks = [a for a in p["attacks"] if a["mode"] != "linkage"]
    models = list(dict.fromkeys(a["model"] for a in attacks))
    modes = list(dict.fromkeys(a["mode"] for a in attacks))
    acc = {(a["mode"], a["model"]): a for a in attacks}
    clear = {c["model"]: c for c in p.get("clear", [])}
    head = "<th>mode \\ recognizer</th>" + "".join(f"<th>{html.escape(m)}</th>" for m in models)
    rows = []
    if clear:
        rows.append("<tr><td><i>clear data</i></td>" + "".join(
            f"<td>{clear[m]['accuracy']:.3f}</td>" if m in clear else "<td></td>"
            for m in models) + "</tr>")
    for mode in modes:
        cells = []
        for m in models:
            a = acc.get((mode, m))
            cells.append("<td></td>" if a is None else
                         f"<td>{a['accuracy']:.3f} <small>[{a['ci'][0]:.2f}, "
                         f"{a['ci'][1]:.2f}]</small></td>")
        rows.append(f"<tr><td>{html.escape(mode)}</td>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _selection_section(p: Mapping[str, Any]) -> list[str]:
    sel = p.get("selection")
    if not sel:
        return []
    parts = ["<h3>Fewer identities (identity selection)</h3>"]
    if sel.get("strategies"):
        att = sel["attacker"]
        parts.append(
            f"<p>The strongest trained attacker of the panel ({html.escape(att['mode'])} with "
            f"{html.escape(att['model'])}) evaluated on subsets of the identities chosen by each "
            "strategy; random subsets are drawn repeatedly (mean, spread over draws). A real "
            "attacker often knows the person is one of a few; chance rises accordingly.</p>")
        png = selection_chart({"privacy": p})
        if png:
            parts.append(_img(png, "identity selection chart"))
        rows = []
        for name, points in sel["strategies"].items():
            for pt in points:
                rows.append({"strategy": name, "identities": pt["n_identities"],
                             "accuracy": pt["accuracy"], "spread (std)": pt.get("std", ""),
                             "min": pt.get("min", ""), "max": pt.get("max", ""),
                             "ci": pt.get("ci", ""), "chance": pt["chance"]})
        parts.append(_table(rows, ["strategy", "identities", "accuracy", "spread (std)", "min",
                                   "max", "ci", "chance"]))
    for name, why in (sel.get("skipped") or {}).items():
        parts.append(f"<p>Strategy <code>{html.escape(name)}</code> skipped: "
                     f"{html.escape(why)}.</p>")
    return parts


def verdict_section(report: Mapping[str, Any]) -> list[str]:
    """The opening sentence: met or not, against which attacker, with what utility (CAS)."""
    v = report.get("verdict")
    if not v:
        return []
    cls = "ok" if v["met"] else "bad"
    return [f"<p class='{cls}' id='verdict'>{html.escape(v['sentence'])}</p>"]


def utility_notes_section(u: Mapping[str, Any]) -> list[str]:
    """CAS as the headline utility, and how person-level attributes were scored."""
    if "cas" not in u:
        return []
    cas = u["cas"]
    parts = [f"<p><b>CAS</b> (classification accuracy score: trained on the release, scored on "
             f"clear held-out data; what a data consumer gets) for "
             f"<code>{html.escape(str(u['interest']['column']))}</code>: "
             f"<b>{cas['value']:.3f}</b> [{cas['ci'][0]:.3f}, {cas['ci'][1]:.3f}] "
             f"(clear {u['interest']['clear']:.3f}). The paper's view (trained on clear, scored "
             "on the release) is kept beside it; it rewards releases that collapse each class "
             "towards its mean.</p>"]
    parts += [f"<p>{html.escape(n)}.</p>" for n in u.get("notes", [])]
    return parts


def baseline_section(p: Mapping[str, Any]) -> list[str]:
    """Chance, the label-only control attacker and the advantage with its interval."""
    if "control" not in p:
        return []
    c, a = p["control"], p["advantage"]
    cols = ", ".join(html.escape(str(x)) for x in c.get("columns", [])) or "none"
    return ["<h3>Baselines</h3>",
            f"<p>Chance (commonest value): {p['chance']:.3f}. Control attacker (reads only the "
            f"released label columns: {cols}): {c['value']:.3f} [{c['ci'][0]:.3f}, "
            f"{c['ci'][1]:.3f}]. Advantage of the worst attack over max(chance, control) "
            f"({html.escape(a['over'])}): <b>{a['value']:+.3f}</b> [{a['ci'][0]:+.3f}, "
            f"{a['ci'][1]:+.3f}] ({html.escape(a['method'])}).</p>"]


def threat_names_section(p: Mapping[str, Any]) -> list[str]:
    """Attacker modes in VoicePrivacy terms, and which attackers a bound covers."""
    names = p.get("threat_names")
    parts = []
    if names:
        rows = [{"mode": m, "VoicePrivacy name": n} for m, n in names.items()]
        parts += ["<h3>Threat models (VoicePrivacy names)</h3>",
                  _table(rows, ["mode", "VoicePrivacy name"])]
    for note in p.get("notes", []):
        parts.append(f"<p class='bad'>Bound: {html.escape(note)}.</p>")
    return parts


def membership_section(p: Mapping[str, Any]) -> list[str]:
    """Membership disclosure: AUC of telling members of the release from non-members."""
    rows = p.get("membership")
    if not rows:
        return []
    return ["<h3>Membership disclosure</h3>",
            "<p>Who contributed to the release? The attacker holds clear records of people "
            "(records) in the release and of others kept out, and scores each by its closeness "
            "to the release. AUC 0.5: no disclosure; 1: every member told apart. This answers "
            "a different question from recognition: a leak of identity that generalises to "
            "non-members is invisible here, and a membership leak is invisible to "
            "recognition.</p>",
            _table([{**r, "attacker (strongest)": r["attacker"]} for r in rows],
                   ["level", "auc", "ci", "attacker (strongest)", "n_members",
                    "n_nonmembers"])]


def contributor_section(p: Mapping[str, Any]) -> list[str]:
    """Contributor disclosure of a mixing method."""
    c = p.get("contributors")
    if not c:
        return []
    verdict = ("fires: the attacker names a contributor more often than a random identity "
               "would be one" if c["fires"] else "does not fire")
    own = ("the record's own identity counts as a contributor" if c["own_identity_included"]
           else "the record itself is not among its contributors")
    return ["<h3>Contributor disclosure (mixing)</h3>",
            f"<p>Share of released records for which the strongest attacker "
            f"({html.escape(c['attacker'])}) names an identity mixed into them: "
            f"<b>{c['rate']:.3f}</b> [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}], against a base rate "
            f"of {c['base_rate']:.3f}; {verdict} ({own}). The mixing sets are known to the "
            "evaluator only and are not written.</p>"]


def verification_section(p: Mapping[str, Any]) -> list[str]:
    """EER of the cosine verifier (VoicePrivacy convention)."""
    rows = p.get("verification")
    if not rows:
        return []
    return ["<h3>Verification (EER)</h3>",
            "<p>A same/different verifier on cosine scores: identities enrolled on clear "
            "records (<i>ignorant</i> = naive) or on records released the same way "
            "(<i>semi-informed</i> = parrot), trials on released records. EER 0.5: the "
            "verifier cannot tell; lower is worse for privacy.</p>",
            _table(rows, ["mode", "voiceprivacy", "eer", "ci", "enrolment", "n_target",
                          "n_nontarget"])]


def render_html(report: Mapping[str, Any]) -> str:
    """Return the report as a self-contained HTML page."""
    u, p = report["utility"], report["privacy"]
    w = p["worst_case"]
    verdict_cls = "ok" if w["accuracy"] <= p["chance"] + 0.1 else "bad"
    util_rows = [u["interest"], *u.get("additional", {}).values()]
    seed = report["params"].get("evaluation", {}).get("seed")
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>bioanon report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>bioanon evaluation report</h1>",
        *verdict_section(report),
        f"<p>Data: {_fmt(report['dataset']['source'])} — {report['dataset']['n_records']} "
        f"records × {report['dataset']['n_features']} features; "
        f"{report['dataset']['n_test']} held-out records stand for the release "
        f"({_fmt(report['params'].get('evaluation', {}).get('split', 'held-out split'))}; "
        f"evaluation seed {_fmt(seed)}).</p>",
        "<h2>Summary</h2>",
        f"<p>Utility U = <b>{u['U']:.3f}</b> (clear data: {u['U_clear']:.3f}). "
        f"Sensitive attribute <code>{html.escape(str(p['sensitive']))}</code>: chance "
        f"{p['chance']:.3f}; the strongest attack reached "
        f"<span class='{verdict_cls}'>{w['accuracy']:.3f}</span> "
        + (f"(95% CI {w['ci'][0]:.3f}–{w['ci'][1]:.3f}) " if "ci" in w else "")
        + f"({html.escape(w['mode'])} attacker, {html.escape(w['model'])}).</p>",
        "<p>How to read this: <i>naive</i> attackers were trained on clear data, <i>parrot</i> "
        "attackers on data anonymized with the same method and parameters (they know the "
        "method), <i>parrotNN</i> on a mix with NN% of the training records anonymized, "
        "<i>reverse</i> attackers hold an anonymized labelled gallery and clear probes, "
        "<i>linkage</i> matches each released record to its nearest clear record. "
        "Trust the worst case, not the naive number.</p>",
        "<h2>Utility</h2>", *utility_notes_section(u),
        _img(utility_chart(report), "utility chart"),
        _table(util_rows, ["column", "model", "clear", "anonymized", "anonymized_to_clear",
                           "anonymized_to_anonymized", "chance", "alpha"]),
        "<p><i>anonymized</i>: trained on clear, scored on anonymized (the paper's view); "
        "<i>anonymized_to_clear</i>: trained on anonymized, scored on clear (classification "
        "accuracy score); <i>anonymized_to_anonymized</i>: trained and scored on "
        "anonymized.</p>",
        "<h2>Privacy</h2>", *baseline_section(p), _img(attack_chart(report), "attack chart"),
        "<h3>Accuracy per mode and recognizer (95% Wilson interval)</h3>", _attack_matrix(p),
        "<h3>Every attack</h3>",
        _table(p["attacks"], ["mode", "model", "train_data", "test_data", "accuracy", "ci",
                              "advantage", "mixture", "kl_uniform"]),
        "<h3>Recognizers on clear data (reference)</h3>",
        _table(p.get("clear", []), ["model", "accuracy", "ci"]),
    ]
    topk = top_k_chart(report)
    if topk:
        parts += ["<h3>Top-k accuracy</h3>", _img(topk, "top-k chart")]
    parts += _selection_section(p)
    parts += membership_section(p) + contributor_section(p) + verification_section(p)
    parts += threat_names_section(p)
    link = [a for a in p["attacks"] if a["mode"] == "linkage"]
    if link and "record_top_k" in link[0]:
        parts += ["<h3>Record linkage</h3><p>Top-k rate at which the nearest clear records "
                  "include the released record's own original, and the random-guess rate.</p>",
                  _table([{"k": k + 1, "hit rate": h, "random guess": c} for k, (h, c) in
                          enumerate(zip(link[0]["record_top_k"],
                                        link[0]["record_chance_top_k"], strict=True))],
                         ["k", "hit rate", "random guess"])]
    for title, snippet in getattr(report, "figures", {}).items():
        parts += [f"<h2>{html.escape(title)}</h2>", snippet]
    parts += ["<h2>Parameters</h2><pre>",
              html.escape(json.dumps(report["params"], indent=2, default=str)),
              "</pre></body></html>"]
    return "\n".join(parts)
