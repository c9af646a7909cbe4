"""Loader for FSDD, the Free Spoken Digit Dataset (real voice recordings, CC BY-SA 4.0).

Reads a local copy laid out as ``fsdd/labels.csv`` and ``fsdd/recordings/*.wav`` (see that
folder's README); 3,000 recordings, 6 speakers, 10 digits.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pandas as pd

from ..features.voice import VoiceFeatures, mfcc_feature_names, mfcc_matrix
from ..table import FeatureTable
from .home import dataset_dir

LABELS = ["speaker", "digit", "accent", "take"]


def load_fsdd(root: str | os.PathLike | None = None, n_mfcc: int = 20, n_steps: int = 10,
              limit: int | None = None,
              progress: Callable[[int, int, str], None] | None = None,
              features: str = "mfcc") -> FeatureTable:
    """FSDD as MFCC features (2·n_mfcc·n_steps columns; 400 by default) or speaker embeddings.

    Parameters
    ----------
    root : path, optional
        Data home holding ``fsdd/`` (default: ``$BIOANON_DATA``).
    limit : int, optional
        Read only the first ``limit`` recordings of each speaker × digit (by take), for speed.
    features : {"mfcc", "speaker"}
        ``speaker`` gives the 256-d Resemblyzer embedding (needs the ``voice`` extra).
    """
    folder = dataset_dir("fsdd", root)
    labels = pd.read_csv(folder / "labels.csv")
    if limit is not None:
        labels = labels[labels["take"] < limit]
    labels = labels.sort_values(["speaker", "digit", "take"]).reset_index(drop=True)
    if features != "mfcc":
        table = VoiceFeatures(features, n_mfcc, n_steps).transform(
            [folder / f for f in labels["file"]], labels[LABELS].astype({"digit": str}),
            progress=progress)
        table.meta["source"] = str(folder)
        return table
    X = mfcc_matrix([folder / f for f in labels["file"]], n_mfcc, n_steps, progress)
    return FeatureTable(X, labels[LABELS].astype({"digit": str}),
                        mfcc_feature_names(n_mfcc, n_steps),
                        {"source": str(folder), "features": f"mfcc{n_mfcc}x{n_steps}+delta"})
