"""Cases of wave 10 (reliability, round ten): inputs a data owner gives by mistake that were
handled badly, each kept fixed here (0 tracebacks, 0 wrong exits, 0 silent accepts, 0 hangs,
and no library's warning printed before the refusal).

Before the fixes, ``extract motion`` mishandled a stream's time column and its values: a time
column of text was an internal error under ``--rate`` or ``--gravity remove`` (Python's "could
not convert string to float"); times in nanoseconds read as milliseconds made a grid of
hundreds of millions of points (a hang, then out of memory; far larger spans an internal
error, "Maximum allowed size exceeded"); times too coarse for the gravity filter were SciPy's
"critical frequencies" error; times going back were refused as "no labelled window", an empty
time as "NaN or inf sensor values", and one time for every row passed, the sampling rate made
up. A sensor value of 1e300 printed NumPy's ``overflow encountered in cast`` before the
refusal, a stream separated by semicolons was refused as "features is empty (shape (4, 0))",
and ``--channels ax,ax`` as duplicate feature names ``ax_t0, ax_t12, ...``. ``extract voice``
of a WAV whose header says 10 Hz was an internal error, and at 100 Hz extracted constants.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .cases import FAST, Case, _csv, _wav, anon


def _stream(**columns: object) -> pd.DataFrame:
    t = np.arange(400) * 20.0
    frame = pd.DataFrame({"timestamp": t, "x_acc": np.sin(t / 100), "y_acc": np.cos(t / 100)})
    for name, values in columns.items():
        frame[name] = values
    return frame


def _motion(d: Path, stream: pd.DataFrame | str, *extra: str) -> list[str]:
    """``extract motion`` of one stream (a frame, or the text of its CSV) labelled whole."""
    src = d / "streams"
    src.mkdir()
    if isinstance(stream, str):
        (src / "s1.csv").write_text(stream)
    else:
        stream.to_csv(src / "s1.csv", index=False)
    pd.DataFrame([("s1.csv", 0, 400, "walk")], columns=["file", "start_row", "end_row",
                                                         "activity"]).to_csv(d / "seg.csv",
                                                                             index=False)
    return ["extract", "motion", str(src), "--labels", str(d / "seg.csv"), "-o",
            str(d / "m.parquet"), "--window", "50", *extra]


def _motion_cases() -> list[Case]:
    t = np.arange(400) * 20.0
    one_nan = t.copy()
    one_nan[7] = np.nan
    big = np.sin(t / 100)
    big[5] = 1e300
    return [
        Case("extract-motion-text-time-column-with-rate", lambda d: _motion(
            d, _stream(timestamp=[f"t{i}" for i in range(400)]), "--rate", "50"),
            says="time column 'timestamp' holds str values, not numbers of milliseconds"),
        Case("extract-motion-text-time-column-removing-gravity", lambda d: _motion(
            d, _stream(timestamp=[f"t{i}" for i in range(400)]), "--gravity", "remove"),
            says="time column 'timestamp' holds str values"),
        Case("extract-motion-nanosecond-times-with-rate", lambda d: _motion(
            d, _stream(timestamp=t * 1e6), "--rate", "50"),
            says="makes 3.99e+08 points, more than the 10,000,000 one stream may have; if its "
                 "times are in micro- or nanoseconds, convert them to milliseconds"),
        Case("extract-motion-times-of-1e300-with-rate", lambda d: _motion(
            d, _stream(timestamp=t * 1e300), "--rate", "50"),
            says="more than the 10,000,000 one stream may have"),
        Case("extract-motion-second-times-with-rate", lambda d: _motion(
            d, _stream(timestamp=t / 1000), "--rate", "50"),
            says="fewer than one window of 50 samples; if its times are in seconds"),
        Case("extract-motion-times-too-coarse-to-remove-gravity", lambda d: _motion(
            d, _stream(timestamp=t * 1e300), "--gravity", "remove"),
            says="too slowly to remove gravity, whose 0.3 Hz low-pass needs more than 0.6 Hz"),
        Case("extract-motion-times-going-back", lambda d: _motion(
            d, _stream(timestamp=t[::-1].copy()), "--rate", "50"),
            says="time column 'timestamp' goes back in time at row 1 (7960 after 7980)"),
        Case("extract-motion-empty-time-with-rate", lambda d: _motion(
            d, _stream(timestamp=one_nan), "--rate", "50"),
            says="time column 'timestamp' has 1 empty or infinite value(s) (first at row 7)"),
        Case("extract-motion-one-time-for-every-row-removing-gravity", lambda d: _motion(
            d, _stream(timestamp=np.zeros(400)), "--gravity", "remove"),
            says="holds one time (0) for all 400 rows"),
        Case("extract-motion-sensor-value-1e300-without-numpy-warning", lambda d: _motion(
            d, _stream(x_acc=big)),
            says="first in channel 'x_acc' at row 5 (1e+300)"),
        Case("extract-motion-semicolon-stream", lambda d: _motion(
            d, _stream().to_csv(index=False, sep=";")),
            says="the stream looks separated by semicolons"),
        Case("extract-motion-channel-named-twice", lambda d: _motion(
            d, _stream(), "--channels", "x_acc,x_acc"),
            says="the channels list names 'x_acc' more than once"),
        # resampled and with gravity removed, a stream in milliseconds still works
        Case("extract-motion-rate-and-gravity-valid", lambda d: _motion(
            d, _stream(), "--rate", "50", "--gravity", "remove"), "ok", ("m.parquet",)),
    ]


def _voice_at(d: Path, rate: int) -> list[str]:
    src = d / "wavs"
    src.mkdir()
    _wav(src / "a.wav", np.random.default_rng(0).normal(size=4000).astype(np.float32), sr=rate)
    return ["extract", "voice", str(src), "-o", str(d / "v.parquet")]


def _voice_cases() -> list[Case]:
    # a WAV header's sample rate of 10 Hz: a 25 ms frame of 0 samples, an internal error
    # ("slice step cannot be zero"); at 100 Hz every mel band was empty, the features
    # constants, exit 0
    return [Case(f"extract-voice-sampled-at-{rate}-hz", lambda d, r=rate: _voice_at(d, r),
                 says=f"is sampled at {rate} Hz, too slowly for voice features")
            for rate in (10, 100)]


def _comma_space_csv(d: Path) -> Path:
    """A CSV written with ', ' between its values: every name but the first starts with a
    space."""
    p = _csv(d)
    lines = p.read_text().splitlines()
    p.write_text("\n".join(", ".join(line.split(",")) for line in lines) + "\n")
    return p


def _table_cases() -> list[Case]:
    # the refusal listed the column as available: "label column 'expression' not found (did
    # you mean ' expression'?); available: identity, gender, expression, ..."
    return [Case("anonymize-csv-with-a-space-after-each-comma", lambda d: anon(
        _comma_space_csv(d), d, *FAST),
        says="label column 'expression' not found: the table names it ' expression', with "
             "spaces around it")]


def wave10_cases() -> list[Case]:
    return [*_motion_cases(), *_voice_cases(), *_table_cases()]
