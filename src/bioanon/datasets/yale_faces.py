"""Loader for the Yale Face Database (164 grayscale photos of 15 people; research use only).

Reads a local copy laid out as ``yale_faces/labels.csv`` and ``yale_faces/images/*.png`` (see
that folder's README). Nine pairs of photos are byte-identical in the source; by default the
later photo of each pair (within the chosen subset) is dropped so that no record has a twin
on the other side of a split.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable
from .folders import load_image_folder
from .home import dataset_dir

LABELS = ["subject", "condition", "condition_group", "expression"]
SUBSETS = ("expression", "eyewear", "lighting")


def deduplicate(labels: pd.DataFrame) -> pd.DataFrame:
    """Drop every photo whose byte-identical twin (``identical_to``) appears earlier."""
    seen: set[str] = set()
    keep = []
    for f, twins in zip(labels["file"], labels["identical_to"].fillna(""), strict=True):
        names = {t.strip() for t in str(twins).split(";") if t.strip()}
        names |= {f"images/{t}" for t in names}
        keep.append(not (names & seen))
        seen.add(f)
    return labels[keep].reset_index(drop=True)


def load_yale_faces(root: str | os.PathLike | None = None, features: str = "pixels",
                    subset: str | None = None, subjects: list[str] | None = None,
                    drop_duplicates: bool = True,
                    progress: Callable[[int, int, str], None] | None = None,
                    **options: Any) -> FeatureTable:
    """Yale faces as face features.

    Parameters
    ----------
    root : path, optional
        Data home holding ``yale_faces/`` (default: ``$BIOANON_DATA``).
    features : {"pixels", "eigen", "landmarks", "embedding"}
        See :mod:`bioanon.features.image` (needs the ``face`` extra).
    subset : {"expression", "eyewear", "lighting"}, optional
        Keep one condition group, e.g. ``expression`` (90 photos, 6 expressions).
    subjects : list of str, optional
        Keep only these subjects (``subject01`` ...).
    drop_duplicates : bool
        Drop the later photo of each byte-identical pair.
    **options
        Passed to :class:`bioanon.features.image.FaceFeatures` (size, n_components, ...).

    Returns
    -------
    FeatureTable with labels ``subject``, ``condition``, ``condition_group``, ``expression``
    (``none`` outside the expression group).
    """
    folder = dataset_dir("yale_faces", root)
    labels = pd.read_csv(folder / "labels.csv", keep_default_na=False, na_values=[""])
    if subset is not None:
        if subset not in SUBSETS:
            raise BioanonError(f"subset '{subset}' is unknown; use one of {', '.join(SUBSETS)}")
        labels = labels[labels["condition_group"] == subset]
    if subjects is not None:
        labels = labels[labels["subject"].isin(subjects)]
    if labels.empty:
        raise BioanonError("no photo matches the requested subset and subjects")
    if drop_duplicates:
        labels = deduplicate(labels.reset_index(drop=True))
    labels = labels.assign(expression=labels["expression"].fillna("none"))
    table = load_image_folder(folder, labels[["file", *LABELS]], features=features,
                              progress=progress, **options)
    table.meta["licence"] = "Yale Face Database: research use only, not for redistribution"
    return table
