"""Reading WAV files (shared by the MFCC and the speaker-embedding extractors)."""

from __future__ import annotations

import os

import numpy as np
from scipy.io import wavfile

from ..errors import BioanonError


def read_wav(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """Read a WAV file; unreadable or empty files raise a one-line :class:`BioanonError`."""
    try:
        sr, data = wavfile.read(path)
    except Exception as exc:
        raise BioanonError(f"cannot read audio '{path}': {exc}".splitlines()[0]) from None
    if data.size == 0:
        raise BioanonError(f"audio file '{path}' has no samples")
    if data.dtype.kind == "f":
        bad = int(data.size - np.isfinite(data).sum())
        if bad:
            raise BioanonError(f"audio file '{path}' has {bad} NaN/inf sample(s); clean it")
    if data.dtype == np.uint8:  # 8-bit PCM is unsigned, its silence at 128
        data = (data.astype(np.float32) - 128.0) / 128.0
    if not np.any(data):
        raise BioanonError(f"audio file '{path}' is silent (every sample is zero): no voice "
                           "to describe")
    return data, int(sr)
