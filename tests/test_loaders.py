"""Dataset loaders: data home, Yale, FSDD, SP-SW-HAR and the generic folder forms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.datasets import (
    data_home,
    load_fsdd,
    load_sp_sw_har,
    load_wav_folder,
    load_yale_faces,
)
from bioanon.datasets.yale_faces import deduplicate
from bioanon.errors import BioanonError


def test_data_home_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BIOANON_DATA", str(tmp_path))
    assert data_home() == tmp_path
    monkeypatch.delenv("BIOANON_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # no ../shared/datasets here
    assert data_home().name == "bioanon_data"
    (tmp_path / "work").mkdir()
    (tmp_path / "shared" / "datasets").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")  # beside a checkout: where make test looks
    assert data_home().resolve() == (tmp_path / "shared" / "datasets").resolve()
    with pytest.raises(BioanonError, match="BIOANON_DATA"):
        load_fsdd(tmp_path)


def test_yale_duplicates_are_dropped(data_home):
    labels = pd.read_csv(data_home / "yale_faces" / "labels.csv")
    kept = deduplicate(labels)
    assert len(kept) == len(labels) - 9  # nine byte-identical pairs
    expr = deduplicate(labels[labels["condition_group"] == "expression"].reset_index(drop=True))
    assert len(expr) == 89  # only subject04's sad = normal falls inside the group
    assert not ((expr["subject"] == "subject04") & (expr["condition"] == "normal")).any() or \
        not ((expr["subject"] == "subject04") & (expr["condition"] == "sad")).any()


def test_yale_loader_pixels(data_home):
    pytest.importorskip("dlib", reason="face extra not installed: pip install 'bioanon[face]'")
    t = load_yale_faces(data_home, features="pixels", subset="expression",
                        subjects=["subject11", "subject12"], size=24)
    assert t.X.shape == (12, 24 * 24)
    assert t.meta["image_shape"] == [24, 24]
    assert set(t.labels["expression"]) == {"happy", "sad", "sleepy", "surprised", "wink",
                                           "normal"}
    assert list(t.labels.columns) == ["subject", "condition", "condition_group", "expression"]
    with pytest.raises(BioanonError, match="subset"):
        load_yale_faces(data_home, subset="smiles")


def test_sp_sw_har_keeps_its_signature(data_home):
    t = load_sp_sw_har(data_home, "smartwatch", 200, 100, "raw", subjects=["s05"])
    assert t.n_features == 300 and set(t.labels["subject"]) == {"s05"}
    both = load_sp_sw_har(data_home, device="both", subjects=["s05"], features="stats")
    assert set(both.labels["device"]) == {"smartphone", "smartwatch"}
    assert both.n_records > 1.8 * t.n_records


def test_wav_folder_without_labels(tmp_path, data_home):
    fsdd = data_home / "fsdd" / "recordings"
    for name in ("0_theo_1.wav", "5_lucas_2.wav"):
        (tmp_path / name).symlink_to(fsdd / name)
    t = load_wav_folder(tmp_path, keep_file=True)
    assert t.labels["file"].tolist() == ["0_theo_1.wav", "5_lucas_2.wav"]
    assert t.X.shape == (2, 400) and np.isfinite(t.X).all()
    with pytest.raises(BioanonError,
                       match="file-name column of the labels 'fil' not found; available: name"):
        load_wav_folder(tmp_path, pd.DataFrame({"name": ["0_theo_1.wav"]}), file_column="fil")


def test_yale_eigenfaces_load_the_same_every_time(data_home):
    # eigenfaces come from a randomized PCA: the loader seeds it, so a benchmark or a test
    # that loads the folder twice (or in two processes) judges the same table
    pytest.importorskip("dlib", reason="face extra not installed: pip install 'bioanon[face]'")
    kw = {"features": "eigen", "subset": "expression", "subjects": ["subject11", "subject12"],
          "size": 24, "n_components": 8}
    a, b = load_yale_faces(data_home, **kw), load_yale_faces(data_home, **kw)
    assert a.X.shape[1] == 8 and np.array_equal(a.X, b.X)
