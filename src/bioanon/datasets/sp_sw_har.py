"""Loader for SP-SW-HAR (real phone and watch inertial streams, CC BY 4.0).

Each stream is cut into windows of ``window`` rows with ``hop`` rows between starts (about
100 rows per second); a window never straddles two streams and takes the majority activity
label of its rows. Reads a local copy laid out as ``sp_sw_har/labels.csv`` and
``sp_sw_har/data/sNN/*.csv`` (see that folder's README).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable
from .home import dataset_dir

CHANNELS = ["x_acc", "y_acc", "z_acc", "x_gyro", "y_gyro", "z_gyro"]
SUBJECT_LABELS = ["subject", "execution", "device", "gender", "age", "height_cm", "weight_kg",
                  "dominant_hand"]


def window_stream(values: np.ndarray, labels: np.ndarray, window: int,
                  hop: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows of one stream: (n_windows, window, channels) and their majority labels."""
    if values.shape[0] < window:
        return np.empty((0, window, values.shape[1]), values.dtype), np.empty(0, labels.dtype)
    wins = np.lib.stride_tricks.sliding_window_view(values, window, axis=0)[::hop]
    wins = np.moveaxis(wins, -1, 1)  # (n_windows, window, channels)
    classes, codes = np.unique(labels, return_inverse=True)
    onehot = np.eye(classes.size, dtype=np.int32)[codes]
    counts = np.lib.stride_tricks.sliding_window_view(onehot, window, axis=0)[::hop].sum(-1)
    return wins, classes[counts.argmax(axis=1)]


def window_features(wins: np.ndarray, features: str, step: int) -> np.ndarray:
    """``raw``: every ``step``-th row of each channel, flattened; ``stats``: per-channel stats."""
    if features == "raw":
        return wins[:, ::step, :].reshape(wins.shape[0], -1)
    if features == "stats":
        mag = np.linalg.norm(wins[:, :, :3], axis=2, keepdims=True)
        w = np.concatenate([wins, mag], axis=2)
        q = np.percentile(w, [10, 50, 90], axis=1)
        return np.concatenate([w.mean(1), w.std(1), w.min(1), w.max(1), *q], axis=1)
    raise BioanonError(f"unknown motion features '{features}'; use 'raw' or 'stats'")


def load_sp_sw_har(root: str | os.PathLike | None = None, device: str = "smartphone",
                   window: int = 200, hop: int = 100, features: str = "raw", step: int = 4,
                   subjects: list[str] | None = None,
                   progress: Callable[[int, int, str], None] | None = None) -> FeatureTable:
    """SP-SW-HAR as windows of the inertial streams.

    Parameters
    ----------
    root : path, optional
        Data home holding ``sp_sw_har/`` (default: ``$BIOANON_DATA``).
    device : {"smartphone", "smartwatch"}
    window, hop : int
        Window length and hop in rows (about 100 rows per second).
    features : {"raw", "stats"}
        ``raw`` keeps every ``step``-th row of the 6 channels (300 features by default);
        ``stats`` gives mean, std, min, max and 10/50/90th percentiles of 6 channels plus the
        acceleration magnitude (49 features).
    subjects : list of str, optional
        Keep only these subjects (e.g. ``["s01", "s02"]``).

    Returns
    -------
    FeatureTable with labels ``activity``, ``subject``, ``gender``, ``age``, ...
    """
    if device not in ("smartphone", "smartwatch"):
        raise BioanonError(f"device '{device}' is unknown; use 'smartphone' or 'smartwatch'")
    if window < 2 or hop < 1:
        raise BioanonError("window must be at least 2 rows and hop at least 1")
    folder = dataset_dir("sp_sw_har", root)
    streams = pd.read_csv(folder / "labels.csv")
    streams = streams[streams["device"] == device]
    if subjects is not None:
        streams = streams[streams["subject"].isin(subjects)]
    if streams.empty:
        raise BioanonError("no streams match the requested device and subjects")
    X_parts, rows = [], []
    for i, (_, s) in enumerate(streams.iterrows()):  # one file per stream
        df = pd.read_csv(folder / s["file"])
        wins, acts = window_stream(df[CHANNELS].to_numpy(np.float32),
                                   df["label"].to_numpy(), window, hop)
        X_parts.append(window_features(wins, features, step))
        meta = {c: s[c] for c in SUBJECT_LABELS}
        rows.extend({"activity": a, **meta} for a in acts)
        if progress is not None:
            progress(i, len(streams), str(s["file"]))
    X = np.concatenate(X_parts).astype(np.float32)
    names = ([f"{c}_t{t}" for t in range(0, window, step) for c in CHANNELS]
             if features == "raw" else
             [f"{c}_{stat}" for stat in ("mean", "std", "min", "max", "p10", "p50", "p90")
              for c in [*CHANNELS, "acc_mag"]])
    return FeatureTable(X, pd.DataFrame(rows), names,
                        {"source": str(folder), "features": f"{features} windows",
                         "window": window, "hop": hop, "device": device})
