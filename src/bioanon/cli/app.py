"""The command line's app and its commands, each imported only when it is asked for.

``bioanon --help`` lists every command from :data:`COMMANDS` and the one-line summaries in
:data:`bioanon.cli.logs.SUMMARIES` without importing a command's module; ``bioanon release``
imports :mod:`bioanon.cli.release` alone (and what it needs). A command's module registers the
command on :data:`app` when imported, as before; :class:`LazyCommands` is the group's command
table that imports it on first lookup, so the group still looks complete to click (completion,
``get_command``, ``commands``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Release biometric datasets with the sensitive attribute hidden.")

#: every command, in the order of ``bioanon --help``, and the module under ``bioanon.cli``
#: that registers it
COMMANDS = {
    "anonymize": "anonymize",
    "evaluate": "evaluate",
    "demo": "demo",
    "release": "release",
    "audit": "audit",
    "datasets": "datasets",
    "extract": "extract",
    "methods": "methods",
    "preview": "preview",
    "train-decoupler": "train_decoupler",
    "tune": "tune",
    "tune-k": "tune_k",
}


def _command_name(info: Any) -> str:
    return str(info.name or typer.main.get_command_name(info.callback.__name__))


class LazyCommands(MutableMapping[str, Any]):
    """A click group's command table whose entries of :data:`COMMANDS` are built on first
    lookup (importing their module); iterating and ``in`` never import anything.

    Parameters
    ----------
    built : dict
        The commands already built (those whose module was imported before the group was).
    """

    def __init__(self, built: MutableMapping[str, Any]) -> None:
        self._built = dict(built)

    def loaded(self, name: str) -> bool:
        """Whether the command is built (its module imported)."""
        return name in self._built

    def _load(self, name: str) -> None:
        importlib.import_module(f"{__package__}.{COMMANDS[name]}")
        for info in app.registered_commands:
            if _command_name(info) == name:
                self._built[name] = typer.main.get_command_from_info(
                    info, pretty_exceptions_short=app.pretty_exceptions_short,
                    rich_markup_mode=app.rich_markup_mode)
                return

    def __getitem__(self, name: str) -> Any:
        if name not in self._built and name in COMMANDS:
            self._load(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in COMMANDS

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (n for n in self._built if n not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(n not in COMMANDS for n in self._built)


__all__ = ["COMMANDS", "LazyCommands", "app"]
