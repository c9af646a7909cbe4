"""The Report: a plain nested dict with stable keys, written as JSON and HTML.

Keys later versions may extend but never rename: ``utility.interest.clear``,
``utility.interest.anonymized``, ``utility.U``, ``privacy.chance``, ``privacy.attacks`` (objects
with ``mode``, ``model``, ``accuracy``), ``privacy.worst_case.accuracy``, ``params``.

Since the attack panel, each attack also carries ``train_data``, ``test_data``, ``ci`` (Wilson
95%), ``advantage``, ``top_k`` (k = 1..K; absent where the attacker ranks nothing),
``kl_uniform`` and ``threat`` (its threat model); ``privacy.top_k_chance`` is the random-guess
line, ``privacy.worst_case`` names the attacker, and ``privacy.selection`` holds the
identity-count curves per strategy. Utility entries add ``anonymized_to_clear`` and
``anonymized_to_anonymized``. ``summary`` holds the headline figures
(:mod:`bioanon.report.summary`): what the terminal table shows and ``--json`` prints.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..io import mark_output, write_text_atomic
from .summary import summary, summary_rows


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
        """A JSON-safe deep copy, with the ``summary`` of the headline figures."""
        data = dict(self._data)
        if "utility" in data and "privacy" in data and "summary" not in data:
            data["summary"] = summary(data)
        return _clean(data)

    def amended(self, change: Callable[[dict[str, Any]], Any] | None = None,
                figures: Mapping[str, str] | None = None) -> Report:
        """A new report: ``change`` applied in place to a copy of :meth:`to_dict` (sections
        added, fields blanked), with ``figures`` added to the HTML-only ones.

        The one way a report is amended after it is built (a search's seeds blanked, the
        search or a DP statement added, the panel sample named), so no caller rebuilds one
        by hand.
        """
        data = self.to_dict()
        if change is not None:
            change(data)
        return Report(data, {**self.figures, **(figures or {})})

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
        mark_output(out)
        return paths

    def summary(self) -> dict[str, Any]:
        """The headline figures (:func:`bioanon.report.summary.summary`), JSON-safe: the
        ``summary`` of ``report.json``, the rows of the terminal table, ``--json``'s output."""
        return _clean(summary(self._data))

    def summary_rows(self) -> list[tuple[str, str]]:
        """Short (label, value) rows for a terminal summary."""
        return summary_rows(summary(self._data))
