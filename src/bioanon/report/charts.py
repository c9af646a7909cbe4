"""Charts for the HTML report, as PNG bytes (matplotlib, no display needed)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .intervals import rate_interval, view_interval  # noqa: E402

MODE_COLORS = {"naive": "#7fa7d9", "parrot": "#a61c1c", "parrot25": "#f4b6a6",
               "parrot50": "#eb8c78", "parrot75": "#e06452", "reverse": "#5cb85c",
               "linkage": "#8c6bb1"}
STRATEGY_COLORS = {"random": "#777777", "classification": "#d9534f", "metadata": "#f0ad4e",
                   "distinctive": "#5bc0de", "center": "#5cb85c"}


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
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
    fig, ax = plt.subplots(figsize=(min(13.0, max(6.0, 0.25 * len(attacks) + 3)), 4.0))
    for mi, mode in enumerate(modes + (["linkage"] if "linkage" in
                                       {a["mode"] for a in attacks} else [])):
        xs, acc, err_lo, err_hi = [], [], [], []
        for a in attacks:
            if a["mode"] != mode:
                continue
            gi = models.index(a["model"])
            offset = 0.0 if mode == "linkage" else (mi - (len(modes) - 1) / 2) * width
            xs.append(gi + offset)
            acc.append(a["accuracy"])
            err_lo.append(a["accuracy"] - a["ci"][0])
            err_hi.append(a["ci"][1] - a["accuracy"])
        ax.bar(xs, acc, width=width if mode != "linkage" else 0.5, yerr=[err_lo, err_hi],
               capsize=2, color=MODE_COLORS.get(mode, "#999999"), label=mode,
               error_kw={"linewidth": 0.8})
    clear = {c["model"]: c["accuracy"] for c in p.get("clear", [])}
    for gi, m in enumerate(models):
        if m in clear:
            ax.hlines(clear[m], gi - 0.42, gi + 0.42, colors="black", linestyles=":",
                      linewidth=1.2, label="clear data" if gi == 0 else None)
    ax.axhline(p["chance"], color="black", linestyle="--", linewidth=1, label="chance")
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
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for name, points in curves.items():
        ns = [full["n_identities"], *[pt["n_identities"] for pt in points]]
        acc = [full["accuracy"], *[pt["accuracy"] for pt in points]]
        color = STRATEGY_COLORS.get(name, "#333333")
        ax.plot(ns, acc, marker="o", color=color, label=name)
        if name == "random":
            lo = [full["accuracy"], *[pt["min"] for pt in points]]
            hi = [full["accuracy"], *[pt["max"] for pt in points]]
            sd = [0.0, *[pt["std"] for pt in points]]
            ax.fill_between(ns, lo, hi, color=color, alpha=0.15, label="random min–max")
            ax.errorbar(ns, acc, yerr=sd, fmt="none", ecolor=color, capsize=3)
    any_points = next(iter(curves.values()))
    ns = [full["n_identities"], *[pt["n_identities"] for pt in any_points]]
    ch = [full["chance"], *[pt["chance"] for pt in any_points]]
    ax.plot(ns, ch, color="black", linestyle="--", linewidth=1, label="chance")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
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
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for j, (mode, a) in enumerate(best.items()):
        # dodge each curve a little so that the 95% whiskers do not sit on each other
        ks = [k + 0.05 * (j - (len(best) - 1) / 2) for k in range(1, len(a["top_k"]) + 1)]
        color = MODE_COLORS.get(mode, "#999999")
        band = [rate_interval(v, a.get("n")) for v in a["top_k"]]
        err = None
        if all(b is not None for b in band):
            err = [[v - b[0] for v, b in zip(a["top_k"], band, strict=True)],  # type: ignore[index]
                   [b[1] - v for v, b in zip(a["top_k"], band, strict=True)]]  # type: ignore[index]
        ax.errorbar(ks, a["top_k"], yerr=err, marker="o", markersize=3, color=color,
                    capsize=2, elinewidth=0.8, label=f"{mode} ({a['model']})")
    chance = p.get("top_k_chance") or []
    if chance:
        ax.plot(range(1, len(chance) + 1), chance, color="black", linestyle="--",
                linewidth=1, label="random guess")
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
    fig, ax = plt.subplots(figsize=(max(4.5, 2.0 * len(items) + 2), 3.4))
    width = 0.8 / len(views)
    for vi, (key, label, color) in enumerate(views):
        xs = [x + (vi - (len(views) - 1) / 2) * width for x in range(len(items))]
        vals = [i[key] for i in items]
        cis = [view_interval(i, key, n) for i in items]
        err = None
        if all(c is not None for c in cis):
            err = [[v - c[0] for v, c in zip(vals, cis, strict=True)],  # type: ignore[index]
                   [c[1] - v for v, c in zip(vals, cis, strict=True)]]  # type: ignore[index]
        ax.bar(xs, vals, width=width, label=label, color=color, yerr=err, capsize=2,
               error_kw={"linewidth": 0.8})
    for x, i in enumerate(items):
        ax.hlines(i["chance"], x - 0.45, x + 0.45, colors="black", linestyles="--", linewidth=1)
    ax.set_xticks(list(range(len(items))), names)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("accuracy (trained on → scored on)")
    ax.set_title("Utility kept (higher is better; dashes: chance; whiskers: 95% CI)")
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return _png(fig)
