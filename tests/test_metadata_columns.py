"""Numeric metadata columns are never released as features by accident."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.errors import BioanonError
from bioanon.metadata_columns import check_feature_columns, metadata_like_columns
from bioanon.table import FeatureTable


def _fsdd_like(n: int = 60) -> pd.DataFrame:
    """The label columns of FSDD's labels.csv (as ``bioanon extract`` writes them into a CSV)
    and a few feature columns."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "file": [f"recordings/{i % 10}_s{i % 3}_{i // 30}.wav" for i in range(n)],
        "speaker": [f"s{i % 3}" for i in range(n)], "digit": np.arange(n) % 10,
        "take": np.arange(n) // 30, "gender": "male", "accent": "x", "split": "train",
        "n_samples": rng.integers(2000, 9000, n), "sample_rate": 8000})
    for j in range(4):
        frame[f"mfcc{j}_t0"] = rng.normal(size=n)
    return frame


def test_metadata_is_found_by_name_and_by_values():
    rng = np.random.default_rng(1)
    n = 50
    X = np.c_[np.full(n, 3.0), np.arange(n), rng.integers(0, 3, n), rng.normal(size=(n, 2)),
              np.zeros(n)]
    found = metadata_like_columns(X, ["gain", "row", "level", "acc_x_mean", "frame_count",
                                      "dmfcc0_t0"])
    assert set(found) == {"gain", "row", "level", "frame_count"}  # a constant 0 is a feature
    assert "constant 3" in found["gain"]
    assert "a different integer on every record" in found["row"]
    assert "3 distinct integers" in found["level"]
    assert "named like" in found["frame_count"]
    # names of bioanon's own extractors never look like metadata
    names = ["mfcc3_t2", "dmfcc0_t9", "spk17", "px12_40", "emb3", "acc_x_t0", "gyro_z_p90"]
    assert metadata_like_columns(rng.normal(size=(n, len(names))), names) == {}


def test_a_csv_names_every_column_to_name_in_one_round(tmp_path):
    p = tmp_path / "voice.csv"
    _fsdd_like().to_csv(p, index=False)
    with pytest.raises(BioanonError) as err:
        FeatureTable.read(p, ["digit", "speaker"], keep_as_feature=[])
    msg = str(err.value)
    assert "\n" not in msg
    for col in ("file", "gender", "accent", "split", "n_samples", "sample_rate", "take"):
        assert f"'{col}'" in msg, col
    assert "constant 8000" in msg and "keep_as_feature" in msg
    # named as labels: nothing left to refuse; the features are the MFCCs only
    t = FeatureTable.read(p, ["digit", "speaker", "file", "gender", "accent", "split",
                              "n_samples", "sample_rate", "take"], keep_as_feature=[])
    assert t.feature_names == [f"mfcc{j}_t0" for j in range(4)]
    # not checked when the table is not to be released (no keep_as_feature)
    t = FeatureTable.read(p, ["digit", "speaker", "file", "gender", "accent", "split"])
    assert "n_samples" in t.feature_names


def test_keep_as_feature_keeps_a_column_knowingly(tmp_path):
    p = tmp_path / "voice.csv"
    _fsdd_like().drop(columns=["file", "gender", "accent", "split"]).to_csv(p, index=False)
    with pytest.raises(BioanonError, match=r"'sample_rate' \(constant 8000"):
        FeatureTable.read(p, ["digit", "speaker", "take"], keep_as_feature=["n_samples"])
    t = FeatureTable.read(p, ["digit", "speaker", "take"],
                          keep_as_feature=["n_samples", "sample_*"])
    assert {"n_samples", "sample_rate"} <= set(t.feature_names)
    assert list(t.meta["kept_as_feature"]) == ["n_samples", "sample_rate"]
    assert "constant 8000" in t.meta["kept_as_feature"]["sample_rate"]
    with pytest.raises(BioanonError, match=r"keep_as_feature=nope names no feature column"):
        FeatureTable.read(p, ["digit", "speaker", "take"], keep_as_feature=["nope"])


def test_a_bioanon_parquet_is_trusted_and_a_pandas_one_is_checked(tmp_path):
    frame = _fsdd_like()
    labels = ["file", "speaker", "digit", "take", "gender", "accent", "split", "n_samples",
              "sample_rate"]
    ours = tmp_path / "ours.parquet"
    FeatureTable.from_frame(frame, labels).write(ours)
    t = FeatureTable.read(ours, ["digit", "speaker"], keep_as_feature=[])
    assert t.n_features == 4 and "n_samples" in t.labels.columns
    # read with pandas and written back: bioanon's record of the label columns is lost
    theirs = tmp_path / "theirs.parquet"
    pd.read_parquet(ours).to_parquet(theirs)
    with pytest.raises(BioanonError) as err:
        FeatureTable.read(theirs, ["digit", "speaker"])
    msg = str(err.value)
    assert "no bioanon metadata" in msg and "pandas.to_parquet" in msg
    assert "FeatureTable.write" in msg and "not numeric" in msg
    with pytest.raises(BioanonError, match="n_samples"):
        FeatureTable.read(theirs, ["digit", "speaker", "file", "gender", "accent", "split"],
                          keep_as_feature=[])


def test_a_dataframe_is_checked_when_released():
    frame = _fsdd_like().drop(columns=["file", "gender", "accent", "split"])
    with pytest.raises(BioanonError, match="the DataFrame does not say"):
        FeatureTable.from_frame(frame, ["digit", "speaker"], keep_as_feature=["take"])
    X = frame[["mfcc0_t0", "mfcc1_t0"]].to_numpy()
    assert check_feature_columns(X, ["mfcc0_t0", "mfcc1_t0"]) == {}


def test_integer_columns_in_blocks_equal_the_whole_matrix_check(monkeypatch):
    """Checked a few rows at a time (the columns ruled out early skipped afterwards), the
    whole-number columns are those of the whole-matrix check, a column whose first fraction
    appears only in the last rows included (inf is no whole number: past 2**53 a float64
    says nothing about fractions)."""
    from bioanon import metadata_columns

    monkeypatch.setattr(metadata_columns, "_BLOCK_BYTES", 3 * 8 * 6)  # 3 rows of 6 columns
    rng = np.random.default_rng(2)
    n = 20
    X = np.c_[np.arange(n), rng.normal(size=n), rng.integers(0, 4, n), np.arange(n) + 0.0,
              np.zeros(n), np.full(n, np.inf)]
    X[-1, 3] = 0.5  # whole until the last row
    found = metadata_columns.integer_columns(X)
    whole = np.all((X == np.round(X)) & (np.abs(X) < 2.0**53), axis=0)
    assert found.tolist() == whole.tolist()
    assert found.tolist() == [True, False, True, False, True, False]
    assert metadata_columns.integer_columns(np.empty((0, 3))).tolist() == [True] * 3


def test_float32_features_at_the_top_of_their_range_are_not_metadata(tmp_path):
    """Every float32 past 2**24 is a whole number: being whole says nothing there, so
    measurements at ±3e38 are features; an integer-typed column of ids that large is still
    an id (its type says so)."""
    import numpy as np
    import pandas as pd

    from bioanon.metadata_columns import metadata_like_columns
    from bioanon.table import FeatureTable

    rng = np.random.default_rng(0)
    big = (rng.choice([-1.0, 1.0], size=(40, 2)) * rng.uniform(1e37, 3e38, size=(40, 2)))
    X = big.astype(np.float32)
    assert metadata_like_columns(X, ["a", "b"]) == {}
    frame = pd.DataFrame({"who": list("ab") * 20, "a": X[:, 0], "b": X[:, 1],
                          "c": rng.normal(size=40), "code": np.arange(40) * 10**9 + 2**40})
    p = tmp_path / "t.csv"
    frame.to_csv(p, index=False)
    with pytest.raises(BioanonError) as exc:
        FeatureTable.read(p, ["who"], keep_as_feature=[])
    assert "'code' (a different integer on every record)" in str(exc.value)
    assert "'a'" not in str(exc.value) and "'b'" not in str(exc.value)
    t = FeatureTable.read(p, ["who"], keep_as_feature=["code"])
    assert t.feature_names == ["a", "b", "c", "code"]
