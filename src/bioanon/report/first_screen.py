"""The first screen of report.html: the headline (certified or refused, the setting, utility
against clear, the DP guarantee), the figure that decided a refusal, the trade-off, the risk
table with each risk's attacker and interval, the plan, and the details of each risk."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..levels import CONFIRM_PROBABILITY
from .html_cells import NA, n_test, rate_text
from .intervals import view_interval


def verdict_section(report: Mapping[str, Any]) -> list[str]:
    """The opening sentence: met or not, against which attacker, with what utility (CAS)."""
    v = report.get("verdict")
    if not v:
        return []
    from .verdict_points import verdict_points

    cls = "ok" if v["met"] and not v.get("refused") else "bad"
    head, points = verdict_points(v)
    items = "".join(f"<li>{html.escape(p)}</li>" for p in points)
    return [f"<div class='{cls}' id='verdict'><b>{html.escape(head)}</b><ul>{items}</ul>"
            f"<details><summary>the verdict in full</summary><p>{html.escape(v['sentence'])}"
            "</p></details></div>"]


def is_release(report: Mapping[str, Any]) -> bool:
    """A report of ``release`` (or the demo): it names a setting judged for a release."""
    return bool(report.get("release") or report.get("setting"))


def _status_line(report: Mapping[str, Any]) -> tuple[bool, str]:
    """(passed, the first line): certified or not and what was written, or the verdict."""
    r, st, v = report.get("release"), report.get("setting"), report.get("verdict") or {}
    if r:
        if r.get("written"):
            return True, (f"<b>Certified — release written:</b> "
                          f"{html.escape(str(r.get('table')))} ({r.get('n_records')} records) "
                          f"with {html.escape(str(r.get('manifest')))}.")
        return False, ("<b>NOT certified — no release was written.</b> This is the report of "
                       "the setting that came closest; it fell short on "
                       f"{html.escape(str(r.get('short_of')))}.")
    if st:
        ok = bool(st.get("certified"))
        return ok, f"<b>{'Certified' if ok else 'NOT certified'}.</b>"
    if v:
        from .verdict_points import verdict_points

        head, _ = verdict_points(v)
        return bool(v.get("met")), f"<b>Verdict: {html.escape(head)}.</b>"
    return True, ""


def _deciding_line(report: Mapping[str, Any]) -> str:
    """A refused run's deciding figure, in red, second on the page: the split, the risk, its
    value and 95% interval against its target (report.json's ``deciding``)."""
    d = report.get("deciding")
    if not d:
        return ""
    text = str(d.get("text", ""))
    return (f"<p class='bad' id='deciding'><b>{html.escape(text[:1].upper() + text[1:])}."
            "</b></p>")


def _setting_line(report: Mapping[str, Any]) -> str:
    st, r = report.get("setting") or {}, report.get("release") or {}
    setting = st.get("setting") or r.get("setting")
    if setting:
        judged = (f" <span class='note'>(judged: {html.escape(str(st['judged']))})</span>"
                  if st.get("judged") else "")
        return f"<p id='setting'>Setting: <b>{html.escape(str(setting))}</b>{judged}</p>"
    method = (report.get("params") or {}).get("method")
    return (f"<p id='setting'>Method: <b>{html.escape(str(method))}</b></p>" if method
            else "")


def _utility_line(report: Mapping[str, Any]) -> str:
    u = report.get("utility") or {}
    i = u.get("interest") or {}
    cas = u.get("cas") or ({"value": i["anonymized_to_clear"], "ci": view_interval(
        i, "anonymized_to_clear", n_test(report))} if "anonymized_to_clear" in i else None)
    if not cas or i.get("clear") is None:
        return ""
    chance = (f"; chance {i['chance']:.3f}" if isinstance(i.get("chance"), int | float)
              else "")
    from .summary import of_clear

    return (f"<p id='headline-utility'>Headline utility: CAS "
            f"<b>{rate_text(cas['value'], cas.get('ci'))}</b> "
            f"<b>{html.escape(of_clear(cas['value'], i['clear']))}</b> for "
            f"<code>{html.escape(str(i.get('column')))}</code> (trained on the release, "
            f"scored on clear held-out data; clear data "
            f"{rate_text(i['clear'], view_interval(i, 'clear', n_test(report)))}{chance}).</p>")


def _dp_line(report: Mapping[str, Any]) -> str:
    dp = report.get("differential_privacy")
    if not dp:
        from ..metrics.results import passing_counts

        unmeasured = passing_counts(report.get("risks") or [])["accepted_unmeasured"]
        which = ("every risk below is measured" if not unmeasured else
                 f"the risks below are measured, but for {len(unmeasured)} accepted by you, "
                 f"not measured ({', '.join(unmeasured)})")
        return f"<p id='headline-dp'>Formal guarantee: none declared (no ε): {which}.</p>"
    unit = "per identity" if dp.get("privacy_unit") == "identity" else "per record"
    head = (f"ε = {dp['epsilon']:g}, δ = {dp['delta']:.2g} {unit}")
    if dp.get("strict"):
        pub = dp.get("public_data") or {}
        why = (f"strict (bounds from public data: {html.escape(str(pub.get('name')))})"
               if pub else "strict")
        return (f"<p id='headline-dp'>Differential privacy: <b>{head}</b> — <span "
                f"class='ok'>{why}</span>; stated beside the measured risks, not instead of "
                "them.</p>")
    why = str(dp.get("statement", "")).removeprefix("NOT STRICT: ")
    why = why.split(" (PrivacyLeakWarning)")[0].split(": the (epsilon")[0]
    return (f"<p id='headline-dp'>Differential privacy: <b>{head}</b> — <span class='bad'>NOT "
            f"STRICT</span>: {html.escape(why)}, so the guarantee does not hold strictly (see "
            "below).</p>")


def headline_section(report: Mapping[str, Any]) -> str:
    """The first screen's answers, in one box: certified (or the verdict) and what was
    written, the setting, CAS against clear, and ε with its strictness (the risks follow in
    :func:`risk_table_section`)."""
    ok, status = _status_line(report)
    lines = [f"<p class='status {'ok' if ok else 'bad'}' id='release'>{status}</p>"
             if status else "", _deciding_line(report), _setting_line(report),
             _utility_line(report), _dp_line(report)]
    return f"<div id='headline' class='{'passes' if ok else 'fails'}'>{''.join(lines)}</div>"


def unjudged_text(entry: Mapping[str, Any]) -> str:
    """What an entry leaves open: the settings the utility floor decided that were not
    judged on privacy at its level (``floored_unjudged``).

    >>> unjudged_text({"floored_unjudged": 5})
    '5 settings under the utility floor not judged at this level'
    """
    n = int(entry.get("floored_unjudged") or 0)
    return (f"{n} setting{'s' if n != 1 else ''} under the utility floor not judged at this "
            "level")


def tradeoff_section(report: Mapping[str, Any]) -> str:
    """The trade-off before the choice, on the first screen: per level (strict, standard,
    basic), the best CAS the search found meeting that level's targets and its setting, with
    what the row rests on (report.json's ``tradeoff``; figures of the tuning split)."""
    table = report.get("tradeoff") or []
    if not table:
        return ""
    body = []
    for e in table:
        name = html.escape(str(e["level"])) + (" <b>(chosen)</b>" if e.get("chosen") else "")
        targets = f"{e['record_target']:g} / {e['identity_target']:g}"
        open_ = unjudged_text(e) if e.get("floored_unjudged") else ""
        if e.get("setting") is None:
            body.append(f"<tr><td class='text'>{name}</td><td>{targets}</td><td>none</td>"
                        f"<td class='text'>{NA}</td><td class='text'>no setting judged met "
                        f"every target{html.escape(f' ({open_})' if open_ else '')}</td></tr>")
            continue
        notes = [str(e["judged_by"])]
        if e.get("below_floor"):
            notes.append("below the utility floor")
        if e.get("accepts"):  # the user did not accept them: the row needs them accepted
            notes.append("needs " + ", ".join(e["accepts"]) + " accepted by name (not "
                         "showable at this level)")
        if open_:
            notes.append(open_ + ", more useful")
        frac = NA if e.get("fraction") is None else f"{e['fraction']:.2f} ×"
        ci = e.get("cas_ci") or [float("nan")] * 2
        body.append(f"<tr><td class='text'>{name}</td><td>{targets}</td>"
                    f"<td>{frac} <span class='ci'>CAS {e['cas']:.3f} [{ci[0]:.3f}, "
                    f"{ci[1]:.3f}] / clear {e['clear']:.3f}</span></td>"
                    f"<td class='text'><code>{html.escape(str(e['setting']))}</code></td>"
                    f"<td class='text'>{html.escape('; '.join(notes))}</td></tr>")
    return ("<h2 id='tradeoff'>Trade-off: the best CAS found at each level</h2>"
            "<p class='note'>On the search's tuning split: for each level, the most useful "
            "setting whose every judged risk meets that level's targets (record / identity "
            "membership advantage). A row judged at stage 1 only has no recognition figure."
            "</p><div class='wide'><table id='tradeoff-table'><tr><th class='text'>level"
            "</th><th>targets</th><th>CAS / clear</th><th class='text'>setting</th>"
            "<th class='text'>rests on</th></tr>" + "".join(body) + "</table></div>")


def risk_table_section(report: Mapping[str, Any]) -> str:
    """Every risk on one line each, on the first screen: the risk, its attacker, the figure
    with its 95% interval, the target and the status (the details follow further down)."""
    from .risks import risk_rows

    rows = risk_rows(report)
    if not rows:
        return ""
    d = report.get("deciding")
    title = "Risks: every one must be met"
    if d:  # a refused run: say whose figures these are (they may all pass)
        title = f"Risks of {d.get('figures_of') or 'the closest setting'}"
        if d.get("split") == "tuning":
            rows = without_margin(rows, d)
    return (f"<h2 id='risks'>{html.escape(title)}</h2>"
            + _risk_table(rows, "risk-table"))


#: the status of the risk a refusal for margin names (its row said "met")
NO_MARGIN = "met, without margin"


def without_margin(rows: Sequence[Mapping[str, str]], deciding: Mapping[str, Any]
                   ) -> list[dict[str, str]]:
    """The risk rows of a refusal decided by the margin, the deciding risk's row saying so:
    its figure meets the target on the tuning split, but the chance that a fresh evaluation
    passes is under what the search chooses with, so its status is not a plain "met" (a
    refused report whose every row read "met" told the reader nothing had fallen short).

    >>> rows = [{"risk": "record recognition", "status": "met", "reason": ""}]
    >>> d = {"status": "no margin", "level": "record", "risk": "recognition",
    ...      "pass_probability": 0.63, "leak_free_probability": 0.81}
    >>> without_margin(rows, d)[0]["status"]
    'met, without margin'
    """
    out = [dict(r) for r in rows]
    if deciding.get("status") != "no margin":
        return out
    name = f"{deciding.get('level')} {deciding.get('risk')}"
    chance = float(deciding.get("pass_probability") or 0.0)
    free = deciding.get("leak_free_probability")
    for r in out:
        if r["risk"] == name and r["status"] == "met":
            r["status"] = NO_MARGIN
            r["reason"] = (f"the chance that a fresh evaluation passes is {chance:.2f}, "
                           f"under the {CONFIRM_PROBABILITY:g} the search chooses with"
                           + ("" if free is None else
                              f" (a release leaking nothing: {float(free):.2f})"))
    return out


#: a risk's status, coloured
STATUS_CLASS = {"met": "ok", "accepted": "ok", "covered by the guarantee": "ok",
                "not met": "bad", "inconclusive at this size": "bad", NO_MARGIN: "bad"}


def _risk_table(rows: Sequence[Mapping[str, str]], table_id: str) -> str:
    """The one-line-per-risk table (:func:`bioanon.report.risks.risk_rows`' rows)."""
    colour = STATUS_CLASS
    body = []
    for r in rows:
        value = NA if r["value"] == "—" else f"{r['statistic']} {r['value']}"
        why = "" if r["status"] == "met" else (
            f"<br><span class='note'>{html.escape(r['reason'])}</span>")
        body.append(
            f"<tr><td class='text' title='{html.escape(r['question'])}'>"
            f"<b>{html.escape(r['risk'])}</b></td>"
            f"<td class='text'>{html.escape(r['attacker'])}</td>"
            f"<td>{html.escape(value)}</td><td>{html.escape(r['target_short'])}</td>"
            f"<td class='text'><span class='{colour.get(r['status'], '')}'>"
            f"{html.escape(r['status'])}</span>{why}</td></tr>")
    return (f"<div class='wide'><table id='{table_id}'><tr><th class='text'>risk</th>"
            "<th class='text'>attacker</th><th>figure [95% CI]</th><th>target</th>"
            "<th class='text'>status</th></tr>" + "".join(body) + "</table></div>")


def deciding_section(report: Mapping[str, Any]) -> str:
    """A refusal decided on the tuning split: that split's row of the setting (every risk, the
    one that decided among them), before the fresh split's table, which did not decide."""
    from .risks import risk_rows

    d = report.get("deciding") or {}
    if d.get("split") != "tuning" or not d.get("risks"):
        return ""
    return (f"<h2 id='deciding-row'>What decided: {html.escape(str(d.get('setting')))} on "
            "the tuning split</h2>"
            + _risk_table(without_margin(risk_rows({"risks": d["risks"]}), d),
                          "deciding-table"))


def risk_details_section(report: Mapping[str, Any]) -> str:
    """Every risk in full: the question, attacker, figure [95% CI] with AUC and TPR at 1% FPR
    and the candidates, baseline, target and the status with its reason."""
    from .risks import risk_rows

    rows = risk_rows(report)
    if not rows:
        return ""
    colour = {"met": "ok", "accepted": "ok", "covered by the guarantee": "ok", "not met": "bad",
              "inconclusive at this size": "bad"}
    body = []
    for r in rows:
        st = html.escape(r.get("status_text", r["status"]))
        body.append(
            f"<tr><td class='text' title='{html.escape(r['question'])}'>"
            f"<b>{html.escape(r['risk'])}</b><br><span class='note'>"
            f"{html.escape(r['question'])}</span></td>"
            f"<td class='text'>{html.escape(r['attacker'])}</td>"
            f"<td class='text'>{html.escape(r['figure'])}</td>"
            f"<td class='text'>{html.escape(r['baseline'])}</td>"
            f"<td>{html.escape(r['target'])}</td>"
            f"<td class='text'><span class='{colour.get(r['status'], '')}'>{st}</span>"
            f"<br><span class='note'>{html.escape(r['reason'])}</span></td></tr>")
    return ("<h2 id='risk-details'>Risks in detail</h2>" +
            "<div class='wide'><table id='risk-detail-table'><tr><th class='text'>risk</th>"
            "<th class='text'>attacker</th><th class='text'>figure [95% CI]</th>"
            "<th class='text'>baseline</th><th>target</th><th class='text'>status</th></tr>"
            + "".join(body) + "</table></div>"
            "<p class='note'>Not covered: the level cannot be measured at this size (too few "
            "records or identities) and the certificate does not cover it; it passes only when "
            "accepted by name (LEVEL-RISK), with the reason.</p>")


def plan_section(report: Mapping[str, Any]) -> str:
    """The plan of a certification: what this table's size can show at the chosen level,
    from its shape alone."""
    out = []
    plan = report.get("plan")
    if plan:
        lv = plan["level"]
        cells = []
        for r in plan["rows"]:
            small = r["smallest_showable"]
            small_s = "nothing" if small is None else f"{small:.3f}"
            cells.append(f"<tr><td class='text'>{html.escape(r['name'])}</td>"
                         f"<td>{r['target']:g}</td><td>{small_s}</td>"
                         f"<td class='text'>{html.escape(r['status'])}</td>"
                         f"<td class='text'>{html.escape(r['why'])}</td></tr>")
        rows = "".join(cells)
        out.append(f"<h2 id='plan'>Plan: level '{html.escape(lv['name'])}' on "
                   f"{plan['n_records']} records, {plan['n_identities']} identities</h2>"
                   "<p class='note'>From the table's shape alone, before any setting was "
                   "judged: the smallest membership advantage this sample can rule out (the "
                   "target a leak-free release passes with probability ≥ 95%).</p>"
                   "<table><tr><th>risk</th><th>target</th><th>can rule out</th>"
                   f"<th>status</th><th>why</th></tr>{rows}</table>")
        for note in ("margin", "accepted", "small_classes"):
            if plan.get(note):
                out.append(f"<p class='note'>{html.escape(str(plan[note]))}</p>")
    return "".join(out)


