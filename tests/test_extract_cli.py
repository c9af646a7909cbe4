"""``bioanon extract face|voice|motion``: outputs, skipped-files list, failures."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.table import FeatureTable

runner = CliRunner()


def test_extract_voice_with_a_broken_file(tmp_path, data_home):
    fsdd = data_home / "fsdd"
    labels = pd.read_csv(fsdd / "labels.csv")
    labels = labels[labels["take"] == 3].reset_index(drop=True)
    src = tmp_path / "wavs"
    src.mkdir()
    for f in labels["file"][:12]:
        (src / f.split("/")[-1]).symlink_to(fsdd / f)
    (src / "broken.wav").write_bytes(b"RIFFxxxxWAVE")
    table = labels[:12].assign(file=[f.split("/")[-1] for f in labels["file"][:12]])
    table = pd.concat([table, pd.DataFrame({"file": ["broken.wav", "missing.wav"],
                                            "speaker": ["x", "y"], "digit": [0, 0]})])
    table.to_csv(tmp_path / "labels.csv", index=False)
    out = tmp_path / "voice.parquet"
    res = runner.invoke(app, ["extract", "voice", str(src), "--labels",
                              str(tmp_path / "labels.csv"), "--features", "mfcc",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    t = FeatureTable.read(out)
    assert t.X.shape == (12, 400)
    assert "file" not in t.labels.columns  # file names may identify people
    assert set(t.labels["speaker"]) == set(labels["speaker"][:12])
    skipped = pd.read_csv(tmp_path / "voice.parquet.skipped.csv")
    assert sorted(skipped["file"].str.split("/").str[-1]) == ["broken.wav", "missing.wav"]
    assert skipped["reason"].str.len().min() > 10
    assert t.meta["n_skipped"] == 2


def test_extract_fails_only_when_nothing_is_read(tmp_path):
    src = tmp_path / "wavs"
    src.mkdir()
    (src / "a.wav").write_bytes(b"junk")
    out = tmp_path / "out.parquet"
    res = runner.invoke(app, ["extract", "voice", str(src), "-o", str(out)])
    assert res.exit_code == 2
    assert "no recording could be read" in res.output
    assert not out.exists() and not (tmp_path / "out.parquet.skipped.csv").exists()
    res = runner.invoke(app, ["extract", "voice", str(tmp_path / "nope"), "-o", str(out)])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_extract_face_lists_centre_crops(tmp_path, data_home):
    pytest.importorskip("dlib", reason="face extra not installed: pip install 'bioanon[face]'")
    yale = data_home / "yale_faces" / "images"
    src = tmp_path / "photos"
    src.mkdir()
    for name in ("subject07_happy.png", "subject08_sad.png"):
        shutil.copy(yale / name, src / name)
    from PIL import Image

    Image.fromarray(np.full((100, 100), 200, np.uint8)).save(src / "wall.png")
    (src / "notes.png").write_text("not a photo")
    out = tmp_path / "faces.parquet"
    res = runner.invoke(app, ["extract", "face", str(src), "--features", "pixels",
                              "--size", "32", "-o", str(out), "--keep-file"])
    assert res.exit_code == 0, res.output
    t = FeatureTable.read(out)
    assert t.X.shape == (3, 32 * 32)
    assert sorted(t.labels["file"]) == ["subject07_happy.png", "subject08_sad.png", "wall.png"]
    report = pd.read_csv(tmp_path / "faces.parquet.skipped.csv")
    actions = dict(zip(report["file"].str.split("/").str[-1], report["action"], strict=True))
    assert actions == {"notes.png": "skipped", "wall.png": "centre crop"}
    res = runner.invoke(app, ["extract", "face", str(src), "--no-face", "skip",
                              "--features", "landmarks", "-o", str(tmp_path / "lm.parquet")])
    assert res.exit_code == 0, res.output
    assert FeatureTable.read(tmp_path / "lm.parquet").X.shape == (2, 2278)


def test_extract_motion(tmp_path, data_home):
    har = data_home / "sp_sw_har"
    seg = pd.read_csv(har / "segments.csv")
    seg = seg[seg["subject"].isin(["s03", "s04"])]
    seg.to_csv(tmp_path / "segments.csv", index=False)
    out = tmp_path / "motion.parquet"
    res = runner.invoke(app, ["extract", "motion", str(har), "--labels",
                              str(tmp_path / "segments.csv"), "--stream-labels",
                              str(har / "labels.csv"), "--device", "smartwatch",
                              "--features", "stats", "--window", "150", "--hop", "75",
                              "--channels", "x_acc,y_acc,z_acc,x_gyro", "-o", str(out)])
    assert res.exit_code == 0, res.output
    t = FeatureTable.read(out)
    assert t.n_features == 7 * 5
    assert set(t.labels["device"]) == {"smartwatch"}
    assert set(t.labels["subject"]) == {"s03", "s04"}
    res = runner.invoke(app, ["extract", "motion", str(har), "-o", str(out)])
    assert res.exit_code == 2 and "--labels" in res.output


def _tones(tmp_path, n: int):
    """A folder of ``n`` half-second tones, as WAV files."""
    from scipy.io import wavfile

    src = tmp_path / "wavs"
    src.mkdir()
    t = np.arange(4000) / 8000.0
    for i in range(n):
        wavfile.write(src / f"tone{i}.wav", 8000,
                      (0.3 * np.sin(2 * np.pi * (200 + 50 * i) * t) * 32767).astype(np.int16))
    return src


def test_no_empty_skipped_list_and_no_stale_one(tmp_path):
    src = _tones(tmp_path, 4)
    (src / "broken.wav").write_bytes(b"RIFFxxxxWAVE")
    out = tmp_path / "voice.csv"
    listing = tmp_path / "voice.csv.skipped.csv"
    res = runner.invoke(app, ["extract", "voice", str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert list(pd.read_csv(listing)["file"].str.split("/").str[-1]) == ["broken.wav"]
    (src / "broken.wav").unlink()
    res = runner.invoke(app, ["extract", "voice", str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert FeatureTable.read(out).n_records == 4
    assert not listing.exists()  # nothing skipped: no empty list, and the stale one is gone


@pytest.mark.parametrize("what", ["notes", "symlink"])
def test_a_users_file_at_the_skipped_list_is_refused_before_work(tmp_path, what):
    src = _tones(tmp_path, 2)
    out, listing = tmp_path / "voice.parquet", tmp_path / "voice.parquet.skipped.csv"
    mine = tmp_path / "mine.txt"
    mine.write_text("my notes on the skipped recordings\n")
    if what == "symlink":
        listing.symlink_to(mine)
    else:
        listing.write_text(mine.read_text())
    res = runner.invoke(app, ["extract", "voice", str(src), "-o", str(out)])
    assert res.exit_code == 2, res.output  # nothing was skipped: it would have removed it
    assert "is a file bioanon did not write" in " ".join(res.output.split())
    assert not out.exists() and listing.read_text() == mine.read_text()
