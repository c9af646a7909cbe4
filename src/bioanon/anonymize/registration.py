"""Where a method family registers its class (:func:`register`), and the per-class
conversions that need no lookup (:func:`defaults`, :func:`parse_value`).

A leaf of :mod:`bioanon.anonymize`: the method modules import it, and the lookups of
:mod:`bioanon.anonymize.registry` read what it holds, so neither imports the other's side.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import BioanonError, suggest

if TYPE_CHECKING:
    from .base import Anonymizer

_METHODS: dict[str, type[Anonymizer]] = {}
_REQUIRED: dict[str, tuple[str, ...]] = {}
_POST_STEPS: list[str] = []
A = TypeVar("A", bound="type[Anonymizer]")


def register(name: str, required: Sequence[str] = (), post_step: bool = False
             ) -> Callable[[A], A]:
    """Class decorator: make the anonymizer available as method ``name``.

    ``required`` names parameters a front end must set explicitly (a CLI role option or
    ``--param``) instead of taking the class default. ``post_step`` lets the method follow
    another one after a ``+`` (``vp-mix+leace``, see :func:`build_method`).
    """

    def deco(cls: A) -> A:
        if name in _METHODS and _METHODS[name] is not cls:
            raise ValueError(f"method name '{name}' is registered twice")
        if "+" in name or "." in name:
            raise ValueError(f"method name '{name}' may not contain '+' or '.'")
        cls.method_name = name
        _METHODS[name] = cls
        _REQUIRED[name] = tuple(required)
        if post_step and name not in _POST_STEPS:
            _POST_STEPS.append(name)
        return cls

    return deco


def defaults(cls: type[Anonymizer]) -> dict[str, Any]:
    """The ``__init__`` defaults of a class."""
    sig = inspect.signature(cls.__init__)
    return {k: p.default for k, p in sig.parameters.items()
            if k != "self" and p.default is not inspect.Parameter.empty}


def parse_value(cls: type[Anonymizer], name: str, raw: Any) -> Any:
    """Convert one ``KEY=VALUE`` value by the declared constraint of ``cls``'s parameter."""
    if name == "random_state":
        raise BioanonError("the random state is set with random_state=SEED, not as a method "
                           "parameter (a secret key, never written to any output)",
                           parameter="random_state")
    if name not in cls.params:
        accepted = sorted(k for k, p in cls.params.items()
                          if p.kind != "object" and k != "random_state")
        raise BioanonError(f"method '{cls.method_name}' has no parameter '{name}'"
                           f"{suggest(name, accepted)}; it accepts {', '.join(accepted)}")
    spec = cls.params[name]
    if isinstance(raw, str):
        return spec.parse(name, raw)
    spec.check(name, raw)
    return raw


__all__ = ["defaults", "parse_value", "register"]
