"""Charts for the HTML report, as PNG bytes (matplotlib, no display needed)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def attack_chart(report: Mapping[str, Any]) -> bytes:
    """Bar chart: accuracy of each attack (with its interval) against chance and clear."""
    p = report["privacy"]
    attacks = p["attacks"]
    labels = [f"{a['mode']}\n{a['model']}" for a in attacks]
    acc = [a["accuracy"] for a in attacks]
    lo = [a["accuracy"] - a["ci"][0] for a in attacks]
    hi = [a["ci"][1] - a["accuracy"] for a in attacks]
    colors = {"naive": "#7fa7d9", "parrot": "#d9534f", "linkage": "#8c6bb1"}
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(attacks) + 2), 3.8))
    ax.bar(range(len(acc)), acc, yerr=[lo, hi], capsize=3,
           color=[colors.get(a["mode"], "#999999") for a in attacks])
    ax.axhline(p["chance"], color="black", linestyle="--", linewidth=1, label="chance")
    clear = [c["accuracy"] for c in p.get("clear", [])]
    if clear:
        ax.axhline(max(clear), color="grey", linestyle=":", linewidth=1,
                   label="best recognizer on clear data")
    ax.set_xticks(range(len(acc)), labels, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"accuracy on '{p['sensitive']}'")
    ax.set_title("Attacks on the released data (lower is better)")
    ax.legend(fontsize=8, loc="upper right")
    return _png(fig)


def utility_chart(report: Mapping[str, Any]) -> bytes:
    """Grouped bars: accuracy of each useful attribute on clear and anonymized data."""
    u = report["utility"]
    items = [u["interest"], *u.get("additional", {}).values()]
    names = [i["column"] for i in items]
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(items) + 2), 3.2))
    xs = range(len(items))
    ax.bar([x - 0.2 for x in xs], [i["clear"] for i in items], width=0.4, label="clear",
           color="#5cb85c")
    ax.bar([x + 0.2 for x in xs], [i["anonymized"] for i in items], width=0.4,
           label="anonymized", color="#f0ad4e")
    for x, i in zip(xs, items, strict=True):
        ax.hlines(i["chance"], x - 0.4, x + 0.4, colors="black", linestyles="--", linewidth=1)
    ax.set_xticks(list(xs), names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.set_title("Utility kept (higher is better; dashes: chance)")
    ax.legend(fontsize=8)
    return _png(fig)
