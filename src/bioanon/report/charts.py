"""Charts for the HTML report, as PNG bytes (matplotlib, no display needed).

Every figure is a :class:`matplotlib.figure.Figure` on its own Agg canvas
(:func:`new_figure`), never one of pyplot's: no global figure registry, no backend switch at
import, so a chart drawn while another thread (or an interactive session) uses matplotlib
cannot pick up another backend or another figure's state. Every number a chart draws passes
through :func:`floats` first: a value that is not a number (None, a pandas ``NA``, a string)
becomes NaN, which matplotlib leaves out, instead of an object array that its C++ transforms
refuse mid-``savefig`` ("affine_transform(): incompatible function arguments").
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .intervals import rate_interval, view_interval

MODE_COLORS = {"naive": "#7fa7d9", "parrot": "#a61c1c", "parrot25": "#f4b6a6",
               "parrot50": "#eb8c78", "parrot75": "#e06452", "reverse": "#5cb85c",
               "linkage": "#8c6bb1"}
STRATEGY_COLORS = {"random": "#777777", "classification": "#d9534f", "metadata": "#f0ad4e",
                   "distinctive": "#5bc0de", "center": "#5cb85c"}


def new_figure(**kwargs: Any) -> Any:
    """A figure outside pyplot, on an Agg canvas of its own (thread-safe per figure).

    Examples
    --------
    >>> fig = new_figure(figsize=(2, 1))
    >>> type(fig.canvas).__name__
    'FigureCanvasAgg'
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def number(value: Any) -> float:
    """``value`` as a float; NaN for anything that is not a finite or infinite number.

    Examples
    --------
    >>> number(0.5), number(None), number("x")
    (0.5, nan, nan)
    """
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def floats(values: Iterable[Any]) -> np.ndarray:
    """A contiguous float64 array of :func:`number` of each value."""
    return np.ascontiguousarray([number(v) for v in values], dtype=np.float64)


def whiskers(values: Iterable[Any], intervals: Iterable[Any]) -> np.ndarray | None:
    """The (2, n) error-bar lengths of values from their intervals: NaN and negative
    lengths (an interval that does not hold its value) become 0; None when no value has an
    interval."""
    vals = floats(values)
    pairs = [(number(c[0]), number(c[1])) if c is not None and len(c) == 2
             else (math.nan, math.nan) for c in intervals]
    if not pairs or all(math.isnan(lo) and math.isnan(hi) for lo, hi in pairs):
        return None
    lo = np.array([p[0] for p in pairs], dtype=np.float64)
    hi = np.array([p[1] for p in pairs], dtype=np.float64)
    err = np.vstack([vals - lo, hi - vals])
    return np.ascontiguousarray(np.clip(np.nan_to_num(err, nan=0.0), 0.0, None))


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the axes, never over the data."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              frameon=False)


def attack_chart(report: Mapping[str, Any]) -> bytes:
    """Grouped bars: accuracy per recognizer (groups) and attacker mode (colours), with the
    Wilson 95% interval, the chance line and each recognizer's accuracy on clear data."""
    p = report["privacy"]
    attacks = p["attacks"]
    models = list(dict.fromkeys(a["model"] for a in attacks))
    modes = list(dict.fromkeys(a["mode"] for a in attacks if a["mode"] != "linkage"))
    width = 0.8 / max(1, len(modes))
    fig = new_figure(figsize=(min(13.0, max(6.0, 0.25 * len(attacks) + 3)), 4.0))
    ax = fig.subplots()
    for mi, mode in enumerate(modes + (["linkage"] if "linkage" in
                                       {a["mode"] for a in attacks} else [])):
        mine = [a for a in attacks if a["mode"] == mode]
        offset = 0.0 if mode == "linkage" else (mi - (len(modes) - 1) / 2) * width
        xs = floats(models.index(a["model"]) + offset for a in mine)
        acc = floats(a["accuracy"] for a in mine)
        ax.bar(xs, acc, width=width if mode != "linkage" else 0.5,
               yerr=whiskers(acc, (a.get("ci") for a in mine)), capsize=2,
               color=MODE_COLORS.get(mode, "#999999"), label=mode,
               error_kw={"linewidth": 0.8})
    clear = {c["model"]: number(c["accuracy"]) for c in p.get("clear", [])}
    for gi, m in enumerate(models):
        if m in clear and math.isfinite(clear[m]):
            ax.hlines(clear[m], gi - 0.42, gi + 0.42, colors="black", linestyles=":",
                      linewidth=1.2, label="clear data" if gi == 0 else None)
    if math.isfinite(number(p["chance"])):
        ax.axhline(number(p["chance"]), color="black", linestyle="--", linewidth=1,
                   label="chance")
    ax.set_xticks(range(len(models)), models, fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel(f"accuracy on '{p['sensitive']}'")
    ax.set_title("Attacks on the released data by mode and recognizer (lower is better)")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return _png(fig)


def selection_chart(report: Mapping[str, Any]) -> bytes | None:
    """Accuracy against the number of identities per selection strategy, with chance."""
    sel = report["privacy"].get("selection") or {}
    curves = sel.get("strategies") or {}
    if not curves:
        return None
    full = sel["full"]
    fig = new_figure(figsize=(6.5, 4.0))
    ax = fig.subplots()
    for name, points in curves.items():
        ns = floats([full["n_identities"], *[pt["n_identities"] for pt in points]])
        acc = floats([full["accuracy"], *[pt["accuracy"] for pt in points]])
        color = STRATEGY_COLORS.get(name, "#333333")
        ax.plot(ns, acc, marker="o", color=color, label=name)
        if name == "random":
            lo = floats([full["accuracy"], *[pt.get("min") for pt in points]])
            hi = floats([full["accuracy"], *[pt.get("max") for pt in points]])
            sd = np.nan_to_num(floats([0.0, *[pt.get("std") for pt in points]]), nan=0.0)
            ax.fill_between(ns, lo, hi, color=color, alpha=0.15, label="random min–max")
            ax.errorbar(ns, acc, yerr=np.clip(sd, 0.0, None), fmt="none", ecolor=color,
                        capsize=3)
    any_points = next(iter(curves.values()))
    ns = floats([full["n_identities"], *[pt["n_identities"] for pt in any_points]])
    ch = floats([full["chance"], *[pt["chance"] for pt in any_points]])
    ax.plot(ns, ch, color="black", linestyle="--", linewidth=1, label="chance")
    ax.set_xscale("log", base=2)
    ticks = [n for n in ns if math.isfinite(n) and n > 0]
    ax.set_xticks(ticks, [f"{n:g}" for n in ticks])
    ax.invert_xaxis()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("number of identities")
    ax.set_ylabel("accuracy")
    att = sel["attacker"]
    ax.set_title(f"Fewer identities: {att['mode']} attacker with {att['model']}")
    _legend_outside(ax)
    return _png(fig)


def top_k_chart(report: Mapping[str, Any]) -> bytes | None:
    """Top-k accuracy curves (the strongest recognizer of each mode) and random guessing."""
    p = report["privacy"]
    best: dict[str, Mapping[str, Any]] = {}
    for a in p["attacks"]:
        if a.get("top_k") and (a["mode"] not in best
                               or a["accuracy"] > best[a["mode"]]["accuracy"]):
            best[a["mode"]] = a
    if not best:
        return None
    fig = new_figure(figsize=(6.5, 4.0))
    ax = fig.subplots()
    for j, (mode, a) in enumerate(best.items()):
        # dodge each curve a little so that the 95% whiskers do not sit on each other
        ks = floats(k + 0.05 * (j - (len(best) - 1) / 2) for k in range(1, len(a["top_k"]) + 1))
        color = MODE_COLORS.get(mode, "#999999")
        top = floats(a["top_k"])
        band = [rate_interval(v, a.get("n")) for v in top]
        ax.errorbar(ks, top, yerr=whiskers(top, band), marker="o", markersize=3,
                    color=color, capsize=2, elinewidth=0.8, label=f"{mode} ({a['model']})")
    chance = floats(p.get("top_k_chance") or [])
    if chance.size:
        ax.plot(np.arange(1, chance.size + 1, dtype=np.float64), chance, color="black",
                linestyle="--", linewidth=1, label="random guess")
    ax.set_xticks(range(1, max(len(a["top_k"]) for a in best.values()) + 1))
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("true identity among the top k")
    ax.set_title("Top-k accuracy (strongest recognizer per mode)")
    _legend_outside(ax)
    return _png(fig)


def utility_chart(report: Mapping[str, Any]) -> bytes:
    """Grouped bars: accuracy of each useful attribute in the utility views, with chance."""
    u = report["utility"]
    items = [u["interest"], *u.get("additional", {}).values()]
    names = [i["column"] for i in items]
    views = [("anonymized_to_clear", "release → clear (CAS)", "#5bc0de"),
             ("clear", "clear → clear", "#5cb85c"),
             ("anonymized", "clear → release (paper)", "#f0ad4e"),
             ("anonymized_to_anonymized", "release → release", "#9b59b6")]
    views = [v for v in views if all(v[0] in i for i in items)]
    n = report.get("dataset", {}).get("n_test")
    fig = new_figure(figsize=(max(4.5, 2.0 * len(items) + 2), 3.4))
    ax = fig.subplots()
    width = 0.8 / max(len(views), 1)
    for vi, (key, label, color) in enumerate(views):
        xs = floats(x + (vi - (len(views) - 1) / 2) * width for x in range(len(items)))
        vals = floats(i[key] for i in items)
        cis = [view_interval(i, key, n) for i in items]
        err = whiskers(vals, cis) if all(c is not None for c in cis) else None
        ax.bar(xs, vals, width=width, label=label, color=color, yerr=err, capsize=2,
               error_kw={"linewidth": 0.8})
    for x, i in enumerate(items):
        chance = number(i.get("chance"))
        if math.isfinite(chance):
            ax.hlines(chance, x - 0.45, x + 0.45, colors="black", linestyles="--",
                      linewidth=1)
    ax.set_xticks(list(range(len(items))), [str(c) for c in names])
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("accuracy (trained on → scored on)")
    ax.set_title("Utility kept (higher is better; dashes: chance; whiskers: 95% CI)")
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return _png(fig)
