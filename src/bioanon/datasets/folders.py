"""Generic loaders for what a data owner holds: a folder of files plus a labels CSV.

- :func:`load_image_folder`: photos (any format Pillow reads) -> face features;
- :func:`load_wav_folder`: WAV recordings -> voice features;
- :func:`load_sensor_csv`: sensor CSV streams plus a segment table -> motion windows.

The labels CSV has a ``file`` column (path relative to the folder) and one column per label.
Without a labels CSV every matching file in the folder is read and the table has a ``file``
label only. Files that cannot be read (or photos without a face, when the centre-crop
fallback is off) are left out and listed in ``table.meta["skipped"]`` with a reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import BioanonError, missing_column
from ..file_kinds import file_kind, refuse_other_kind
from ..table import FeatureTable, check_separator, duplicates

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".pgm", ".webp")
AUDIO_EXTENSIONS = (".wav",)
Progress = Callable[[int, int, str], None]


def read_labels(labels: str | os.PathLike | pd.DataFrame, file_column: str = "file"
                ) -> pd.DataFrame:
    """A labels table (CSV path or DataFrame) checked to have the file column."""
    if isinstance(labels, pd.DataFrame):
        df = labels.copy()
    else:
        p = Path(labels)
        if not p.is_file():
            raise BioanonError(f"labels file '{p}' not found; check the path")
        if p.stat().st_size and file_kind(p) == "parquet":  # a labels table saved as
            return read_labels(_parquet_labels(p), file_column)  # Parquet: read as such
        if p.stat().st_size:  # an Excel workbook, a web page ...: named, as for a table
            refuse_other_kind(p, "csv")
        try:
            df = pd.read_csv(p, keep_default_na=False, na_values=[""])
        except UnicodeDecodeError:  # as the table reader says it, at the file's byte
            raise BioanonError(f"cannot read labels '{p}': {_not_utf8(p)}; save it as UTF-8 "
                               "(in a spreadsheet: CSV UTF-8)") from None
        except Exception as exc:
            raise BioanonError(f"cannot read labels '{p}': {exc}".splitlines()[0]) from None
        header = _header(p)
        if len(header) == 1:  # 'file;speaker': a file written with another separator
            check_separator(p, header)
        _refuse_repeated(header, f"labels '{p}'")
    _refuse_repeated([str(c) for c in df.columns], "the labels table")
    if file_column not in df.columns:
        raise missing_column(file_column, df.columns, "file-name column of the labels",
                             numeric=df.select_dtypes("number").columns)
    if df.empty:
        raise BioanonError("the labels table has no rows; list at least one file")
    return df.reset_index(drop=True)


def _parquet_labels(p: Path) -> pd.DataFrame:
    """A labels table written as Parquet (``df.to_parquet('labels.parquet')``): it was refused
    as "'labels.parquet' is a Parquet file, not CSV text as its name says; rename it to end in
    .parquet", a name it had."""
    try:
        return pd.read_parquet(p)
    except Exception as exc:
        raise BioanonError(f"cannot read labels '{p}': {exc}".splitlines()[0]) from None


def _not_utf8(p: Path) -> str:
    """Where ``p`` stops being UTF-8 (pandas counts the byte within its chunk)."""
    try:
        p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return (f"it is not UTF-8 text (byte {exc.start} is "
                f"{exc.object[exc.start:exc.start + 1]!r})")
    return "it is not UTF-8 text"


def _header(p: Path) -> list[str]:
    """The first row of a CSV file as written (pandas renames a repeated name: 'a', 'a.1')."""
    import csv

    with open(p, newline="", encoding="utf-8-sig", errors="replace") as fh:
        return next(csv.reader(fh), [])


def _refuse_repeated(header: list[str], what: str) -> None:
    """Refuse a column named twice: pandas kept both as 'speaker' and 'speaker.1', each then
    extracted as a label of its own (exit 0)."""
    dup = duplicates(header)
    if dup:
        named = ", ".join(f"'{c}'" for c in dup)
        raise BioanonError(f"{what} names the column {named} more than once; rename the "
                           "copies so every column name is used once")


def list_files(folder: str | os.PathLike, extensions: Sequence[str]) -> pd.DataFrame:
    """Every file under ``folder`` with one of ``extensions``, as a one-column labels table."""
    root = Path(folder)
    if not root.is_dir():
        raise BioanonError(f"folder '{root}' not found; check the path")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                   if p.is_file() and p.suffix.lower() in extensions)
    if not files:
        raise BioanonError(f"no {'/'.join(extensions[:3])} files under '{root}'")
    return pd.DataFrame({"file": files})


def _records(folder: str | os.PathLike, labels: Any, file_column: str,
             extensions: Sequence[str]) -> tuple[list[Path], pd.DataFrame]:
    root = Path(folder)
    if not root.is_dir():
        raise BioanonError(f"folder '{root}' not found; check the path")
    df = (list_files(root, extensions) if labels is None
          else read_labels(labels, file_column))
    col = "file" if labels is None else file_column
    twice = df[col].astype(str).duplicated(keep=False)
    if twice.any():
        rows = [int(i) for i in df.index[twice][:2]]
        raise BioanonError(f"the labels list {int(df[col][twice].nunique())} file(s) more than "
                           f"once (e.g. '{df[col][twice].iloc[0]}' in rows {rows[0] + 1} and "
                           f"{rows[1] + 1}): each would be extracted twice, as two records; "
                           "list each file once")
    return [on_disk(root / str(f)) for f in df[col]], df


def on_disk(path: Path) -> Path:
    """``path``, or the file the disk holds under the same name written with '/' for the
    '\\' of a labels file made on Windows (``recordings\\a.wav``), or with its accents
    composed the other way (a labels file typed in NFC for files copied from macOS, whose
    names are NFD): Linux compares names byte by byte, so the recording was skipped as
    missing while the folder listing showed it.

    >>> import tempfile, unicodedata
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / unicodedata.normalize("NFD", "été.wav")).write_bytes(b"")
    >>> on_disk(d / unicodedata.normalize("NFC", "été.wav")).exists()
    True
    """
    if path.exists():
        return path
    import unicodedata

    slashed = (path.parent / path.name.replace("\\", "/") if os.sep == "/" else path)
    for form in ("NFC", "NFD"):
        other = Path(unicodedata.normalize(form, str(slashed)))
        if other.exists():
            return other
    return path


def _finish(table: FeatureTable, folder: str | os.PathLike, keep_file: bool,
            file_column: str) -> FeatureTable:
    if not keep_file and file_column in table.labels.columns:
        # file names often carry the identity (subject01_happy.png): never released by default
        table = table.drop_labels([file_column])
    table.meta["source"] = str(folder)
    return table


def load_image_folder(folder: str | os.PathLike,
                      labels: str | os.PathLike | pd.DataFrame | None = None,
                      features: str = "pixels", file_column: str = "file",
                      keep_file: bool = False, progress: Progress | None = None,
                      **options: Any) -> FeatureTable:
    """Photos in ``folder`` as face features.

    Parameters
    ----------
    folder : path
    labels : CSV path or DataFrame, optional
        One row per photo with ``file_column`` relative to ``folder``.
    features : {"pixels", "eigen", "landmarks", "embedding"}
    keep_file : bool
        Keep the file column as a label (off by default: names often reveal the person).
    **options
        Passed to :class:`bioanon.features.image.FaceFeatures` (size, n_components,
        upsample, fallback, random_state). ``random_state`` defaults to 0 here, so that the
        same folder always loads as the same table (eigenfaces come from a randomized PCA).
    """
    from ..features.image import FaceFeatures

    paths, df = _records(folder, labels, file_column, IMAGE_EXTENSIONS)
    options.setdefault("random_state", 0)
    table = FaceFeatures(features, **options).fit_transform(paths, labels=df,
                                                           progress=progress)
    return _finish(table, folder, keep_file, file_column)


def load_wav_folder(folder: str | os.PathLike,
                    labels: str | os.PathLike | pd.DataFrame | None = None,
                    features: str = "mfcc", file_column: str = "file",
                    keep_file: bool = False, progress: Progress | None = None,
                    **options: Any) -> FeatureTable:
    """WAV recordings in ``folder`` as voice features (``mfcc`` or ``speaker``).

    ``options`` go to :class:`bioanon.features.voice.VoiceFeatures` (n_mfcc, n_steps).
    """
    from ..features.voice import VoiceFeatures

    paths, df = _records(folder, labels, file_column, AUDIO_EXTENSIONS)
    table = VoiceFeatures(features, **options).transform(paths, df, progress=progress)
    return _finish(table, folder, keep_file, file_column)


def load_sensor_csv(folder: str | os.PathLike, segments: str | os.PathLike | pd.DataFrame,
                    stream_labels: str | os.PathLike | pd.DataFrame | None = None,
                    where: Mapping[str, Any] | None = None, label_column: str = "activity",
                    progress: Progress | None = None, **options: Any) -> FeatureTable:
    """Sensor CSV streams in ``folder`` cut into labelled windows.

    Parameters
    ----------
    folder : path
        Holds the stream CSVs (one row per sample, one column per channel, a timestamp).
    segments : CSV path or DataFrame
        ``file, start_row, end_row`` (0-based rows, end exclusive) and ``label_column``; other
        columns constant over a stream (subject, device, ...) label its windows.
    stream_labels : CSV path or DataFrame, optional
        One row per ``file`` with further labels (gender, age, ...).
    where : mapping, optional
        Keep only streams whose label equals the value, e.g. ``{"device": "smartwatch"}``.
    **options
        Passed to :class:`bioanon.features.motion.MotionFeatures` (window, hop, features,
        step, channels, rate_hz, gravity, time_column).
    """
    from ..features.motion import MotionFeatures, check_segments

    root = Path(folder)
    if not root.is_dir():
        raise BioanonError(f"folder '{root}' not found; check the path")
    seg = read_labels(segments)
    check_segments(seg, label_column)
    streams = None if stream_labels is None else read_labels(stream_labels)
    for col, value in (where or {}).items():
        tables = [t for t in (seg, streams) if t is not None and col in t.columns]
        if not tables:
            raise missing_column(col, seg.columns, "column to filter on")
        files = set(tables[0].loc[tables[0][col].astype(str) == str(value), "file"])
        if not files:
            values = sorted(map(str, tables[0][col].unique()))[:8]
            raise BioanonError(f"no stream has {col}={value}; values are {values}")
        seg = seg[seg["file"].isin(files)]
        streams = None if streams is None else streams[streams["file"].isin(files)]
    files = list(dict.fromkeys(seg["file"]))
    table = MotionFeatures(label_column=label_column, **options).transform(
        {f: on_disk(root / f) for f in files}, seg, streams, progress=progress)
    table.meta["source"] = str(root)
    return table
