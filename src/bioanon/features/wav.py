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
    if data.min() == data.max():  # a constant offset is as silent as zero: no sound at all
        raise BioanonError(f"audio file '{path}' is silent (every sample is "
                           f"{data.flat[0].item()!r}, a constant offset: no sound): no voice to "
                           "describe")
    refuse_short(len(data), int(sr), f"audio file '{path}'")
    return data, int(sr)


#: the analysis frame of the voice features (seconds): a recording needs one at least
FRAME_S = 0.025


def refuse_short(n_samples: int, sr: int, what: str = "the audio") -> None:
    """Refuse a recording shorter than one analysis frame: it was padded with silence to one
    frame, so its features were that frame repeated over the whole time grid (a recording of
    one sample gave the same features as any other), written without a word. A rate too low
    for any frame is left to :func:`refuse_slow_rate`.

    >>> refuse_short(4000, 8000)
    >>> refuse_short(10, 8000)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: the audio holds 10 sample(s) (1.25 ms at 8000 Hz), shorter ...
    """
    frame = int(round(FRAME_S * sr))
    if 0 < n_samples < frame:
        raise BioanonError(
            f"{what} holds {n_samples} sample(s) ({n_samples / sr * 1000:.3g} ms at {sr} Hz), "
            f"shorter than one {FRAME_S * 1000:g} ms analysis frame: too short to describe a "
            f"voice; leave it out, or record at least {FRAME_S * 1000:g} ms")


#: mel bands of the MFCC filterbank: the most cepstral coefficients a frame has
N_MELS = 40


def mel_filterbank(sr: int, n_fft: int, n_mels: int) -> np.ndarray:
    """Triangular mel filters, shape (n_mels, n_fft // 2 + 1)."""
    def hz_to_mel(f: np.ndarray) -> np.ndarray:
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m: np.ndarray) -> np.ndarray:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    mels = np.linspace(hz_to_mel(np.array(0.0)), hz_to_mel(np.array(sr / 2.0)), n_mels + 2)
    bins = np.fft.rfftfreq(n_fft, 1.0 / sr)
    edges = mel_to_hz(mels)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (bins[None, :] - lo) / np.maximum(mid - lo, 1e-9)
    down = (hi - bins[None, :]) / np.maximum(hi - mid, 1e-9)
    return np.clip(np.minimum(up, down), 0.0, None)


def refuse_slow_rate(sr: int, what: str = "the audio", n_mels: int = N_MELS,
                     frame_s: float = 0.025) -> None:
    """Refuse a sample rate too low for voice features: a frame whose spectrum leaves a mel band
    without a frequency bin gives that band (and the coefficients mixing it) no information;
    below 40 Hz the frame is empty (an internal error, "slice step cannot be zero").

    >>> refuse_slow_rate(8000)
    >>> refuse_slow_rate(10)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: the audio is sampled at 10 Hz, too slowly for voice features: \
a 25 ms frame holds 0 samples, which leave 40 of the 40 mel bands without a frequency; use \
recordings sampled at 4000 Hz or more (a rate this low is often a damaged file header)
    """
    frame = int(round(frame_s * sr))
    empty = n_mels
    if frame >= 2:
        n_fft = 1 << int(np.ceil(np.log2(frame)))
        empty = int((mel_filterbank(sr, n_fft, n_mels).sum(axis=1) == 0).sum())
    if empty:
        raise BioanonError(
            f"{what} is sampled at {sr} Hz, too slowly for voice features: a "
            f"{frame_s * 1000:g} ms frame holds {frame} samples, which leave {empty} of the "
            f"{n_mels} mel bands without a frequency; use recordings sampled at 4000 Hz or "
            "more (a rate this low is often a damaged file header)")
