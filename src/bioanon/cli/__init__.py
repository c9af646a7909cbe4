"""The ``bioanon`` command line: parse, load, call the library, write files.

User errors print one line (``error: ...``) naming the problem and the fix and exit with
status 2, without a traceback. Outputs are written to a temporary file and renamed, so a failed
run never leaves a partial or overwritten file, and an input is never overwritten.

Each command lives in the module named after it and registers itself on :data:`app` when
imported; a run imports only the module of the command it runs (:mod:`bioanon.cli.app`), so
``bioanon --help`` starts without the library's heavy stacks.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .._version import __version__
from .app import app
from .console import console, err_console
from .logs import VerbosityGroup, configure

# every command also takes -v/--verbose and -q/--quiet (no command signature changes)
VerbosityGroup.console = err_console
app.info.cls = VerbosityGroup


@app.callback(invoke_without_command=True)
def main(version: Annotated[bool, typer.Option("--version", help="Show the version.")] = False,
         verbose: Annotated[bool, typer.Option(
             "-v", "--verbose", help="Say more: every inner stage of the run.")] = False,
         quiet: Annotated[bool, typer.Option(
             "-q", "--quiet", help="No progress; only warnings, errors and results.")] = False,
         ) -> None:
    """bioanon: utility-preserving biometric anonymization with honest evaluation.

    Progress goes to stderr: a bar on a terminal, one line per stage elsewhere (CI, nohup,
    pipes). -v/--verbose and -q/--quiet work here or after any command.
    """
    configure(err_console, verbose, quiet)
    if version:
        console.print(f"bioanon {__version__}")
        raise typer.Exit(0)


__all__ = ["app"]
