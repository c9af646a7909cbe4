"""The ``evaluate`` command: judge one method at one setting against the attack panel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import BioanonError
from ..evaluation.seeds import derive_seed
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
from .options import AttackersOpt, EvalSeedOpt, risk_flags


@app.command()
@user_errors
@method_options(seed_option=EvalSeedOpt)
@risk_flags(switches=True)
def evaluate(
    input: InputArg,
    sensitive: SensitiveOpt,
    out: Annotated[Path, typer.Option(*OUT_FLAGS, help="Folder for report.json and .html.")],
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    preview: Annotated[bool, typer.Option(
        "--preview/--no-preview",
        help="Add a contact sheet of held-out originals and their released versions to "
             "report.html (pixel tables; uncaptioned). The report then shows real faces: keep "
             "it private.")] = False,
    *,
    choice: MethodChoice,
    judge: dict[str, Any],
    models: Annotated[str, typer.Option(
        help="Attack recognizers, comma-separated, or 'all' (forest, linear_svm, rbf_svm, "
             "knn, mlp, logreg, pca_svm, hgb; on face pixels with the face extra, also the "
             "pre-trained dlib_embedding).")] = "forest,linear_svm,knn",
    attackers: AttackersOpt = "all",
    selection: Annotated[str, typer.Option(
        help="Identity-selection strategies: random, classification, metadata, distinctive, "
             "center; 'auto' (those that apply) or 'none'.")] = "auto",
    identities: Annotated[str | None, typer.Option(
        help="Identity counts of the selection curves, e.g. 3,6,12 (default: 50%, 25%, ... "
             "down to 3).")] = None,
    n_random: Annotated[int, typer.Option(help="Repeats of the random selection.")] = 10,
    metadata: Annotated[str | None, typer.Option(
        help="Per-identity attribute columns for the metadata strategy, comma-separated "
             "(default: every label column with one value per identity).")] = None,
    group: Annotated[str | None, typer.Option(
        help="Column of groups kept whole on one side of the split: the identity (for a "
             "sensitive attribute such as gender) or a session id.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Parallel fits (-1: all cores).")] = -1,
    test_size: Annotated[float, typer.Option(
        help="Share of each identity's records held out (closed set).")] = 0.25,
    as_json: JsonOpt = False,
) -> None:
    """Measure utility and privacy of a method against the attack panel on a held-out split."""
    from ..attack import parse_models, parse_modes
    from ..attack.selection import parse_strategies
    from ..evaluation.options import EvaluationOptions
    from ..report.build import evaluate as run_evaluation

    check_output_dir(out, [input], ["report.json", "report.html"])
    add = parse_weighted(additional, 1.0, "--additional")
    eval_seed = 0 if choice.seed is None else choice.seed
    # the anonymizer draws from a seed derived one way from the evaluation seed (not written)
    anon = choice.build(interest, sensitive, list(add),
                        seed=derive_seed(eval_seed, "anonymizer"))
    model_list = parse_models(models) if models.strip() != "all" else "all"
    modes = parse_modes(attackers)
    strategies, _ = parse_strategies(selection)
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
    meta_cols = [c.strip() for c in metadata.split(",") if c.strip()] if metadata else None
    table = read_input(input, [interest, *add, sensitive, group, *(meta_cols or []),
                               *(label or [])])
    options = EvaluationOptions.of(
        models=model_list, test_size=test_size, attackers=modes, selection=selection,
        identities=identities, n_random=n_random, metadata=meta_cols, group=group,
        n_jobs=jobs, preview=preview, **judge)
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
    elif preview:
        notes.print("note: no contact sheet: the features are not pixels", highlight=False)
