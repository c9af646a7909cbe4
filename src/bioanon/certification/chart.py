"""The search chart: CAS against each risk of the certificate, one panel per risk."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..evaluation.risks.base import target_at
from ..evaluation.risks.registry import REGISTRY


def _risk_point(row: Mapping[str, Any], risk: str) -> tuple[float, float, float, bool]:
    """The worst level of one risk in a row: (value, low, high, passes); NaN when absent."""
    rs = [r for r in row.get("risks", []) if r["risk"] == risk and np.isfinite(r["value"])]
    if not rs:
        return (float("nan"),) * 3 + (False,)
    r = max(rs, key=lambda r: r["ci"][1])
    return (r["value"], r["ci"][0], r["ci"][1], all(
        x["status"] in ("met", "covered by the guarantee", "accepted")
        for x in row.get("risks", []) if x["risk"] == risk))


def search_figure(result: Any, sensitive: str, interest: str) -> Any:
    """The search chart: CAS against each risk (one panel per risk), with intervals.

    x: one panel per registered risk (:data:`bioanon.evaluation.risks.registry.REGISTRY`:
    recognition, the cross-fitted worst case's advantage on ``sensitive``; membership and
    inference on members, their membership advantage TPR − FPR, worst level), each with its
    95% interval and its target as a vertical line (a privacy level's record target; its
    identity target dashed when it differs); y: CAS with its 95%
    interval. Green: the setting meets every risk; orange: this risk is met, another is not;
    grey: this risk fails. The chosen setting is circled; the key names the numbers.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..levels import resolve_level

    rows = result.rows
    lv = resolve_level(getattr(result, "level", None))
    panels = [(spec.name, spec.axis.format(sensitive=sensitive),
               target_at(getattr(result, spec.target_option, lv), "record"), spec.no_leak)
              for spec in REGISTRY]
    fig, axes = plt.subplots(1, len(panels), figsize=(12.5 * len(panels) / 3, 4.4),
                             sharey=True, squeeze=False)
    axes = axes[0]
    for ax, (risk, label, target, base) in zip(axes, panels, strict=True):
        if rows:
            pts = [_risk_point(r, risk) for r in rows]
            y = np.array([r["cas"] for r in rows])
            ye = np.array([[r["cas"] - r["cas_ci"][0], r["cas_ci"][1] - r["cas"]]
                           for r in rows]).T
            x = np.array([p[0] for p in pts])
            xe = np.array([[p[0] - p[1], p[2] - p[0]] for p in pts]).T
            ok = np.isfinite(x)
            if ok.any():
                ax.errorbar(x[ok], y[ok], xerr=xe[:, ok], yerr=ye[:, ok], fmt="none",
                            ecolor="#bbbbbb", elinewidth=1, capsize=2, zorder=2)
            colors = ["#5cb85c" if r["met"] else ("#f0ad4e" if p[3] else "#999999")
                      for r, p in zip(rows, pts, strict=True)]
            ax.scatter(x[ok], y[ok], c=[c for c, o in zip(colors, ok, strict=True) if o],
                       zorder=3)
            for i in np.flatnonzero(ok):
                ax.annotate(str(i + 1), (x[i], y[i]), fontsize=8, xytext=(4, 4),
                            textcoords="offset points")
            if result.chosen is not None and ok[result.chosen]:
                j = int(result.chosen)
                ax.scatter([x[j]], [y[j]], s=170, facecolors="none", edgecolors="#337ab7",
                           linewidths=2, zorder=5, label="chosen (then confirmed)")
            clear = max(r["clear"] for r in rows)
            ax.axhline(clear, color="#5cb85c", linestyle="-.", linewidth=1,
                       label=f"clear data ({clear:.3f})")
            ax.set_ylim(0, 1.05 * max(1.0, clear))
        ax.axvline(target, color="#d9534f", linestyle=":", linewidth=1.5,
                   label=f"target {target:g}" + ("" if risk == "recognition" else
                                                 f" ({lv.name}, record)"))
        if risk != "recognition" and lv.identity != lv.record:
            ax.axvline(lv.identity, color="#d9534f", linestyle="--", linewidth=1,
                       label=f"target {lv.identity:g} ({lv.name}, identity)")
        ax.axvline(base, color="black", linestyle="--", linewidth=0.8, label="no leak")
        ax.set_xlabel(label + " (lower: better)", fontsize=8)
        ax.set_title(risk, fontsize=10)
        ax.legend(fontsize=6.5, loc="lower left", frameon=False)
    axes[0].set_ylabel(f"CAS of '{interest}' (higher is better)")
    if rows:
        key = "\n".join(f"{j + 1}: {r['setting']}" for j, r in enumerate(rows))
        axes[-1].text(1.04, 0.0, "settings (green: every risk met;\norange: this risk met)\n"
                      + key, transform=axes[-1].transAxes, fontsize=6.5, va="bottom",
                      ha="left", family="monospace")
    fig.suptitle("bioanon release: search (tuning split) — CAS against each risk")
    fig.tight_layout()
    return fig


def figure_html(fig: Any, alt: str) -> str:
    """An inline PNG ``<img>`` of a matplotlib figure (for report.html)."""
    import base64
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img alt='{alt}' src='data:image/png;base64,{data}'/>"


__all__ = ["figure_html", "search_figure"]
