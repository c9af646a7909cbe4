"""The command line's two consoles and its one-line ``error:`` exit (shared by every command
module and by :mod:`bioanon.cli.logs`)."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.text import Text

# markup off: user text (a column named 'x[1]', the hint "pip install 'bioanon[face]'") is printed
# as it is, never parsed as rich markup
console = Console(markup=False)
err_console = Console(stderr=True, markup=False)


def _fail(message: str) -> typer.Exit:
    """Print ``error: MESSAGE`` as one line (no markup interpretation) and return Exit(2)."""
    line = " ".join(str(message).split())  # one line, whatever the message held
    err_console.print(Text.assemble(("error:", "bold red"), " ", line), soft_wrap=True,
                      highlight=False)
    return typer.Exit(2)


def print_table(table: Any, on: Console | None = None) -> None:
    """Print a rich table, never clipped: on a terminal at its width (cells fold); anywhere
    else (a pipe, a file, CI) at the table's own full width, however wide, so that no cell
    ends in "…" (rich's default width there is 80 columns)."""
    out = console if on is None else on
    if out.is_terminal:
        out.print(table)
        return
    from rich.measure import Measurement

    table.expand = False  # its natural width, not the default 80 columns
    wide = Measurement.get(out, out.options.update(width=100_000), table).maximum
    before = out.width  # print(width=) is capped by the console's own width
    out.width = max(before, wide)
    try:
        out.print(table)
    finally:
        out.width = before
