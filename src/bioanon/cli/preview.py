"""``bioanon preview``: look at pixel-space anonymization (contact sheet, images back)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from ..errors import BioanonError
from ..io import (
    atomic_path,
    check_output_dir,
    check_output_file,
    mark_output,
    resolved,
    write_text_atomic,
)
from ..report.preview import (
    class_names,
    contact_sheet,
    contact_sheet_html,
    image_names,
    image_shape,
    pick_columns,
    white_level,
    write_images,
)
from ..table import FeatureTable
from .common import OUT_FLAGS, app, console, input_argument, user_errors
from .options import parse_hxw


def aligned(original: FeatureTable, released: FeatureTable) -> None:
    """Refuse tables whose rows are not the same records in the same order."""
    if original.n_records != released.n_records:
        raise BioanonError(f"the original has {original.n_records} records and the release "
                           f"{released.n_records}; pass the release of this very table")
    if original.n_features != released.n_features:
        raise BioanonError(f"the original has {original.n_features} features and the release "
                           f"{released.n_features}; pass the release of this very table")
    for col in set(original.labels.columns) & set(released.labels.columns):
        a = original.labels[col].fillna("").astype(str).to_numpy()
        b = released.labels[col].fillna("").astype(str).to_numpy()
        if not np.array_equal(a, b):
            raise BioanonError(f"label '{col}' differs row by row: the release is shuffled; "
                               "anonymize with --keep-order to preview it")


@app.command()
@user_errors
def preview(
    original: Annotated[Path, input_argument("Pixel table (extract face --features "
                                                  "pixels).")],
    released: Annotated[Path, input_argument("Its release, same order (anonymize "
                                                  "--keep-order).")],
    output: Annotated[Path, typer.Option(*OUT_FLAGS, help="Contact sheet PNG.")],
    n: Annotated[int, typer.Option("--n", help="Records (columns) shown.")] = 8,
    by: Annotated[str | None, typer.Option(
        help="Show one record per class of this label first; it captions the columns.")] =
    None,
    shape: Annotated[str | None, typer.Option(
        help="Image shape HxW when the table does not record it.")] = None,
    images: Annotated[Path | None, typer.Option(
        help="Also write every released record as a PNG into this folder.")] = None,
    html: Annotated[Path | None, typer.Option(
        help="Also write an HTML snippet embedding the sheet (for a report).")] = None,
) -> None:
    """Render originals above and released records below, one column per record."""
    if output.suffix.lower() != ".png":
        raise BioanonError(f"output '{output}' must end in .png")
    if n < 1:
        raise BioanonError(f"--n {n} must be at least 1 (the number of records shown)")
    if html is not None and resolved(html) == resolved(output):
        raise BioanonError(f"--html '{html}' is the contact sheet itself; name another file, "
                           "e.g. sheet.html")
    for out in (output, html):
        if out is not None:
            check_output_file(out, [original, released])
    if images is not None:
        check_output_dir(images, [original, released], parameter="images",
                         what="the released images")
    orig = FeatureTable.read(original)
    rel = FeatureTable.read(released)
    aligned(orig, rel)
    if images is not None:  # a file of the user's at a released image's name (now known)
        check_output_dir(images, [original, released], image_names(rel.n_records),
                         parameter="images", what="the released images")
    hw = image_shape(orig.meta, orig.n_features, parse_hxw(shape, "--shape"))
    cols = pick_columns(orig.labels, min(n, orig.n_records), by)
    captions = class_names(orig.labels[by])[cols] if by else None
    white = white_level(orig)  # 0-255 grey levels of another tool: not clipped to white
    png = contact_sheet(orig.X[cols] / white, rel.X[cols] / white, hw, captions,
                        title=f"{original.name} → {released.name}")
    with atomic_path(output) as tmp:
        tmp.write_bytes(png)
    console.print(f"wrote {output} ({len(cols)} records)")
    if html is not None:
        write_text_atomic(html, contact_sheet_html(png))
        console.print(f"wrote {html}")
    if images is not None:
        paths = write_images(rel.X / white, hw, images)
        mark_output(images)
        console.print(f"wrote {len(paths)} released images to {images}/")
