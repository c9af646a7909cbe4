"""See what anonymization did to pixel features: images back from rows, and contact sheets.

Pixel tables (``bioanon extract face --features pixels``) carry
``meta["image_shape"] = [h, w]`` and values in [0, 1]. :func:`to_images` turns rows back into
8-bit grayscale images, :func:`write_images` saves them as PNG files, and
:func:`contact_sheet` renders originals above and released records below, one column per
record, as PNG bytes; :func:`contact_sheet_html` wraps those bytes in a self-contained
``<figure>`` for an HTML report, and :func:`preview_html` does all of it for a pixel table
and its anonymized rows (None for tables that are not pixels).
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import BioanonError, missing_column
from ..io import atomic_path
from ..table import FeatureTable

MAX_COLUMNS = 24


def image_shape(meta: dict, n_features: int, shape: Sequence[int] | None = None
                ) -> tuple[int, int]:
    """The (h, w) of pixel rows: ``shape`` if given, else ``meta["image_shape"]``."""
    hw = shape if shape is not None else meta.get("image_shape")
    if hw is None:
        side = int(round(np.sqrt(n_features)))
        if side * side != n_features:
            raise BioanonError("these features are not pixels (no image_shape in the table and "
                               "not a square count); extract with features=pixels or pass "
                               "shape=(h, w)", parameter=("features", "shape"))
        hw = (side, side)
    h, w = (int(v) for v in hw)
    if h < 1 or w < 1:  # -4x-4 matched 16 features, then failed in NumPy's reshape
        raise BioanonError(f"image shape {h}x{w} needs sides of at least 1 pixel; pass the "
                           "shape the pixels were extracted with, e.g. 64x64")
    if h * w != n_features:
        raise BioanonError(f"image shape {h}x{w} does not match {n_features} features; pass "
                           "the shape the pixels were extracted with")
    return h, w


def to_images(X: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Rows of pixel values in [0, 1] -> (n, h, w) uint8 images (values clipped)."""
    arr = np.asarray(X, dtype=np.float32)
    h, w = (int(v) for v in shape)
    if arr.ndim != 2 or arr.shape[1] != h * w:
        raise BioanonError(f"pixel rows of width {arr.shape[-1]} cannot form {h}x{w} images")
    return (np.clip(arr, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8).reshape(-1, h, w)


def white_level(table: FeatureTable) -> float:
    """The value of white in a pixel table: its meta's ``value_range`` (1 for bioanon's
    pixels), else read from its values: 1 for values up to 1, 255 for 8-bit grey levels, 65535
    for 16-bit ones, the brightest value beyond. Divide the rows by it for :func:`to_images`:
    a table of 0-255 grey levels (another tool's pixels) was drawn white wherever a pixel
    passed 1, a blank sheet written without a word.

    >>> white_level(FeatureTable(np.array([[0.0, 200.0]]), pd.DataFrame(index=range(1))))
    255.0
    """
    given = table.meta.get("value_range")
    if given:
        return float(given)
    top = float(np.nanmax(table.X)) if table.X.size else 1.0
    return next((level for level in (1.0, 255.0, 65535.0) if top <= level), top)


def image_names(n: int) -> list[str]:
    """The file names :func:`write_images` gives ``n`` records by default.

    >>> image_names(2)
    ['record00000.png', 'record00001.png']
    """
    return [f"record{i:05d}.png" for i in range(n)]


def write_images(X: np.ndarray, shape: Sequence[int], folder: str | os.PathLike,
                 names: Sequence[str] | None = None) -> list[Path]:
    """Write each row as a grayscale PNG in ``folder`` (created); returns the paths."""
    from PIL import Image

    imgs = to_images(X, shape)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    names = list(names) if names is not None else image_names(len(imgs))
    if len(names) != len(imgs):
        raise BioanonError(f"{len(names)} names for {len(imgs)} images")
    paths = []
    for img, name in zip(imgs, names, strict=True):  # one file per record
        p = out / f"{Path(str(name)).stem}.png"
        with atomic_path(p) as tmp:
            Image.fromarray(img).save(tmp, format="PNG")
        paths.append(p)
    return paths


def contact_sheet(originals: np.ndarray, released: np.ndarray, shape: Sequence[int],
                  captions: Sequence[str] | None = None, title: str | None = None,
                  scale: float = 1.0) -> bytes:
    """PNG bytes: originals on the top row, released records below, one column per record.

    Parameters
    ----------
    originals, released : (n, h·w) arrays
        Pixel rows in [0, 1], row i of both being the same record.
    shape : (h, w)
    captions : list of str, optional
        One caption per column (e.g. the interest label).
    title : str, optional
    scale : float
        Size of each cell relative to about 1.1 inch.
    """
    from .charts import new_figure

    top, bottom = to_images(originals, shape), to_images(released, shape)
    if len(top) != len(bottom):
        raise BioanonError(f"{len(top)} originals but {len(bottom)} released records; pass "
                           "the same records in the same order")
    n = len(top)
    if n == 0 or n > MAX_COLUMNS:
        raise BioanonError(f"a contact sheet shows 1 to {MAX_COLUMNS} records, got {n}")
    h, w = (int(v) for v in shape)
    cell = 1.1 * scale
    fig = new_figure(figsize=(cell * n * w / h + 0.9, 2 * cell + 0.6))
    axes = fig.subplots(2, n, squeeze=False)
    for j in range(n):
        for i, imgs in enumerate((top, bottom)):
            ax = axes[i, j]
            ax.imshow(imgs[j], cmap="gray", vmin=0, vmax=255, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        if captions is not None:
            axes[0, j].set_title(str(captions[j]), fontsize=8)
    axes[0, 0].set_ylabel("original", fontsize=9)
    axes[1, 0].set_ylabel("released", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(pad=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def contact_sheet_html(png: bytes, caption: str = "Originals (top) and released records "
                       "(bottom), one column per record.") -> str:
    """A self-contained ``<figure>`` embedding the contact sheet, for report.html."""
    data = base64.b64encode(png).decode()
    return (f'<figure class="bioanon-preview"><img alt="contact sheet" '
            f'src="data:image/png;base64,{data}" style="max-width:100%">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def class_names(values: pd.Series) -> np.ndarray:
    """A label column as the text of its classes, an empty value as '' (pandas keeps a
    missing value missing through ``astype(str)``: next to text, sorting the classes was
    Python's "'<' not supported between 'float' and 'str'", an internal error).

    >>> class_names(pd.Series(["a", None, "b"])).tolist(), class_names(pd.Series([1, 2])).tolist()
    (['a', '', 'b'], ['1', '2'])
    """
    text = values.astype(object)
    return np.array(["" if pd.isna(v) else str(v) for v in text], dtype=object)


def pick_columns(labels: pd.DataFrame, n: int, by: str | None = None,
                 random_state: int | None = 0) -> np.ndarray:
    """Positions of ``n`` records to show: one per class of ``by`` first, then at random."""
    df = pd.DataFrame(labels)
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(df))
    if by is None:
        return np.sort(order[:n])
    if by not in df.columns:
        raise missing_column(by, df.columns)
    values = class_names(df[by])[order]
    _, first = np.unique(values, return_index=True)
    chosen = list(order[np.sort(first)][:n])
    taken = set(chosen)
    rest = [i for i in order if i not in taken]
    return np.asarray(chosen + rest[: n - len(chosen)])


def preview_html(original: FeatureTable, released: np.ndarray, n: int = 8,
                 by: str | None = None, random_state: int | None = 0) -> str | None:
    """The contact-sheet ``<figure>`` for a report, or None when the features are not pixels.

    ``released`` holds the anonymized rows of ``original``, same order. A report renderer can
    call this with the evaluation's held-out split and its anonymized version and insert the
    returned snippet as it is.
    """
    if "image_shape" not in original.meta:
        return None
    hw = image_shape(original.meta, original.n_features)
    cols = pick_columns(original.labels, min(n, original.n_records, MAX_COLUMNS), by,
                        random_state)
    captions = class_names(original.labels[by])[cols] if by else None
    white = white_level(original)
    png = contact_sheet(original.X[cols] / white, np.asarray(released)[cols] / white, hw,
                        captions)
    return contact_sheet_html(png)
