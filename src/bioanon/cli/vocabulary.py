r"""One flag vocabulary for every command, applied where the app builds each command.

- ``-o/--out`` names what a command writes. An output option spelled ``--out`` gets the short
  form ``-o``; the old spelling ``--output`` keeps working as a hidden alias (parsed, never
  shown in help), so scripts written for earlier versions still run.
- Metavars are readable: ``COL``, ``PATH``, ``INT``, ``NAME=VALUE``, ``a|b|c`` instead of
  ``<str>``/``<list[str]>``; a boolean flag shows no metavar.

Commands declare ``-o/--out`` themselves (see :data:`bioanon.cli.common.OUT_FLAGS`); this module
makes the rule hold for every command, also those that do not (yet) declare it.

- Help text is prose: a docstring's paragraphs reflow to the terminal's width (its hard line
  breaks are dropped), while paragraphs that are lists or examples (lines starting with ``-``,
  ``*``, ``$``, ``>>>``, a number and a dot, or indented) keep their lines.

Examples
--------
>>> reflow("One line\nbroken.\n\n- a list\n- kept")
'One line broken.\n\n- a list\n- kept'
>>> readable_metavar("sensitive", "str")
'COL'
>>> readable_metavar("n_random", "int")
'INT'
"""

from __future__ import annotations

import inspect
import re
from typing import Any, get_args, get_origin

#: hidden spellings still parsed: alias -> the visible long option it stands for
HIDDEN_ALIASES = {"--output": "--out"}

#: metavars by parameter name (the Python name of the option)
NAMED_METAVARS = {
    "sensitive": "COL", "interest": "COL", "label": "COL", "group": "COL",
    "identifying": "COL", "quasi": "COL", "keep": "COL", "attribute": "COL", "by": "COL",
    "file_column": "COL", "label_column": "COL", "time_column": "COL",
    "additional": "COL[=ALPHA]", "param": "NAME=VALUE", "grid": "NAME=V1,V2", "rq": "[COL=]X",
    "where": "COL=VALUE", "metadata": "COL,COL", "identities": "N,N",
    "channels": "CH,CH", "shape": "HxW", "image_shape": "HxW", "seed": "INT",
    "models": "NAME,...|all", "attackers": "MODE,...|all", "selection": "NAME,...|auto|none",
    "clusterer": "mdav|kmember|knn|hierarchical", "no_face": "centre|skip",
    "gravity": "keep|remove", "architecture": "mlp|conv", "features": "NAME",
}
_BY_TYPE = {"str": "TEXT", "int": "INT", "float": "FLOAT", "Path": "PATH", "bool": ""}


_KEEP_LINES = re.compile(r"^(\s+\S|[-*•]\s|\$\s|>>>|\d+[.)]\s|\x08)")


def reflow(text: str | None) -> str | None:
    """Join the hard line breaks inside each prose paragraph of a help text (see the module
    docstring); lists, examples and ``\\b`` paragraphs keep their lines."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for para in paragraphs:
        lines = para.split("\n")
        if any(_KEEP_LINES.match(line) for line in lines):
            out.append(para)
        else:
            out.append(" ".join(line.strip() for line in lines if line.strip()))
    return "\n\n".join(out)


def readable_metavar(name: str, type_name: str) -> str:
    """A readable metavar for option ``name`` of type ``type_name`` (str, int, Path ...)."""
    return NAMED_METAVARS.get(name, _BY_TYPE.get(type_name, type_name.upper()))


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return getattr(annotation, "__name__", str(annotation))


def _add_hidden_aliases(param: Any, aliases: list[str]) -> None:
    """Let the parser accept ``aliases`` for ``param`` without listing them in help."""
    original = param.add_to_parser

    def add_to_parser(parser: Any, ctx: Any) -> None:
        original(parser, ctx)
        parser.add_option(obj=param, opts=aliases, dest=param.name,
                          action="append" if param.multiple else "store", nargs=param.nargs)

    param.add_to_parser = add_to_parser


def conform(cmd: Any) -> None:
    """Apply the vocabulary to one built command (idempotent)."""
    if getattr(cmd, "_bioanon_vocabulary", False):
        return
    cmd._bioanon_vocabulary = True
    cmd.help = reflow(cmd.help)
    from .help_pages import add_no_forms, short_pages

    add_no_forms(cmd)
    if not hasattr(cmd, "commands"):  # a command, not the group
        short_pages(cmd)
    if getattr(cmd, "short_help", None):
        cmd.short_help = reflow(cmd.short_help)
    make_help_option = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        opt = make_help_option(ctx)
        if opt is not None and opt.metavar is None:
            opt.metavar = ""  # a flag: no <bool>
        return opt

    cmd.get_help_option = get_help_option
    taken = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    for param in cmd.params:
        desc = param.type_descriptor
        is_option = param.param_type_name == "option"
        if is_option and ("--out" in param.opts or "--output" in param.opts):
            opts = [o for o in param.opts if o not in ("-o", "--out", "--output")]
            short = ["-o"] if "-o" not in taken or "-o" in param.opts else []
            param.opts = [*short, "--out", *opts]
            hidden = [a for a, to in HIDDEN_ALIASES.items() if to == "--out"]
            _add_hidden_aliases(param, hidden)
        if param.metavar is not None:
            continue
        if desc.is_choice and desc.choices is not None:
            param.metavar = "|".join(str(getattr(c, "value", c)) for c in desc.choices)
        elif not is_option:  # an argument: its name in usage, its type beside it
            param.metavar = param.name.upper()
            shown = readable_metavar("", _type_name(desc.annotation))
            param.display_type_rich = lambda ctx, shown=shown: shown
        elif getattr(param, "is_bool_flag", False):
            param.metavar = ""
        else:
            param.metavar = readable_metavar(param.name, _type_name(desc.annotation))
