"""The ``evaluate`` command: judge one method at one setting against the attack panel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import BioanonError
from ..io import check_output_dir
from .common import (
    OUT_FLAGS,
    AddOpt,
    InputArg,
    InterestOpt,
    JsonOpt,
    LabelOpt,
    MethodChoice,
    SensitiveOpt,
    app,
    method_options,
    notes_console,
    parse_weighted,
    print_summary,
    progress_bar,
    read_input,
    refuse_unused,
    user_errors,
)
from .options import EvalSeedOpt, LayoutOpt, judge_options


@app.command()
@user_errors
@method_options(seed_option=EvalSeedOpt)
@judge_options("evaluate")
def evaluate(
    input: InputArg,
    sensitive: SensitiveOpt,
    out: Annotated[Path, typer.Option(*OUT_FLAGS, help="Folder for report.json and .html.")],
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    layout: LayoutOpt = None,
    *,
    choice: MethodChoice,
    judge: dict[str, Any],
    as_json: JsonOpt = False,
) -> None:
    """Measure utility and privacy of a method against the attack panel on a held-out split."""
    from ..attack.selection import parse_strategies
    from ..evaluation.options import EvaluationOptions
    from ..evaluation.seeds import derive_seed
    from ..report.build import evaluate as run_evaluation

    check_output_dir(out, [input], ["report.json", "report.html"])
    add = parse_weighted(additional, 1.0, "--additional")
    eval_seed = 0 if choice.seed is None else choice.seed
    # the anonymizer draws from a seed derived one way from the evaluation seed (not written)
    anon = choice.build(interest, sensitive, list(add),
                        seed=derive_seed(eval_seed, "anonymizer"))
    options = EvaluationOptions.of(**judge)  # every option checked, in one place
    strategies, _ = parse_strategies(options.selection)
    refuse_unused({
        "n_random": ("random" in strategies, "it repeats the random identity selection, which "
                                             "--selection leaves out"),
        "metadata": ("metadata" in strategies, "it feeds the metadata selection, which "
                                               "--selection leaves out"),
        "identities": (bool(strategies), "it sets the identity counts of the selection curves "
                                         "and --selection is none"),
    })
    if interest is None:
        raise BioanonError("evaluate needs --interest (the attribute whose utility is measured)")
    from ..layout import parse_layout, refuse_unread_layout, with_layout

    if layout is not None:
        parse_layout(layout)  # the grammar, before reading
        refuse_unread_layout(anon, layout)  # a layout the method reads nothing of
    table = with_layout(read_input(input, [interest, *add, sensitive, options.group,
                                           *(options.metadata or []), *(label or [])]), layout)
    choice.check_on(anon, table)  # a parameter the table leaves idle: refused
    with progress_bar("evaluating") as update:
        report = run_evaluation(table, interest, sensitive, additional=add, anonymizer=anon,
                                random_state=eval_seed, progress=update, options=options)
    paths = report.write(out)
    print_summary(report, as_json)
    notes = notes_console(as_json)
    notes.print(f"wrote {paths['json']} and {paths['html']}")
    if report.figures:
        notes.print(f"note: {paths['html']} contains a contact sheet of original records "
                    "(--preview); keep it private", highlight=False, markup=False)
    elif options.preview:
        notes.print("note: no contact sheet: the features are not pixels", highlight=False)
