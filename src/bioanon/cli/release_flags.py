"""``bioanon release``'s flags of the release settings, read from their one declaration.

Every :class:`~bioanon.certification.settings.Setting` that declares a
:class:`~bioanon.certification.settings.Flag` becomes an option of ``bioanon release``
(:func:`release_options`), its number checked against the range declared with it
(:func:`flag_range`, read by the command line's shared checks) and its value handed to the
library under the setting's name (:func:`settings_from`). A new release option is its
``Setting`` alone: the flag, its help, its range, the validation and the library call follow.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

#: the keyword a command decorated with :func:`release_options` receives: the typed values
#: by setting name (parsed by :func:`settings_from`, where the command says)
RELEASE = "release"


def flagged() -> dict[str, Any]:
    """The declared settings that have a flag, by name."""
    from ..certification.settings import SETTINGS

    return {name: s for name, s in SETTINGS.items() if s.flag is not None}


def flag_range(param: str) -> Any:
    """The range declared with the flag whose command parameter is ``param`` (its message's
    words), or None."""
    for setting in flagged().values():
        if setting.param == param:
            return setting.cli_range()
    return None


def _declaration(setting: Any) -> Any:
    flag = setting.flag
    return Annotated[flag.kind, typer.Option(*flag.flag.split(" "), help=flag.help)]


def release_options(after: str) -> Callable[[F], F]:
    """Add every declared release setting's flag to the command (keyword-only, in their
    declared order, after its parameter ``after``); the command receives them as
    ``release``: the typed values by setting name."""

    def decorate(func: F) -> F:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != RELEASE]
        kw = inspect.Parameter.KEYWORD_ONLY
        flags = flagged()
        plain = inspect.Parameter.POSITIONAL_OR_KEYWORD  # among the command's own flags
        added = [inspect.Parameter(s.param, plain, default=s.flag.default,
                                   annotation=_declaration(s)) for s in flags.values()]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            typed = {name: kwargs.pop(s.param) for name, s in flags.items()}
            return func(*args, **kwargs, **{RELEASE: typed})

        first = [p for p in own if p.kind is not kw]
        at = [p.name for p in first].index(after) + 1
        wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=first[:at] + added + first[at:] + [p for p in own if p.kind is kw])
        wrapper.__annotations__ = {}
        return wrapper  # type: ignore[return-value]

    return decorate


def settings_from(typed: dict[str, Any], path: str) -> dict[str, Any]:
    """The library's settings from the typed values (each parsed as declared; a value the
    declaration omits passes nothing), those release path ``path`` takes."""
    from ..certification.settings import SETTINGS, ReleaseSettings, omitted

    taken = ReleaseSettings.taken_by(path)
    out = {}
    for name, value in typed.items():
        parsed = SETTINGS[name].from_cli(value)
        if not omitted(parsed) and name in taken:
            out[name] = parsed
    return out


__all__ = ["RELEASE", "flag_range", "flagged", "release_options", "settings_from"]
