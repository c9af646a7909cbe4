"""The cells and tables of report.html: a value's text, a rate with its 95% interval, an inline
image or chart, a table; "not applicable" is "—" everywhere."""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: not applicable, in a table cell
NA = "—"

Section = Callable[[Mapping[str, Any]], str]

def img_tag(png: bytes, alt: str) -> str:
    return f'<img alt="{alt}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def chart_img(draw: Callable[[Mapping[str, Any]], bytes | None], report: Mapping[str, Any],
           alt: str) -> str:
    """A chart as an inline image; a chart that cannot be drawn leaves a note in its place
    (and a warning on the ``bioanon.report`` logger) instead of losing the whole report."""
    try:
        png = draw(report)
    except Exception as exc:  # a figure must never cost the release its report
        import logging

        logging.getLogger("bioanon.report").warning("the %s could not be drawn (%s: %s); "
                                                    "the report shows its table instead",
                                                    alt, type(exc).__name__, exc)
        return (f"<p class='note'>The {html.escape(alt)} could not be drawn "
                f"({html.escape(type(exc).__name__)}); the table below has its figures.</p>")
    return img_tag(png, alt) if png else ""


def cell_text(v: Any) -> str:
    """A cell's text: floats to 3 decimals, None (not applicable) as —, lists joined."""
    if v is None or (isinstance(v, float) and v != v):
        return NA
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list | tuple):
        return ", ".join(cell_text(x) for x in v) if v else NA
    if isinstance(v, Mapping):
        return ", ".join(f"{html.escape(str(k))}={cell_text(x)}" for k, x in v.items()) or NA
    return html.escape(str(v))


def rate_text(value: float | None, ci: Sequence[float] | None) -> str:
    """``0.158 [0.124, 0.200]``: a rate and its 95% interval, on one line."""
    if value is None:
        return NA
    if ci is None:
        return f"{value:.3f}"
    return f"{value:.3f} <span class='ci'>[{ci[0]:.3f}, {ci[1]:.3f}]</span>"


class Cell(str):
    """Already-formatted HTML for a table cell."""


#: columns of names, left-aligned wherever they appear
NAME_COLS = {"mode", "model", "strategy", "column", "vp", "name", "ename"}


def html_table(rows: Sequence[Mapping[str, Any]], cols: Sequence[str],
           headers: Sequence[str] | None = None, text_cols: Sequence[str] = ()) -> str:
    def cls(c: str) -> str:
        return " class=text" if c in text_cols else " class=name" if c in NAME_COLS else ""

    head = "".join(f"<th{cls(c)}>{html.escape(h)}</th>"
                   for c, h in zip(cols, headers or cols, strict=True))
    body = []
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            text = v if isinstance(v, Cell) else cell_text(v)
            cells.append(f"<td{cls(c)}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='wide'><table><tr>{head}</tr>{''.join(body)}</table></div>"


def n_test(report: Mapping[str, Any]) -> int | None:
    return report.get("dataset", {}).get("n_test")
