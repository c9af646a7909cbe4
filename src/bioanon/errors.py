"""User-facing errors.

Every problem caused by the user's input (a wrong column name, NaN values, a class too small
for the requested set size...) raises :class:`BioanonError`. Its message is one line that names
the problem and the fix; the command-line interface prints it and exits with status 2, without
a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class BioanonError(ValueError):
    """An error caused by the user's input, with a one-line message naming the fix.

    ``parameter``, when given, names the library parameter(s) the message writes as
    ``NAME=VALUE`` (a name, or a tuple of names); the command line rewrites each to its flag
    (``--name VALUE``): the library speaks its own parameters.
    """

    def __init__(self, message: str = "", *,
                 parameter: str | tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter


def suggest(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


def missing_column(name: str, available: Iterable[str], what: str = "label column") -> BioanonError:
    """Build the error for a column that is not there, suggesting the closest name."""
    available = list(available)
    shown = ", ".join(map(str, available[:12])) + (" ..." if len(available) > 12 else "")
    return BioanonError(
        f"{what} '{name}' not found{suggest(name, available)}; available: {shown}"
    )
