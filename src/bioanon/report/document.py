"""The Report: a plain nested dict with stable keys, written as JSON and HTML.

Keys later versions may extend but never rename: ``utility.interest.clear``,
``utility.interest.anonymized``, ``utility.U``, ``privacy.chance``, ``privacy.attacks`` (objects
with ``mode``, ``model``, ``accuracy``), ``privacy.worst_case.accuracy``, ``params``.

Since the attack panel, each attack also carries ``train_data``, ``test_data``, ``ci`` (Wilson
95%), ``advantage``, ``top_k`` (k = 1..K; absent where the attacker ranks nothing),
``kl_uniform`` and ``threat`` (its threat model); ``privacy.top_k_chance`` is the random-guess
line, ``privacy.worst_case`` names the attacker, and ``privacy.selection`` holds the
identity-count curves per strategy. Utility entries add ``anonymized_to_clear`` and
``anonymized_to_anonymized``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..io import write_text_atomic


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf become null."""
    if isinstance(obj, Mapping):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


class Report(Mapping[str, Any]):
    """Evaluation results; read it like a dict (``report["utility"]["U"]``)."""

    def __init__(self, data: Mapping[str, Any],
                 figures: Mapping[str, str] | None = None) -> None:
        self._data = dict(data)
        #: extra HTML snippets for report.html only (e.g. a contact sheet of released images);
        #: never written to report.json
        self.figures = dict(figures or {})

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe deep copy."""
        return _clean(self._data)

    def to_json(self) -> str:
        """The report as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Write ``report.json`` and ``report.html`` into ``out_dir`` (created if missing)."""
        from .html import render_html

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "report.json", "html": out / "report.html"}
        html = render_html(self)
        write_text_atomic(paths["json"], self.to_json())
        write_text_atomic(paths["html"], html)
        return paths

    def summary_rows(self) -> list[tuple[str, str]]:
        """Short (label, value) rows for a terminal summary."""
        u, p = self["utility"], self["privacy"]
        rows = []
        if "cas" in u:
            rows.append((f"utility: {u['interest']['column']} CAS (trained on release → clear)",
                         f"{u['cas']['value']:.3f} [{u['cas']['ci'][0]:.3f}, "
                         f"{u['cas']['ci'][1]:.3f}] (clear {u['interest']['clear']:.3f})"))
        rows += [(f"utility: {u['interest']['column']} (clear → anonymized)",
                 f"{u['interest']['clear']:.3f} → {u['interest']['anonymized']:.3f}")]
        for col, a in u.get("additional", {}).items():
            rows.append((f"utility: {col} (alpha {a['alpha']:g})",
                         f"{a['clear']:.3f} → {a['anonymized']:.3f}"))
        rows.append(("utility U", f"{u['U']:.3f} (clear {u['U_clear']:.3f})"))
        if "anonymized_to_clear" in u["interest"]:
            rows.append((f"utility: {u['interest']['column']} (anonymized → clear / → anonymized)",
                         f"{u['interest']['anonymized_to_clear']:.3f} / "
                         f"{u['interest']['anonymized_to_anonymized']:.3f}"))
        rows.append((f"chance for '{p['sensitive']}'", f"{p['chance']:.3f}"))
        if "control" in p:
            rows.append(("control (released labels only)", f"{p['control']['value']:.3f}"))
        best: dict[str, dict[str, Any]] = {}
        for att in p["attacks"]:  # one row per mode: its strongest recognizer
            if att["mode"] not in best or att["accuracy"] > best[att["mode"]]["accuracy"]:
                best[att["mode"]] = att
        for mode, att in best.items():
            ci = f" [{att['ci'][0]:.3f}, {att['ci'][1]:.3f}]" if "ci" in att else ""
            rows.append((f"attack {mode} (best: {att['model']})", f"{att['accuracy']:.3f}{ci}"))
        w = p["worst_case"]
        rows.append(("worst case", f"{w['accuracy']:.3f} ({w['mode']} / {w['model']})"))
        if p.get("worst_case_crossfit"):
            c = p["worst_case_crossfit"]
            rows.append(("worst case, cross-fitted (no winner's curse)",
                         f"{c['accuracy']:.3f} [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}]"))
        if "advantage" in p:
            a = p["advantage"]
            rows.append((f"advantage over {a['over']}",
                         f"{a['value']:+.3f} [{a['ci'][0]:+.3f}, {a['ci'][1]:+.3f}]"))
        for m in p.get("membership", []):
            rows.append((f"membership AUC ({m['level']}, {m['attacker']})",
                         f"{m['auc']:.3f} [{m['ci'][0]:.3f}, {m['ci'][1]:.3f}]"))
        if p.get("contributors"):
            c = p["contributors"]
            rows.append((f"contributor disclosure ({c['attacker']})",
                         f"{c['rate']:.3f} (base rate {c['base_rate']:.3f})"))
        for v in p.get("verification", []):
            rows.append((f"EER {v['voiceprivacy']} ({v['mode']})",
                         f"{v['eer']:.3f} [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]"))
        for name, points in (p.get("selection") or {}).get("strategies", {}).items():
            if points:
                pt = points[-1]
                rows.append((f"selection {name}: {pt['n_identities']} identities",
                             f"{pt['accuracy']:.3f} (chance {pt['chance']:.3f})"))
        return rows
