"""The command line's two consoles and its one-line ``error:`` exit (shared by every command
module and by :mod:`bioanon.cli.logs`)."""

from __future__ import annotations

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
