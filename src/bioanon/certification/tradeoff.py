"""The trade-off before the choice: per named level, the most useful setting the search found.

A data owner chooses a level (``strict``, ``standard``, ``basic``: :mod:`bioanon.levels`)
before the search; what each level costs in utility is known only after it. The search's
rows hold every setting's figures on the tuning split, so the table is read from them: for
each level, the setting of the highest CAS whose every judged risk meets **that level's**
targets (:func:`level_rows`). The figures are re-judged by the verdict's own rule
(:func:`~bioanon.evaluation.verdict.judge_risks`), nothing is measured again.

What each row rests on is said beside it (``judged_by``):

- ``the full panel``: every risk, recognition included, was measured for that setting;
- ``stage 1: recognition not judged``: the setting passed utility, membership and inference
  at that level, but the recognition panel never judged it (the staged search judges the
  panel only for the settings of the chosen level; :func:`~.search.search` with
  ``tradeoff_panels`` > 0 judges the best such setting per level with the panel too).

A level whose plan cannot show one of its risks on this table (a stricter target than the
sample can rule out) judges that risk on its estimate (an estimate above the target is still
not met) and names it in ``accepts``: the row **needs** it accepted by name (the user did not
accept it; the table says so, :func:`needs_text`, and never counts it as accepted).

The refusal's trade-off line (:func:`tradeoff_line`) reads the same rows: the best CAS that
met every target of the chosen level (even below the utility floor), the strictest other
level at which a more useful setting meets every target, and how far the most useful setting
fell short, on which risk (estimate and upper bound against target).

Examples
--------
>>> rows = [{"setting": "a()", "cas": 0.9, "cas_ci": [0.85, 0.95], "clear": 1.0,
...          "interest_chance": 0.1, "risks": [], "_risks": []}]
>>> [r["setting"] for r in level_rows(rows, "standard", 0.05)]
['a()', 'a()', 'a()']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..levels import CONFIRM_PROBABILITY, LEVELS, resolve_level
from ..metrics.results import INCONCLUSIVE, PASSING
from ..report.first_screen import unjudged_text

#: the levels of the table, strictest first
TABLE_LEVELS = ("strict", "standard", "basic")
#: ``judged_by`` of a row resting on every risk, recognition included
PANEL = "the full panel"
#: ``judged_by`` of a row whose setting the recognition panel never judged
STAGE1_ONLY = "stage 1: recognition not judged"


def _passes(row: Mapping[str, Any], lv: Any, target: float, accept: Mapping[str, str],
            guarantee: Any, inconclusive_ok: bool, recognition_hw: float | None = None
            ) -> tuple[bool, list[Any], list[str]]:
    """Whether ``row`` meets level ``lv``'s targets (utility: CAS above chance), its risks
    re-judged, and the risks counted as accepted because the table cannot show them.

    A row the recognition panel never judged passes only if its margin holds with the
    recognition figure still to come at its best — the most any reading states at the
    interval half-width ``recognition_hw`` the panel measured on this table's other settings
    (:func:`recognition_half_width`; :func:`~bioanon.metrics.pass_chance.most_stated`, what a
    true advantage of 0 passes with): a necessary condition, so a level is never offered on
    a row that no recognition figure could carry (FSDD at 6 speakers: ±0.03 against 0.05
    leaves at most 0.90, which takes a stage-1 row at 0.88 under the 0.8 needed; without it
    the refusal pointed to a level that refused in turn)."""
    from ..evaluation.risks.base import FLOORED_REASON
    from ..evaluation.verdict import judge_risks
    from ..metrics.normal import ppf
    from ..metrics.pass_chance import most_stated
    from .margin import CONFIRM_PROBABILITY, pass_probability

    raw = row.get("_risks")
    if raw is None or any(FLOORED_REASON in str(getattr(r, "reason", "")) for r in raw):
        return False, [], []  # no figure, or none measured: the utility floor decided it
    risks = judge_risks(list(raw), float(target), lv, dict(accept), guarantee)
    shown: list[str] = []
    if inconclusive_ok:  # what the plan at this level cannot show, accepted on its estimate
        extra = {r.name: "inconclusive at this size at this level" for r in risks
                 if r.status == INCONCLUSIVE and r.name not in accept}
        if extra:
            shown = sorted(extra)
            risks = judge_risks(list(raw), float(target), lv, {**accept, **extra}, guarantee)
    useful = float(row["cas_ci"][0]) > float(row["interest_chance"])
    p = pass_probability(risks, [*accept, *shown])
    if (recognition_hw is not None and guarantee is None and not _has_recognition(row)
            and not any(name in accept for name in _recognition_names())):
        p *= most_stated(float(recognition_hw) / ppf(0.975), float(target))
    ok = useful and all(r.passes for r in risks) and p >= CONFIRM_PROBABILITY
    return ok, risks, shown


def _recognition_names() -> list[str]:
    """The names (``LEVEL-RISK``) of the risks the attack panel judges."""
    from ..evaluation.risks.registry import REGISTRY, panel_risks

    return [f"{lv}-{spec.name}" for spec in REGISTRY if spec.name in panel_risks()
            for lv in ("record", "identity", "group")]


def recognition_half_width(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """The median upper half-width (upper 95% bound − estimate) of the recognition figures
    the panel measured on ``rows`` (None when it judged none): how wide the interval of a
    recognition figure is on this table, which its size sets more than the setting does
    (FSDD: 0.029–0.030 for three settings).

    Examples
    --------
    >>> from types import SimpleNamespace as R
    >>> rows = [{"_risks": [R(risk="recognition", value=0.004, ci=(-0.06, 0.033))]},
    ...         {"_risks": [R(risk="membership", value=0.1, ci=(0.0, 0.2))]}]
    >>> round(recognition_half_width(rows), 3), recognition_half_width(rows[1:])
    (0.029, None)
    """
    from ..evaluation.risks.registry import panel_risks

    widths = [float(r.ci[1]) - float(r.value) for row in rows for r in row.get("_risks") or ()
              if r.risk in panel_risks() and math.isfinite(float(r.ci[1]))
              and math.isfinite(float(r.value))]
    return float(np.median(widths)) if widths else None


def _recognition_ub(risks: Sequence[Any]) -> float:
    """The upper 95% bound of the risk the attack panel judges (the registry's panel risk)."""
    from ..evaluation.risks.registry import panel_risks

    ubs = [float(r.ci[1]) for r in risks if r.risk in panel_risks()]
    return ubs[0] if ubs and math.isfinite(ubs[0]) else math.inf


def best_at(rows: Sequence[Mapping[str, Any]], level: Any, target: float,
            accept: Mapping[str, str] | None = None, guarantee: Any = None,
            chosen_level: bool = False) -> tuple[int | None, list[str]]:
    """The index of the most useful row meeting ``level``'s targets (highest CAS, then the
    lowest upper bound of the recognition advantage, then the rows' order: the search's
    rule), and the risks accepted because the level cannot be shown; (None, []) when none.

    At the chosen level (``chosen_level``) the user's acceptances are the only ones."""
    lv = resolve_level(level)
    best: tuple[float, float, int] | None = None
    out: tuple[int | None, list[str]] = (None, [])
    hw = recognition_half_width(rows)
    for j, row in enumerate(rows):
        ok, risks, shown = _passes(row, lv, target, dict(accept or {}), guarantee,
                                   not chosen_level, hw)
        if not ok:
            continue
        key = (-float(row["cas"]), _recognition_ub(risks), j)
        if best is None or key < best:
            best, out = key, (j, shown)
    return out


def level_rows(rows: Sequence[Mapping[str, Any]], chosen: Any, target: float,
               accept: Mapping[str, str] | None = None, guarantee: Any = None,
               min_utility: float | None = None) -> list[dict[str, Any]]:
    """The trade-off table: one row per level (strict, standard, basic, and the chosen
    level when it is a number), each with the most useful setting meeting its targets.

    Parameters
    ----------
    rows : the search's rows (with their in-process ``_risks``)
    chosen : the level the search judged (a name, a number or a Level)
    target : the recognition target (``target_advantage``; the same at every level)
    accept : the risks the user accepted, by name
    guarantee : a declared DP guarantee (covers the risks its unit covers)
    min_utility : the utility floor (a fraction of the clear CAS); rows below it are marked

    Returns
    -------
    list of dict
        ``level``, ``record_target``, ``identity_target``, ``chosen`` (the user's level),
        ``setting`` (None: no setting judged meets the level), ``cas``, ``cas_ci``,
        ``clear``, ``fraction`` (CAS / clear), ``judged_by``, ``below_floor``, ``accepts``
        (risks counted as accepted because this table cannot show them at that level),
        ``floored_unjudged`` (how many settings the utility floor decided, their risks not
        measured, would come before the entry if they met the level: 0 when the entry is
        the table's best, whatever those settings leak).
    """
    mine = resolve_level(chosen)
    levels = [LEVELS[n] for n in TABLE_LEVELS]
    if mine.name not in TABLE_LEVELS:
        levels.append(mine)
    unjudged = _floored_unjudged(rows)
    out = []
    for lv in levels:
        is_mine = lv.name == mine.name
        j, shown = best_at(rows, lv, target, accept, guarantee, chosen_level=is_mine)
        entry: dict[str, Any] = {
            "level": lv.name, "record_target": lv.record, "identity_target": lv.identity,
            "chosen": is_mine, "setting": None, "cas": None, "cas_ci": None, "clear": None,
            "fraction": None, "judged_by": None, "below_floor": None, "accepts": shown,
            "floored_unjudged": sum(j is None or (-cas, f) < (-float(rows[j]["cas"]), j)
                                    for cas, f in unjudged)}
        if j is not None:
            r = rows[j]
            cas, clear = float(r["cas"]), float(r["clear"])
            gate = r.get("consumer_gate") or {}  # the whole panel put it under the floor
            entry.update(setting=r["setting"], cas=cas, cas_ci=list(r["cas_ci"]),
                         clear=clear, fraction=cas / clear if clear > 0 else None,
                         judged_by=(PANEL if _has_recognition(r) else STAGE1_ONLY),
                         below_floor=bool(min_utility is not None
                                          and cas < float(min_utility) * clear
                                          or gate.get("passed") is False),
                         _row=j)
        out.append(entry)
    return out


def _floored_unjudged(rows: Sequence[Mapping[str, Any]]) -> list[tuple[float, int]]:
    """(CAS, index) of the rows the utility floor decided, their risks not measured, whose
    CAS is above chance (one at chance is never an entry).

    >>> from types import SimpleNamespace as R
    >>> from bioanon.evaluation.risks.base import FLOORED_REASON
    >>> floored = {"cas": 0.5, "cas_ci": [0.4, 0.6], "interest_chance": 0.1,
    ...            "_risks": [R(reason=FLOORED_REASON + ": ...")]}
    >>> _floored_unjudged([{"cas": 0.9, "_risks": []}, floored])
    [(0.5, 1)]
    """
    from ..evaluation.risks.base import FLOORED_REASON

    return [(float(r["cas"]), j) for j, r in enumerate(rows)
            if any(FLOORED_REASON in str(getattr(x, "reason", "")) for x in r.get("_risks") or ())
            and float(r["cas_ci"][0]) > float(r["interest_chance"])]


def _has_recognition(row: Mapping[str, Any]) -> bool:
    """Whether the row's risks include the attack panel's (it was judged by the panel)."""
    from ..evaluation.risks.registry import panel_risks

    return any(r.risk in panel_risks() for r in row.get("_risks") or ())


def stage1_only(table: Sequence[Mapping[str, Any]]) -> list[int]:
    """The search rows behind the table's rows that the recognition panel never judged,
    each once: those above the utility floor first (the chosen level's, then the others by
    decreasing CAS: the more useful release a refusal points to before a less useful one),
    then those below it in the same order (a release the user would get only by lowering
    the floor: FSDD's standard row, 0.58 × clear, took the first of two panels and left the
    row the refusal pointed to, basic at 0.91 ×, unjudged).

    Examples
    --------
    >>> t = [{"chosen": True, "cas": 0.5, "judged_by": STAGE1_ONLY, "below_floor": True,
    ...       "_row": 3},
    ...      {"chosen": False, "cas": 0.8, "judged_by": STAGE1_ONLY, "below_floor": False,
    ...       "_row": 5}]
    >>> stage1_only(t)
    [5, 3]
    """
    order = sorted(table, key=lambda e: (bool(e.get("below_floor")), not e["chosen"],
                                         -float(e["cas"] or 0.0)))
    return list(dict.fromkeys(e["_row"] for e in order
                              if e["judged_by"] == STAGE1_ONLY and "_row" in e))


def public(table: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The table without its in-process fields (for JSON)."""
    return [{k: v for k, v in e.items() if not k.startswith("_")} for e in table]


def needs_text(accepts: Sequence[str]) -> str:
    """What a row of the table needs that the user did not accept: the risks this table
    cannot show at that level, each to be accepted by name (the row never accepts them).

    >>> needs_text(["record-inference"])
    'needs accept_risks=record-inference'
    """
    return "needs " + " and ".join(f"accept_risks={name}" for name in accepts)


def _frac(e: Mapping[str, Any]) -> str:
    f = e.get("fraction")
    return "—" if f is None else f"{f:.2f} × clear"


def table_lines(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The table as terminal lines (one per level).

    Examples
    --------
    >>> t = [{"level": "standard", "record_target": 0.1, "identity_target": 0.14,
    ...       "chosen": True, "setting": None, "fraction": None, "judged_by": None,
    ...       "below_floor": None, "accepts": []}]
    >>> table_lines(t)[1]
    '  standard (chosen) 0.1 / 0.14: none'
    """
    out = ["trade-off on the tuning split (best CAS meeting each level's targets, record / "
           "identity):"]
    for e in table:
        head = (f"  {e['level']}{' (chosen)' if e['chosen'] else ''} "
                f"{e['record_target']:g} / {e['identity_target']:g}: ")
        if e["setting"] is None:
            out.append(head + "none" + (f" among the settings judged ({unjudged_text(e)})"
                                        if e.get("floored_unjudged") else ""))
            continue
        notes = [] if e["judged_by"] == PANEL else [str(e["judged_by"])]
        if e.get("below_floor"):
            notes.append("below the utility floor")
        if e.get("accepts"):
            notes.append(needs_text(e["accepts"]) + " (not showable here)")
        if e.get("floored_unjudged"):
            notes.append(unjudged_text(e) + ", more useful")
        out.append(head + f"{_frac(e)} {e['setting']}"
                   + (f" [{'; '.join(notes)}]" if notes else ""))
    return out


def _failed(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The risks a row failed at the chosen level: name, statistic, estimate, upper bound,
    target."""
    out = []
    for r in row.get("risks", []):
        if r["status"] in PASSING:
            continue
        t = r.get("target")
        out.append({"name": r["name"], "statistic": r["statistic"],
                    "value": float(r["value"]), "upper": float(r["ci"][1]),
                    "target": None if t is None or not math.isfinite(float(t)) else float(t),
                    "status": r["status"], "reason": str(r.get("reason") or "")})
    return out


def _short_part(f: Mapping[str, Any]) -> str:
    """One risk a row fell short on, in words: its estimate and upper bound against the
    target, or that it was not measured (and why, when stage 1's screen decided the row)."""
    if not (math.isfinite(f["value"]) and math.isfinite(f["upper"])):
        from ..evaluation.risks.base import FLOORED_REASON

        reason = f.get("reason", "")
        why = (" (stage 1's screen: the cheap membership attackers had decided the setting)"
               if "screened at stage 1" in reason else
               " (stage 1's utility floor had decided the setting)"
               if FLOORED_REASON in reason else "")
        return f"{f['name']} not measured{why}"
    return (f"{f['name']} {f['statistic']} {f['value']:.3f} (upper bound {f['upper']:.3f})"
            + ("" if f["target"] is None else f" > target {f['target']:g}"))


def _short_text(top: Mapping[str, Any]) -> str:
    """How the most useful setting fell short, in words: the risks it failed, else its
    margin (every risk within target on the tuning split, the chance of passing a fresh
    evaluation too low), its utility, or recognition that no panel judged.

    >>> _short_text({"short_on": [], "met": False, "met_utility": True,
    ...              "short_of_margin": ["record-membership"], "pass_probability": 0.52})
    ... # doctest: +NORMALIZE_WHITESPACE
    'fell short on margin: record-membership within target on the tuning split, but the
    chance that a fresh evaluation passes is 0.52 < 0.8'
    """
    parts = [_short_part(f) for f in top["short_on"]]
    if parts:
        return "fell short on " + "; ".join(parts)
    if top["met"]:
        return "met every target on the tuning split (its confirmation on a fresh split fell " \
               "short)"
    if not top["met_utility"]:
        return "fell short on utility (below the floor or not above chance)"
    if top.get("short_of_margin"):
        return (f"fell short on margin: {', '.join(top['short_of_margin'])} within target on "
                "the tuning split, but the chance that a fresh evaluation passes is "
                f"{float(top.get('pass_probability') or 0.0):.2f} < {CONFIRM_PROBABILITY:g}")
    return "fell short on recognition (not judged by the panel)"


def refusal_facts(table: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """What a refusal says, as data (``--json``'s ``refusal``): ``best_met`` (the chosen
    level's row of the table: the best CAS that met every target, even below the floor),
    ``looser`` (the strictest other level whose best CAS is higher, or None) and
    ``most_useful`` (the setting of the highest CAS measured — a setting stage 1's screen
    decided has none —: ``setting``, ``cas``, ``clear``,
    ``fraction``, ``met``, ``met_utility``, ``short_on``, the risks it failed with
    estimate, upper bound and target, and ``short_of_margin`` with ``pass_probability``: the
    risks within target whose chance of passing a fresh evaluation is too low)."""
    mine = next((dict(e) for e in public(table) if e["chosen"]), None)
    floor_cas = -math.inf if mine is None or mine["cas"] is None else float(mine["cas"])
    looser = next((dict(e) for e in public(table) if not e["chosen"] and e["cas"] is not None
                   and float(e["cas"]) > floor_cas), None)
    top: dict[str, Any] | None = None
    useful = [r for r in rows if r.get("clear") and math.isfinite(float(r["cas"]))]
    if useful:
        r = max(useful, key=lambda r: float(r["cas"]))
        top = {"setting": r["setting"], "cas": float(r["cas"]), "clear": float(r["clear"]),
               "fraction": float(r["cas"]) / float(r["clear"]), "met": bool(r.get("met")),
               "met_utility": bool(r.get("met_utility", True)), "short_on": _failed(r),
               "short_of_margin": list(r.get("short_of_margin") or []),
               "pass_probability": r.get("pass_probability")}
    return {"best_met": mine, "looser": looser, "most_useful": top}


def _notes(e: Mapping[str, Any], floor: float | None) -> list[str]:
    notes = [] if e["judged_by"] == PANEL else [str(e["judged_by"])]
    if e.get("below_floor"):
        notes.append(f"below the floor {float(floor or 0):g} × clear")
    if e.get("accepts"):
        notes.append(needs_text(e["accepts"]))
    return notes


def tradeoff_line(table: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]],
                  min_utility: float | None) -> str:
    """One line: the best CAS that met every target of the chosen level (even below the
    floor), the strictest other level at which a more useful setting meets every target, and
    how far the most useful setting fell short, on which risk (:func:`refusal_facts`).

    Examples
    --------
    >>> t = [{"level": "standard", "chosen": True, "setting": "a()", "fraction": 0.5,
    ...       "cas": 0.5, "judged_by": PANEL, "below_floor": True, "accepts": []},
    ...      {"level": "basic", "chosen": False, "setting": "b()", "fraction": 0.9,
    ...       "cas": 0.9, "judged_by": PANEL, "below_floor": False, "accepts": []}]
    >>> rows = [{"setting": "c()", "cas": 0.95, "clear": 1.0, "met_utility": True,
    ...          "risks": [{"name": "record-membership", "statistic": "advantage",
    ...                     "value": 0.16, "ci": [0.1, 0.21], "target": 0.1,
    ...                     "status": "not met"}]}]
    >>> print(tradeoff_line(t, rows, 0.8))  # doctest: +NORMALIZE_WHITESPACE
    best CAS meeting every target at level standard (tuning split): 0.50 × clear (a(),
    below the floor 0.8 × clear); a more useful release meets every target at level basic:
    0.90 × clear (b()); the most useful setting, c() (0.95 × clear), fell short on record-membership
    advantage 0.160 (upper bound 0.210) > target 0.1
    >>> t[1].update(fraction=0.6, cas=0.6, below_floor=True)  # the looser one below it too
    >>> "basic: 0.60 × clear (b(), below the floor 0.8 × clear)" in tradeoff_line(t, rows, 0.8)
    True
    """
    facts = refusal_facts(table, rows)
    mine, looser, top = facts["best_met"], facts["looser"], facts["most_useful"]
    if mine is None or mine["setting"] is None:
        parts = [f"no setting met every target at level "
                 f"{mine['level'] if mine else 'chosen'}"]
    else:
        parts = [f"best CAS meeting every target at level {mine['level']} (tuning split): "
                 f"{_frac(mine)} ({', '.join([mine['setting'], *_notes(mine, min_utility)])})"]
    if looser is not None:
        notes = ", ".join([looser["setting"], *_notes(looser, min_utility)])
        parts.append(f"a more useful release meets every target at level {looser['level']}: "
                     f"{_frac(looser)} ({notes})")
    else:
        parts.append("no named level gives a more useful release")
    if top is not None:
        parts.append(f"the most useful setting, {top['setting']} ({top['fraction']:.2f} × "
                     f"clear), {_short_text(top)}")
    return "; ".join(parts)


__all__ = ["PANEL", "STAGE1_ONLY", "TABLE_LEVELS", "best_at", "level_rows", "needs_text",
           "public", "recognition_half_width", "refusal_facts", "stage1_only", "table_lines",
           "tradeoff_line"]
