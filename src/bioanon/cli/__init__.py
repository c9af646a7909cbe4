"""The ``bioanon`` command line: parse, load, call the library, write files.

User errors print one line (``error: ...``) naming the problem and the fix and exit with
status 2, without a traceback. Outputs are written to a temporary file and renamed, so a failed
run never leaves a partial or overwritten file, and an input is never overwritten.

Each command lives in the module named after it and registers itself on :data:`app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .._version import __version__

# each module registers its command on the app when imported, in the order of --help
# isort: off
from . import anonymize as _anonymize  # noqa: F401  (anonymize)
from . import evaluate as _evaluate  # noqa: F401  (evaluate)
from . import demo as _demo  # noqa: F401  (demo)
from . import release as _release  # noqa: F401  (release)
from . import audit as _audit  # noqa: F401  (audit)
from . import datasets as _datasets  # noqa: F401  (datasets)
from . import extract as _extract  # noqa: F401  (extract)
from . import methods as _methods  # noqa: F401  (methods)
from . import preview as _preview  # noqa: F401  (preview)
from . import train_decoupler as _train_decoupler  # noqa: F401  (train-decoupler)
from . import tune as _tune  # noqa: F401  (tune)
from . import tune_k as _tune_k  # noqa: F401  (tune-k)
# isort: on
from .common import app, console, err_console
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
