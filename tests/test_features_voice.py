"""Voice features on real FSDD recordings: MFCC and the Resemblyzer speaker embedding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from bioanon.errors import BioanonError
from bioanon.features.voice import VoiceFeatures


@pytest.fixture(scope="module")
def fsdd_subset(data_home):
    """Two takes of every speaker × digit (120 recordings), paths and labels."""
    folder = data_home / "fsdd"
    labels = pd.read_csv(folder / "labels.csv")
    labels = labels[labels["take"].isin([7, 30])].reset_index(drop=True)
    return [folder / f for f in labels["file"]], labels[["speaker", "digit"]]


def speaker_accuracy(X: np.ndarray, speakers: pd.Series) -> float:
    model = make_pipeline(StandardScaler(), LinearSVC(C=0.1, max_iter=5000))
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    return float(cross_val_score(model, X, speakers, cv=cv).mean())


def test_mfcc_separates_speakers(fsdd_subset):
    paths, labels = fsdd_subset
    t = VoiceFeatures("mfcc").transform(paths, labels)
    assert t.X.shape == (120, 400)
    acc = speaker_accuracy(t.X, t.labels["speaker"])
    print(f"mfcc speaker accuracy {acc:.3f}")
    assert acc > 0.5, acc  # chance is 1/6


def test_speaker_embedding_separates_speakers(fsdd_subset):
    pytest.importorskip("resemblyzer", reason="voice extra not installed: pip install "
                                              "'bioanon[voice]' && pip install --no-deps "
                                              "resemblyzer")
    paths, labels = fsdd_subset
    one_take = np.arange(0, 120, 2)  # 60 recordings: 10 per speaker
    t = VoiceFeatures("speaker").transform([paths[i] for i in one_take],
                                           labels.iloc[one_take])
    assert t.X.shape == (60, 256)
    assert np.allclose(np.linalg.norm(t.X, axis=1), 1.0, atol=1e-4)
    acc = speaker_accuracy(t.X, t.labels["speaker"])
    print(f"speaker-embedding speaker accuracy {acc:.3f}")
    assert acc > 0.6, acc  # chance is 1/6


def test_batched_embedding_matches_resemblyzer(fsdd_subset):
    pytest.importorskip("resemblyzer", reason="voice extra not installed")
    from resemblyzer.audio import normalize_volume, trim_long_silences

    from bioanon.features.speaker import _encoder, speaker_embeddings, to_16k
    from bioanon.features.voice import read_wav

    paths = fsdd_subset[0][:3]
    X, kept, skipped = speaker_embeddings(paths)
    assert kept.tolist() == [0, 1, 2] and skipped == []
    for p, x in zip(paths, X, strict=True):
        data, sr = read_wav(p)
        wav = trim_long_silences(normalize_volume(to_16k(data, sr), -30, increase_only=True))
        assert np.abs(_encoder().embed_utterance(wav) - x).max() < 1e-4


def test_unreadable_recordings_are_skipped(tmp_path, fsdd_subset):
    paths, labels = fsdd_subset
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....nonsense")
    t = VoiceFeatures("mfcc").transform([paths[0], bad, paths[1]], labels[:3])
    assert t.n_records == 2
    assert t.labels["speaker"].tolist() == labels["speaker"][[0, 2]].tolist()
    assert t.meta["skipped"][0]["file"] == str(bad)
    with pytest.raises(BioanonError, match="no recording could be read"):
        VoiceFeatures("mfcc").transform([bad])
    with pytest.raises(BioanonError, match="unknown voice features"):
        VoiceFeatures("hubert").transform(paths[:1])


def test_fsdd_loader_keeps_its_default(data_home):
    from bioanon.datasets import load_fsdd

    t = load_fsdd(data_home, limit=1)
    assert t.X.shape == (60, 400)
    assert {"speaker", "digit"} <= set(t.labels.columns)
