"""Which command-line options the corpus exercises: every option in ``--help`` needs a case.

The options come from the app itself (``typer.main.get_command``), so an option added to any
command (or a new command) has no case until one ``add(...)`` line names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import typer

from bioanon.cli import app

from .cases import Case

#: options that ask for text instead of doing work (no input to get wrong)
NOT_INPUT = {"help", "help_all", "version"}


def _commands() -> dict[str, object]:
    group = typer.main.get_command(app)
    out = {}
    for name in group.list_commands(None):  # type: ignore[attr-defined]
        with group.make_context("bioanon", [name], resilient_parsing=True) as ctx:
            out[name] = group.get_command(ctx, name)  # type: ignore[attr-defined]
    return out


def options_in_help() -> dict[str, dict[str, set[str]]]:
    """command -> option name -> the spellings that set it (hidden aliases included)."""
    out: dict[str, dict[str, set[str]]] = {}
    for name, cmd in _commands().items():
        opts: dict[str, set[str]] = {}
        for p in cmd.params:  # type: ignore[attr-defined]
            shown = not getattr(p, "hidden", False) or getattr(p, "_bioanon_detail", False)
            if p.param_type_name != "option" or p.name in NOT_INPUT or not shown:
                continue  # a detail shown by --help-all only still needs its case
            opts[p.name] = {*p.opts, *p.secondary_opts}
        out[name] = opts
    return out


def command_of(argv: list[str], commands: Iterable[str]) -> str | None:
    """The command a command line runs (global options such as -q may come first)."""
    return next((a for a in argv if a in set(commands)), None)


def covered(cases: Iterable[Case], folder: Path) -> dict[str, set[str]]:
    """command -> the option names some case's command line uses (each case built in a
    folder of its own under ``folder``)."""
    spec = options_in_help()
    out: dict[str, set[str]] = {name: set() for name in spec}
    for i, case in enumerate(cases):
        d = folder / f"c{i}"
        d.mkdir()
        argv = [str(a) for a in case.build(d)]
        cmd = command_of(argv, spec)
        if cmd is None:
            continue
        for token in argv:
            flag = token.split("=", 1)[0]
            for name, spellings in spec[cmd].items():
                if flag in spellings:
                    out[cmd].add(name)
    return out


def missing(cases: Iterable[Case], folder: Path) -> list[str]:
    """``command --option`` for every option in ``--help`` that no case uses."""
    spec = options_in_help()
    have = covered(cases, folder)
    return [f"{cmd} {max(spec[cmd][name], key=len)}" for cmd in spec
            for name in spec[cmd] if name not in have[cmd]]
