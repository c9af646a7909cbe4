"""``bioanon datasets``: what the data home (``$BIOANON_DATA``) holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from .common import app, console, print_json, user_errors


@app.command("datasets")
@user_errors
def datasets_command(
    home: Annotated[Path | None, typer.Option(
        "--home", help="Data home to list (default: $BIOANON_DATA, else the first of "
                         "~/bioanon_data and ../shared/datasets that exists).")]
    = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print JSON (name, title, records, labels, licence, loader).")] = False,
) -> None:
    """List the datasets of the data home: records, label columns and licence of each."""
    from ..datasets.catalog import list_datasets
    from ..datasets.home import data_home

    found = list_datasets(home)
    if as_json:
        print_json({"datasets": found})
        return
    root = data_home(home)
    if not found:
        console.print(f"no datasets in {root} (a dataset is a folder with labels.csv and "
                      "README.md)", highlight=False)
        return
    tab = Table(title=f"datasets in {root}", expand=True)
    tab.add_column("name", no_wrap=True)
    tab.add_column("records", justify="right", no_wrap=True)
    tab.add_column("labels (distinct values)", ratio=1, overflow="fold")
    licences = [d["licence"] or "not stated: read its README" for d in found]
    longest = max((len(w) for lic in licences for w in lic.split()), default=7)
    tab.add_column("licence", overflow="fold", min_width=min(longest, 30),
                   max_width=max(min(longest, 30), 16))  # whole words, never "resear…"
    tab.add_column("loader", overflow="fold")
    for d in found:
        labels = ", ".join(f"{c} {n}" for c, n in d["labels"].items())
        if d.get("segment_labels"):
            labels += (f"\nper segment ({d['segments']:,}): "
                       + ", ".join(f"{c} {n}" for c, n in d["segment_labels"].items()))
        tab.add_row(d["name"], "" if d["records"] is None else f"{d['records']:,}", labels,
                    d["licence"] or "not stated: read its README",
                    (d["loader"] or "bioanon extract").rsplit(".", 1)[-1])
    console.print(tab)  # every text column folds: nothing ends in "…" at 80 columns
