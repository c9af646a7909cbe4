"""Help pages that fit a terminal: ``--help`` short, ``--help-all`` whole; every flag with
its ``--no-`` form.

- ``bioanon CMD --help`` shows the first paragraph of the command's description and its
  everyday options; the options listed in :data:`DETAILS` (tuning of the judge, the dask path,
  the DP budget's finer points) and the rest of the description are shown by
  ``bioanon CMD --help-all``, as are the aliases kept for older scripts ("Alias of ...").
  Hidden options still work as usual.
- Help is click's plain layout (no boxes): it wraps at the terminal's width and never cuts
  a name or a choice with "…".
- Every boolean flag gets its ``--no-`` form (``--dask/--no-dask``), as the README promises.

Examples
--------
>>> first_paragraph("Do it.\\n\\nThe details.")
'Do it.'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

#: options shown by ``--help-all`` only, by command, besides the evaluation's options marked
#: so where they are declared (:func:`bioanon.cli.options.detail_flags`); every flag named
#: here is one the command declares (:func:`stale_details` lists those it does not; a test
#: keeps it empty)
DETAILS: dict[str, frozenset[str]] = {
    "release": frozenset({
        "--workers", "--bucket-size", "--sample-records", "--max-records-per-identity",
        "--delta", "--privacy-unit", "--budget-minutes", "--keep-sensitive", "--label",
        "--quasi", "--force", "--keep-as-feature", "--exhaustive", "--layout"}),
    "evaluate": frozenset({
        "--rq", "--allow-replacement", "--k", "--g", "--t", "--w", "--rp", "--epsilon",
        "--sigma", "--block", "--decoupler", "--layout"}),
    "anonymize": frozenset({
        "--bucket-size", "--fit-sample", "--workers", "--scheduler", "--rq",
        "--allow-replacement", "--k", "--g", "--t", "--w", "--rp", "--epsilon", "--sigma",
        "--block", "--keep-order", "--label", "--quasi", "--force", "--decoupler",
        "--keep-as-feature", "--layout"}),
    "tune": frozenset({"--models", "--attackers", "--target-advantage"}),
}


#: help texts written when the page that shows them is asked for, by (command, flag): they
#: read the method registry, which imports every family, so that ``--help`` stays light; each
#: is a detail (shown by ``--help-all`` only), and its declaration's help is the stand-in
LATE_HELP: dict[tuple[str, str], Callable[[], str]] = {}


def late_help(command: str, flag: str, text: Callable[[], str]) -> None:
    """Have ``bioanon COMMAND --help-all`` show ``text()`` as the help of ``flag`` (a detail
    flag of :data:`DETAILS`), computed only then."""
    if flag not in DETAILS.get(command, frozenset()):
        raise ValueError(f"{command} {flag}: a late help text is for a detail flag only")
    LATE_HELP[(command, flag)] = text


def details(command: str) -> frozenset[str]:
    """Every flag of ``command`` that ``--help-all`` shows alone: :data:`DETAILS` and the
    evaluation's options declared as details."""
    from .options import detail_flags

    return DETAILS.get(command, frozenset()) | detail_flags(command)


#: flags that ask for text instead of setting something (no --no- form, like --help)
ACTIONS = frozenset({"version", "help_all"})
#: the flag that shows the whole page
HELP_ALL = "--help-all"


def stale_details(group: Any) -> dict[str, list[str]]:
    """Flags :func:`details` names that their command does not declare, by command (empty
    when every one exists); ``group`` is the app's click group
    (``typer.main.get_command(app)``)."""
    out = {}
    for name in sorted({*DETAILS, *group.list_commands(None)}):
        cmd = group.get_command(None, name)
        declared = {o for p in getattr(cmd, "params", []) for o in (*p.opts, *p.secondary_opts)}
        if missing := sorted(details(name) - declared):
            out[name] = missing
    return out


def first_paragraph(text: str | None) -> str:
    """The first paragraph of a help text."""
    return (text or "").strip().split("\n\n", 1)[0]


def add_no_forms(cmd: Any) -> None:
    """Give every boolean flag of ``cmd`` its ``--no-`` form (idempotent)."""
    for param in cmd.params:
        if (param.param_type_name == "option" and getattr(param, "is_bool_flag", False)
                and not param.secondary_opts and not param.is_eager
                and param.name not in ACTIONS):
            longs = [o for o in param.opts if o.startswith("--")]
            if longs:
                param.secondary_opts = [f"--no-{longs[0][2:]}"]


def short_pages(cmd: Any) -> None:
    """Make ``--help`` short and add ``--help-all`` to ``cmd`` (idempotent)."""
    if getattr(cmd, "_bioanon_full_help", None) is not None:
        return
    full = cmd.help or ""
    cmd._bioanon_full_help = full
    shown_alone = details(cmd.name or "")
    hidden = [p for p in cmd.params if p.param_type_name == "option" and not p.hidden
              and not p.required and (set(p.opts) & shown_alone
                                      or (p.help or "").startswith("Alias of"))]
    short = first_paragraph(full)
    if short != full.strip() or hidden:
        extra = f" and {len(hidden)} more options" if hidden else ""
        cmd.help = f"{short}\n\nThe details{extra}: bioanon {cmd.name} {HELP_ALL}."
    for p in hidden:
        p.hidden = True
        p._bioanon_detail = True  # hidden from --help only: shown by --help-all

    def show_all(ctx: Any, _param: Any, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        short_help, shown = cmd.help, [(p, p.hidden, p.help) for p in hidden]
        cmd.help = full
        for p in hidden:
            p.hidden = False
            late = [LATE_HELP[(cmd.name, o)] for o in p.opts if (cmd.name, o) in LATE_HELP]
            if late:
                p.help = late[0]()
        try:
            typer.echo(ctx.get_help(), color=ctx.color)
        finally:  # the command is as it was: a later --help in this process is short
            cmd.help = short_help
            for p, was_hidden, text in shown:
                p.hidden, p.help = was_hidden, text
        ctx.exit()

    cmd.params.append(_help_all_param(show_all))


def _help_all_param(callback: Any) -> Any:
    """``--help-all`` as typer builds an option (its own click), not passed to the command."""
    dummy = typer.Typer(add_completion=False)

    @dummy.command()
    def _cmd(help_all: Annotated[bool, typer.Option(
            HELP_ALL, is_eager=True,
            help="Show every option and the whole description.")] = False,
             ) -> None:  # pragma: no cover - never run
        pass

    (param,) = typer.main.get_command(dummy).params
    param.expose_value = False
    param.callback = callback
    param.metavar = ""
    return param


__all__ = ["DETAILS", "HELP_ALL", "LATE_HELP", "add_no_forms", "details", "first_paragraph",
           "late_help", "short_pages", "stale_details"]
