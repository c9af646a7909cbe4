"""Motion features: fixed-length windows over inertial sensor streams.

A stream is one sensor recording (a CSV of channels such as ``x_acc, ..., z_gyro`` plus a
timestamp). Its rows are labelled by a *segment table* (``file, start_row, end_row`` and label
columns, end exclusive). Each stream is cut on its own into windows of ``window`` samples with
``hop`` samples between starts, so **a window never straddles two streams**; a window takes the
majority segment label of its samples, and windows whose majority is unlabelled are dropped.

Options: channel selection; resampling onto a uniform time grid (``rate_hz``, from the
timestamps); removing gravity from the acceleration channels (a 0.3 Hz low-pass estimate is
subtracted, giving user acceleration as MotionSense records it). Features: ``raw`` (every
``step``-th sample of each channel, flattened, as the paper used for MotionSense) or ``stats``
(mean, std, min, max, 10/50/90th percentiles per channel, plus the magnitude of each x/y/z
acceleration triple).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from ..errors import BioanonError, missing_column
from ..table import FeatureTable
from . import nonfinite_reason

MOTION_FEATURES = ("raw", "stats")
STATS = ("mean", "std", "min", "max", "p10", "p50", "p90")
SEGMENT_COLUMNS = ("file", "start_row", "end_row")
Progress = Callable[[int, int, str], None]
UNLABELLED = ""


def window_stream(values: np.ndarray, labels: np.ndarray, window: int,
                  hop: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows of one stream: (n_windows, window, channels) and their majority labels."""
    labels = np.asarray(labels)
    if values.shape[0] < window:
        return np.empty((0, window, values.shape[1]), values.dtype), np.empty(0, labels.dtype)
    wins = np.lib.stride_tricks.sliding_window_view(values, window, axis=0)[::hop]
    wins = np.moveaxis(wins, -1, 1)  # (n_windows, window, channels)
    classes, codes = np.unique(labels, return_inverse=True)
    onehot = np.eye(classes.size, dtype=np.int32)[codes.ravel()]
    counts = np.lib.stride_tricks.sliding_window_view(onehot, window, axis=0)[::hop].sum(-1)
    return wins, classes[counts.argmax(axis=1)]


def acc_triples(channels: Sequence[str]) -> list[tuple[str, list[int]]]:
    """``(name, [ix, iy, iz])`` for each ``x_S, y_S, z_S`` channel triple whose S names acc."""
    pos = {c: i for i, c in enumerate(channels)}
    out = []
    for c in channels:
        if c.startswith("x_") and "acc" in c[2:]:
            s = c[2:]
            if f"y_{s}" in pos and f"z_{s}" in pos:
                out.append((f"{s}_mag", [pos[c], pos[f"y_{s}"], pos[f"z_{s}"]]))
    return out


def window_features(wins: np.ndarray, features: str, step: int,
                    channels: Sequence[str] | None = None) -> np.ndarray:
    """``raw``: every ``step``-th row of each channel, flattened; ``stats``: per-channel stats.

    ``channels`` names the last axis (default: the six SP-SW-HAR channels when there are six);
    ``stats`` adds the magnitude of each x/y/z acceleration triple.
    """
    if features == "raw":
        return wins[:, ::step, :].reshape(wins.shape[0], -1)
    if features == "stats":
        chans = list(channels) if channels is not None else _default_names(wins.shape[2])
        mags = [np.linalg.norm(wins[:, :, idx], axis=2, keepdims=True)
                for _, idx in acc_triples(chans)]
        w = np.concatenate([wins, *mags], axis=2)
        q = np.percentile(w, [10, 50, 90], axis=1)
        return np.concatenate([w.mean(1), w.std(1), w.min(1), w.max(1), *q], axis=1)
    raise BioanonError(f"unknown motion features '{features}'; use 'raw' or 'stats'")


#: channel names of a phone's 6-axis inertial stream (SP-SW-HAR's column order)
CHANNELS = ["x_acc", "y_acc", "z_acc", "x_gyro", "y_gyro", "z_gyro"]


def _default_names(n: int) -> list[str]:
    return list(CHANNELS) if n == len(CHANNELS) else [f"ch{j}" for j in range(n)]


def motion_feature_names(features: str, channels: Sequence[str], window: int,
                         step: int) -> list[str]:
    """Column names matching :func:`window_features`."""
    if features == "raw":
        return [f"{c}_t{t}" for t in range(0, window, step) for c in channels]
    cols = [*channels, *(name for name, _ in acc_triples(channels))]
    return [f"{c}_{stat}" for stat in STATS for c in cols]


#: the highest resampling rate (Hz): the uniform grid of a stream has duration × rate points
MAX_RATE_HZ = 100_000.0
#: the longest window in samples (a second at :data:`MAX_RATE_HZ`): a typo such as
#: window=99999999999 was NumPy's "Maximum allowed dimension exceeded", an internal error
MAX_WINDOW = 100_000
#: the most points of one stream's uniform grid (time span × rate): times in micro- or
#: nanoseconds read as milliseconds made billions of points (a hang, then out of memory)
MAX_GRID_POINTS = 10_000_000
#: the cutoff (Hz) of the low-pass estimate of gravity
GRAVITY_CUTOFF_HZ = 0.3
#: the largest magnitude a float32 holds
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def resample_uniform(values: np.ndarray, time_ms: np.ndarray, rate_hz: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Linear interpolation onto a uniform grid; returns (values, nearest source row)."""
    t = np.asarray(time_ms, dtype=np.float64)
    t = t - t[0]
    grid = np.arange(0.0, t[-1] + 1e-9, 1000.0 / rate_hz)
    out = np.stack([np.interp(grid, t, values[:, j]) for j in range(values.shape[1])], axis=1)
    right = np.clip(np.searchsorted(t, grid), 0, len(t) - 1)
    left = np.clip(right - 1, 0, len(t) - 1)
    nearest = np.where(np.abs(t[left] - grid) <= np.abs(t[right] - grid), left, right)
    return out.astype(values.dtype), nearest


def remove_gravity(values: np.ndarray, channels: Sequence[str], rate_hz: float,
                   cutoff_hz: float = GRAVITY_CUTOFF_HZ) -> np.ndarray:
    """Subtract a low-pass (gravity) estimate from every channel whose name contains 'acc'.

    A stream sampled at no more than twice the cutoff has no band below it to filter: refused
    (SciPy's error about "critical frequencies" was an internal error).
    """
    from scipy.signal import butter, sosfiltfilt

    idx = [j for j, c in enumerate(channels) if "acc" in c]
    if not idx or values.shape[0] < 16:
        return values
    if not rate_hz > 2 * cutoff_hz:
        raise BioanonError(
            f"the stream samples at {rate_hz:.3g} Hz (from its time column, read in "
            f"milliseconds): too slowly to remove gravity, whose {cutoff_hz:g} Hz low-pass "
            f"needs more than {2 * cutoff_hz:g} Hz; keep gravity, or convert the times to "
            "milliseconds if they are in other units")
    sos = butter(2, cutoff_hz, btype="low", fs=rate_hz, output="sos")
    out = values.copy()
    out[:, idx] -= sosfiltfilt(sos, values[:, idx], axis=0,
                               padlen=min(values.shape[0] - 1, 50)).astype(values.dtype)
    return out


def row_labels(n_rows: int, segments: pd.DataFrame, column: str) -> np.ndarray:
    """Per-row label of one stream from its segments (rows outside any segment: '')."""
    out = np.full(n_rows, UNLABELLED, dtype=object)
    for s, e, v in zip(segments["start_row"], segments["end_row"], segments[column],
                       strict=True):  # one slice per segment
        out[int(s):int(e)] = str(v)
    return out.astype(str)


def check_segments(segments: pd.DataFrame, label_column: str) -> None:
    """Raise a one-line error when the segment table lacks a needed column, or a segment is
    not rows [start_row, end_row) with a label, or two segments give a row two labels.

    An empty or text row number was an internal error; a fractional one (seconds, not rows)
    was cut to a row; a reversed segment labelled nothing; overlapping segments of two labels
    gave the rows the later one's, unsaid; an empty label labelled rows 'nan'.

    >>> seg = pd.DataFrame({"file": ["a", "a"], "start_row": [0, 50], "end_row": [100, 200],
    ...                     "activity": ["walk", "run"]})
    >>> check_segments(seg, "activity")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: segments 1 and 2 of 'a' overlap (rows 50 to 100) with \
different labels ('walk' and 'run'); a row has one label: correct the segment table
    """
    for c in (*SEGMENT_COLUMNS, label_column):
        if c not in segments.columns:
            raise missing_column(c, segments.columns, "segment table column")
    rows = segments[["start_row", "end_row"]].apply(pd.to_numeric, errors="coerce")
    start, end = rows["start_row"].to_numpy(np.float64), rows["end_row"].to_numpy(np.float64)
    label = segments[label_column]
    for i in range(len(segments)):
        where = f"segment {i + 1} ('{segments['file'].iloc[i]}')"
        if not (np.isfinite(start[i]) and np.isfinite(end[i]) and start[i] % 1 == 0
                and end[i] % 1 == 0):
            raise BioanonError(f"{where} has start_row {_cell(segments['start_row'].iloc[i])} "
                               f"and end_row {_cell(segments['end_row'].iloc[i])}; give whole row "
                               "numbers of the stream (from 0, the end row excluded), not "
                               "times")
        if not 0 <= start[i] < end[i]:
            raise BioanonError(f"{where} runs from row {start[i]:.0f} to row {end[i]:.0f}; give "
                               "0 <= start_row < end_row")
        if pd.isna(label.iloc[i]) or not str(label.iloc[i]).strip():
            raise BioanonError(f"{where} has no '{label_column}' value; fill it in or drop the "
                               "segment")
    _refuse_overlaps(segments, start, end, label)


def _cell(value: Any) -> str:
    """A segment table's cell as its CSV showed it ('empty' for a missing one)."""
    if pd.isna(value):
        return "empty"
    return repr(value.item() if isinstance(value, np.generic) else value)


def _refuse_overlaps(segments: pd.DataFrame, start: np.ndarray, end: np.ndarray,
                     label: pd.Series) -> None:
    """Refuse two segments of one stream that overlap with different labels."""
    for name, idx in segments.groupby("file", sort=False).indices.items():
        order = idx[np.argsort(start[idx], kind="stable")]
        for a, b in zip(order[:-1], order[1:], strict=True):
            if start[b] < end[a] and str(label.iloc[a]) != str(label.iloc[b]):
                a, b = sorted((int(a), int(b)))
                raise BioanonError(
                    f"segments {a + 1} and {b + 1} of '{name}' overlap (rows "
                    f"{max(start[a], start[b]):.0f} to {min(end[a], end[b]):.0f}) with different "
                    f"labels ('{label.iloc[a]}' and '{label.iloc[b]}'); a row has one label: "
                    "correct the segment table")


class MotionFeatures(TransformerMixin, BaseEstimator):
    """Sensor streams in, FeatureTable of windows out.

    Parameters
    ----------
    window, hop : int
        Window length and hop in samples (rows, or grid points when ``rate_hz`` is set).
    features : {"raw", "stats"}
    step : int
        Keep every ``step``-th sample in ``raw`` features.
    channels : list of str, optional
        Columns of the stream used as channels (default: every numeric column except the
        time column and label columns).
    rate_hz : float, optional
        Resample each stream onto a uniform grid at this rate, using ``time_column`` (ms).
    gravity : {"keep", "remove"}
        ``remove`` turns acceleration channels into user acceleration.
    label_column : str
        Segment-table column giving the window label (majority over the window).
    time_column : str

    Examples
    --------
    >>> mf = MotionFeatures(window=200, hop=100, features="stats")   # doctest: +SKIP
    >>> table = mf.transform({"a.csv": df_a, "b.csv": df_b}, segments)  # doctest: +SKIP
    """

    def __init__(self, window: int = 200, hop: int = 100, features: str = "raw", step: int = 4,
                 channels: Sequence[str] | None = None, rate_hz: float | None = None,
                 gravity: str = "keep", label_column: str = "activity",
                 time_column: str = "timestamp"):
        self.window = window
        self.hop = hop
        self.features = features
        self.step = step
        self.channels = channels
        self.rate_hz = rate_hz
        self.gravity = gravity
        self.label_column = label_column
        self.time_column = time_column

    def _check(self) -> None:
        if self.features not in MOTION_FEATURES:
            raise BioanonError(f"unknown motion features '{self.features}'; use 'raw' or "
                               "'stats'")
        if self.window < 2 or self.hop < 1 or self.step < 1:
            raise BioanonError("window must be at least 2 samples, hop and step at least 1")
        if self.window > MAX_WINDOW:  # its feature names alone filled the memory
            raise BioanonError(f"window={self.window} is out of range; use at most "
                               f"{MAX_WINDOW:,} samples (a window is a few seconds of a "
                               "stream: 200 samples at 50 Hz)", parameter="window")
        if self.features == "raw" and self.step >= self.window:  # a window of one sample a
            # channel, written as raw features without a word
            raise BioanonError(f"step={self.step} keeps every {self.step}-th sample of a window "
                               f"of {self.window}: only its first sample of each channel "
                               "would be left; use a step below the window (e.g. 4)",
                               parameter="step")
        named = list(self.channels or [])
        twice = sorted({c for c in named if named.count(c) > 1})
        if twice:
            raise BioanonError(f"the channels list names {twice[0]!r} more than once ({named}): "
                               "each would be a feature twice; name every channel once")
        if self.gravity not in ("keep", "remove"):
            raise BioanonError(f"gravity='{self.gravity}' is unknown; use 'keep' or 'remove'")
        if self.rate_hz is not None and not 0 < self.rate_hz <= MAX_RATE_HZ:
            raise BioanonError(f"rate_hz={self.rate_hz:g} is out of range; use a rate above 0 "
                               f"and at most {MAX_RATE_HZ:g} Hz (motion sensors sample tens to "
                               "thousands of times a second; e.g. 50)", parameter="rate_hz")

    def fit(self, X: Any = None, y: Any = None) -> MotionFeatures:
        """Nothing to learn; checks the parameters."""
        self._check()
        return self

    def _channels(self, df: pd.DataFrame) -> list[str]:
        if self.channels is not None:
            for c in self.channels:
                if c not in df.columns:
                    raise missing_column(c, df.columns, "sensor channel")
                _refuse_text_cells(df[c], c)
                if not pd.api.types.is_numeric_dtype(df[c]):
                    raise BioanonError(f"sensor channel '{c}' holds text, not numbers (e.g. "
                                       f"{df[c].iloc[0]!r}); name numeric channels")
            return list(self.channels)
        cols = [c for c in df.columns if c not in (self.time_column, "label")]
        for c in cols:
            _refuse_text_cells(df[c], c)
        return [c for c in cols if pd.api.types.is_numeric_dtype(df[c])]

    def stream_windows(self, df: pd.DataFrame, segments: pd.DataFrame
                       ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Features and majority labels of one stream's windows."""
        chans = self._channels(df)
        if not chans:
            raise BioanonError(_no_channels(df))
        values = sensor_values(df, chans)
        labels = row_labels(len(df), segments, self.label_column)
        rate = self.rate_hz
        if rate is not None or self.gravity == "remove":
            t = stream_times(df, self.time_column)
            if rate is not None:
                check_grid(t, rate, self.time_column, self.window)
                values, nearest = resample_uniform(values, t, rate)
                labels = labels[nearest]
            else:
                rate = 1000.0 / max(float(np.median(np.diff(t))), 1e-3)
            if self.gravity == "remove":
                values = remove_gravity(values, chans, rate)
        if not np.isfinite(values).all():
            raise BioanonError("the stream has NaN or inf sensor values")
        wins, acts = window_stream(values, labels, self.window, self.hop)
        keep = acts != UNLABELLED
        if not keep.any():
            raise BioanonError(f"no labelled window of {self.window} samples in this stream of "
                               f"{len(df)} rows; check its segments and window={self.window}",
                               parameter="window")
        return window_features(wins[keep], self.features, self.step, chans), acts[keep], chans

    def transform(self, X: Mapping[str, str | os.PathLike | pd.DataFrame],
                  segments: pd.DataFrame, stream_labels: pd.DataFrame | None = None,
                  progress: Progress | None = None) -> FeatureTable:
        """Window every stream of ``X`` (file name -> CSV path or DataFrame).

        ``segments`` labels the rows of each stream (by its ``file``); the window label comes
        from ``label_column`` and every other segment column that is constant over a stream,
        plus the columns of ``stream_labels`` (one row per ``file``), labels all its windows.
        Unreadable streams are left out and listed in ``meta["skipped"]``.
        """
        self._check()
        check_segments(segments, self.label_column)
        per_stream = self._stream_label_table(segments, stream_labels)
        done: list[tuple[str, np.ndarray, np.ndarray, list[str]]] = []
        skipped: list[dict[str, str]] = []
        files = list(X)
        for i, name in enumerate(files):  # one file per stream; windowing is vectorised
            src = X[name]
            df: pd.DataFrame | None = None
            try:
                df = src if isinstance(src, pd.DataFrame) else _read_stream(src)
                seg = segments[segments["file"] == name]
                feats, acts, ch = self.stream_windows(df, seg)
                reason = nonfinite_reason(feats)
                if reason:
                    raise BioanonError(f"stream has {reason}")
            except BioanonError as exc:
                why = short_row(src, df) if isinstance(exc, MissingValues) else None
                skipped.append({"file": str(name), "reason": why or str(exc)})
                continue
            done.append((str(name), feats, acts, ch))
            if progress is not None:
                progress(i + 1, len(files), os.path.basename(str(name)))
        chans = _most_common_channels([ch for *_, ch in done])
        parts, rows = [], []
        for name, feats, acts, ch in done:
            if ch != chans:
                skipped.append({"file": name, "reason": f"channels {ch} differ from the "
                                                        f"channels most streams have {chans}"})
                continue
            parts.append(feats)
            meta = per_stream.get(name, {})
            rows.extend({self.label_column: a, **meta} for a in acts)
        order = {str(name): i for i, name in enumerate(files)}
        skipped.sort(key=lambda s: order.get(s["file"], -1))  # in the streams' order
        if not rows:
            first = skipped[0]["reason"] if skipped else "no stream gave a labelled window"
            raise BioanonError(f"no window could be made ({len(skipped)} stream(s) skipped; "
                               f"{first}); check the files, window and segment table")
        assert chans is not None
        X_all = np.concatenate(parts).astype(np.float32)
        names = motion_feature_names(self.features, chans, self.window, self.step)
        return FeatureTable(X_all, pd.DataFrame(rows), names, {
            "features": f"motion {self.features} windows", "window": self.window,
            "hop": self.hop, "step": self.step, "channels": chans, "rate_hz": self.rate_hz,
            "gravity": self.gravity, "skipped": skipped})

    def _stream_label_table(self, segments: pd.DataFrame,
                            stream_labels: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
        skip = {*SEGMENT_COLUMNS, self.label_column, "segment_index", "n_samples",
                "duration_s"}
        cols = [c for c in segments.columns if c not in skip]
        const = segments.groupby("file")[cols].nunique(dropna=False).le(1).all()
        keep = [c for c in cols if const.get(c, False)]
        out = segments.groupby("file")[keep].first().to_dict("index") if keep else {}
        if stream_labels is not None:
            if "file" not in stream_labels.columns:
                raise missing_column("file", stream_labels.columns, "stream label column")
            extra = stream_labels.drop_duplicates("file").set_index("file").to_dict("index")
            for f, d in extra.items():
                out[f] = {**d, **out.get(f, {})}
        return out


def _most_common_channels(found: list[list[str]]) -> list[str] | None:
    """The channels most streams have (ties: the first stream's of them); None for none.

    Examples
    --------
    >>> _most_common_channels([["ax"], ["ax", "gx"], ["ax", "gx"]])
    ['ax', 'gx']
    """
    if not found:
        return None
    from collections import Counter

    counts = Counter(tuple(ch) for ch in found)
    best = max(counts.values())
    return next(list(ch) for ch in found if counts[tuple(ch)] == best)


def _refuse_text_cells(values: pd.Series, column: str) -> None:
    """Refuse a stream whose column of numbers holds a few cells of text (most of its cells
    read as numbers): read as text, it would leave the channels, and the first stream's
    channels decide every other stream's. A column of text throughout (a device name) is
    not a channel and passes.

    Examples
    --------
    >>> _refuse_text_cells(pd.Series(["phone", "phone", "phone"]), "device")
    >>> try:
    ...     _refuse_text_cells(pd.Series(["0.1", "oops", "0.3", "0.4"]), "x_acc")
    ... except BioanonError as exc:
    ...     print(exc)
    column 'x_acc' holds text at row 1 ('oops') among numbers; fix that cell or drop the row
    """
    if pd.api.types.is_numeric_dtype(values) or values.empty:
        return
    numbers = pd.to_numeric(values, errors="coerce")
    bad = numbers.isna() & values.notna()
    if numbers.notna().mean() >= 0.5 and bad.any():
        row = int(np.argmax(bad.to_numpy()))
        raise BioanonError(f"column '{column}' holds text at row {row} "
                           f"({values.iloc[row]!r}) among numbers; fix that cell or drop the "
                           "row")


class MissingValues(BioanonError):
    """A stream refused for a value that is missing (NaN), infinite or out of range: where
    its file holds a row cut short, :func:`short_row` names that row instead."""


def short_row(src: Any, df: pd.DataFrame | None) -> str | None:
    """Why a stream read from the CSV file ``src`` into ``df`` holds missing values, when a
    row of the file has fewer fields than its header (a row cut short, a line broken in
    two): pandas reads the missing fields as NaN, which was refused as a NaN sensor value or
    time, with the advice to clean values the file never held. The refusal the table
    reader gives such a row (the line and its fields); None when ``src`` is no file or no
    row is short.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.csv"
    >>> _ = p.write_text("x,y,t\\n1,2,0\\n3\\n")
    >>> print(short_row(p, pd.read_csv(p)))  # doctest: +NORMALIZE_WHITESPACE
    line 3 of 's.csv' holds 1 fields where its header names 3: a row cut short or a line
    broken in two; correct that line (an empty value is written as nothing between two commas)
    """
    from pathlib import Path

    from ..table import _refuse_short_rows

    if df is None or isinstance(src, pd.DataFrame):
        return None
    try:
        _refuse_short_rows(Path(src), [str(c) for c in df.columns], df)
    except BioanonError as exc:
        return str(exc)
    except (OSError, UnicodeDecodeError):  # read once already: the NaN refusal stands
        return None
    return None


def sensor_values(df: pd.DataFrame, channels: Sequence[str]) -> np.ndarray:
    """The channels of one stream as float32, refusing NaN, inf and numbers beyond float32's
    range by channel and row, before the cast (whose NumPy warning, ``overflow encountered in
    cast``, was printed before the refusal)."""
    raw = df[list(channels)].to_numpy(np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(raw) | (np.abs(raw) > _FLOAT32_MAX)
    if bad.any():
        row, j = (int(v) for v in np.argwhere(bad)[0])
        raise MissingValues(
            f"the stream has {int(bad.sum())} sensor value(s) that are NaN, inf or beyond "
            f"32-bit floats (±3.4e38), first in channel '{channels[j]}' at row {row} "
            f"({raw[row, j]:g}); clean or drop those rows")
    return raw.astype(np.float32)


def stream_times(df: pd.DataFrame, column: str) -> np.ndarray:
    """One stream's times (ms) for resampling or filtering: numbers, finite, never going
    back, spanning some time (text was an internal error; NaN read as a bad sensor value;
    times going back made an empty grid, refused as a stream without windows)."""
    if column not in df.columns:
        raise missing_column(column, df.columns, "time column")
    col = df[column]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise BioanonError(f"time column '{column}' holds {col.dtype} values, not numbers of "
                           f"milliseconds (e.g. {col.iloc[0]!r}); convert it to milliseconds")
    t = col.to_numpy(np.float64)
    bad = ~np.isfinite(t)
    if bad.any():
        raise MissingValues(f"time column '{column}' has {int(bad.sum())} empty or infinite "
                           f"value(s) (first at row {int(np.argmax(bad))}); fill or drop "
                           "those rows")
    back = np.flatnonzero(np.diff(t) < 0)
    if back.size:
        i = int(back[0]) + 1
        raise BioanonError(f"time column '{column}' goes back in time at row {i} ({t[i]:g} "
                           f"after {t[i - 1]:g}); sort the stream by time or fix that row")
    if t.size > 1 and t[-1] == t[0]:
        raise BioanonError(f"time column '{column}' holds one time ({t[0]:g}) for all "
                           f"{t.size} rows, which places no sample; check the column")
    return t


def check_grid(t: np.ndarray, rate_hz: float, column: str, window: int) -> None:
    """Refuse a uniform grid too large to build (times in micro- or nanoseconds read as
    milliseconds: billions of points) or too small for one window (times in seconds)."""
    span = float(t[-1] - t[0])
    points = span * rate_hz / 1000.0 + 1
    said = (f"resampling at {rate_hz:g} Hz over this stream's {span:g} ms (its time column "
            f"'{column}', read in milliseconds) makes {points:.4g} points")
    if points > MAX_GRID_POINTS:
        raise BioanonError(f"{said}, more than the {MAX_GRID_POINTS:,} one stream may have; "
                           "if its times are in micro- or nanoseconds, convert them to "
                           "milliseconds; or lower the rate")
    if points < window:
        raise BioanonError(f"{said}, fewer than one window of {window} samples; if its times "
                           "are in seconds, convert them to milliseconds; or raise the rate")


def _no_channels(df: pd.DataFrame) -> str:
    """Why a stream has no sensor channel: another separator (its header one column holding
    it) or no column of numbers (a stream read whole as text had windows of no feature,
    refused as an empty table)."""
    from ..table import _OTHER_SEPARATORS

    cols = [str(c) for c in df.columns]
    for sep, name in _OTHER_SEPARATORS.items():
        if len(cols) == 1 and sep in cols[0]:
            return (f"the stream looks separated by {name} (its header is one column, "
                    f"{cols[0][:40]!r}); write it with commas")
    return (f"the stream has no column of numbers to use as a sensor channel (columns: "
            f"{', '.join(cols[:8])}); give its sensor values as numbers")


def _read_stream(path: str | os.PathLike) -> pd.DataFrame:
    from pathlib import Path

    from ..table import _long_row, without_trailing_empty_rows

    try:
        df = without_trailing_empty_rows(pd.read_csv(path))
    except FileNotFoundError:
        raise BioanonError(f"stream file '{path}' not found") from None
    except Exception as exc:  # a row of more fields than the header: named as the table's
        raise BioanonError(_long_row(Path(path), str(exc)) or
                           f"cannot read stream '{path}': {exc}".splitlines()[0]) from None
    if df.empty:
        raise BioanonError(f"stream '{path}' has no rows")
    return df
