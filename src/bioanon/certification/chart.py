"""The search chart: every setting's CAS beside each risk of the certificate, with the targets.

One row per setting judged on the tuning split, sorted by CAS (the choice is the most useful
setting that meets every target, so the chosen one is the first row that meets them all); one
column of intervals per quantity: CAS first, then each registered risk
(:data:`bioanon.evaluation.risks.registry.REGISTRY`) with its record level (circle) and identity
level (square) and their targets as vertical lines. Rows never overlap, so 33 settings read as
well as 3: the labels are the settings themselves (the parameters that differ between the
settings of a method), numbered as in ``report.json``'s search rows. One legend, below the
panels; the title alone above them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..evaluation.risks.base import target_at
from ..evaluation.risks.registry import REGISTRY
from ..report.charts import floats, new_figure, number, whiskers

#: colours of a risk's status (met, covered by the guarantee and accepted pass)
PASS, FAIL, UNSURE, NOT_JUDGED = "#2e8b3a", "#c9302c", "#e08e0b", "#9a9a9a"
#: the chosen row's band
CHOSEN = "#d9e8f7"
#: widest label, in characters (longer ones end with an ellipsis)
LABEL_CHARS = 44
#: inches per row, and the figure's width (1,100 px at the report's 110 dpi)
ROW_INCHES, WIDTH_INCHES = 0.27, 10.0


def _status_colour(status: str) -> str:
    if status in ("met", "covered by the guarantee", "accepted"):
        return PASS
    if status == "not met":
        return FAIL
    return UNSURE


def _levels(row: Mapping[str, Any], risk: str) -> dict[str, tuple[float, float, float, str]]:
    """level -> (value, low, high, status) of one risk in a row (NaN when not measured)."""
    out = {}
    for r in row.get("risks", []):
        if r.get("risk") != risk:
            continue
        value = number(r.get("value"))
        ci = list(r.get("ci") or []) + [None, None]
        low, high = number(ci[0]), number(ci[1])
        low, high = (value if np.isnan(low) else low), (value if np.isnan(high) else high)
        out[str(r.get("level"))] = (value, low, high, str(r.get("status", "")))
    return out


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def short_labels(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each setting as ``method(the parameters that differ between that method's
    settings)``, at most :data:`LABEL_CHARS` characters.

    Examples
    --------
    >>> short_labels([{"method": "noise", "params": {"sigma": 1.0, "scale": "std"}},
    ...               {"method": "noise", "params": {"sigma": 3.0, "scale": "std"}},
    ...               {"method": "leace", "params": {}}])
    ['noise(sigma=1)', 'noise(sigma=3)', 'leace']
    """
    by_method: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_method.setdefault(str(r.get("method")), []).append(r.get("params") or {})
    varying = {m: [k for k in dict.fromkeys(k for p in ps for k in p)
                   if len({_fmt(p.get(k)) for p in ps}) > 1] for m, ps in by_method.items()}
    out = []
    for r in rows:
        m = str(r.get("method"))
        p = r.get("params") or {}
        inner = ", ".join(f"{k}={_fmt(p.get(k))}" for k in varying[m] if k in p)
        label = f"{m}({inner})" if inner else m
        out.append(label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…")
    return out


def search_figure(result: Any, sensitive: str, interest: str) -> Any:
    """The search chart (see the module docstring): one row per setting sorted by CAS, one
    panel for CAS and one per registered risk, each figure with its 95% interval and the
    targets; green: met (or covered, accepted), red: not met, orange: inconclusive, grey
    outline: not judged (a setting left out of the recognition panel, or not measurable).
    The chosen setting's row is shaded; a label in bold green meets every target."""
    from ..levels import resolve_level

    rows = list(result.rows)
    lv = resolve_level(getattr(result, "level", None))
    cas_of = [number(r.get("cas")) for r in rows]
    order = sorted(range(len(rows)), key=lambda j: (
        -cas_of[j] if np.isfinite(cas_of[j]) else np.inf, j))
    n = max(len(rows), 1)
    panels = [(spec.name, spec.axis.format(sensitive=sensitive),
               target_at(getattr(result, spec.target_option, lv), "record"), spec.no_leak,
               spec.target_option == "level") for spec in REGISTRY]
    height = 1.3 + ROW_INCHES * n + 1.45
    fig = new_figure(figsize=(WIDTH_INCHES, height))
    axes = fig.subplots(1, 1 + len(panels), sharey=True, squeeze=False,
                        gridspec_kw={"wspace": 0.08})
    axes = axes[0]
    y = np.arange(len(rows))[::-1].astype(float)  # the first row (highest CAS) at the top
    chosen = getattr(result, "chosen", None)
    for ax in axes:
        ax.set_ylim(-0.7, n - 0.3)
        ax.grid(axis="x", color="#eeeeee", linewidth=0.8)
        ax.tick_params(axis="x", labelsize=8)
        for k, j in enumerate(order):
            if j == chosen:
                ax.axhspan(y[k] - 0.5, y[k] + 0.5, color=CHOSEN, zorder=0)
    _cas_panel(axes[0], rows, order, y, cas_of, getattr(result, "min_utility", None),
               interest)
    # the risks: record level (circle, just above the row's middle), identity (square, below)
    for ax, (risk, axis, target, base, per_level) in zip(axes[1:], panels, strict=True):
        lows, highs = [target, base], [target, base]
        for k, j in enumerate(order):
            judged = _levels(rows[j], risk) or {"record": (float("nan"),) * 3 + ("",)}
            for level, (dy, marker) in {"record": (0.14, "o"), "identity": (-0.14, "s")}.items():
                got = judged.get(level)
                if got is None:
                    continue
                value, low, high, status = got
                if not np.isfinite(value):  # drawn at "no leak", hollow
                    hollow = (PASS if status == "accepted" else
                              UNSURE if status.startswith("inconclusive") else NOT_JUDGED)
                    ax.plot([base], [y[k] + dy], marker=marker, markersize=4, linestyle="none",
                            markerfacecolor="none", markeredgecolor=hollow, zorder=3)
                    continue
                colour = _status_colour(status)
                ax.errorbar([value], [y[k] + dy], xerr=[[max(0.0, value - low)],
                                                        [max(0.0, high - value)]],
                            fmt=marker, color=colour, ecolor=colour, markersize=4,
                            capsize=2, elinewidth=1, zorder=3)
                lows.append(low)
                highs.append(high)
        ax.axvline(target, color=FAIL, linestyle=":", linewidth=1.4)
        if per_level and lv.identity != lv.record:  # a target per level: the identity's too
            ax.axvline(lv.identity, color=FAIL, linestyle="--", linewidth=1.0)
        ax.axvline(base, color="black", linewidth=0.8)
        span = max(highs) - min(lows)
        ax.set_xlim(min(lows) - 0.06 * span - 0.01, max(highs) + 0.06 * span + 0.01)
        ax.set_title(risk, fontsize=9.5, fontweight="bold")
        ax.set_xlabel(textwrap.fill(axis.replace(", worst level", ""), 22) + "\n(lower: safer)",
                      fontsize=7.5)
    _row_labels(axes[0], rows, order, y, short_labels(rows))
    _legend(fig, lv)
    fig.suptitle("bioanon release: the search on the tuning split\neach setting's CAS and "
                 "risks with 95% intervals, sorted by CAS; bold green: meets every target",
                 fontsize=10, y=1 - 0.15 / height)
    fig.subplots_adjust(left=0.36, right=0.99, top=1 - 0.95 / height, bottom=1.4 / height)
    return fig



def _row_labels(ax: Any, rows: list[Any], order: list[int], y: np.ndarray,
                labels: list[str]) -> None:
    """The settings as the rows' labels; bold green where a setting meets every target."""
    ax.set_yticks(y)
    names = [f"#{j + 1} {labels[j]}" for j in order]
    ax.set_yticklabels(names, fontsize=8, family="monospace")
    for tick, j in zip(ax.get_yticklabels(), order, strict=True):
        if rows[j].get("met"):
            tick.set_color(PASS)
            tick.set_fontweight("bold")


def _legend(fig: Any, lv: Any) -> None:
    """The figure's legend, below the panels."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    marks = [
        Line2D([], [], marker="o", color=PASS, linestyle="none", label="met (record level)"),
        Line2D([], [], marker="s", color=PASS, linestyle="none", label="met (identity level)"),
        Line2D([], [], marker="o", color=FAIL, linestyle="none", label="not met"),
        Line2D([], [], marker="o", color=UNSURE, linestyle="none",
               label="inconclusive at this size"),
        Line2D([], [], marker="o", color=PASS, markerfacecolor="none", linestyle="none",
               label="accepted by name (not measured)"),
        Line2D([], [], marker="o", color=NOT_JUDGED, markerfacecolor="none",
               linestyle="none", label="not judged (left out of the panel)"),
        Line2D([], [], color=FAIL, linestyle=":", label=f"target ({lv.name}, record)"),
        Line2D([], [], color=FAIL, linestyle="--", label=f"target ({lv.name}, identity)"),
        Line2D([], [], color="black", linewidth=0.8, label="no leak"),
        Line2D([], [], color=PASS, linestyle="-.", label="clear data (CAS panel)"),
        Line2D([], [], color="#777777", linestyle=":", label="chance (CAS panel)"),
        Patch(color=CHOSEN, label="chosen, then confirmed"),
    ]
    fig.legend(handles=marks, loc="lower center", ncol=4, fontsize=7.5, frameon=False,
               bbox_to_anchor=(0.5, 0.0))


def _cas_panel(ax: Any, rows: list[Any], order: list[int], y: np.ndarray,
               cas_of: list[float], floor: Any, interest: str) -> None:
    """The CAS panel: each setting's CAS with its interval, the clear accuracy, chance and
    the utility floor; "not measured (screened)" where stage 1's screen decided a setting."""
    if rows:
        cas = floats(cas_of[j] for j in order)
        cis = [rows[j].get("cas_ci") for j in order]
        ax.errorbar(cas, y, xerr=whiskers(cas, cis), fmt="o", color="#337ab7",
                    ecolor="#7fa7cf", markersize=4, capsize=2, zorder=3)
        lo = floats((c or [np.nan])[0] for c in cis)
        clears = floats(r.get("clear") for r in rows)
        clear = float(np.nanmax(clears)) if np.isfinite(clears).any() else np.nan
        if np.isfinite(clear):
            ax.axvline(clear, color=PASS, linestyle="-.", linewidth=1.2)
        chance = float(np.nan_to_num(np.nanmax(np.r_[floats(
            r.get("interest_chance") for r in rows), 0.0])))
        if chance > 0:
            ax.axvline(chance, color="#777777", linestyle=":", linewidth=1.2)
        if floor and np.isfinite(clear):
            ax.axvline(float(floor) * clear, color=FAIL, linestyle=":", linewidth=1.2)
        low = np.nanmin(np.r_[lo, cas, chance])
        left = max(0.0, float(low) - 0.05) if np.isfinite(low) else 0.0
        ax.set_xlim(left, 1.02)
        for k, value in enumerate(cas):  # a setting stage 1's screen decided: no CAS
            if not np.isfinite(value):
                ax.text(left + 0.02, y[k], "not measured (screened)", fontsize=6.5,
                        color="#777777", va="center", ha="left")
    ax.set_title(f"CAS of '{interest}'", fontsize=9.5, fontweight="bold")
    ax.set_xlabel("trained on the release,\nscored on clear data\n(higher: more useful)",
                  fontsize=7.5)


def figure_html(fig: Any, alt: str) -> str:
    """An inline PNG ``<img>`` of a matplotlib figure (for report.html)."""
    import base64
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img alt='{alt}' src='data:image/png;base64,{data}'/>"


__all__ = ["figure_html", "search_figure", "short_labels"]
