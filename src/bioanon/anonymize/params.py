"""Declared parameter constraints: one declaration checks a value, parses it from text and
describes it (for ``bioanon methods``, ``--param`` and ``--grid``).

Each anonymizer declares ``params = {name: Param(...)}`` beside its ``__init__``. The base class
checks every declared parameter in ``fit`` (and the registry before any work), the command line
converts ``KEY=VALUE`` text with :meth:`Param.parse`, and ``bioanon methods`` prints
:meth:`Param.describe`.

Examples
--------
>>> p = Param("int", low=2, help="set size")
>>> p.parse("g", "16")
16
>>> p.range_text()
'integer >= 2'
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..errors import BioanonError, suggest
from ..privacy import EPSILON_RANGE, MU_RANGE

Kind = Literal["int", "float", "weights", "bool", "str", "column", "floats", "items", "shape",
               "path", "object"]

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Param:
    """The constraint of one estimator parameter.

    Parameters
    ----------
    kind : {"int", "float", "bool", "str", "column", "floats", "items", "shape", "path",
            "object"}
        ``column`` is a label column name; ``floats`` a sequence of numbers (``a,b``);
        ``items`` a sequence of ints or names; ``shape`` an image shape ``HxW``; ``weights``
        a number or a mapping column -> number (``COL=0.1,COL2=0.2``); ``object``
        is not settable from text (e.g. a mapping or an estimator).
    low, high : float, optional
        Bounds of a number; ``low_open``/``high_open`` make them strict.
    options : tuple of str
        The allowed strings of a ``str`` parameter, or the extra strings a number accepts
        (e.g. ``"auto"``).
    none : bool
        ``None`` is accepted (text ``none``).
    help : str
        One line for ``bioanon methods`` and ``--help``.
    role : {"interest", "sensitive", "additional"}, optional
        Filled from the command line's role option of that name.
    """

    kind: Kind
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    options: tuple[str, ...] = ()
    none: bool = False
    help: str = ""
    role: str | None = None

    # ------------------------------------------------------------------ description
    def range_text(self) -> str:
        """The meaningful range in words, e.g. ``number in (0, 1]``."""
        if self.kind in ("int", "float", "weights"):
            noun = "integer" if self.kind == "int" else "number"
            lo, hi = self.low, self.high
            if lo is not None and hi is not None:
                text = (f"{noun} in {'(' if self.low_open else '['}{_num(lo)}, "
                        f"{_num(hi)}{')' if self.high_open else ']'}")
            elif lo is not None:
                text = f"{noun} {'>' if self.low_open else '>='} {_num(lo)}"
            elif hi is not None:
                text = f"{noun} {'<' if self.high_open else '<='} {_num(hi)}"
            else:
                text = f"finite {noun}"
            extra = [*self.options, *(["none"] if self.none else [])]
            text += f" or {' or '.join(extra)}" if extra else ""
            return text + (", or COL=number,..." if self.kind == "weights" else "")
        if self.kind == "str" and self.options:
            return "one of " + ", ".join(self.options) + (" or none" if self.none else "")
        words = {"bool": "true or false", "str": "text", "column": "label column name",
                 "floats": "numbers, comma-separated", "items": "positions or names, "
                 "comma-separated", "shape": "image shape HxW", "path": "file path",
                 "object": "Python object (library only)"}
        return words[self.kind] + (" or none" if self.none and self.kind != "object" else "")

    def describe(self) -> dict[str, Any]:
        """JSON-ready description (type, range, options, help)."""
        out: dict[str, Any] = {"type": self.kind, "range": self.range_text()}
        if self.low is not None:
            out["min"], out["min_inclusive"] = self.low, not self.low_open
        if self.high is not None:
            out["max"], out["max_inclusive"] = self.high, not self.high_open
        if self.options:
            out["options"] = list(self.options)
        out["none_allowed"] = self.none
        out["help"] = self.help
        if self.role:
            out["role"] = self.role
        return out

    # ------------------------------------------------------------------ checking
    def check(self, name: str, value: Any) -> None:
        """Raise :class:`BioanonError` naming ``name`` and the range unless ``value`` fits."""
        if value is None:
            if self.none or self.kind == "object":
                return
            self._bad(name, value)
        if self.kind in ("int", "float"):
            self._check_number(name, value)
        elif self.kind == "weights":
            if isinstance(value, Mapping):
                for col, v in value.items():
                    self._check_number(f"{name}[{col}]", v)
            else:
                self._check_number(name, value)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                self._bad(name, value)
        elif self.kind in ("str", "column"):
            if not isinstance(value, str) or (self.options and value not in self.options):
                self._bad(name, value)
        elif self.kind in ("floats", "items"):
            if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
                self._bad(name, value)
            if self.kind == "floats":
                self.check_numbers(name, value)
        elif self.kind == "shape":
            if isinstance(value, str):
                value = _shape(value)
            if (not isinstance(value, Sequence) or len(value) != 2 or list(value) == [-1, -1]
                    or not all(isinstance(v, int | np.integer) and (v > 0 or v == -1)
                               for v in value)):
                self._bad(name, value)
        elif self.kind == "path" and not isinstance(value, str | os.PathLike):
            # a path, or an in-memory object the family checks itself
            return

    def _check_number(self, name: str, value: Any) -> None:
        if isinstance(value, str):
            if value in self.options:
                return
            self._bad(name, value)
        if isinstance(value, bool):
            self._bad(name, value)
        try:
            x = float(value)
        except (TypeError, ValueError):
            self._bad(name, value)
        if not math.isfinite(x) or (self.kind == "int" and x != int(x)):
            self._bad(name, value)
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            self._bad(name, value)
        if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
            self._bad(name, value)

    def check_numbers(self, name: str, value: Any) -> None:
        """Every entry (of a nested sequence or array) is a finite number."""
        try:
            arr = np.asarray(value, dtype=np.float64)
            ok = arr.size > 0 and bool(np.all(np.isfinite(arr)))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            self._bad(name, value)

    def _bad(self, name: str, value: Any) -> None:
        hint = suggest(str(value), self.options) if isinstance(value, str) else ""
        what = "is unknown" if self.kind == "str" and self.options else "is out of range"
        raise BioanonError(f"{name}={_show(value)} {what}{hint}; use "
                           f"{_a(self.range_text())}" + (f" ({self.help})" if self.help else ""))

    # ------------------------------------------------------------------ parsing text
    def parse(self, name: str, raw: str) -> Any:
        """Convert command-line text to a value of this parameter (then :meth:`check` it)."""
        text = raw.strip()
        if self.kind == "object":
            raise BioanonError(f"{name} cannot be set from the command line; use the library")
        if self.none and text.lower() in ("none", "off", "null"):
            return None
        try:
            value: Any
            if self.kind == "int":
                value = text if text in self.options else _int(text)
            elif self.kind == "float":
                value = text if text in self.options else float(text)
            elif self.kind == "bool":
                if text.lower() not in _TRUE + _FALSE:
                    raise ValueError(text)
                value = text.lower() in _TRUE
            elif self.kind == "weights":
                value = ({c.strip(): float(v) for c, _, v in
                          (item.partition("=") for item in text.split(","))}
                         if "=" in text else float(text))
            elif self.kind == "floats":
                value = [float(v) for v in text.split(",")]
            elif self.kind == "items":
                value = [int(v) if v.strip().lstrip("-").isdigit() else v.strip()
                         for v in text.split(",")]
            elif self.kind == "shape":
                value = _shape(text)
            else:
                value = text
        except (TypeError, ValueError):
            what = "is too large" if self.kind == "int" and _huge(text) else "is not valid"
            shown = text if what == "is too large" else repr(raw)
            raise BioanonError(f"{name}={shown} {what}; use {_a(self.range_text())}"
                               + (f" ({self.help})" if self.help else "")) from None
        self.check(name, value)
        return value


def _int(text: str) -> int:
    """An integer from text: digits exactly; a float's text (``1e3``, ``16.0``) when it is a
    whole number a float holds exactly (at most 2**53): ``1e30`` read through a float was
    the 31-digit ``1000000000000000019884624838656``, which no one typed.

    >>> _int("1e3"), _int("99999999999999999999")
    (1000, 99999999999999999999)
    """
    if text.lstrip("+-").isdigit():
        return int(text)
    x = float(text)
    if not math.isfinite(x) or x != int(x) or abs(x) > 2**53:
        raise ValueError(text)
    return int(x)


def _huge(text: str) -> bool:
    """``text`` is a positive whole number in float notation past the exact integers
    (``1e30``)."""
    try:
        x = float(text)
    except ValueError:
        return False
    return math.isfinite(x) and x > 2**53 and x == int(x)  # -1e30 is "not valid"


def _shape(text: str) -> tuple[int, int]:
    parts = text.lower().replace(",", "x").split("x")
    if len(parts) != 2:
        raise ValueError(text)
    return int(parts[0]), int(parts[1])


def _a(text: str) -> str:
    if text.startswith(("one of", "true or")):
        return text
    return ("an " if text[0] in "aeiou" else "a ") + text


def epsilon_param(help: str = "privacy budget epsilon", none: bool = False) -> Param:
    """The ``epsilon`` of every DP method: the range it can honour
    (:data:`bioanon.privacy.EPSILON_RANGE`), declared once."""
    return Param("float", low=EPSILON_RANGE[0], high=EPSILON_RANGE[1], none=none, help=help)


def mu_param(help: str) -> Param:
    """The ``mu`` (Gaussian DP) of a μ-budgeted method (:data:`bioanon.privacy.MU_RANGE`)."""
    return Param("float", low=MU_RANGE[0], high=MU_RANGE[1], help=help)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def check_params(params: Mapping[str, Param], values: Mapping[str, Any]) -> None:
    """Check every declared parameter's value (undeclared ones are the family's business)."""
    for name, spec in params.items():
        if name in values:
            spec.check(name, values[name])
