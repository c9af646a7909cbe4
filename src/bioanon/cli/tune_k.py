"""``bioanon tune-k``: information loss and re-identification per k, and a recommended k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..errors import BioanonError
from ..io import atomic_path, check_output_dir, mark_output, write_text_atomic
from .common import (
    OUT_FLAGS,
    InputArg,
    JsonOpt,
    LabelOpt,
    SeedOpt,
    app,
    console,
    figure_png,
    notes_console,
    print_json,
    progress_bar,
    read_input,
    user_errors,
)


@app.command("tune-k")
@user_errors
def tune_k_command(
    input: InputArg,
    out: Annotated[Path, typer.Option(*OUT_FLAGS, help="Folder for tune-k.json and the plots.")],
    sensitive: Annotated[str | None, typer.Option(
        "--sensitive", help="Identity column (enables the identity rank-1 attacker and the "
                            "same-identity risk threshold).")] = None,
    attribute: Annotated[list[str] | None, typer.Option(
        "--attribute", help="Attribute whose cluster homogeneity is tracked (repeatable).")]
    = None,
    label: LabelOpt = None,
    clusterer: Annotated[str, typer.Option(
        help="mdav, kmember, knn or hierarchical.")] = "mdav",
    linkage: Annotated[str, typer.Option(help="Linkage of hierarchical clustering.")] = "ward",
    k_min: Annotated[int, typer.Option(help="Smallest k.")] = 2,
    k_max: Annotated[int, typer.Option(help="Largest k.")] = 20,
    dendrogram_max: Annotated[int, typer.Option(
        help="Draw a dendrogram when there are at most this many records (0: never draw "
             "one).")] = 500,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sweep k = k-min..k-max; write tune-k.json, tune-k.png (and dendrogram.png)."""
    from ..anonymize.clustering import CLUSTERERS, LINKAGES
    from ..tuning.k_tuning import dendrogram_figure, tune_k, tuning_figure

    if clusterer not in CLUSTERERS:
        raise BioanonError(f"--clusterer '{clusterer}' is unknown; choose from "
                           f"{', '.join(CLUSTERERS)}")
    if linkage not in LINKAGES:
        raise BioanonError(f"--linkage '{linkage}' is unknown; choose from {', '.join(LINKAGES)}")
    if k_min < 2 or k_max < k_min:
        raise BioanonError(f"need 2 <= --k-min <= --k-max (got {k_min}, {k_max})")
    json_path = out / "tune-k.json"
    check_output_dir(out, [input], ["tune-k.json", "tune-k.png", "dendrogram.png"])
    attrs = list(dict.fromkeys(attribute or []))  # one named twice is tracked once
    table = read_input(input, [sensitive, *attrs, *(label or [])])
    identity = None if sensitive is None else table.label(sensitive).to_numpy()
    for a in attrs:
        table.label(a, min_classes=1)
    with progress_bar("tuning k") as update:
        result = tune_k(table.X, range(k_min, k_max + 1), clusterer=clusterer,
                        linkage=linkage, identity=identity,
                        attributes=table.labels[attrs] if attrs else None,
                        attribute_sets=[tuple(attrs)] if len(attrs) > 1 else (),
                        random_state=0 if seed is None else seed, progress=update)
    summary = result.summary()
    doc = {"input": input.name, **result.to_dict(), "summary": summary}
    figures = [("tune-k.png", figure_png(tuning_figure(result), tight=False))]
    if 0 < dendrogram_max and table.n_records <= dendrogram_max:
        figures.append(("dendrogram.png", figure_png(
            dendrogram_figure(table.X, linkage, dendrogram_max), tight=False)))
    out.mkdir(parents=True, exist_ok=True)  # drawn first: nothing is written half
    write_text_atomic(json_path, json.dumps(doc, indent=2))
    written = [json_path.name]
    for name, png in figures:
        with atomic_path(out / name) as tmp:
            tmp.write_bytes(png)
        written.append(name)
    mark_output(out)
    notes = notes_console(as_json)
    if as_json:
        print_json(summary)
    else:
        tab = Table(title=f"tuning k ({clusterer})")
        for col in ("k", "info loss", "record linkage", "1/k", "at risk", "identity rank-1"):
            tab.add_column(col, justify="right")
        for row in result.rows():
            tab.add_row(*row)
        console.print(tab)
        console.print(f"recommended k = {result.recommended_k} (where the loss curve flattens)")
    for note in result.notes:
        notes.print(f"note: {note}")
    notes.print(f"wrote {', '.join(written)} to {out}")
