"""``bioanon tune``: sweep a method's parameters, keep the Pareto front, recommend a setting."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..io import atomic_path, check_output_dir, mark_output, write_text_atomic
from ..metrics.intervals import rate_words
from . import common as opt
from .common import (
    MethodChoice,
    app,
    cli_message,
    console,
    method_options,
    parse_weighted,
    progress_bar,
    read_input,
    user_errors,
)
from .options import AttackersOpt, ConsumerPanelOpt


@app.command("tune")
@user_errors
@method_options
def tune_command(
    input: opt.InputArg,
    sensitive: opt.SensitiveOpt,
    out: Annotated[Path, typer.Option(*opt.OUT_FLAGS, help="Folder for tune.json and tune.png.")],
    grid: Annotated[list[str], typer.Option(
        "--grid", help="Parameter values to try, KEY=V1,V2 (the method's parameter names, "
                       "e.g. g=16,32,64 or r_p=0.01,0.1); repeatable.")],
    interest: opt.InterestOpt = None,
    additional: opt.AddOpt = None,
    label: opt.LabelOpt = None,
    target_advantage: Annotated[float, typer.Option(
        help="Privacy target (the verdict's rule): the upper end of the 95% interval of the "
             "worst attack's advantage over max(chance, control) must be at most this.")]
    = 0.05,
    models: Annotated[str, typer.Option(
        help="Attack recognizers, comma-separated (forest, linear_svm, rbf_svm, knn, mlp, "
             "logreg, pca_svm, hgb).")] = "forest,linear_svm,knn",
    attackers: AttackersOpt = "all",
    group: Annotated[str | None, typer.Option(
        help="Keep each value of this column on one side of the split (e.g. an execution "
             "for overlapping windows).")] = None,
    as_json: opt.JsonOpt = False,
    consumer_panel: ConsumerPanelOpt = "final",
    *,
    choice: MethodChoice,
) -> None:
    """Sweep a method over a grid; judge each setting by its worst-case attack and utility."""
    from ..errors import BioanonError
    from ..evaluation.options import check_option
    from ..tuning.grid_search import parse_grid, sweep, sweep_figure

    check_option("consumer_panel", consumer_panel)  # before the table is read

    if interest is None:
        raise BioanonError("tune needs --interest (the attribute whose utility is measured)")
    opt.check_grid(grid, choice)
    from ..attack import parse_models, parse_modes

    if models.strip() != "all":
        parse_models(models)
    parse_modes(attackers)
    json_path = out / "tune.json"
    check_output_dir(out, [input], ["tune.json", "tune.png"])
    add = parse_weighted(additional, 1.0, "--additional")
    eval_seed = 0 if choice.seed is None else choice.seed
    from ..evaluation.seeds import derive_seed

    # the anonymizer draws from a seed derived one way from the evaluation seed (not written)
    # built with each swept parameter at its first value, so a parameter the method needs
    # (noise's sigma) may be given by the grid alone; the sweep sets every point's values
    first = {k.strip(): v.split(",")[0].strip() for k, _, v in
             (item.partition("=") for item in grid or [])}
    anon = replace(choice, params={**choice.params, **first}).build(
        interest, sensitive, list(add), seed=derive_seed(eval_seed, "anonymizer"))
    method = choice.method
    points = parse_grid(grid, anon if hasattr(anon, "parse_param") else type(anon))
    table = read_input(input, [interest, *add, sensitive, group, *(label or [])])
    choice.check_on(anon, table)  # a parameter the table leaves idle: refused
    model_list = [m.strip() for m in models.split(",") if m.strip()]
    with progress_bar("sweeping") as update:
        result = sweep(table, anon, points, interest, sensitive, additional=add,
                       target_advantage=target_advantage, progress=update,
                       models=model_list, attackers=attackers, random_state=eval_seed,
                       group=group, consumer_panel=consumer_panel)
    summary = result.summary(method)
    png = opt.figure_png(sweep_figure(result, sensitive))  # drawn before anything is written
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(json_path, json.dumps({"input": input.name, "method": method,
                                             **result.to_dict(), "summary": summary},
                                            indent=2, default=str))
    with atomic_path(out / "tune.png") as tmp:
        tmp.write_bytes(png)
    mark_output(out)
    notes = opt.notes_console(as_json)
    if as_json:
        opt.print_json(summary)
    else:
        print_table(summary)
    for s in summary["skipped"]:
        reason = cli_message(BioanonError(s["reason"], parameter=s.get("parameter")))
        notes.print(f"skipped {s['params']}: {reason}", highlight=False)
    if summary["confirmation"] is not None:
        notes.print(f"confirmation on a fresh split and seed: "
                    f"{summary['confirmation']['sentence']}", highlight=False, markup=False)
    if summary["recommended"] is None:
        swept = ", ".join(points) or "parameters"
        notes.print(f"no setting keeps the worst-case advantage within {target_advantage:g}; "
                    f"try {method}'s {swept} further toward privacy, or another method "
                    "(bioanon release searches every method)", highlight=False)
    notes.print(f"wrote {json_path.name} and tune.png to {out}")


def print_table(summary: dict) -> None:
    """The sweep's summary as a terminal table."""
    tab = Table(title=f"{summary['method']} sweep (chance {summary['chance']:.3f}, baseline "
                      f"{summary['baseline']:.3f})")
    for col in ("setting", "CAS", "worst case", "attacker", "advantage", ""):
        tab.add_column(col, justify="left" if col in ("setting", "attacker") else "right",
                       overflow="fold")
    for row in summary["settings"]:
        mark = "recommended" if row["recommended"] else "front" if row["front"] else ""
        tab.add_row(", ".join(f"{k}={v}" for k, v in row["params"].items()),
                    rate_words(row["cas"], row.get("cas_ci")),
                    rate_words(row["worst_case"], row.get("worst_case_ci")),
                    row["worst_attacker"],
                    f"{row['advantage']:+.3f} [{row['advantage_ci'][0]:+.3f}, "
                    f"{row['advantage_ci'][1]:+.3f}]", mark)
    tab.caption = "each figure with its 95% interval"
    if summary.get("cas_by"):
        tab.caption += (f"; CAS: {summary['cas_by']}, trained on the release, scored on "
                        "clear")
    console.print(tab)
