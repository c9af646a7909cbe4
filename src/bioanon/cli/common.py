"""Shared pieces of the command line: the app, error handling, progress bars, options.

User errors print one line (``error: ...``) naming the problem and the fix and exit with
status 2, without a traceback. Outputs are written to a temporary file and renamed, so a failed
run never leaves a partial or overwritten file, and an input is never overwritten.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..anonymize.registry import MethodOptions
from ..errors import BioanonError
from ..table import FeatureTable

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Release biometric datasets with the sensitive attribute hidden.")
console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def user_errors(func: F) -> F:
    """Turn user errors into one line on stderr and exit status 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except BioanonError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except (FileNotFoundError, PermissionError, IsADirectoryError) as exc:
            err_console.print(f"[bold red]error:[/] {exc.strerror}: '{exc.filename}'; "
                              "check the path", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except MemoryError:
            err_console.print("[bold red]error:[/] out of memory; process the table in parts "
                              "or lower g", highlight=False)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


@contextmanager
def progress_bar(description: str) -> Iterator[Callable[[int, int, str], None]]:
    """A rich progress bar driven by the library's ``progress(done, total, text)`` callback."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=err_console, transient=False,
                  disable=not err_console.is_terminal and "pytest" in sys.modules) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int, text: str) -> None:
            bar.update(task, completed=done, total=total, description=f"{description}: {text}")

        yield update


# ---------------------------------------------------------------------- option parsing
def parse_weighted(items: list[str] | None, default: float, what: str) -> dict[str, float]:
    """Parse ``COL`` or ``COL=VALUE`` items into a mapping."""
    out: dict[str, float] = {}
    for item in items or []:
        col, _, val = item.partition("=")
        if not col:
            raise BioanonError(f"empty column name in {what} '{item}'; write COL or COL=VALUE")
        try:
            out[col] = float(val) if val else default
        except ValueError:
            raise BioanonError(f"{what} '{item}' has a non-numeric value; write "
                               f"COL=0.5") from None
    return out


def parse_rq(items: list[str] | None, additional: dict[str, float]) -> dict[str, float]:
    """``--rq 0.05`` applies to every additional attribute; ``--rq COL=0.05`` to one."""
    out = {c: 0.0 for c in additional}
    for item in items or []:
        if "=" in item:
            out.update(parse_weighted([item], 0.0, "--rq"))
        else:
            try:
                out = {c: float(item) for c in additional}
            except ValueError:
                raise BioanonError(f"--rq '{item}' is not a number; e.g. --rq 0.05") from None
    return out


def parse_params(items: list[str] | None) -> dict[str, str]:
    """``--param KEY=VALUE`` items for method options without a flag of their own."""
    out = {}
    for item in items or []:
        key, sep, val = item.partition("=")
        if not key or not sep:
            raise BioanonError(f"--param '{item}' must look like KEY=VALUE")
        out[key] = val
    return out


# ---------------------------------------------------------------------- method options
InterestOpt = Annotated[str | None, typer.Option(
    "--interest", help="Column of the attribute of interest (some methods need none).")]
SensitiveOpt = Annotated[str, typer.Option("--sensitive",
                                           help="Column of the sensitive attribute.")]
AddOpt = Annotated[list[str] | None, typer.Option(
    "--additional", help="Additional attribute to keep, COL or COL=ALPHA (weight in U).")]
LabelOpt = Annotated[list[str] | None, typer.Option(
    "--label", help="Other non-feature column in the input; read, then left out.")]
MethodOpt = Annotated[str, typer.Option("--method", help="Anonymization method.")]
GOpt = Annotated[int, typer.Option("--g", help="Random set size (the record included).")]
TOpt = Annotated[float, typer.Option("--t", help="Purity: share of the set with the record's "
                                                 "interest value, in [1/g, 1].")]
WOpt = Annotated[float, typer.Option("--w", help="Weight of the record on selected features.")]
RpOpt = Annotated[float, typer.Option("--rp", help="Share of interest-relevant features kept.")]
RqOpt = Annotated[list[str] | None, typer.Option(
    "--rq", help="Share kept per additional attribute: 0.05 for all, or COL=0.05.")]
RsOpt = Annotated[float, typer.Option("--rs", help="Share of sensitive-relevant features "
                                                   "excluded from the selection.")]
RelOpt = Annotated[str, typer.Option("--relevance", help="forest or mutual_info.")]
SeedOpt = Annotated[int | None, typer.Option(
    "--seed", help="Fix the randomness. The seed is a secret key: keep it private; it is never "
                   "written to any output.")]
ReplOpt = Annotated[bool, typer.Option(
    "--allow-replacement", help="Draw donors with replacement when a class is too small.")]
KOpt = Annotated[int | None, typer.Option("--k", help="k of the k-anonymity methods.")]
SigmaOpt = Annotated[float | None, typer.Option("--sigma", help="Noise or blur scale.")]
BlockOpt = Annotated[int | None, typer.Option("--block", help="Pixelation block size.")]
EpsOpt = Annotated[float | None, typer.Option("--epsilon", help="Differential privacy epsilon.")]
DecouplerOpt = Annotated[Path | None, typer.Option("--decoupler",
                                                   help="Trained decoupler file.")]
SamplerOpt = Annotated[str | None, typer.Option("--sampler", help="Sanitizer sampler.")]
ParamOpt = Annotated[list[str] | None, typer.Option(
    "--param", help="Further method option, KEY=VALUE.")]


def method_options(method: str, interest: str | None, additional: dict[str, float],
                   sensitive: str | None, seed: int | None, g: int, t: float, w: float,
                   rp: float, rq: list[str] | None, rs: float, relevance: str,
                   allow_replacement: bool, k: int | None, sigma: float | None,
                   block: int | None, epsilon: float | None, decoupler: Path | None,
                   sampler: str | None, param: list[str] | None) -> MethodOptions:
    """Collect parsed command-line values into :class:`MethodOptions`."""
    return MethodOptions(
        method=method, interest=interest, additional=additional, sensitive=sensitive,
        seed=seed, g=g, t=t, w=w, rp=rp, rq=parse_rq(rq, additional), rs=rs,
        relevance=relevance, allow_replacement=allow_replacement, k=k, sigma=sigma,
        block=block, epsilon=epsilon, decoupler=decoupler, sampler=sampler,
        extra=parse_params(param))


def read_input(path: Path, label_columns: list[str | None]) -> FeatureTable:
    """Read a table, naming the label columns; everything else must be numeric features."""
    cols = [c for c in dict.fromkeys(label_columns) if c]
    return FeatureTable.read(path, label_columns=cols)


def print_summary(report: Any) -> None:
    """Print a report's summary rows as a table."""
    tab = Table(title="bioanon evaluation", show_header=True)
    tab.add_column("measure")
    tab.add_column("value", justify="right")
    for key, value in report.summary_rows():
        tab.add_row(key, value)
    console.print(tab)
