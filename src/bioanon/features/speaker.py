"""Speaker embedding: the 256-d Resemblyzer d-vector of each recording (``voice`` extra).

Each recording is resampled to 16 kHz (SciPy polyphase), volume-normalised and stripped of
long silences (Resemblyzer's WebRTC VAD; kept whole if the VAD finds almost no voice), cut
into 1.6 s partial windows (zero-padded when shorter), and all windows of all recordings go
through the LSTM encoder in batches. A recording's embedding is the L2-normalised mean of
its windows' embeddings, as in ``VoiceEncoder.embed_utterance`` (which runs one recording
at a time and is much slower). The pretrained weights ship inside the ``resemblyzer``
package, so nothing is downloaded.

Install: ``pip install 'bioanon[voice]'`` then ``pip install --no-deps resemblyzer`` (its
declared dependencies pin the source-only ``webrtcvad``; ``webrtcvad-wheels`` provides it).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from math import gcd
from typing import Any

import numpy as np

from ..errors import BioanonError, install_hint
from .wav import read_wav, refuse_slow_rate

VOICE_EXTRA = install_hint("voice", then="--no-deps resemblyzer")
EMBED_DIM = 256
SAMPLE_RATE = 16000
Progress = Callable[[int, int, str], None]


@functools.lru_cache(maxsize=1)
def _encoder() -> Any:
    try:
        import torch
        from resemblyzer import VoiceEncoder
    except ImportError as exc:
        raise BioanonError(f"speaker features need {exc.name}; {VOICE_EXTRA}") from None
    torch.set_flush_denormal(True)  # tiny mel powers make the LSTM crawl on denormals
    return VoiceEncoder("cpu", verbose=False)


def to_16k(data: np.ndarray, sr: int) -> np.ndarray:
    """Mono float32 waveform in [-1, 1] at 16 kHz."""
    from scipy.signal import resample_poly

    x = np.asarray(data)
    if x.ndim > 1:
        x = x.mean(axis=1)
    if np.issubdtype(x.dtype, np.integer):
        x = x / float(np.iinfo(x.dtype).max)
    x = x.astype(np.float32)
    if sr != SAMPLE_RATE:
        g = gcd(int(sr), SAMPLE_RATE)
        x = resample_poly(x, SAMPLE_RATE // g, int(sr) // g).astype(np.float32)
    return x


def _partials(wav: np.ndarray, rate: float = 1.3, min_coverage: float = 0.75) -> np.ndarray:
    """Mel spectrograms of the partial windows of one waveform, (n_partials, 160, 40)."""
    from resemblyzer import VoiceEncoder
    from resemblyzer.audio import wav_to_mel_spectrogram

    wav_slices, mel_slices = VoiceEncoder.compute_partial_slices(len(wav), rate, min_coverage)
    end = wav_slices[-1].stop
    if end >= len(wav):
        wav = np.pad(wav, (0, end - len(wav) + 1))
    mel = wav_to_mel_spectrogram(wav)
    return np.stack([mel[s] for s in mel_slices])


def speaker_embeddings(paths: Sequence[str | os.PathLike], batch: int = 256,
                       progress: Progress | None = None
                       ) -> tuple[np.ndarray, np.ndarray, list[dict[str, str]]]:
    """Resemblyzer embeddings of many recordings.

    Returns
    -------
    X : (n_kept, 256) float32, unit-norm rows
    kept : positions of the readable recordings
    skipped : ``[{"file", "reason"}]`` for the others
    """
    import torch
    from resemblyzer.audio import normalize_volume, trim_long_silences

    encoder = _encoder()
    mels, owner, kept, skipped = [], [], [], []
    for i, p in enumerate(paths):  # reading and VAD are per file; the network runs batched
        try:
            data, sr = read_wav(p)
            refuse_slow_rate(sr, f"audio file '{p}'")  # upsampled, hours of nothing
            wav = to_16k(data, sr)
            if not np.any(wav):  # resampled to nothing audible: no volume to set
                raise BioanonError(f"audio file '{p}' is silent once resampled: no voice to "
                                   "describe")
            wav = normalize_volume(wav, -30, increase_only=True)
            trimmed = trim_long_silences(wav)
            wav = trimmed if trimmed.size >= SAMPLE_RATE // 10 else wav  # VAD found ~no voice
        except BioanonError as exc:
            skipped.append({"file": str(p), "reason": str(exc)})
            continue
        parts = _partials(wav)
        mels.append(parts)
        owner.append(np.full(len(parts), len(kept)))
        kept.append(i)
        if progress is not None and i % 50 == 0:
            progress(i, len(paths), os.path.basename(str(p)))
    if not kept:
        return np.empty((0, EMBED_DIM), np.float32), np.empty(0, np.int64), skipped
    allmels = np.concatenate(mels).astype(np.float32)
    who = np.concatenate(owner)
    with torch.no_grad():
        parts = np.concatenate([encoder(torch.from_numpy(allmels[s:s + batch])).numpy()
                                for s in range(0, len(allmels), batch)])
    # torch's CPU kernels can leave flush-to-zero switched on in this thread; switch it off so
    # later NumPy arithmetic keeps IEEE subnormals
    torch.set_flush_denormal(False)
    sums = np.zeros((len(kept), EMBED_DIM), np.float64)
    np.add.at(sums, who, parts)
    X = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    if progress is not None:
        progress(len(paths), len(paths), "done")
    return X.astype(np.float32), np.asarray(kept, np.int64), skipped


def speaker_feature_names() -> list[str]:
    """Column names of the speaker embedding."""
    return [f"spk{j}" for j in range(EMBED_DIM)]
