"""Shared pieces of the command line: the app, error handling, progress bars, options.

User errors print one line (``error: ...``) naming the problem and the fix and exit with
status 2, without a traceback. Outputs are written to a temporary file and renamed, so a failed
run never leaves a partial or overwritten file, and an input is never overwritten.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..anonymize.params import Param
from ..anonymize.registry import build_method
from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..io import not_a_regular_file, not_found
from ..progress import StageLog
from ..table import FeatureTable
from .app import app  # noqa: F401  (the commands register on it)
from .console import _fail, console, err_console, print_table
from .logs import cli_logger, json_error, show_bar, state

if TYPE_CHECKING:
    from ..anonymize.base import Anonymizer

F = TypeVar("F", bound=Callable[..., Any])


#: the largest seed every random generator used here accepts
MAX_SEED = 2**32 - 1


def _check_common(kwargs: dict[str, Any]) -> None:
    """Checks shared by every command, before any work: the seed's range, then every numeric
    option against :data:`OPTION_RANGES` (NaN and infinities are refused everywhere)."""
    seed = kwargs.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and not 0 <= seed <= MAX_SEED:
        raise BioanonError(f"--seed {seed} is out of range; use an integer from 0 to {MAX_SEED}")
    for name, value in kwargs.items():
        if name not in LEGACY_FLAGS:  # method parameters: checked by their declared range
            check_option(name, value)
    if isinstance(kwargs.get("workers"), int) and kwargs["workers"] >= 1:
        from ..scale.cluster import check_workers

        check_workers(kwargs["workers"])  # the cores and memory bound the local workers


#: the meaningful range of every numeric option, by its Python name (one line to add an
#: option; a float option not listed must still be finite). ``jobs`` is checked on its own
#: (-1 or a positive count); a release setting's flag (``--budget-minutes``, ``--epsilon``,
#: ...) by the range declared with it (:mod:`bioanon.certification.settings`); an evaluation
#: option (``test_size``, ``target_advantage``, ...) by the constraint
#: :class:`~bioanon.evaluation.options.EvaluationOptions` declares.
OPTION_RANGES: dict[str, Param] = {
    "bucket_size": Param("int", low=1, help="records per bucket, e.g. 50000"),
    "fit_sample": Param("int", low=2, help="records, e.g. 20000"),
    "sample_records": Param("int", low=100, help="records of the panel sample, e.g. 50000"),
    "workers": Param("int", low=1, none=True, help="worker processes, e.g. 4"),
    "n": Param("int", low=1, help="records shown, e.g. 8"),
    "k_min": Param("int", low=2, help="e.g. 2"),
    "k_max": Param("int", low=2, help="e.g. 20"),
    "dendrogram_max": Param("int", low=0, help="records, e.g. 200; 0 never draws"),
    "size": Param("int", low=8, help="pixels, e.g. 64"),
    "components": Param("int", low=1, help="e.g. 50"),
    "upsample": Param("int", low=0, help="e.g. 1"),
    "n_mfcc": Param("int", low=1, help="coefficients, e.g. 20"),
    "n_steps": Param("int", low=1, help="points, e.g. 10"),
    "window": Param("int", low=1, help="samples, e.g. 200"),
    "hop": Param("int", low=1, help="samples, e.g. 100"),
    "step": Param("int", low=1, help="e.g. 4"),
    "rate": Param("float", low=0, low_open=True, none=True, help="samples per second"),
    "latent_dim": Param("int", low=1, help="e.g. 32"),
    "sensitive_dim": Param("int", low=1, help="e.g. 8"),
    "beta": Param("float", low=0, help="e.g. 5"),
    "alpha_vae": Param("float", low=0, help="a loss weight, e.g. 1"),
    "alpha_aligner": Param("float", low=0, help="a loss weight, e.g. 10"),
    "alpha_dcorr": Param("float", low=0, help="a loss weight, e.g. 100"),
    "alpha_adversary": Param("float", low=0, help="a loss weight, e.g. 10"),
    "epochs": Param("int", low=1, help="e.g. 60"),
    "batch_size": Param("int", low=1, help="records, e.g. 256"),
    "lr": Param("float", low=0, high=1, low_open=True, help="e.g. 0.002"),
    "hidden": Param("int", low=1, help="units, e.g. 256"),
}


def _current_context() -> Any:
    """The click context of the running command, or None (typer may vendor its own click)."""
    import importlib

    try:
        globals_ = importlib.import_module("typer._click.globals")
    except ImportError:  # a typer that uses the click package
        globals_ = importlib.import_module("click.globals")
    return globals_.get_current_context(silent=True)


def option_flag(name: str) -> str:
    """The command-line spelling of the option whose Python name is ``name``."""
    ctx = _current_context()
    for param in getattr(getattr(ctx, "command", None), "params", []):
        if param.name == name and param.opts:
            return str(max(param.opts, key=len))
    return "--" + name.replace("_", "-")


def check_option(name: str, value: Any) -> None:
    """Refuse a numeric option value out of its range (:data:`OPTION_RANGES`), NaN or
    infinite, naming the flag, the value and the range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    spec = OPTION_RANGES.get(name)
    if spec is None:
        from .release_flags import flag_range

        spec = flag_range(name)
    if spec is None and name in EvaluationOptions.names():
        declared = EvaluationOptions.constraint(name)
        spec = declared if isinstance(declared, Param) else None
    flag = option_flag(name)
    if name == "jobs":
        from ..evaluation.options import max_jobs

        if value == 0 or value < -1 or value > max_jobs():
            raise BioanonError(f"{flag} {value} is out of range; use -1 (all cores) or a "
                               f"positive number of parallel fits up to {max_jobs()}")
        return
    if spec is None:
        if isinstance(value, float) and not math.isfinite(value):
            raise BioanonError(f"{flag} {value} is not a finite number; give a number")
        return
    try:
        spec.check(name, value)
    except BioanonError:
        hint = f" ({spec.help})" if spec.help else ""
        text = spec.range_text().replace(" or none", "")
        raise BioanonError(f"{flag} {value} is out of range; use "
                           f"{'an' if text.startswith('i') else 'a'} {text}{hint}") from None


def given_options() -> set[str]:
    """Python names of the options typed on the command line (not left at their default)."""
    ctx = _current_context()
    if ctx is None:
        return set()
    return {name for name in ctx.params
            if getattr(ctx.get_parameter_source(name), "name", "") in ("COMMANDLINE",
                                                                         "ENVIRONMENT")}


def refuse_unused(rules: dict[str, tuple[bool, str]]) -> None:
    """Refuse options typed on the command line that this run would ignore.

    ``rules`` maps an option's Python name to ``(used, why)``: when the option was given and
    ``used`` is False, the error names the flag and ``why`` (what makes it meaningful).
    """
    given = given_options()
    for name, (used, why) in rules.items():
        if name in given and not used:
            raise BioanonError(f"{option_flag(name)} has no effect here: {why}; leave it out")


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Handle SIGTERM like Ctrl-C: unwind, so temporary files are removed."""
    try:
        old = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


#: library parameters whose command-line flag is not ``--`` + the name with dashes. A value
#: with ``{value}`` or a space is a template for the whole ``NAME=VALUE`` (a tuple such as
#: ``(h, w)`` is typed ``HxW``); otherwise the flag is followed by the value, and a ``True``
#: value leaves the bare flag (a switch). A method parameter, named ``params.NAME`` in the
#: error, is typed ``--param NAME=VALUE``.
FLAG_OF = {"public": "--public-data", "target": "--target-advantage",
           "max_records": "--sample-records", "epsilon": "--epsilon", "n_workers": "--workers",
           "labels": "--label", "label_columns": "--label", "random_state": "--seed",
           "image_shape": "--param image_shape=HxW", "shape": "--shape HxW",
           "accept_risks": "--accept-risk {value} --reason \"...\"", "rate_hz": "--rate"}


def _declared_flag(parameter: str) -> str:
    """The flag of an evaluation option as :mod:`bioanon.cli.options` declares it (``n_jobs``:
    ``--jobs``), else ``--`` + the name with dashes."""
    from .options import JUDGE_FLAGS, TARGET_FLAGS

    for f in (*JUDGE_FLAGS.values(), *TARGET_FLAGS.values()):
        if f.option == parameter:
            return f.flag.split("/")[0]
    return "--" + parameter.replace("_", "-")


def _as_flag(parameter: str, value: str) -> str:
    """``NAME=VALUE`` of a library parameter as typed on the command line (a mapping
    ``{'a': ..., 'b': ...}`` of a repeatable flag: the flag once per key)."""
    if parameter.startswith("params."):
        return f"--param {parameter[len('params.'):]}={value}"
    spelling = FLAG_OF.get(parameter) or _declared_flag(parameter)
    if value.startswith("{"):
        import ast

        try:
            keys = list(ast.literal_eval(value))
        except (ValueError, SyntaxError):
            keys = [value]
        return " ".join(_as_flag(parameter, str(k)) for k in keys)
    if "{value}" in spelling or " " in spelling:
        return spelling.format(value=value)
    return spelling + (f" {value}" if value and value != "True" else "")


def cli_message(exc: BioanonError) -> str:
    """A library error as the command line says it: ``NAME=VALUE`` of each parameter the
    error names becomes ``--flag VALUE`` (the one place the library's words become flags)."""
    import re

    text = str(exc)
    names = getattr(exc, "parameter", None) or ()
    for name in (names,) if isinstance(names, str) else names:

        def to_flag(m: re.Match[str], name: str = name) -> str:
            return _as_flag(name, m.group(1))

        written = name.removeprefix("params.")
        text = re.sub(rf"(?<![\w-]){re.escape(written)}=(\{{[^}}]*\}}|\([^)]*\)|[^\s,;)]*)",
                      to_flag, text)
    if names:  # flags with values listed together become one command line (no commas)
        text = re.sub(r"(--[a-z][\w-]* [^\s,;()-][^\s,;()]*), (?=--[a-z])", r"\1 ", text)
    return text


def flag_words(text: str) -> str:
    """A library line naming the risks a row needs accepted (``accept_risks=NAME``: the
    refusal's and the trade-off's words) as the command line types them
    (``--accept-risk NAME --reason "..."``)."""
    return cli_message(BioanonError(text, parameter="accept_risks"))


def _refused(message: str) -> typer.Exit:
    """The one ``error:`` line of a user error (exit 2), and under ``--json`` its document."""
    json_error(message, "input", 2)
    return _fail(message)


def _os_fix(exc: OSError) -> str:
    """The fix of an operating system's refusal to write (a name too long was told to free
    space)."""
    import errno

    if exc.errno == errno.ENAMETOOLONG:
        return ("choose a shorter name (most file systems allow 255 bytes a folder or file "
                "name)")
    if exc.errno == errno.EROFS:
        return "choose an output on a writable file system"
    return "free space or choose another output"


def user_errors(func: F) -> F:
    """Turn user errors into one line on stderr and exit status 2.

    Messages are printed as plain text (a ``[`` in a column name is not markup). SIGTERM is
    handled like SIGINT: the command unwinds, removes its temporaries and exits with 130.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ..release_unit import COMMITTED

        committed_before = len(COMMITTED)
        state.json = bool(kwargs.get("as_json"))
        try:
            with _sigterm_as_interrupt():
                _check_common(kwargs)
                return func(*args, **kwargs)
        except BioanonError as exc:
            raise _refused(cli_message(exc)) from None
        except (FileNotFoundError, PermissionError, IsADirectoryError,
                NotADirectoryError) as exc:
            raise _refused(f"{exc.strerror}: '{exc.filename}'; check the path") from None
        except MemoryError:
            raise _refused("out of memory; release the table in parts (--dask), reduce its "
                           "features (e.g. PCA), or choose a lighter method or "
                           "setting") from None
        except OSError as exc:  # disk full, read-only file system ...
            where = f": '{exc.filename}'" if exc.filename else ""
            raise _refused(f"{exc.strerror or exc}{where}; {_os_fix(exc)}") from None
        except KeyboardInterrupt:
            done = COMMITTED[committed_before:]
            said = (f"interrupted after {done[-1]} was written whole (with its manifest)"
                    if done  # the signal was held until the release's switch was complete
                    else "interrupted: no output was written")
            json_error(said, "interrupted", 130)
            err_console.print(said, highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


@contextmanager
def progress_bar(description: str, milestones: int | None = None) -> Iterator[StageLog]:
    """The progress hook of one command: a rich bar on a terminal, plain stage lines elsewhere.

    Yields a :class:`bioanon.progress.StageLog`, the library's ``progress(done, total, text)``
    hook: it logs one line per stage with the elapsed time on ``bioanon.cli`` (shown when
    stderr is not a terminal, or with -v) and drives the bar when there is one.
    ``milestones``: for item-by-item progress (a file at a time), the plain lines are thinned
    to about that many (see :class:`~bioanon.progress.StageLog`).
    """

    if not show_bar(err_console):
        yield StageLog(description, logger=cli_logger, milestones=milestones)
        return
    with Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=err_console, transient=False) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int, text: str) -> None:
            bar.update(task, completed=done, total=total or None,
                       description=f"{description}: {text}")

        yield StageLog(description, update, cli_logger, milestones=milestones)


# ---------------------------------------------------------------------- option parsing
def parse_weighted(items: list[str] | None, default: float, what: str) -> dict[str, float]:
    """Parse ``COL`` or ``COL=VALUE`` items into a mapping."""
    out: dict[str, float] = {}
    for item in items or []:
        col, eq, val = item.partition("=")
        if not col:
            raise BioanonError(f"empty column name in {what} '{item}'; write COL or COL=VALUE")
        if eq and not val.strip():  # 'gender=$W' with W unset: the default, without a word
            raise BioanonError(f"{what} '{item}' has an empty value after '='; write "
                               f"{col}=0.5, or {col} alone for the default {default:g}")
        try:
            weight = float(val) if val else default
        except ValueError:
            raise BioanonError(f"{what} '{item}' has a non-numeric value; write "
                               f"COL=0.5") from None
        if not math.isfinite(weight) or weight <= 0:
            raise BioanonError(f"{what} '{item}': the weight must be a positive finite number; "
                               "write COL=0.5, or leave the column out")
        if col in out and out[col] != weight:
            raise BioanonError(f"{what} names '{col}' twice with different weights; give it "
                               "once")
        out[col] = weight
    return out


def parse_params(items: list[str] | None) -> dict[str, str]:
    """``--param KEY=VALUE`` items for method options without a flag of their own."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, val = item.partition("=")
        key = key.strip()
        if not key or not sep:
            raise BioanonError(f"--param '{item}' must look like KEY=VALUE")
        if not val.strip():
            raise BioanonError(f"--param '{item}' has no value; write {key}=VALUE (bioanon "
                               "methods lists each parameter's range)")
        if key in out and out[key] != val:
            raise BioanonError(f"--param {key} is given twice ({out[key]} and {val}); give it "
                               "once")
        out[key] = val
    return out


def check_grid(items: list[str] | None, choice: MethodChoice) -> None:
    """Refuse ``--grid`` items that name a parameter twice, give it no value, or also fix it
    with ``--param``/its flag (the sweep would silently override one of them)."""
    seen: dict[str, str] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        values = [v for v in raw.split(",") if v.strip()]
        if not key or not sep or not values:
            raise BioanonError(f"--grid '{item}' must look like KEY=V1,V2 (e.g. g=16,32,64)")
        stripped = [v.strip() for v in values]
        if len(set(stripped)) < len(stripped):
            raise BioanonError(f"--grid '{item}' repeats a value; give each value once")
        if key in seen:
            raise BioanonError(f"--grid names '{key}' twice ('{seen[key]}' and '{item}'); give "
                               f"its values once: {key}=V1,V2")
        if key in choice.params:
            raise BioanonError(f"'{key}' is both swept (--grid {item}) and fixed "
                               f"({key}={choice.params[key]}); leave one out")
        seen[key] = item


def refuse_weights(additional: list[str] | None, command: str) -> None:
    """Refuse ``--additional COL=ALPHA`` where ALPHA would be ignored: the weight enters the
    utility score of ``evaluate``, ``tune`` and ``release``, never a release by itself."""
    parse_weighted(additional, 1.0, "--additional")  # a malformed weight is named as such
    weighted = [item for item in additional or [] if "=" in item]
    if weighted:
        raise BioanonError(f"--additional '{weighted[0]}': {command} does not use the weight "
                           "(it weighs the utility score of evaluate, tune and release); write "
                           f"--additional {weighted[0].partition('=')[0]}")


# ---------------------------------------------------------------------- shared options
#: the one spelling of "what this command writes" (``--output`` is parsed as a hidden alias,
#: see :mod:`bioanon.cli.vocabulary`)
OUT_FLAGS = ("-o", "--out")


def _parquet_folder(path: Path) -> bool:
    """A folder that stands for one Parquet table: named ``*.parquet`` or whose first file is
    a part (every part is checked when read). Only that first file is looked for: a home
    folder or '/' given by mistake was once walked whole, for seconds or minutes."""
    from ..table import PARQUET_SUFFIXES, visible_files

    first = next(iter(visible_files(path)), None)
    return path.suffix.lower() in PARQUET_SUFFIXES or (
        first is not None and first.suffix.lower() in PARQUET_SUFFIXES)


def existing_input(ctx: Any, param: Any, value: Path | None) -> Path | None:
    """Argument callback: a missing input is the first error reported.

    Click processes the parameters given on the command line in their order, before those
    left out, so an input named first is checked before any other option is validated (a
    missing ``--interest`` or ``--out`` included). Prints ``error: ...`` and exits with 2.
    """
    if value is None or ctx.resilient_parsing:
        return value
    kind = "folder" if param.name == "src" else "file"
    if not value.exists():
        fix = "pass the folder of records" if kind == "folder" else "check the path"
        raise _refused(not_found(value, f"input {kind}", fix))
    if kind == "file" and value.is_dir() and not _parquet_folder(value):
        raise _refused(f"input '{value}' is a folder; pass a table file (.parquet, .csv, .npz) "
                       "or a folder of Parquet parts")
    if kind == "folder" and not value.is_dir():
        raise _refused(f"source '{value}' is a file; pass the folder of records")
    if kind == "file" and not value.is_dir() and not value.is_file():
        raise _refused(not_a_regular_file(value))
    return value


def input_argument(help: str) -> Any:
    """``typer.Argument`` of an input that must exist (checked first, see
    :func:`existing_input`)."""
    return typer.Argument(help=help, callback=existing_input)


InputArg = Annotated[Path, input_argument("Feature table: .parquet, .csv or .npz, or a folder of "
                                                "Parquet parts.")]


# ---------------------------------------------------------------------- method options
InterestOpt = Annotated[str | None, typer.Option(
    "--interest", help="Column of the attribute of interest (some methods need none).")]
SensitiveOpt = Annotated[str, typer.Option("--sensitive",
                                           help="Column of the sensitive attribute.")]
AddOpt = Annotated[list[str] | None, typer.Option(
    "--additional", help="Additional attribute to keep, COL or COL=ALPHA (weight in U).")]
LabelOpt = Annotated[list[str] | None, typer.Option(
    "--label", help="Other non-feature column in the input; read, then left out.")]
SeedOpt = Annotated[int | None, typer.Option(
    "--seed", help="Fix the randomness. The seed is a secret key: keep it private; it is never "
                   "written to any output.")]


# ---------------------------------------------------------------------- the method group
#: old flags kept as aliases: flag -> (parameter name, type, help)
LEGACY_FLAGS: dict[str, tuple[str, Any, str]] = {
    "g": ("g", int | None, "Alias of --param g=N (set size)."),
    "t": ("t", float | None, "Alias of --param t=X (purity)."),
    "w": ("w", float | None, "Alias of --param w=X (record weight)."),
    "rp": ("r_p", float | None, "Alias of --param r_p=X."),
    "rs": ("r_s", float | None, "Alias of --param r_s=X."),
    "relevance": ("relevance", str | None, "Alias of --param relevance=forest|mutual_info."),
    "k": ("k", int | None, "Alias of --param k=N."),
    "sigma": ("sigma", float | None, "Alias of --param sigma=X."),
    "block": ("block", int | None, "Alias of --param block=N."),
    "epsilon": ("epsilon", float | None, "Alias of --param epsilon=X."),
    "sampler": ("sampler", str | None, "Alias of --param sampler=NAME."),
    "decoupler": ("decoupler", Path | None, "Alias of --param decoupler=FILE."),
}


@dataclass
class MethodChoice:
    """The method and its parameters as the user typed them (text, converted by the
    method's declared constraints in :func:`bioanon.anonymize.registry.build_method`)."""

    method: str
    params: dict[str, str] = field(default_factory=dict)
    seed: int | None = None

    def build(self, interest: str | None = None, sensitive: str | None = None,
              additional: Sequence[str] | None = None, seed: int | None = None) -> Anonymizer:
        """Build and check the anonymizer (before any data is read).

        A parameter the user set that this setting ignores (the method's declared
        :meth:`~bioanon.anonymize.base.Anonymizer.ignored_params`) is refused.
        """
        est = build_method(self.method, self.params, interest=interest, sensitive=sensitive,
                           additional=additional,
                           random_state=self.seed if seed is None else seed)
        ignored = est.ignored_params() if hasattr(est, "ignored_params") else {}
        for key, value in self.params.items():
            if key in ignored:
                raise BioanonError(f"{key}={value} has no effect with method '{self.method}': "
                                   f"{ignored[key]}; leave it out", parameter="additional")
        return est

    def check_on(self, est: Anonymizer, table: Any) -> None:
        """Once the table is read: refuse a parameter the user set that this table leaves
        without effect (the method's
        :meth:`~bioanon.anonymize.base.Anonymizer.ignored_on`)."""
        ignored = est.ignored_on(table) if hasattr(est, "ignored_on") else {}
        for key in self.params:
            if key in ignored:
                raise BioanonError(f"{key}={self.params[key]} has no effect on this table: "
                                   f"{ignored[key]}, or leave it out", parameter="layout")


def _choice(method: str, param: list[str] | None, seed: int | None, rq: list[str] | None,
            allow_replacement: bool | None, legacy: dict[str, Any]) -> MethodChoice:
    params: dict[str, str] = {}
    for flag, value in legacy.items():
        if value is not None:
            params[LEGACY_FLAGS[flag][0]] = str(value)
    if rq:
        per_col = [item for item in rq if "=" in item]
        params["r_q"] = ",".join(per_col) if per_col else rq[-1]
    if allow_replacement is not None:
        params["allow_replacement"] = str(allow_replacement).lower()
    for key, val in parse_params(param).items():
        if key in params and params[key] != val:
            raise BioanonError(f"{key} is given twice ({params[key]} and {val}); give it once")
        params[key] = val
    return MethodChoice(method, params, seed)


def method_names() -> str:
    """The registered method names, for help texts (``a, b or c``), read from
    :mod:`bioanon.anonymize.catalogue` (no method imported: a command's help starts without
    scikit-learn)."""
    from ..anonymize.catalogue import METHOD_NAMES

    names = list(METHOD_NAMES)
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def param_options(name: str) -> list[str]:
    """The choices any registered method declares for its text parameter ``name`` (or none),
    from :mod:`bioanon.anonymize.catalogue`."""
    from ..anonymize.catalogue import TEXT_CHOICES

    return list(TEXT_CHOICES.get(name, ()))


def _with_options(text: str, name: str) -> str:
    opts = param_options(name)
    return f"{text} Choices: {', '.join(opts)}." if opts else text


def _options_metavar(name: str) -> str | None:
    opts = param_options(name)
    return "|".join(opts) if opts else None


def method_options(func: F | None = None, *, seed_option: Any = None) -> Any:
    """Add the one shared method-option group to a command.

    ``seed_option`` replaces the ``--seed`` option's declaration (``evaluate`` documents an
    evaluation seed, not a release key); use ``@method_options(seed_option=...)``.

    The command receives ``choice: MethodChoice`` instead of the options ``--method``,
    ``--param KEY=VALUE`` (any declared parameter, one name everywhere), ``--seed`` and the
    old flags kept as aliases (``--g``, ``--rp``, ``--k``, ``--epsilon``...).
    """
    if func is None:
        return lambda f: method_options(f, seed_option=seed_option)
    sig = inspect.signature(func, eval_str=True)
    own = [p for p in sig.parameters.values() if p.name != "choice"]
    kw = inspect.Parameter.KEYWORD_ONLY
    added = [
        inspect.Parameter("method", kw, default="selective-mean", annotation=Annotated[
            str, typer.Option("--method", metavar="METHOD",
                              help=f"Anonymization method: {method_names()} (bioanon methods "
                                   "describes each).")]),
        inspect.Parameter("param", kw, default=None, annotation=Annotated[
            list[str] | None, typer.Option(
                "--param", help="Method parameter NAME=VALUE, repeatable (e.g. r_p=0.01, k=5; "
                                "bioanon methods lists names and ranges).")]),
        inspect.Parameter("seed", kw, default=None, annotation=seed_option or SeedOpt),
        inspect.Parameter("rq", kw, default=None, annotation=Annotated[
            list[str] | None, typer.Option(
                "--rq", help="Alias of --param r_q=X: 0.05 for all additional attributes, or "
                             "COL=0.05.")]),
        inspect.Parameter("allow_replacement", kw, default=None, annotation=Annotated[
            bool | None, typer.Option("--allow-replacement/--no-allow-replacement",
                               help="Alias of --param allow_replacement=true|false.")]),
        *[inspect.Parameter(flag, kw, default=None, annotation=Annotated[
            typ, typer.Option(f"--{flag}", help=_with_options(text, name),
                              metavar=_options_metavar(name))])
          for flag, (name, typ, text) in LEGACY_FLAGS.items()],
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        legacy = {flag: kwargs.pop(flag) for flag in LEGACY_FLAGS}
        kwargs["choice"] = _choice(kwargs.pop("method"), kwargs.pop("param"),
                                   kwargs.pop("seed"), kwargs.pop("rq"),
                                   kwargs.pop("allow_replacement"), legacy)
        return func(*args, **kwargs)

    wrapper.__signature__ = sig.replace(parameters=own + added)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {}
    return wrapper


def read_input(path: Path, label_columns: list[str | None]) -> FeatureTable:
    """Read a table, naming the label columns; everything else must be numeric features."""
    cols = [c for c in dict.fromkeys(label_columns) if c]
    return FeatureTable.read(path, label_columns=cols)


def read_release_input(path: Path, label_columns: list[str | None],
                       keep_as_feature: list[str] | None = None) -> FeatureTable:
    """:func:`read_input` for a table to release: a table that does not record its label
    columns (CSV, Parquet from another tool) is refused when a numeric column looks like
    metadata (:mod:`bioanon.metadata_columns`) unless it is named as a label or in
    ``--keep-as-feature``; those kept are said in one line."""
    cols = [c for c in dict.fromkeys(label_columns) if c]
    table = FeatureTable.read(path, label_columns=cols, keep_as_feature=keep_as_feature or [])
    kept = table.meta.get("kept_as_feature") or {}
    if kept:
        err_console.print("note: released as features although they look like metadata "
                          "(--keep-as-feature): " + "; ".join(f"{c} ({why})"
                                                               for c, why in kept.items()),
                          highlight=False, soft_wrap=True)
    return table


def undeclared_epsilon_note(manifest: dict[str, Any], as_json: bool) -> None:
    """One note when the certified setting has an epsilon but no budget was declared: its ε is
    a setting of the method, not a guarantee the release states."""
    params = manifest.get("params") or {}
    if manifest.get("differential_privacy") or not isinstance(params.get("epsilon"),
                                                              int | float):
        return
    notes_console(as_json).print(
        f"note: epsilon={params['epsilon']:g} is a setting of {manifest.get('method')}, not a "
        "guarantee: no budget was declared (--epsilon), so none is stated; the certificate "
        "rests on the measured risks", highlight=False, soft_wrap=True)


def figure_png(fig: Any, tight: bool = True) -> bytes:
    """A figure as PNG bytes at the command line's 110 dpi (drawn before any file of the
    command is written, so that a figure that fails leaves no half output)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, **({"bbox_inches": "tight"} if tight else {}))
    return buf.getvalue()


def refusal_where(written: Path | None, output: Path) -> str:
    """The clause of a refused release saying what it wrote (the closest setting's report,
    or nothing) and that a previous release at ``output`` stays (see
    :func:`bioanon.release_unit.write_unit`)."""
    from ..release_unit import manifest_path

    where = (f"the closest setting's report (NOT certified) is in {written}/; no table or "
             "manifest was written" if written is not None else "nothing was written")
    if manifest_path(output).exists():
        where += f"; the previous release at {output} stays as it was"
    return where


JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Print the summary as one JSON document on stdout (the keys of the "
                   "summary in the JSON file written); notes and progress go to stderr.")]


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def print_json(doc: Any) -> None:
    """Print ``doc`` as the one JSON document on stdout (``--json``; NaN becomes null)."""
    typer.echo(json.dumps(_json_safe(doc), indent=2, default=str))
    state.json_printed = True


def notes_console(as_json: bool) -> Console:
    """Where a command's notes go: stdout normally, stderr under ``--json`` (stdout holds
    only the JSON document)."""
    return err_console if as_json else console


#: a status as the terminal's risk table says it (the reason is printed below the table)
SHORT_STATUS = {"inconclusive at this size": "inconclusive",
                "covered by the guarantee": "covered (DP)"}


def print_risks(report: Any) -> None:
    """The risk table of a report (the rows report.html opens with), on the terminal: one
    line per risk in 80 columns (figure [95% CI], target, status and a key to its attacker);
    the attackers, with the AUC and TPR beside the figure and the baseline, are listed below
    the table under their keys, then the reason of each risk not simply met."""
    from rich import box

    from ..report.risks import risk_rows

    rows = risk_rows(report)
    if not rows:
        return
    stats = {r["statistic"] for r in rows if r["value"] != "—"}
    single = stats.pop() if len(stats) == 1 else None
    keys: dict[str, str] = {}
    for r in rows:
        if r["value"] != "—" and r["attacker"] not in keys:
            keys[r["attacker"]] = f"A{len(keys) + 1}"
    decided = report.get("deciding")
    title = ("risks: every one must be met" if not decided else
             f"risks of {decided.get('figures_of') or 'the closest setting'}")
    tab = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left",
                collapse_padding=True)
    tab.add_column("risk", no_wrap=True)
    tab.add_column(f"{single or 'figure'} [95% CI]", no_wrap=True, justify="right")
    tab.add_column("target", no_wrap=True)
    tab.add_column("status", no_wrap=True)
    tab.add_column("attacker", no_wrap=True)
    style = {"met": "green", "accepted": "yellow", "covered by the guarantee": "green",
             "not met": "bold red", "inconclusive at this size": "bold yellow"}
    for r in rows:
        value = r["value"] if single or r["value"] == "—" else f"{r['statistic']} {r['value']}"
        tab.add_row(r["risk"], value, r["target_short"],
                    Text(SHORT_STATUS.get(r["status"], r["status"]),
                         style=style.get(r["status"], "")),
                    keys.get(r["attacker"], "—") if r["value"] != "—" else "—")
    print_table(tab, console)  # never clipped ("targ…") when piped
    if keys:
        key_tab = Table.grid(padding=(0, 1))
        key_tab.add_column(no_wrap=True, style="bold")
        key_tab.add_column(overflow="fold")
        for attacker, key in keys.items():
            mine = [r for r in rows if r["attacker"] == attacker and r["value"] != "—"]
            beside = "; ".join(dict.fromkeys(
                f"{r['risk']}: {r['beside']}" for r in mine if r["beside"]))
            base = "; ".join(dict.fromkeys(f"baseline {r['baseline']}" for r in mine
                                           if r["baseline"] not in ("—", "")))
            key_tab.add_row(key, "; ".join(x for x in (attacker, beside, base) if x))
        console.print(key_tab)
    for r in rows:
        if r["status"] in ("inconclusive at this size", "covered by the guarantee",
                           "accepted"):
            console.print(Text(f"{r['risk']}: {r['reason']}"), soft_wrap=False)


def print_summary(report: Any, as_json: bool = False, verdict: bool = True) -> None:
    """Print a report's summary: a table and the verdict, or with ``as_json`` the JSON of
    ``report.json``'s ``summary`` (:meth:`bioanon.report.document.Report.summary`).

    The one way every command that judges data shows its figures (``evaluate``, ``demo``
    and ``release``).
    """
    if as_json:
        print_json(report.summary())
        return
    print_risks(report)
    tab = Table(title="bioanon evaluation", show_header=True)
    tab.add_column("measure")
    tab.add_column("value", justify="right")
    for key, value in report.summary_rows():
        tab.add_row(key, value)
    console.print(tab)  # its cells wrap: nothing is clipped at 80 columns
    if verdict and "verdict" in report:  # False: the caller says the run's one verdict
        from ..report.verdict_points import verdict_points

        head, points = verdict_points(report["verdict"])
        console.print(f"verdict: {head}", highlight=False, markup=False)
        for point in points:
            console.print(f"  - {point}", highlight=False, markup=False, soft_wrap=True)
