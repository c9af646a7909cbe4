"""``bioanon extract face|voice|motion``: raw records in, a feature table out.

Unreadable files (and photos without a face under ``--no-face skip``) are left out; every
left-out or centre-cropped input is listed, with its reason, in ``OUTPUT.skipped.csv`` next to
the output. When nothing was left out or cropped no list is written, and a list of the same
name left by an earlier run is removed (it would describe another extraction). The run fails
only when nothing could be read.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer

from ..errors import BioanonError
from ..io import atomic_path, check_output_file
from ..table import FeatureTable, format_of
from .common import (
    OUT_FLAGS,
    app,
    console,
    err_console,
    input_argument,
    progress_bar,
    refuse_unused,
    user_errors,
)


class Kind(StrEnum):
    """What the source folder holds."""

    face = "face"
    voice = "voice"
    motion = "motion"


DEFAULT_FEATURES = {"face": "pixels", "voice": "mfcc", "motion": "raw"}


def _parse_where(items: list[str] | None, device: str | None) -> dict[str, str]:
    out = {}
    for item in items or []:
        col, sep, val = item.partition("=")
        if not col or not sep:
            raise BioanonError(f"--where '{item}' must look like COLUMN=VALUE")
        if val.startswith("="):  # 'activity==walk' (Python's or SQL's test) kept "=walk"
            raise BioanonError(f"--where '{item}' compares with '==': write COLUMN=VALUE with "
                               f"one '=', e.g. --where {col}={val.lstrip('=')}")
        out[col] = val
    if device:
        out["device"] = device
    return out


def skipped_path(output: Path) -> Path:
    """Where the skipped-files list of ``output`` goes."""
    return output.with_name(output.name + ".skipped.csv")


#: the first line of every skipped-files list bioanon writes
SKIPPED_HEADER = "file,action,reason"


def check_skipped_path(path: Path) -> None:
    """Refuse, before any work, a file at ``path`` (``OUTPUT.skipped.csv``) that is not a
    skipped-files list bioanon wrote: the extraction replaces or removes that list."""
    if not path.is_file() and not path.is_symlink():
        return
    try:
        with open(path, encoding="utf-8") as fh:
            ours = not path.is_symlink() and fh.readline().strip() == SKIPPED_HEADER
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        raise BioanonError(f"'{path}' is a file bioanon did not write (not a skipped-files "
                           "list), where this extraction writes or removes its list of "
                           "skipped inputs; move it away or choose another output")


def skipped_frame(meta: dict[str, Any]) -> pd.DataFrame:
    """The skipped and centre-cropped inputs of an extraction, with reasons."""
    rows = [{"file": s["file"], "action": "skipped", "reason": s["reason"]}
            for s in meta.get("skipped", [])]
    rows += [{"file": f, "action": "centre crop",
              "reason": "no face found; the centre of the photo was used"}
             for f in meta.get("fallback", [])]
    return pd.DataFrame(rows, columns=SKIPPED_HEADER.split(","))


@app.command()
@user_errors
def extract(
    kind: Annotated[Kind, typer.Argument(help="face, voice or motion.")],
    src: Annotated[Path, input_argument("Folder of photos, WAV files or sensor CSVs.")],
    output: Annotated[Path, typer.Option(*OUT_FLAGS, help="Table to write: .parquet, "
                                                                ".csv or .npz.")],
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="Labels CSV with a 'file' column relative to SRC (motion: the "
                         "segment table file,start_row,end_row,LABEL). Face/voice without "
                         "it: every file in SRC.")] = None,
    features: Annotated[str | None, typer.Option(
        "--features", help="face: pixels, eigen, landmarks, embedding; voice: mfcc, speaker; "
                           "motion: raw, stats.")] = None,
    file_column: Annotated[str, typer.Option(help="Column of --labels naming the file.")] =
    "file",
    keep_file: Annotated[bool, typer.Option(
        help="Keep the file name as a label (off: names often reveal the person).")] = False,
    size: Annotated[int, typer.Option(help="face: side of the aligned crop in pixels.")] = 64,
    components: Annotated[int, typer.Option(help="face eigen: eigenfaces kept.")] = 50,
    upsample: Annotated[int, typer.Option(help="face: detector upsampling (smaller faces).")]
    = 1,
    no_face: Annotated[str, typer.Option(
        help="face: when no face is found, 'centre' (use the photo's centre; listed) or "
             "'skip'.")] = "centre",
    n_mfcc: Annotated[int, typer.Option(help="voice mfcc: coefficients.")] = 20,
    n_steps: Annotated[int, typer.Option(help="voice mfcc: points of the time grid.")] = 10,
    stream_labels: Annotated[Path | None, typer.Option(
        help="motion: CSV with one row per stream 'file' and further labels.")] = None,
    label_column: Annotated[str, typer.Option(help="motion: segment label of windows.")] =
    "activity",
    window: Annotated[int, typer.Option(help="motion: window length in samples.")] = 200,
    hop: Annotated[int, typer.Option(help="motion: samples between window starts.")] = 100,
    step: Annotated[int, typer.Option(help="motion raw: keep every STEP-th sample.")] = 4,
    channels: Annotated[str | None, typer.Option(
        help="motion: channels, comma-separated (default: every numeric column).")] = None,
    rate: Annotated[float | None, typer.Option(
        help="motion: resample onto a uniform grid at this rate (Hz) first.")] = None,
    gravity: Annotated[str, typer.Option(help="motion: 'keep' or 'remove' (user "
                                              "acceleration).")] = "keep",
    time_column: Annotated[str, typer.Option(help="motion: timestamp column (ms).")] =
    "timestamp",
    device: Annotated[str | None, typer.Option(
        help="motion: keep one device's streams (e.g. smartphone).")] = None,
    where: Annotated[list[str] | None, typer.Option(
        help="motion: keep streams whose label COLUMN=VALUE.")] = None,
) -> None:
    """Extract features from raw biometric records into a feature table."""
    from ..datasets.folders import load_image_folder, load_sensor_csv, load_wav_folder

    fmt = format_of(output)
    feats = features or DEFAULT_FEATURES[kind.value]
    face, voice, motion = (kind.value == k for k in ("face", "voice", "motion"))
    refuse_unused({
        **dict.fromkeys(["size", "upsample", "no_face"],
                        (face, "it applies to extract face")),
        "components": (face and feats == "eigen", "it applies to extract face --features "
                                                  "eigen"),
        **dict.fromkeys(["n_mfcc", "n_steps"], (voice and feats == "mfcc",
                                                "it applies to extract voice --features mfcc")),
        **dict.fromkeys(["stream_labels", "label_column", "window", "hop", "channels", "rate",
                         "gravity", "time_column", "device", "where"],
                        (motion, "it applies to extract motion")),
        "step": (motion and feats == "raw", "it applies to extract motion --features raw"),
        "file_column": (not motion and labels is not None,
                        "it names the file column of --labels (face and voice)"),
        "keep_file": (not motion, "motion windows carry no file label"),
    })
    skip_out = skipped_path(output)
    inputs = [p for p in (labels, stream_labels) if p is not None]
    check_output_file(output, inputs)
    check_output_file(skip_out, inputs)
    check_skipped_path(skip_out)
    if src.exists() and not src.is_dir():
        raise BioanonError(f"source '{src}' is a file; pass the folder of records")
    if not src.is_dir():
        raise BioanonError(f"source folder '{src}' not found; pass the folder of records")
    if no_face not in ("centre", "skip"):
        raise BioanonError(f"--no-face '{no_face}' is unknown; use 'centre' or 'skip'")
    with progress_bar(f"extracting {kind.value} {feats}", milestones=10) as update:
        if kind is Kind.face:
            table = load_image_folder(src, labels, feats, file_column, keep_file, update,
                                      size=size, n_components=components, upsample=upsample,
                                      fallback=no_face == "centre", random_state=0)
        elif kind is Kind.voice:
            table = load_wav_folder(src, labels, feats, file_column, keep_file, update,
                                    n_mfcc=n_mfcc, n_steps=n_steps)
        else:
            if labels is None:
                raise BioanonError("motion needs --labels SEGMENTS.csv (file, start_row, "
                                   "end_row and the window label)")
            table = load_sensor_csv(
                src, labels, stream_labels, _parse_where(where, device), label_column, update,
                window=window, hop=hop, features=feats, step=step,
                channels=[c.strip() for c in channels.split(",")] if channels else None,
                rate_hz=rate, gravity=gravity, time_column=time_column)
    report = skipped_frame(table.meta)
    meta = {k: v for k, v in table.meta.items() if k not in ("skipped", "fallback")}
    meta.update({"n_skipped": int((report["action"] == "skipped").sum()),
                 "n_centre_crop": int((report["action"] == "centre crop").sum()),
                 "extracted_from": str(src)})
    FeatureTable(table.X, table.labels, table.feature_names, meta).write(output)
    if len(report):
        with atomic_path(skip_out) as tmp:
            report.to_csv(tmp, index=False)
    elif skip_out.is_file():
        skip_out.unlink()  # a list left by an earlier run would describe another extraction
    console.print(f"wrote {output} ({table.n_records} records × {table.n_features} "
                  f"{feats} features, {fmt})")
    if len(report):
        err_console.print(f"note: {meta['n_skipped']} input(s) skipped and "
                          f"{meta['n_centre_crop']} centre-cropped; see {skip_out}",
                          highlight=False)
