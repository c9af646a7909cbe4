"""Loader for SP-SW-HAR (real phone and watch inertial streams, CC BY 4.0).

Each stream is cut into windows of ``window`` rows with ``hop`` rows between starts (about
100 rows per second); a window never straddles two streams and takes the majority activity
label of its rows (from ``segments.csv``). Reads a local copy laid out as
``sp_sw_har/labels.csv``, ``sp_sw_har/segments.csv`` and ``sp_sw_har/data/sNN/*.csv`` (see that
folder's README). The windowing itself lives in :mod:`bioanon.features.motion`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import pandas as pd

from ..errors import BioanonError
from ..features.motion import CHANNELS, MotionFeatures, window_features, window_stream
from ..table import FeatureTable
from .home import dataset_dir

SUBJECT_LABELS = ["subject", "execution", "device", "gender", "age", "height_cm", "weight_kg",
                  "dominant_hand"]
DEVICES = ("smartphone", "smartwatch")

__all__ = ["CHANNELS", "SUBJECT_LABELS", "load_sp_sw_har", "window_features", "window_stream"]


def load_sp_sw_har(root: str | os.PathLike | None = None, device: str = "smartphone",
                   window: int = 200, hop: int = 100, features: str = "raw", step: int = 4,
                   subjects: list[str] | None = None,
                   progress: Callable[[int, int, str], None] | None = None,
                   channels: Sequence[str] | None = None, rate_hz: float | None = None,
                   gravity: str = "keep") -> FeatureTable:
    """SP-SW-HAR as windows of the inertial streams.

    Parameters
    ----------
    root : path, optional
        Data home holding ``sp_sw_har/`` (default: ``$BIOANON_DATA``).
    device : {"smartphone", "smartwatch", "both"}
        Which device's streams; ``both`` keeps each window's ``device`` label.
    window, hop : int
        Window length and hop in rows (about 100 rows per second), or in grid points when
        ``rate_hz`` is set.
    features : {"raw", "stats"}
        ``raw`` keeps every ``step``-th row of the channels (300 features by default);
        ``stats`` gives mean, std, min, max and 10/50/90th percentiles of the channels plus the
        acceleration magnitude (49 features with the default channels).
    subjects : list of str, optional
        Keep only these subjects (e.g. ``["s01", "s02"]``).
    channels : list of str, optional
        A subset of ``x_acc, y_acc, z_acc, x_gyro, y_gyro, z_gyro`` (default: all six).
    rate_hz : float, optional
        Resample each stream onto a uniform time grid first (the raw rate is irregular).
    gravity : {"keep", "remove"}
        ``remove`` subtracts a 0.3 Hz low-pass estimate from the acceleration channels (user
        acceleration, as MotionSense's ``userAcceleration``).

    Returns
    -------
    FeatureTable with labels ``activity``, ``subject``, ``gender``, ``age``, ...
    """
    if device not in (*DEVICES, "both"):
        raise BioanonError(f"device '{device}' is unknown; use 'smartphone', 'smartwatch' or "
                           "'both'")
    if window < 2 or hop < 1:
        raise BioanonError("window must be at least 2 rows and hop at least 1")
    folder = dataset_dir("sp_sw_har", root)
    streams = pd.read_csv(folder / "labels.csv")
    if device != "both":
        streams = streams[streams["device"] == device]
    if subjects is not None:
        streams = streams[streams["subject"].isin(subjects)]
    if streams.empty:
        raise BioanonError("no streams match the requested device and subjects")
    segments = pd.read_csv(folder / "segments.csv", usecols=["file", "start_row", "end_row",
                                                             "activity"])
    segments = segments[segments["file"].isin(streams["file"])]
    extractor = MotionFeatures(window=window, hop=hop, features=features, step=step,
                               channels=list(channels or CHANNELS), rate_hz=rate_hz,
                               gravity=gravity, label_column="activity")
    table = extractor.transform({f: folder / f for f in streams["file"]}, segments,
                                streams[["file", *SUBJECT_LABELS]], progress=progress)
    table.labels = table.labels[["activity", *SUBJECT_LABELS]]
    table.meta.update({"source": str(folder), "device": device})
    return table
