"""Voice features: MFCC and delta tracks on a fixed-length time grid (NumPy/SciPy only).

Each recording gives ``n_mfcc`` cepstral coefficients per 25 ms frame (10 ms hop); each
coefficient's track, and its first difference (delta), is resampled onto ``n_steps`` points
spread over the recording, so recordings of any length give vectors of one size:
``2 · n_mfcc · n_steps`` features.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.fft import dct, rfft
from sklearn.base import BaseEstimator, TransformerMixin

from ..errors import BioanonError
from ..table import FeatureTable
from . import nonfinite_reason
from .wav import N_MELS, mel_filterbank, read_wav, refuse_slow_rate

#: the most points of the MFCC time grid (each one 2·n_mfcc features per recording)
MAX_STEPS = 1000


def mfcc(signal: np.ndarray, sr: int, n_mfcc: int = 20, n_mels: int = N_MELS,
         frame_s: float = 0.025, hop_s: float = 0.010) -> np.ndarray:
    """MFCC matrix of one signal, shape (n_frames, n_mfcc)."""
    refuse_slow_rate(sr, n_mels=n_mels, frame_s=frame_s)
    x = np.asarray(signal, dtype=np.float64)
    if x.ndim > 1:
        x = x.mean(axis=1)
    peak = np.abs(x).max()
    x = x / peak if peak > 0 else x
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])  # pre-emphasis
    frame, hop = int(round(frame_s * sr)), int(round(hop_s * sr))
    if x.size < frame:
        x = np.pad(x, (0, frame - x.size))
    frames = np.lib.stride_tricks.sliding_window_view(x, frame)[::hop] * np.hamming(frame)
    n_fft = 1 << int(np.ceil(np.log2(frame)))
    power = np.abs(rfft(frames, n=n_fft, axis=1)) ** 2 / n_fft
    mel = np.log(power @ mel_filterbank(sr, n_fft, n_mels).T + 1e-10)
    return dct(mel, type=2, axis=1, norm="ortho")[:, :n_mfcc]


def on_time_grid(track: np.ndarray, n_steps: int) -> np.ndarray:
    """Linearly resample a (frames, channels) track onto ``n_steps`` evenly spaced points."""
    src = np.linspace(0.0, 1.0, track.shape[0])
    dst = np.linspace(0.0, 1.0, n_steps)
    if track.shape[0] == 1:
        return np.repeat(track, n_steps, axis=0)
    return np.stack([np.interp(dst, src, track[:, j]) for j in range(track.shape[1])], axis=1)


def mfcc_vector(signal: np.ndarray, sr: int, n_mfcc: int = 20, n_steps: int = 10) -> np.ndarray:
    """Fixed-length vector: MFCC and delta tracks on an ``n_steps`` grid (2·n_mfcc·n_steps)."""
    m = mfcc(signal, sr, n_mfcc=n_mfcc)
    delta = np.diff(m, axis=0, prepend=m[:1])
    return np.concatenate([on_time_grid(m, n_steps).T.ravel(),
                           on_time_grid(delta, n_steps).T.ravel()]).astype(np.float32)


def mfcc_feature_names(n_mfcc: int = 20, n_steps: int = 10) -> list[str]:
    """Names matching :func:`mfcc_vector`'s layout."""
    return ([f"mfcc{c}_t{s}" for c in range(n_mfcc) for s in range(n_steps)]
            + [f"dmfcc{c}_t{s}" for c in range(n_mfcc) for s in range(n_steps)])


def mfcc_matrix(paths: Sequence[str | os.PathLike], n_mfcc: int = 20, n_steps: int = 10,
                progress: Callable[[int, int, str], None] | None = None) -> np.ndarray:
    """MFCC vectors of many WAV files, shape (len(paths), 2·n_mfcc·n_steps)."""
    out = np.empty((len(paths), 2 * n_mfcc * n_steps), dtype=np.float32)
    for i, p in enumerate(paths):  # file reading is per file; the maths inside is vectorised
        data, sr = read_wav(p)
        out[i] = mfcc_vector(data, sr, n_mfcc, n_steps)
        if progress is not None and i % 100 == 0:
            progress(i, len(paths), os.path.basename(str(p)))
    return out


# ---------------------------------------------------------------------- the transformer
VOICE_FEATURES = ("mfcc", "speaker")


def mfcc_rows(paths: Sequence[str | os.PathLike], n_mfcc: int = 20, n_steps: int = 10,
              progress: Callable[[int, int, str], None] | None = None
              ) -> tuple[np.ndarray, np.ndarray, list[dict[str, str]]]:
    """Like :func:`mfcc_matrix`, but unreadable files are left out and reported.

    Returns the vectors of the readable files, their positions and ``[{"file", "reason"}]``.
    """
    rows, kept, skipped = [], [], []
    for i, p in enumerate(paths):  # file reading is per file; the maths inside is vectorised
        try:
            data, sr = read_wav(p)
            refuse_slow_rate(sr, f"audio file '{p}'")
            vec = mfcc_vector(data, sr, n_mfcc, n_steps)
            reason = nonfinite_reason(vec)
            if reason:
                raise BioanonError(reason)
            rows.append(vec)
            kept.append(i)
        except BioanonError as exc:
            skipped.append({"file": str(p), "reason": str(exc)})
        if progress is not None and i % 50 == 0:
            progress(i, len(paths), os.path.basename(str(p)))
    X = np.vstack(rows) if rows else np.empty((0, 2 * n_mfcc * n_steps), np.float32)
    return X.astype(np.float32), np.asarray(kept, np.int64), skipped


class VoiceFeatures(TransformerMixin, BaseEstimator):
    """WAV files in, FeatureTable out: ``mfcc`` (NumPy/SciPy) or ``speaker`` (Resemblyzer).

    Parameters
    ----------
    features : {"mfcc", "speaker"}
        ``mfcc``: MFCC and delta tracks on an ``n_steps`` time grid (2·n_mfcc·n_steps values);
        ``speaker``: the 256-d Resemblyzer embedding (needs the ``voice`` extra).
    n_mfcc, n_steps : int
        MFCC layout (``mfcc`` only).

    Examples
    --------
    >>> table = VoiceFeatures("mfcc").transform(paths, labels)   # doctest: +SKIP
    """

    def __init__(self, features: str = "mfcc", n_mfcc: int = 20, n_steps: int = 10):
        self.features = features
        self.n_mfcc = n_mfcc
        self.n_steps = n_steps

    def fit(self, X: Any = None, y: Any = None) -> VoiceFeatures:
        """Nothing to learn; checks the parameters."""
        if self.features not in VOICE_FEATURES:
            raise BioanonError(f"unknown voice features '{self.features}'; use one of "
                               f"{', '.join(VOICE_FEATURES)}")
        if self.n_mfcc < 1 or self.n_steps < 1:
            raise BioanonError("n_mfcc and n_steps must be at least 1")
        if self.n_mfcc > N_MELS:  # the DCT of N_MELS mel bands has N_MELS coefficients
            raise BioanonError(f"n_mfcc={self.n_mfcc} is more coefficients than the {N_MELS} "
                               f"mel bands give; use n_mfcc={N_MELS} or fewer (e.g. 20)",
                               parameter="n_mfcc")
        if self.n_steps > MAX_STEPS:
            raise BioanonError(f"n_steps={self.n_steps} is out of range; use at most "
                               f"{MAX_STEPS} points of the time grid (a recording has 100 "
                               "frames a second; e.g. 10)", parameter="n_steps")
        return self

    def transform(self, X: Sequence[str | os.PathLike], labels: pd.DataFrame | None = None,
                  progress: Callable[[int, int, str], None] | None = None) -> FeatureTable:
        """Describe the recordings ``X``; ``labels`` has one row per file (kept rows out)."""
        self.fit()
        paths = list(X)
        if self.features == "mfcc":
            F, kept, skipped = mfcc_rows(paths, self.n_mfcc, self.n_steps, progress)
            names = mfcc_feature_names(self.n_mfcc, self.n_steps)
            desc = f"mfcc{self.n_mfcc}x{self.n_steps}+delta"
        else:
            from .speaker import speaker_embeddings, speaker_feature_names

            F, kept, skipped = speaker_embeddings(paths, progress=progress)
            good = np.isfinite(F).all(axis=1)
            skipped = [*skipped, *({"file": str(paths[i]), "reason": nonfinite_reason(F[j])}
                                   for j, i in enumerate(kept) if not good[j])]
            F, kept = F[good], kept[good]
            names, desc = speaker_feature_names(), "resemblyzer speaker embedding (256-d)"
        if kept.size == 0:
            raise BioanonError(f"no recording could be read ({len(skipped)} skipped, first: "
                               f"{skipped[0]['reason'] if skipped else 'no input'})")
        lab = (pd.DataFrame(index=range(len(paths))) if labels is None
               else pd.DataFrame(labels).reset_index(drop=True))
        if len(lab) != len(paths):
            raise BioanonError(f"{len(lab)} label rows for {len(paths)} recordings; pass one "
                               "label row per recording")
        return FeatureTable(F, lab.iloc[kept].reset_index(drop=True), names,
                            {"features": desc, "skipped": skipped})
