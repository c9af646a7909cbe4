"""Motion windows: never across streams, majority labels, channels, features, devices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.datasets import load_sensor_csv, load_sp_sw_har
from bioanon.errors import BioanonError
from bioanon.features.motion import MotionFeatures, window_stream


def make_streams(tmp_path, lengths=(250, 130, 410), rng_seed=0):
    """Stream k holds the constant value k on every channel; two segments per stream."""
    rng = np.random.default_rng(rng_seed)
    segs = []
    for k, n in enumerate(lengths):
        t = np.cumsum(rng.integers(8, 12, size=n)).astype(float)
        df = pd.DataFrame({"x_acc": k, "y_acc": k, "z_acc": k + 9.8, "x_gyro": k,
                           "timestamp": t})
        df.to_csv(tmp_path / f"s{k}.csv", index=False)
        cut = n // 3
        segs += [{"file": f"s{k}.csv", "start_row": 0, "end_row": cut, "activity": "SIT",
                  "subject": f"p{k % 2}", "device": "phone" if k != 1 else "watch"},
                 {"file": f"s{k}.csv", "start_row": cut, "end_row": n, "activity": "WALK",
                  "subject": f"p{k % 2}", "device": "phone" if k != 1 else "watch"}]
    return pd.DataFrame(segs)


def test_windows_never_straddle_two_streams(tmp_path):
    segs = make_streams(tmp_path)
    window, hop = 40, 15
    t = load_sensor_csv(tmp_path, segs, window=window, hop=hop, features="raw", step=1,
                        channels=["x_acc"])
    X = t.X
    # every window is constant: all its samples come from one stream
    assert np.all(X.max(axis=1) == X.min(axis=1))
    counts = np.bincount(X[:, 0].astype(int))
    expected = [(n - window) // hop + 1 for n in (250, 130, 410)]
    assert counts.tolist() == expected
    # stream-level labels follow their stream
    assert set(t.labels.loc[X[:, 0] == 1, "device"]) == {"watch"}
    assert set(t.labels.loc[X[:, 0] == 2, "subject"]) == {"p0"}


def test_majority_segment_label():
    values = np.arange(10, dtype=np.float32)[:, None]
    labels = np.array(["A"] * 6 + ["B"] * 4)
    wins, acts = window_stream(values, labels, window=4, hop=2)
    assert wins.shape == (4, 4, 1)
    # windows: rows 0-3 (AAAA), 2-5 (AAAA), 4-7 (AABB: tie -> first class), 6-9 (BBBB)
    assert acts.tolist() == ["A", "A", "A", "B"]
    _, acts = window_stream(values, np.array(["A"] * 3 + ["B"] * 7), window=5, hop=5)
    assert acts.tolist() == ["A", "B"]  # rows 0-4: AAABB, rows 5-9: BBBBB


def test_unlabelled_windows_are_dropped(tmp_path):
    segs = make_streams(tmp_path, lengths=(300,))
    segs = segs[segs["activity"] == "WALK"]  # rows 0..99 carry no segment
    t = MotionFeatures(window=50, hop=50, step=1, channels=["x_acc"]).transform(
        {"s0.csv": tmp_path / "s0.csv"}, segs)
    assert t.n_records == 4 and set(t.labels["activity"]) == {"WALK"}


def test_channels_features_and_resampling(tmp_path):
    segs = make_streams(tmp_path)
    raw = load_sensor_csv(tmp_path, segs, window=20, hop=20, step=4,
                          channels=["x_acc", "x_gyro"])
    assert raw.n_features == 5 * 2 and raw.feature_names[:2] == ["x_acc_t0", "x_gyro_t0"]
    stats = load_sensor_csv(tmp_path, segs, window=20, hop=20, features="stats",
                            channels=["x_acc", "y_acc", "z_acc"])
    assert stats.n_features == 7 * 4 and "acc_mag_mean" in stats.feature_names
    mag = stats.X[:, stats.feature_names.index("acc_mag_mean")]
    k = stats.X[:, 0]
    assert np.allclose(mag, np.sqrt(2 * k**2 + (k + 9.8) ** 2), rtol=1e-5)
    fast = load_sensor_csv(tmp_path, segs, window=20, hop=20, rate_hz=200.0,
                           channels=["x_acc"])
    assert fast.n_records > 1.6 * raw.n_records  # about twice the samples at 200 Hz
    with pytest.raises(BioanonError, match="sensor channel 'x_ac' not found"):
        load_sensor_csv(tmp_path, segs, channels=["x_ac"], window=20, hop=20)


def test_device_filter_and_skipped_streams(tmp_path):
    segs = make_streams(tmp_path)
    watch = load_sensor_csv(tmp_path, segs, where={"device": "watch"}, window=20, hop=20,
                            channels=["x_acc"], step=1)
    assert set(watch.X[:, 0]) == {1.0}
    (tmp_path / "s2.csv").write_text("")
    t = load_sensor_csv(tmp_path, segs, window=20, hop=20, channels=["x_acc"])
    assert [s["file"] for s in t.meta["skipped"]] == ["s2.csv"]
    with pytest.raises(BioanonError, match="no stream has device=tablet"):
        load_sensor_csv(tmp_path, segs, where={"device": "tablet"})


def test_real_streams_per_device_with_gravity_removed(data_home):
    phone = load_sp_sw_har(data_home, device="smartphone", subjects=["s02"], window=100,
                           hop=100, features="stats")
    watch = load_sp_sw_har(data_home, device="smartwatch", subjects=["s02"], window=100,
                           hop=100, features="stats", gravity="remove",
                           channels=["x_acc", "y_acc", "z_acc"])
    assert set(phone.labels["device"]) == {"smartphone"}
    assert set(watch.labels["device"]) == {"smartwatch"}
    assert phone.n_features == 49 and watch.n_features == 28
    g_phone = phone.X[:, phone.feature_names.index("acc_mag_mean")]
    g_watch = watch.X[:, watch.feature_names.index("acc_mag_mean")]
    assert np.median(g_phone) > 8.0  # gravity included
    assert np.median(g_watch) < 3.0  # user acceleration only
    assert set(phone.labels["activity"]) >= {"WALKING", "TURNING"}


def test_a_text_cell_skips_its_own_stream_not_the_others(tmp_path):
    """Stream s0's 'x_acc' holds one cell of text. Read as text, that column once left s0's
    channels, and s0 (the first stream) then decided everyone's: both good streams were
    skipped for having an 'x_acc', and the release kept the broken one, a channel short."""
    segs = make_streams(tmp_path)
    broken = pd.read_csv(tmp_path / "s0.csv")
    broken["x_acc"] = broken["x_acc"].astype(object)
    broken.loc[3, "x_acc"] = "n/a?"
    broken.to_csv(tmp_path / "s0.csv", index=False)
    t = load_sensor_csv(tmp_path, segs, window=20, hop=20, step=4)
    assert [s["file"] for s in t.meta["skipped"]] == ["s0.csv"]
    assert "column 'x_acc' holds text at row 3 ('n/a?')" in t.meta["skipped"][0]["reason"]
    assert t.meta["channels"] == ["x_acc", "y_acc", "z_acc", "x_gyro"]
    assert set(np.unique(t.X[:, 0])) == {1.0, 2.0}  # streams s1 and s2, every channel


def test_the_channels_most_streams_have_decide_not_the_first_stream(tmp_path):
    """The first stream lacks 'x_gyro' (a device without a gyroscope): it is the one skipped,
    and the other two keep every channel (the first stream's channels once decided)."""
    segs = make_streams(tmp_path)
    pd.read_csv(tmp_path / "s0.csv").drop(columns=["x_gyro"]).to_csv(tmp_path / "s0.csv",
                                                                       index=False)
    t = load_sensor_csv(tmp_path, segs, window=20, hop=20, step=4)
    assert [s["file"] for s in t.meta["skipped"]] == ["s0.csv"]
    assert "differ from the channels most streams have" in t.meta["skipped"][0]["reason"]
    assert t.meta["channels"] == ["x_acc", "y_acc", "z_acc", "x_gyro"]


def test_named_channels_with_a_text_cell_skip_the_stream(tmp_path):
    """``channels=`` named by the user: a text cell in one stream skips that stream with the
    cell named (it was an internal error: 'could not convert string to float'), and a
    channel of text throughout is named as no sensor channel."""
    segs = make_streams(tmp_path)
    broken = pd.read_csv(tmp_path / "s1.csv")
    broken["x_acc"] = broken["x_acc"].astype(object)
    broken.loc[0, "x_acc"] = "oops"
    broken.to_csv(tmp_path / "s1.csv", index=False)
    t = load_sensor_csv(tmp_path, segs, window=20, hop=20, channels=["x_acc", "y_acc"])
    assert [s["file"] for s in t.meta["skipped"]] == ["s1.csv"]
    assert "holds text at row 0 ('oops')" in t.meta["skipped"][0]["reason"]
    for k in range(3):
        frame = pd.read_csv(tmp_path / f"s{k}.csv")
        frame["device"] = "phone"
        frame.to_csv(tmp_path / f"s{k}.csv", index=False)
    with pytest.raises(BioanonError, match="sensor channel 'device' holds text"):
        load_sensor_csv(tmp_path, segs, window=20, hop=20, channels=["device"])
