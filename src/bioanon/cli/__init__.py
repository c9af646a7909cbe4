"""The ``bioanon`` command line: parse, load, call the library, write files.

User errors print one line (``error: ...``) naming the problem and the fix and exit with
status 2, without a traceback. Outputs are written to a temporary file and renamed, so a failed
run never leaves a partial or overwritten file, and an input is never overwritten.

Each group of commands lives in its own module and registers itself on :data:`app`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .._version import __version__

# each module registers its commands on the app when imported
from . import extract as _extract  # noqa: F401  (extract)
from . import methods as _methods  # noqa: F401  (methods)
from . import preview as _preview  # noqa: F401  (preview)
from . import release as _release  # noqa: F401  (anonymize, evaluate, demo)
from . import sanitizer as _sanitizer  # noqa: F401  (train-decoupler)
from . import sweep as _sweep  # noqa: F401  (tune)
from . import tune as _tune  # noqa: F401  (tune-k)
from .common import app, console


@app.callback(invoke_without_command=True)
def main(version: Annotated[bool, typer.Option("--version", help="Show the version.")] = False
         ) -> None:
    """bioanon: utility-preserving biometric anonymization with honest evaluation."""
    if version:
        console.print(f"bioanon {__version__}")
        raise typer.Exit(0)


__all__ = ["app"]
