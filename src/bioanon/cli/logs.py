"""How much the command line says: ``-v/--verbose``, ``-q/--quiet`` and where progress goes.

On a terminal, progress is a rich bar on stderr. Anywhere else (CI logs, ``nohup``, a notebook
cell, a pipe), each stage is one plain line on stderr with the clock time and the elapsed time,
logged through the ``bioanon`` logger. ``-v`` adds the inner stages (DEBUG records), ``-q``
leaves only warnings and errors. Both work before the command (``bioanon -v evaluate ...``) and
after it (``bioanon evaluate ... -v``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from .console import _fail

#: records of the command line's own stages
cli_logger = logging.getLogger("bioanon.cli")


class _State:
    verbose = False
    quiet = False
    #: the running command was given ``--json`` (stdout holds one JSON document, whatever
    #: happens), and whether that document has been printed
    json = False
    json_printed = False
    command = ""


#: a command's own ``--json`` document of an error, by command name (``release`` keeps one
#: schema for every outcome): ``(message, kind, exit_code) -> document``
JSON_ERROR_DOCS: dict[str, Callable[[str, str, int], dict[str, Any]]] = {}


state = _State()


class ConsoleHandler(logging.Handler):
    """Prints records on a rich console (above a live progress bar, never through it)."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            if record.levelno >= logging.WARNING:
                text = f"{record.levelname.lower()}: {record.getMessage()}"
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)
        except Exception:  # pragma: no cover - logging must never break a command
            self.handleError(record)


def _handler(console: Console) -> ConsoleHandler:
    root = logging.getLogger("bioanon")
    for h in root.handlers:
        if isinstance(h, ConsoleHandler):
            h.console = console
            return h
    h = ConsoleHandler(console)
    root.addHandler(h)
    return h


_seen_warnings: set[tuple[str, str]] = set()


def _show_warning(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Any = None, line: str | None = None) -> None:
    """One line per distinct warning of this invocation (a search fits a method many times;
    the user needs to read a leak warning once, not once per fit, and no source line)."""
    key = (category.__name__, str(message))
    if key in _seen_warnings:
        return
    _seen_warnings.add(key)
    cli_logger.warning("%s (%s)", message, category.__name__)


def configure(console: Console, verbose: bool | None = None, quiet: bool | None = None) -> None:
    """Set the verbosity and the ``bioanon`` logger's level for this invocation.

    Levels: ``-q`` WARNING; default INFO off a terminal (stage lines) and WARNING on one (the
    bar shows progress); ``-v`` DEBUG.
    """
    if verbose is not None:
        state.verbose = verbose
    if quiet is not None:
        state.quiet = quiet
    if state.verbose and state.quiet:
        state.verbose = state.quiet = False
        raise typer.BadParameter("-v/--verbose and -q/--quiet contradict each other; pick one")
    if state.quiet:
        level = logging.WARNING
    elif state.verbose:
        level = logging.DEBUG
    else:
        level = logging.WARNING if console.is_terminal else logging.INFO
    _handler(console).setLevel(level)
    logging.getLogger("bioanon").setLevel(level)
    _seen_warnings.clear()
    warnings.showwarning = _show_warning


def show_bar(console: Console) -> bool:
    """A live bar only on a terminal and when not quiet."""
    return console.is_terminal and not state.quiet


def _option_callback(name: str) -> Any:
    def callback(ctx: Any, param: Any, value: bool) -> None:
        if value and VerbosityGroup.console is not None:
            configure(VerbosityGroup.console, **{name: True})
    return callback


def _verbosity_params() -> list[Any]:
    """-v/-q as typer builds them (help panel and all), not passed to the command."""
    dummy = typer.Typer(add_completion=False)

    @dummy.command()
    def _cmd(verbose: Annotated[bool, typer.Option(
                 "-v", "--verbose", help="Say more: every inner stage of the run.")] = False,
             quiet: Annotated[bool, typer.Option(
                 "-q", "--quiet", help="No progress; only warnings, errors and results.")]
             = False) -> None:  # pragma: no cover - never run
        pass

    params = typer.main.get_command(dummy).params
    for p in params:
        p.expose_value = False
        p.callback = _option_callback(p.name)
    return params


def _click_exception() -> type[Exception]:
    """The ClickException class typer raises (it may vendor its own click)."""
    import importlib

    try:
        module = importlib.import_module("typer._click.exceptions")
    except ImportError:  # a typer that uses the click package
        module = importlib.import_module("click.exceptions")
    return module.ClickException


def json_error(message: str, kind: str, exit_code: int) -> None:
    """Under ``--json``, the one document on stdout of a run that ends in an error (``kind``:
    ``"usage"``, ``"input"``, ``"internal"`` or ``"interrupted"``), unless the command printed
    its own: stdout holds exactly one JSON document, whatever happens."""
    if state.json and not state.json_printed:
        own = JSON_ERROR_DOCS.get(state.command)
        doc = (own(message, kind, exit_code) if own is not None
               else {"error": message, "kind": kind, "exit_code": exit_code})
        typer.echo(json.dumps(doc, indent=2))
        state.json_printed = True


def refuse_empty_paths(cmd: Any) -> None:
    """Make every path or text option and argument of ``cmd`` refuse an empty value: an
    unset shell variable (``--out "$REPORT"``) once wrote the report into the current folder
    (click makes an empty path '.'), exit 0; an empty column (``--label "$COL"``), device or
    feature kind was dropped and the default taken without a word. An explicit ``.`` is
    still the current folder (idempotent)."""
    for param in cmd.params:
        kind = param.type_descriptor.annotation
        path = getattr(kind, "__name__", "") == "Path"
        text = (param.param_type_name == "option" and param.name != "reason"  # its own words
                and kind in (str, list[str]) and not param.type_descriptor.is_choice)
        if getattr(param, "_bioanon_nonempty", False) or not (path or text):
            continue
        param._bioanon_nonempty = True
        param.process_value = _nonempty(param, param.process_value, path)


def _nonempty(param: Any, original: Any, path: bool = True) -> Any:
    def process_value(ctx: Any, value: Any) -> Any:
        values = value if isinstance(value, list | tuple) else [value]
        if any(isinstance(v, str) and not v.strip() for v in values):
            name = (max(param.opts, key=len) if param.param_type_name == "option"
                    else param.name.upper())
            message = (f"{name} is empty; name a path (an empty value, such as an unset shell "
                       "variable, is not taken for the current folder: write . for it)" if path
                       else f"{name} is empty; give a value or leave the option out (an empty "
                       "value, such as an unset shell variable, is not taken for the default)")
            json_error(message, "input", 2)
            raise _fail(message)
        return original(ctx, value)

    return process_value


def refuse_repeated_options(cmd: Any) -> None:
    """Make ``cmd`` refuse an option of one value given twice with different values
    (``--sensitive speaker --sensitive identity``): click keeps the last and drops the
    other without a word, so a role, a method or an output the user typed was ignored. The
    same value twice (a script's default repeated) passes. A file to write typed as a folder
    (``-o rel.parquet/``, :func:`_file_spelled_as_folder`) is refused here too: the path
    the command receives has lost the slash."""
    if getattr(cmd, "_bioanon_once", False):
        return
    cmd._bioanon_once = True
    original = cmd.parse_args

    def parse_args(ctx: Any, args: list[str]) -> Any:
        message = None
        repeated = _repeated(cmd, args)
        if repeated is not None:
            flag, first, then = repeated
            message = (f"{flag} is given twice, as {first!r} and as {then!r}; it takes one "
                       "value (the last would be used, the other dropped): give it once")
        else:
            message = _file_spelled_as_folder(cmd, args)
        if message is not None:
            json_error(message, "input", 2)
            raise _fail(message)
        return original(ctx, args)

    cmd.parse_args = parse_args


def _option_values(cmd: Any, args: list[str]) -> Iterator[tuple[Any, str]]:
    """(parameter, value as typed) of each option of ``cmd`` that takes one value, in the
    order ``args`` give them (up to ``--``); any other token comes as (None, token)."""
    takes = {}  # every option name that takes a value -> its parameter
    for param in cmd.params:
        if param.param_type_name == "option" and not param.is_flag and param.nargs == 1:
            for name in [*param.opts, *param.secondary_opts]:
                takes[name] = param
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            break
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in takes and (eq or i + 1 < len(args)):
            if not eq:
                value = args[i + 1]
                i += 1
            yield takes[name], value
        else:
            yield None, token
        i += 1


def _repeated(cmd: Any, args: list[str]) -> tuple[str, str, str] | None:
    """The first option of one value ``args`` give twice with different values: (its
    longest name, the first value, the other); None when there is none."""
    seen: dict[str, str] = {}
    for param, value in _option_values(cmd, args):
        if param is not None and not param.multiple and \
                seen.setdefault(param.name, value) != value:
            return max(param.opts, key=len), seen[param.name], value
    return None


def _file_spelled_as_folder(cmd: Any, args: list[str]) -> str | None:
    """The error for a file output typed as a folder (``-o rel.parquet/``), else None.

    A command's ``output`` names the file it writes (its folder outputs are called ``out``).
    A path turns ``rel.parquet/`` into ``rel.parquet``: the slash was dropped and the file
    written, or a file of that name replaced, where the user meant a folder (``cp`` refuses
    the same). With ``--dask`` the output may be a folder of Parquet parts and the slash
    says so.
    """
    has_dask = any(p.name == "dask" for p in cmd.params)
    given = list(_option_values(cmd, args))
    if has_dask and (None, "--dask") in given:  # (not a '--dask' typed as another's value)
        return None
    for param, value in given:
        if param is not None and param.name == "output" and value.endswith(("/", os.sep)):
            flag = "-o" if "-o" in param.opts else max(param.opts, key=len)
            name = value.rstrip("/" + os.sep)
            fix = f"give {flag} '{name}'" if name else "name a file"
            more = " (or add --dask to write a folder of Parquet parts)" if has_dask else ""
            return (f"{flag} '{value}' ends with a slash, which names a folder; {flag} names "
                    f"the file to write: {fix}{more}")
    return None


@contextlib.contextmanager
def usage_errors_as_lines() -> Iterator[None]:
    """A usage error (unknown option, missing or invalid value) as the one ``error:`` line
    and exit status 2 of every user error, naming the command's ``--help``. A command (or
    ``bioanon`` itself) typed without arguments shows its help instead, with click's status
    for it (2) and no error line."""
    try:
        yield
    except _click_exception() as exc:
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            typer.echo(ctx.get_help())
            raise typer.Exit(2) from None
        ctx = getattr(exc, "ctx", None)
        where = f"; see '{ctx.command_path} --help'" if ctx is not None else ""
        message = exc.format_message().rstrip(".")  # type: ignore[attr-defined]
        json_error(f"{message}{where}", "usage", 2)
        raise _fail(f"{message}{where}") from None


#: each command's line in ``bioanon --help``: short enough for 80 columns (its own --help
#: says more)
SUMMARIES = {
    "anonymize": "Anonymize a table with one method (not certified)",
    "evaluate": "Measure a method's utility and every risk",
    "demo": "The release path on a built-in synthetic dataset",
    "release": "Search, certify against every risk, and release",
    "audit": "Judge any release against its members and a holdout",
    "datasets": "List the datasets of the data home",
    "extract": "Extract features from face, voice or motion records",
    "methods": "List the methods, their parameters and guarantees",
    "preview": "Show originals above their released images",
    "train-decoupler": "Train the sanitizer's decoupler",
    "tune": "Sweep a method over a grid of settings",
    "tune-k": "Sweep k of a clustering method and recommend one",
}


def internal_message(exc: BaseException) -> str | None:
    """The ``error:`` line of a bug (an exception that is not a user error, a usage error or
    an exit), or None for click's and typer's own exceptions (exits included)."""
    if type(exc).__module__.split(".")[0] in ("click", "typer") or isinstance(
            exc, _click_exception()) or not isinstance(exc, Exception):
        return None
    line = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return (f"internal error ({line}); this is a bug in bioanon, not in the input (an output "
            "is written whole or not at all): rerun with -v for the traceback and report it")


@contextlib.contextmanager
def internal_errors_as_lines() -> Iterator[None]:
    """A bug (any exception that is not a user error, a usage error or an exit) as one
    ``error:`` line naming it as bioanon's fault, exit status 1, never a traceback (under
    ``--json``, one document too); with ``-v`` the traceback follows on stderr for the
    report. Temporaries are already removed by the writers' own cleanup as the exception
    passes."""
    try:
        yield
    except Exception as exc:
        message = internal_message(exc)
        if message is None:
            raise
        import sys

        if state.verbose:
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        json_error(message, "internal", 1)
        err = _fail(message)
        raise typer.Exit(1) from err


class VerbosityGroup(TyperGroup):
    """The app's command group: every command also accepts ``-v/--verbose`` and ``-q/--quiet``
    (without changing any command's signature) and follows the flag vocabulary
    (:mod:`bioanon.cli.vocabulary`)."""

    console: Console | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from .app import LazyCommands

        # every command listed; a command's module is imported when it is looked up
        self.commands = LazyCommands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command's name, in the order of ``--help``, without importing any."""
        return list(self.commands)

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        with usage_errors_as_lines():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        # each command starts with no document printed; --json among its arguments (a usage
        # error is said before the command's own options are parsed)
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]
        state.json_printed = False
        state.json = "--json" in args
        state.command = str(args[0]) if args else ""
        with usage_errors_as_lines(), internal_errors_as_lines():
            return super().invoke(ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from .vocabulary import conform

        conform(self)  # readable metavars on the app's own options too
        super().format_help(ctx, formatter)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Each command with its one-line summary (:data:`SUMMARIES`; a command without one
        shows the first sentence of its help, wrapped, never clipped with "...")."""
        rows = []
        for name in self.list_commands(ctx):
            loaded = getattr(self.commands, "loaded", lambda _: True)(name)
            if name in SUMMARIES and not loaded:  # no import of the command's module
                rows.append((name, SUMMARIES[name]))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is None or getattr(cmd, "hidden", False):
                continue
            first = " ".join((cmd.help or "").split("\n\n")[0].split())
            rows.append((name, SUMMARIES.get(name) or first.split(". ")[0].rstrip(".")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None:
            return cmd
        names = {n for p in cmd.params for n in getattr(p, "opts", [])}
        if "--verbose" not in names and "-v" not in names:
            cmd.params = [*cmd.params, *_verbosity_params()]
        from .vocabulary import conform

        conform(cmd)  # -o/--out (old spellings hidden), readable metavars
        refuse_empty_paths(cmd)
        refuse_repeated_options(cmd)
        return cmd
