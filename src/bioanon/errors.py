"""User-facing errors.

Every problem caused by the user's input (a wrong column name, NaN values, a class too small
for the requested set size...) raises :class:`BioanonError`. Its message is one line that names
the problem and the fix; the command-line interface prints it and exits with status 2, without
a traceback.
"""

from __future__ import annotations

import difflib
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path


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


def install_hint(extra: str, then: str = "") -> str:
    """How to install an optional extra, as a command that works as typed: into the Python
    running bioanon, from the checkout it runs from when it is one (``make demo`` installs
    that checkout, which no package index holds), else from the package index. ``then``:
    a further ``pip install`` argument list run after it.

    Examples
    --------
    >>> install_hint("face").startswith("install the face extra: ")
    True
    """
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        command = f"{pip} -e {shlex.quote(f'{root}[{extra}]')}"
    else:
        command = f"{pip} {shlex.quote(f'bioanon[{extra}]')}"
    return f"install the {extra} extra: {command}" + (f" && {pip} {then}" if then else "")


def refuse_class(value: object, name: str = "anonymizer") -> None:
    """Refuse an estimator's class where an estimator belongs (the parentheses forgotten): it
    has ``fit`` and ``get_params`` too, and failed inside them ("get_params() missing 1
    required positional argument: 'self'").

    >>> refuse_class(int)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: anonymizer=int is a class, not an estimator; pass one made \
from it, e.g. int(...) with its parameters
    """
    if isinstance(value, type):
        raise BioanonError(f"{name}={value.__name__} is a class, not an estimator; pass one made "
                           f"from it, e.g. {value.__name__}(...) with its parameters",
                           parameter=name)


def suggest(name: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string; a
    choice that differs only in case is the closest (difflib alone reads ``G`` and ``g`` as
    nothing alike).

    >>> suggest("G", ["g", "t", "w"]), suggest("digt", ["digit", "speaker"]), suggest("q", "ab")
    (" (did you mean 'g'?)", " (did you mean 'digit'?)", '')
    """
    options = [str(c) for c in choices]
    folded = {c.casefold(): c for c in reversed(options)}
    close = ([folded[str(name).casefold()]] if str(name).casefold() in folded else
             difflib.get_close_matches(str(name), options, n=1, cutoff=0.5))
    return f" (did you mean '{close[0]}'?)" if close else ""


#: characters a column name can hold unseen: zero-width spaces and joiners, the byte order mark
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def _seen(name: str) -> str:
    """A name as it reads on screen: accents composed one way (NFC; a macOS file name is
    NFD), invisible characters dropped, compatibility forms folded (NFKC: a no-break space).

    >>> _seen("identite\u0301") == _seen("identit\u00e9"), _seen("a\u200bb")
    (True, 'ab')
    """
    import unicodedata

    return unicodedata.normalize("NFKC", name.translate(_INVISIBLE))


def misnamed_column(name: str, available: Iterable[str], what: str = "label column"
                    ) -> BioanonError | None:
    """The error for a column that is not there under ``name`` but is under a name that
    reads the same on screen (spaces around it, accents composed otherwise, an invisible
    character); None when no column does.

    >>> print(misnamed_column("a", ["a "]))  # doctest: +ELLIPSIS
    label column 'a' not found: the table names it 'a ', with spaces around it ...
    """
    available = [str(c) for c in available]
    padded = [c for c in available if c != c.strip() and c.strip() == str(name).strip()]
    if padded:  # the listing showed the name as if it were there
        return BioanonError(
            f"{what} '{name}' not found: the table names it {padded[0]!r}, with spaces around "
            "it (a CSV written with a space after each comma, perhaps); remove the spaces from "
            "the table's column names, or give the name with its spaces")
    lookalike = [c for c in available if c != str(name) and _seen(c) == _seen(str(name))]
    if lookalike:  # "did you mean 'identité'?" after 'identité' named no difference
        return BioanonError(
            f"{what} '{name}' not found: the table names it {ascii(lookalike[0])}, which looks "
            f"the same but is written with other characters (you typed {ascii(str(name))}: "
            "accents composed otherwise, or an invisible character); copy the name from the "
            "table, or rename its column")
    return None


def missing_column(name: str, available: Iterable[str], what: str = "label column",
                   numeric: Iterable[str] = ()) -> BioanonError:
    """Build the error for a column that is not there, suggesting the closest name.

    ``numeric``: the columns among ``available`` that hold numbers (features, as a table
    without metadata reads them); the others are listed first and the numeric ones
    summed up, so a long run of feature names does not hide the label columns.

    >>> str(missing_column("spekaer", ["f0", "f1", "speaker", "digit"], numeric=["f0", "f1"]))
    "label column 'spekaer' not found (did you mean 'speaker'?); available: speaker, digit \
(and 2 numeric columns: f0 ... f1)"
    """
    available = [str(c) for c in available]
    misnamed = misnamed_column(name, available, what)
    if misnamed is not None:
        return misnamed
    nums = set(map(str, numeric))
    first = [c for c in available if c not in nums]
    rest = [c for c in available if c in nums]
    shown = ", ".join(first[:12]) + (" ..." if len(first) > 12 else "")
    if rest:
        span = rest[0] if len(rest) == 1 else f"{rest[0]} ... {rest[-1]}"
        count = f"{len(rest)} numeric column{'s' if len(rest) > 1 else ''}: {span}"
        shown = f"{shown} (and {count})" if first else count
    return BioanonError(
        f"{what} '{name}' not found{suggest(name, available)}; available: {shown}"
    )
