"""The figure that decided a refusal: which split, which risk, its value and 95% interval
against its target.

A search refuses for one of two reasons: no setting met every target on the **tuning split**
(the closest setting's worst shortfall decides), or the chosen setting's **confirmation run
(fresh split)** fell short (its worst shortfall decides). The report of a refused run may then
show a table in which every risk is met: the closest setting on the tuning split when it fell
short of margin only, or a confirmation whose utility fell below the floor. :func:`deciding`
names what decided, so the report, ``report.json`` (its ``deciding`` object) and the terminal
lead with it.

Which shortfall decides, among several: a risk measured above its target before one
inconclusive at this size, then the largest excess of its upper 95% bound over its target,
then the risks' order; the utility (below the floor, or not above chance) when no risk fell
short. Nothing here is measured again: the figures are the search's.

Examples
--------
>>> d = deciding_of_risks([{"name": "record-membership", "risk": "membership",
...     "level": "record", "statistic": "advantage", "value": 0.061, "ci": [0.015, 0.107],
...     "target": 0.1, "attacker": "model-aware", "status": "not met", "reason": ""}],
...     "tuning", "dp-cells(cells=0)")
>>> d["text"]  # doctest: +NORMALIZE_WHITESPACE
'decided by the tuning split: dp-cells(cells=0) fell short on record-membership: advantage
0.061 [95% CI 0.015, 0.107], upper bound 0.107 > target 0.1 (model-aware)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..metrics.results import INCONCLUSIVE, PASSING

#: the splits a refusal can be decided on, as the report names them
SPLITS = {"tuning": "the tuning split", "confirmation": "the confirmation run (fresh split)"}
#: what a refused report's risk table shows, by the split that decided
FIGURES_OF = {
    "tuning": "the closest setting on the tuning split, which decided (the same figures as "
              "its row above, with every attacker's details)",
    "confirmation": "the confirmation run (fresh split), which decided",
}


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _excess(r: Mapping[str, Any]) -> float:
    ci = r.get("ci") or [math.nan, math.nan]
    ex = _num(ci[1]) - _num(r.get("target"))
    return ex if math.isfinite(ex) else -math.inf


def _worst(failed: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The shortfall that decides: measured above target first, then the largest excess."""
    order = sorted(range(len(failed)),
                   key=lambda i: (failed[i].get("status") == INCONCLUSIVE,
                                  -_excess(failed[i]), i))
    return failed[order[0]]


def _risk_text(r: Mapping[str, Any]) -> str:
    value, ci, target = _num(r.get("value")), r.get("ci") or [None, None], _num(r.get("target"))
    lo, hi = _num(ci[0]), _num(ci[1])
    stat = str(r.get("statistic") or "")
    attacker = f" ({r['attacker']})" if r.get("attacker") else ""
    if not math.isfinite(value):
        figure = "not measured"
    else:
        figure = f"{stat} {value:.3f}" + (f" [95% CI {lo:.3f}, {hi:.3f}]"
                                          if math.isfinite(hi) else "")
    if r.get("status") == INCONCLUSIVE or not math.isfinite(hi):
        why = str(r.get("reason") or "")
        return (f"{figure}, {INCONCLUSIVE}" + (f" ({why})" if why else "")
                + (f"; target {target:g}" if math.isfinite(target) else "") + attacker)
    op = ">" if math.isfinite(target) and hi > target else "vs"
    return f"{figure}, upper bound {hi:.3f} {op} target {target:g}{attacker}"


def deciding_of_risks(risks: Sequence[Mapping[str, Any]], split: str, setting: str | None
                      ) -> dict[str, Any] | None:
    """The deciding object of a row's risks (their dicts) on ``split`` (``tuning`` or
    ``confirmation``), or None when every risk passes."""
    failed = [r for r in risks if r.get("status") not in PASSING]
    if not failed:
        return None
    r = _worst(failed)
    name = str(r.get("name") or f"{r.get('level')}-{r.get('risk')}")
    text = f"decided by {SPLITS[split]}: {setting} fell short on {name}: {_risk_text(r)}"
    return {"split": split, "split_label": SPLITS[split], "setting": setting,
            "name": name, "risk": r.get("risk"), "level": r.get("level"),
            "statistic": r.get("statistic"), "value": _num(r.get("value")),
            "ci": [_num(x) for x in (r.get("ci") or [math.nan, math.nan])],
            "target": _num(r.get("target")), "judged": "upper 95% bound ≤ target",
            "attacker": r.get("attacker"), "status": r.get("status"), "text": text,
            "risks": [dict(x) for x in risks]}


def _utility(split: str, setting: str | None, cas: float, ci: Sequence[float], clear: float,
             chance: float | None, floor: float | None,
             risks: Sequence[Mapping[str, Any]], by: str = "") -> dict[str, Any]:
    """The deciding object when the utility fell short: below the floor (point estimate
    against ``floor`` × clear), else not above chance (lower 95% bound against chance).
    ``by``: whose CAS it is, when not the row's (the consumer's whole panel's pick)."""
    lo, hi = (_num(ci[0]), _num(ci[1])) if ci else (math.nan, math.nan)
    band = f" [95% CI {lo:.3f}, {hi:.3f}]" if math.isfinite(lo) else ""
    band += f" ({by})" if by else ""
    if floor is not None and cas < floor * clear:
        risk, target, judged = "utility floor", floor * clear, "estimate ≥ target"
        why = (f"CAS {cas:.3f}{band} < floor {floor:g} × clear {clear:.3f} = "
               f"{floor * clear:.3f}")
    else:
        risk, target, judged = "utility", _num(chance), "lower 95% bound > target"
        why = (f"CAS {cas:.3f}{band}, lower bound {lo:.3f} not above chance "
               f"{_num(chance):.3f}")
    return {"split": split, "split_label": SPLITS[split], "setting": setting, "name": risk,
            "risk": risk, "level": None, "statistic": "CAS", "value": cas, "ci": [lo, hi],
            "target": target, "judged": judged, "attacker": None, "status": "not met",
            "text": f"decided by {SPLITS[split]}: {setting} fell short on {risk}: {why}",
            "risks": [dict(x) for x in risks]}


def leak_free_probability(risks: Sequence[Mapping[str, Any]],
                          accepted: Sequence[str] = ()) -> float:
    """The chance that a release leaking nothing passes a fresh evaluation of ``risks``
    (their measured ones met, those accepted by name left out) when judged with intervals as
    wide as these: its advantage is 0, so a fresh evaluation passes each risk with
    :func:`~bioanon.metrics.pass_chance.most_stated` (at the standard error each interval's
    upper half-width gives), the most any reading of the risk can state. Under
    :data:`~.margin.CONFIRM_PROBABILITY` the table is too small for the margin at these
    targets, whatever the setting (more noise cannot help).

    Examples
    --------
    >>> r = {"name": "record-recognition", "status": "met", "value": 0.007,
    ...      "ci": [-0.039, 0.037], "target": 0.05}
    >>> round(leak_free_probability([r]), 2)
    0.9
    """
    from ..metrics.normal import ppf
    from ..metrics.pass_chance import most_stated

    p = 1.0
    skip = set(accepted)
    for r in risks:
        if r.get("status") != "met" or r.get("name") in skip:
            continue
        value, hi, target = _num(r.get("value")), _num((r.get("ci") or [0, math.nan])[1]), \
            _num(r.get("target"))
        if all(math.isfinite(x) for x in (value, hi, target)):
            p *= most_stated(max((hi - value) / ppf(0.975), 1e-12), target)
    return p


def _margin(row: Mapping[str, Any], risks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The deciding object when every risk met its target on the tuning split but without
    the margin the choice needs (:mod:`.margin`): the least certain risk decides."""
    from .margin import CONFIRM_PROBABILITY

    name = str(row["short_of_margin"][0])
    r = next((x for x in risks if x.get("name") == name), {})
    p = _num(row.get("pass_probability"))
    others = [str(x) for x in row["short_of_margin"][1:]]
    also = f" and {', '.join(others)}" if others else ""
    p0 = leak_free_probability(risks)
    size = ("; at this size the margin is out of reach: " if p0 < CONFIRM_PROBABILITY
            else "; ")
    text = (f"decided by {SPLITS['tuning']}: {row['setting']} met {name} ({_risk_text(r)})"
            f"{also} without margin: the chance that a fresh evaluation passes "
            f"{'all of them' if others else 'it'} is {p:.2f} < {CONFIRM_PROBABILITY:g}"
            f"{size}a release leaking nothing, judged with intervals this wide, would pass "
            f"with chance {p0:.2f}")
    return {"split": "tuning", "split_label": SPLITS["tuning"], "setting": row["setting"],
            "name": name, "risk": r.get("risk"), "level": r.get("level"),
            "statistic": r.get("statistic"), "value": _num(r.get("value")),
            "ci": [_num(x) for x in (r.get("ci") or [math.nan, math.nan])],
            "target": _num(r.get("target")),
            "judged": f"probability ≥ {CONFIRM_PROBABILITY:g} that a fresh evaluation passes",
            "attacker": r.get("attacker"), "status": "no margin", "pass_probability": p,
            "leak_free_probability": p0,
            "text": text, "risks": [dict(x) for x in risks]}


def deciding(result: Any) -> dict[str, Any] | None:
    """What decided a refused search (a :class:`~.search.SearchResult`), as data: ``split``
    (``tuning`` or ``confirmation``) and ``split_label``, ``setting``, ``name`` (the risk as
    ``--accept-risk`` names it, or ``utility floor`` / ``utility``), ``risk``, ``level``,
    ``statistic``, ``value``, ``ci`` (95%), ``target``, ``judged`` (which end is held
    against the target), ``attacker``, ``status``, ``text`` (one line) and ``risks`` (every
    risk of that setting on that split: the row that decided).

    None when the search certified, or judged no setting (nothing to show).
    """
    if result.certified:
        return None
    if result.chosen is not None and result.confirmation is not None:
        conf = result.confirmation
        setting = result.rows[result.chosen]["setting"]
        risks = list(conf["verdict"].get("risks") or [])
        out = deciding_of_risks(risks, "confirmation", setting)
        if out is None and not result.confirmation_floor_met:
            cas = conf["utility"]["cas"]
            out = _utility("confirmation", setting, _num(cas["value"]), cas.get("ci") or [],
                           _num(conf["utility"]["interest"]["clear"]), None,
                           result.min_utility, risks)
        return out
    if result.cut_short() is not None:
        near, _ = result.closest()
        return {"split": "tuning", "split_label": SPLITS["tuning"],
                "setting": None if near is None else near["setting"], "name": "time budget",
                "risk": "time budget", "level": None, "statistic": None, "value": None,
                "ci": None, "target": None, "judged": None, "attacker": None,
                "status": "not judged",
                "text": f"decided by the time budget: {result.cut_short()}",
                "risks": [] if near is None else list(near.get("risks") or [])}
    row, _ = result.closest()
    if row is None:
        return None
    risks = list(row.get("risks") or [])
    out = deciding_of_risks(risks, "tuning", row["setting"])
    gate = row.get("consumer_gate") or {}
    if out is None and gate.get("passed") is False:  # the whole panel's pick fell short
        out = _utility("tuning", row["setting"], _num(gate.get("cas")),
                       gate.get("cas_ci") or [], _num(gate.get("clear")),
                       row.get("interest_chance"), result.min_utility, risks,
                       f"the consumer's whole panel on the tuning split, its pick "
                       f"{gate.get('pick')}")
    if out is None and not row.get("met_utility", True):
        out = _utility("tuning", row["setting"], _num(row["cas"]), row.get("cas_ci") or [],
                       _num(row["clear"]), row.get("interest_chance"), result.min_utility,
                       risks)
    if out is None and row.get("short_of_margin"):
        out = _margin(row, risks)
    if out is None:  # useful, every judged risk met: recognition was never judged
        out = {"split": "tuning", "split_label": SPLITS["tuning"], "setting": row["setting"],
               "name": "record-recognition", "risk": "recognition", "level": "record",
               "statistic": None, "value": None, "ci": None,
               "target": result.target_advantage, "judged": "upper 95% bound ≤ target",
               "attacker": None, "status": "not judged",
               "text": f"decided by {SPLITS['tuning']}: {row['setting']} was not judged "
                       "by the recognition panel", "risks": risks}
    return out


__all__ = ["FIGURES_OF", "SPLITS", "deciding", "deciding_of_risks"]
