"""HTML rendering of a report: one self-contained page, one function per section.

:data:`SECTIONS` lists the section renderers in page order; each takes the report and returns
an HTML fragment ("" when it has nothing to show). A new section is a function added to the
list. Every rate is printed with its 95% interval (see :mod:`bioanon.report.intervals`), no cell
holds a raw ``None`` (not applicable is "—", explained beside the table), and intervals never
wrap inside a cell. The first screen (headline, deciding figure, trade-off, risk table, plan,
risk details) is :mod:`.first_screen`; cells and tables are :mod:`.html_cells`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from .charts import attack_chart, selection_chart, top_k_chart, utility_chart
from .first_screen import (
    deciding_section,
    headline_section,
    is_release,
    plan_section,
    risk_details_section,
    risk_table_section,
    tradeoff_section,
    verdict_section,
)
from .html_cells import NA, Cell, Section, cell_text, chart_img, html_table, n_test, rate_text
from .intervals import rate_interval, view_interval

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right;white-space:nowrap}th{background:#f3f3f3;white-space:normal}
td:first-child,th:first-child{text-align:left}td.text,th.text{text-align:left;
white-space:normal;min-width:8em}td.name,th.name{text-align:left}
.ci{color:#666;font-size:85%}.note{color:#555;font-size:90%}
.bad{color:#b00;font-weight:bold}.ok{color:#070}code{background:#f3f3f3;padding:0 3px}
.wide{overflow-x:auto}img{max-width:100%}.pair{display:flex;gap:2em;flex-wrap:wrap;
align-items:flex-start}.pair table{margin-top:0}h3.tab{margin-bottom:.3em}
h1{margin-bottom:.4em}#headline{border:2px solid #070;border-radius:6px;padding:.6em 1em;
margin:0 0 1em 0}#headline.fails{border-color:#b00}#headline p{margin:.3em 0}
#headline .status{font-size:120%}#risk-table td{vertical-align:top}
"""

#: VoicePrivacy's names (Tomashenko et al.) beside bioanon's, and what each mode holds
THREATS: dict[str, dict[str, str]] = {
    "naive": {"vp": "ignorant", "knows": "nothing about the anonymization",
              "trains": "clear labelled records of the people",
              "probes": "released records"},
    "parrot": {"vp": "semi-informed", "knows": "the method and its parameters (not the seed)",
               "trains": "its own clear records, anonymized with the same method and "
                         "parameters", "probes": "released records"},
    "parrot%": {"vp": NA, "knows": "the method and its parameters (not the seed)",
                "trains": "a mix: {p}% of its training records anonymized that way, the rest "
                          "clear", "probes": "released records"},
    "reverse": {"vp": NA, "knows": "the released records with their sensitive labels "
                                   "(a pseudonymous release)",
                "trains": "the released labelled records",
                "probes": "clear records of the same people"},
    "linkage": {"vp": NA, "knows": "the clear originals of the released records",
                "trains": "nothing: names the nearest clear record (cosine)",
                "probes": "released records"},
    "control": {"vp": NA, "knows": "only the released label columns (no features)",
                "trains": "the released label columns", "probes": "released label columns"},
}


# ---------------------------------------------------------------------- cells and tables
def _attack_ci(a: Mapping[str, Any]) -> tuple[float, float] | None:
    return rate_interval(a.get("accuracy"), a.get("n"), a.get("ci"))


def _threat_key(mode: str) -> str:
    return "parrot%" if mode.startswith("parrot") and mode != "parrot" else mode


# ---------------------------------------------------------------------- sections
def data_section(report: Mapping[str, Any]) -> str:
    """Which data, how it was split, the evaluation seed."""
    d, ev = report["dataset"], report["params"].get("evaluation", {})
    return (f"<p>Data: {cell_text(d['source'])} — {d['n_records']} records × {d['n_features']} "
            f"features; {d['n_test']} held-out records stand for the release "
            f"({cell_text(ev.get('split', 'held-out split'))}; evaluation seed "
            f"{cell_text(ev.get('seed'))}).</p>")


def summary_section(report: Mapping[str, Any]) -> str:
    """The headline: utility (CAS first) and the strongest attack against chance."""
    u, p = report["utility"], report["privacy"]
    w = p["worst_case"]
    floor = max(p["chance"], (p.get("control") or {}).get("accuracy", 0.0))
    verdict_cls = "ok" if w["accuracy"] <= floor + 0.1 else "bad"
    i = u["interest"]
    cas = ""
    if "anonymized_to_clear" in i:
        cas = (f"<code>{html.escape(str(i['column']))}</code> trained on the release and "
               f"scored on clear held-out data (CAS): "
               f"{rate_text(i['anonymized_to_clear'], view_interval(i, 'anonymized_to_clear', n_test(report)))}"  # noqa: E501
               f" (clear data: {rate_text(i['clear'], view_interval(i, 'clear', n_test(report)))}). ")  # noqa: E501
    return (
        "<h2>Summary</h2>"
        f"<p>Headline utility: {cas}Secondary: U = {u['U']:.3f} (clear data: "
        f"{u['U_clear']:.3f}), the weighted utility over the kept attributes. "
        f"Sensitive attribute <code>{html.escape(str(p['sensitive']))}</code>: chance "
        f"{p['chance']:.3f}; the strongest attack reached "
        f"<span class='{verdict_cls}'>{w['accuracy']:.3f}</span> "
        + (f"(95% CI {w['ci'][0]:.3f}–{w['ci'][1]:.3f}) " if w.get("ci") else "")
        + f"({html.escape(w['mode'])} attacker, {html.escape(w['model'])}). "
        "Trust the worst case, not the naive number: the threat-model table below says what "
        "each attacker knows.</p>")


#: utility views, CAS first: (key, header)
UTILITY_VIEWS = [("anonymized_to_clear", "release → clear (CAS)"),
                 ("clear", "clear → clear"),
                 ("anonymized", "clear → release (paper's view)"),
                 ("anonymized_to_anonymized", "release → release")]


def utility_section(report: Mapping[str, Any]) -> str:
    """Accuracy of each useful attribute in every view, with intervals, CAS first."""
    u = report["utility"]
    items = [u["interest"], *u.get("additional", {}).values()]
    n = n_test(report)
    views = [(k, h) for k, h in UTILITY_VIEWS if all(k in i for i in items)]
    rows = []
    for i in items:
        model = i.get("model")
        if i.get("consumer"):
            model = (f"CAS: the consumer's pick {i['cas_model']} (clear: its pick "
                     f"{i['clear_model']}); other views: {model}")
        row: dict[str, Any] = {"column": i["column"], "model": model,
                               "chance": i.get("chance"), "alpha": i.get("alpha")}
        for key, _ in views:
            row[key] = Cell(rate_text(i[key], view_interval(i, key, n)))
        rows.append(row)
    cols = ["column", "model", *(k for k, _ in views), "chance", "alpha"]
    heads = ["attribute", "model", *(h for _, h in views), "chance", "alpha"]
    return ("<h2>Utility</h2>" + chart_img(utility_chart, report, "utility chart")
            + html_table(rows, cols, heads)
            + "<p class='note'>Accuracy of a recognizer (trained on → scored on), with its 95% "
              "interval. <i>release → clear</i> (the classification accuracy score, CAS) is what "
              "a consumer who trains on the release gets on real data; <i>clear → release</i> "
              "is the paper's view; alpha weighs an additional attribute in U = P + Σ alpha·Q "
              "(— for the attribute of interest).</p>"
            + consumer_section(u.get("consumer")))


def consumer_section(panel: Mapping[str, Any] | None) -> str:
    """The consumer's panel: each model release → clear beside clear → clear, the picks."""
    if not panel:
        return ""
    rows = []
    for m in panel["models"]:
        rc, cc = m["release_to_clear"], m["clear_to_clear"]
        marks = [w for w, name in (("release's pick", panel["pick"]),
                                   ("clear's pick", panel["clear_pick"])) if name == m["model"]]
        cv = [Cell(rate_text(v["value"], v["ci"])) if v is not None else NA
              for v in (m["release_cv"], m["clear_cv"])]
        rows.append({"model": m["model"], "rc": Cell(rate_text(rc["value"], rc["ci"])),
                     "cc": Cell(rate_text(cc["value"], cc["ci"])), "rcv": cv[0], "ccv": cv[1],
                     "pick": ", ".join(marks)})
    return ("<h3 id='consumer'>The consumer's panel</h3>"
            + html_table(rows, ["model", "rc", "cc", "rcv", "ccv", "pick"],
                     ["model", "release → clear", "clear → clear", "CV on the release",
                      "CV on clear", "pick"], text_cols=("pick",))
            + f"<p class='note'>{html.escape(str(panel['rule']))}. The headline CAS is the "
              "release's pick; the clear accuracy it is compared with (ratio, utility floor) "
              "is the clear data's pick. This is one consumer picking by cross-validation on "
              "the release, not a guarantee for any particular model.</p>")


def threat_model_section(report: Mapping[str, Any]) -> str:
    """Who attacks: what each attacker knows, trains on and probes, and its strongest run."""
    p = report["privacy"]
    modes = list(dict.fromkeys(a["mode"] for a in p["attacks"]))
    if p.get("control"):
        modes.append("control")
    best: dict[str, Mapping[str, Any]] = {}
    for a in p["attacks"]:
        if a["mode"] not in best or a["accuracy"] > best[a["mode"]]["accuracy"]:
            best[a["mode"]] = a
    if p.get("control"):
        c = p["control"]
        best["control"] = {"model": c.get("model", "labels only"),
                           "accuracy": c.get("accuracy", c.get("value")), **c}
    rows = []
    for mode in modes:
        t = dict(THREATS.get(_threat_key(mode), {}))
        threat = (best.get(mode) or {}).get("threat") or {}
        pct = mode.removeprefix("parrot")
        a = best.get(mode)
        rows.append({
            "mode": mode, "vp": t.get("vp", NA),
            "knows": t.get("knows") or threat.get("knows"),
            "trains": (t.get("trains") or str(threat.get("train_data", NA))).format(p=pct),
            "probes": t.get("probes") or threat.get("probes"),
            "strongest": Cell(NA if a is None else
                               f"{rate_text(a['accuracy'], _attack_ci(a))}<br><span class='ci'>"
                               f"{html.escape(str(a.get('model', '')))}</span>"),
        })
    return ("<h2>Threat model</h2>"
            + html_table(rows, ["mode", "vp", "knows", "trains", "probes", "strongest"],
                     ["bioanon mode", "VoicePrivacy name", "what the attacker knows",
                      "what it trains on", "what it probes", "strongest here [95% CI]"],
                     text_cols=["knows", "trains", "probes"])
            + "<p class='note'>VoicePrivacy names: <i>ignorant</i> = naive, "
              "<i>semi-informed</i> = parrot. VoicePrivacy's <i>lazy-informed</i> attacker "
              "anonymizes its own enrolment data with the method but keeps a recognizer trained "
              "on clear data; no bioanon mode does exactly that (it lies between naive and "
              "parrot), so none is named so. Every attacker holds labelled clear or released "
              "records of the same people (closed set).</p>")


def _attack_matrix(p: Mapping[str, Any]) -> str:
    """Accuracy per mode (rows) and recognizer (columns), with the clear baseline."""
    attacks = [a for a in p["attacks"] if a["mode"] != "linkage"]
    models = list(dict.fromkeys(a["model"] for a in attacks))
    modes = list(dict.fromkeys(a["mode"] for a in attacks))
    acc = {(a["mode"], a["model"]): a for a in attacks}
    clear = {c["model"]: c for c in p.get("clear", [])}
    rows = []
    if clear:
        rows.append({"mode": Cell("<i>clear data</i>"),
                     **{m: Cell(rate_text(clear[m]["accuracy"], _attack_ci(clear[m])))
                        for m in models if m in clear}})
    for mode in modes:
        rows.append({"mode": mode, **{m: Cell(rate_text(acc[mode, m]["accuracy"],
                                                     _attack_ci(acc[mode, m])))
                                      for m in models if (mode, m) in acc}})
    return html_table(rows, ["mode", *models], ["mode \\ recognizer", *models])


def privacy_section(report: Mapping[str, Any]) -> str:
    """The attack chart and the mode × recognizer matrix."""
    p = report["privacy"]
    return ("<h2>Privacy</h2>" + chart_img(attack_chart, report, "attack chart")
            + "<h3>Accuracy per mode and recognizer (95% Wilson interval)</h3>"
            + _attack_matrix(p))


def attacks_section(report: Mapping[str, Any]) -> str:
    """Every attack: accuracy, advantage and mixture with intervals, and KL from uniform."""
    p = report["privacy"]
    chance = p["chance"]
    rows = []
    for a in p["attacks"]:
        ci = _attack_ci(a)
        adv_ci = a.get("advantage_ci")
        if adv_ci is None and ci is not None and chance < 1:
            adv_ci = [(ci[0] - chance) / (1 - chance), (ci[1] - chance) / (1 - chance)]
        mix = a.get("mixture")
        rows.append({"mode": a["mode"], "model": a["model"],
                     "accuracy": Cell(rate_text(a["accuracy"], ci)),
                     "advantage": Cell(rate_text(a.get("advantage"), adv_ci)),
                     "mixture": Cell(rate_text(mix, None if ci is None or mix is None
                                            else (1 - ci[1], 1 - ci[0]))),
                     "kl_uniform": a.get("kl_uniform")})
    return ("<h3>Every attack</h3>"
            + html_table(rows, ["mode", "model", "accuracy", "advantage", "mixture", "kl_uniform"],
                     ["mode", "recognizer", "accuracy [95% CI]", "advantage [95% CI]",
                      "mixture M [95% CI]", "KL from uniform (nats)"])
            + "<p class='note'><i>advantage</i> = (accuracy − chance) / (1 − chance): 0 at "
              "chance, 1 for an attacker always right. <i>mixture M</i> = 1 − accuracy, the "
              "paper's score: the share of released records whose sensitive value this attacker "
              "gets wrong (1 is best; its interval mirrors the accuracy's). <i>KL from uniform"
              "</i>: how far the attacker's probabilities over the sensitive values are from "
              "uniform, averaged over records (0: it learns nothing); — where the attacker gives "
              "no probabilities (linkage ranks records).</p>")


def clear_section(report: Mapping[str, Any]) -> str:
    """Recognizers on clear data: what the attack panel could do without anonymization."""
    clear = report["privacy"].get("clear") or []
    if not clear:
        return ""
    rows = [{"model": c["model"], "accuracy": Cell(rate_text(c["accuracy"], _attack_ci(c)))}
            for c in clear]
    return ("<h3>Recognizers on clear data (reference)</h3>"
            + html_table(rows, ["model", "accuracy"], ["recognizer", "accuracy [95% CI]"]))


def top_k_section(report: Mapping[str, Any]) -> str:
    """Top-k curves per mode (bands: 95% intervals)."""
    img = chart_img(top_k_chart, report, "top-k chart")
    if not img:
        return ""
    return ("<h3>Top-k accuracy</h3>" + img
            + "<p class='note'>Whiskers: 95% Wilson intervals of each point.</p>")


def selection_section(report: Mapping[str, Any]) -> str:
    """Identity selection: accuracy on subsets of the identities, per strategy."""
    sel = report["privacy"].get("selection")
    if not sel:
        return ""
    parts = ["<h3>Fewer identities (identity selection)</h3>"]
    if sel.get("strategies"):
        att = sel["attacker"]
        parts.append(
            f"<p>The strongest trained attacker of the panel ({html.escape(att['mode'])} with "
            f"{html.escape(att['model'])}) evaluated on subsets of the identities chosen by each "
            "strategy; random subsets are drawn repeatedly (mean, spread over draws). A real "
            "attacker often knows the person is one of a few; chance rises accordingly.</p>")
        parts.append(chart_img(selection_chart, {"privacy": report["privacy"]},
                            "identity selection chart"))
        rows = []
        for name, points in sel["strategies"].items():
            for pt in points:
                if pt.get("ci") is not None:
                    acc = rate_text(pt["accuracy"], pt["ci"])
                elif "min" in pt:
                    acc = (f"{pt['accuracy']:.3f} <span class='ci'>draws: [{pt['min']:.3f}, "
                           f"{pt['max']:.3f}], sd {pt.get('std', 0.0):.3f}</span>")
                else:
                    acc = rate_text(pt["accuracy"], None)
                rows.append({"strategy": name, "identities": pt["n_identities"],
                             "accuracy": Cell(acc), "chance": pt["chance"]})
        parts.append(html_table(rows, ["strategy", "identities", "accuracy", "chance"],
                            ["strategy", "identities", "accuracy [95% CI or range over draws]",
                             "chance"]))
    for name, why in (sel.get("skipped") or {}).items():
        parts.append(f"<p>Strategy <code>{html.escape(name)}</code> skipped: "
                     f"{html.escape(why)}.</p>")
    return "".join(parts)


def linkage_section(report: Mapping[str, Any]) -> str:
    """Record linkage: how often the nearest clear records include the record's original."""
    link = [a for a in report["privacy"]["attacks"] if a["mode"] == "linkage"]
    if not link or "record_top_k" not in link[0]:
        return ""
    n = link[0].get("n") or n_test(report)
    rows = [{"k": k + 1, "hit": Cell(rate_text(h, rate_interval(h, n))), "guess": c}
            for k, (h, c) in enumerate(zip(link[0]["record_top_k"],
                                           link[0]["record_chance_top_k"], strict=True))]
    return ("<h3>Record linkage</h3><p>Top-k rate at which the nearest clear records include "
            "the released record's own original, and the random-guess rate.</p>"
            + html_table(rows, ["k", "hit", "guess"], ["k", "hit rate [95% CI]", "random guess"]))


def figures_section(report: Mapping[str, Any]) -> str:
    """Extra figures the evaluation attached (e.g. a contact sheet of released images)."""
    return "".join(f"<h2>{html.escape(title)}</h2>{snippet}"
                   for title, snippet in getattr(report, "figures", {}).items())


def _param_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, Mapping):
        return ", ".join(f"{html.escape(str(k))}={_param_value(x)}" for k, x in v.items()) or NA
    if isinstance(v, list | tuple):
        return ", ".join(_param_value(x) for x in v) or NA
    return cell_text(v)


def parameters_section(report: Mapping[str, Any]) -> str:
    """The method's parameters beside the evaluation's, as one compact table."""
    params = report["params"]
    anon = dict(params.get("anonymizer") or {})
    ev = dict(params.get("evaluation") or {})
    ev.update({k: v for k, v in params.items() if k not in ("method", "anonymizer",
                                                            "evaluation")})
    left, right = list(anon.items()), list(ev.items())
    rows = []
    for j in range(max(len(left), len(right))):
        row: dict[str, Any] = {}
        if j < len(left):
            row.update(name=left[j][0], value=Cell(_param_value(left[j][1])))
        if j < len(right):
            row.update(ename=right[j][0], evalue=Cell(_param_value(right[j][1])))
        rows.append({k: row.get(k, Cell("")) for k in ("name", "value", "ename", "evalue")})
    method = html.escape(str(params.get("method", "method")))
    return ("<h2>Parameters</h2>"
            + html_table(rows, ["name", "value", "ename", "evalue"],
                     [f"{method}", "value", "evaluation", "value"],
                     text_cols=["value", "evalue"])
            + "<p class='note'>— : not set (the method's default applies, or not applicable). "
              "No release seed is shown: the evaluation seed only fixes this report's split "
              "and models.</p>")


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
            html_table([{**r, "attacker (strongest)": r["attacker"]} for r in rows],
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
            html_table(rows, ["mode", "voiceprivacy", "eer", "ci", "enrolment", "trials",
                          "n_target", "n_nontarget"])]


def _joined(parts: list[str]) -> str:
    return "".join(parts)


def verdict_block(report: Mapping[str, Any]) -> str:
    """The verdict sentence, first on the page."""
    return _joined(verdict_section(report))


def dp_block(report: Mapping[str, Any]) -> str:
    """A declared differential-privacy budget (``release --epsilon``): ε, δ, the privacy
    unit, strict or not; stated beside the empirical risks, not instead of them."""
    dp = report.get("differential_privacy")
    if not dp:
        return ""
    unit = dp["privacy_unit"]
    if unit == "identity":
        unit += (f" (column '{dp.get('identity_column')}', at most "
                 f"{dp.get('max_records_per_identity')} records each)")
    pub = dp.get("public_data") or {}
    used = (f"; public data: {html.escape(str(pub.get('name') or 'given'))} "
            f"({pub.get('n_records')} records)" if pub else "")
    return (f"<h2>Differential privacy (declared budget)</h2><p class='"
            f"{'ok' if dp['strict'] else 'bad'}'>epsilon {dp['epsilon']:g}, delta "
            f"{dp['delta']:.3g} ({html.escape(str(dp['delta_rule']))}), privacy unit "
            f"{html.escape(unit)}{used}. {html.escape(dp['statement'])}.</p>"
            f"<p>{html.escape(dp['beside_the_certificate'])}.</p>")


def utility_notes_block(report: Mapping[str, Any]) -> str:
    """CAS headline and how person-level attributes were scored."""
    return _joined(utility_notes_section(report["utility"]))


def baseline_block(report: Mapping[str, Any]) -> str:
    """Chance, control and the advantage interval."""
    return _joined(baseline_section(report["privacy"]))


def disclosure_block(report: Mapping[str, Any]) -> str:
    """Membership, contributor disclosure and verification."""
    p = report["privacy"]
    return _joined(membership_section(p) + contributor_section(p) + verification_section(p))


def bounds_block(report: Mapping[str, Any]) -> str:
    """Which attackers a method's bound covers."""
    return "".join(f"<p class='bad'>Bound: {html.escape(n)}.</p>"
                   for n in report["privacy"].get("notes", []))


#: the page, in order; add a section by inserting its function
SECTIONS: list[Section] = [
    headline_section, deciding_section, tradeoff_section, risk_table_section, verdict_block,
    plan_section,
    risk_details_section,
    dp_block, data_section, summary_section, utility_section, utility_notes_block,
    threat_model_section, bounds_block, privacy_section, baseline_block, attacks_section,
    clear_section, top_k_section, selection_section, disclosure_block, linkage_section,
    figures_section, parameters_section,
]


def render_html(report: Mapping[str, Any], sections: Sequence[Section] | None = None) -> str:
    """Return the report as a self-contained HTML page (``sections`` default: SECTIONS)."""
    title = "bioanon release report" if is_release(report) else "bioanon evaluation report"
    parts = ["<!doctype html><html><head><meta charset='utf-8'>"
             f"<title>{title}</title>", f"<style>{_STYLE}</style></head><body>",
             f"<h1>{title}</h1>"]
    parts += [s(report) for s in (SECTIONS if sections is None else sections)]
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p)
