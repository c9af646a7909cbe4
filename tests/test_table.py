"""FeatureTable: round trips through every format and a clear error for each bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bioanon.errors import BioanonError
from bioanon.table import FeatureTable


def _table() -> FeatureTable:
    rng = np.random.default_rng(0)
    labels = pd.DataFrame({"speaker": ["a", "b", "a", "c"], "digit": [1, 2, 3, 1]})
    return FeatureTable(rng.normal(size=(4, 3)), labels, ["m0", "m1", "m2"], {"source": "t"})


@pytest.mark.parametrize("ext", [".parquet", ".csv", ".npz"])
def test_round_trip_keeps_features_labels_and_names(tmp_path, ext):
    t = _table()
    path = t.write(tmp_path / f"t{ext}")
    back = FeatureTable.read(path, label_columns=["speaker", "digit"])
    np.testing.assert_allclose(back.X, t.X, rtol=1e-6)
    assert back.X.dtype == np.float32
    assert back.feature_names == t.feature_names
    assert back.labels["speaker"].tolist() == ["a", "b", "a", "c"]
    assert back.labels["digit"].astype(int).tolist() == [1, 2, 3, 1]


def test_parquet_remembers_label_columns(tmp_path):
    path = _table().write(tmp_path / "t.parquet")
    back = FeatureTable.read(path)
    assert list(back.labels.columns) == ["speaker", "digit"]
    back2 = FeatureTable.read(path, label_columns=["speaker"])  # digit stays a label
    assert back2.n_features == 3


def test_nan_in_features_is_refused_with_position():
    X = np.zeros((3, 2))
    X[1, 1] = np.nan
    with pytest.raises(BioanonError, match=r"NaN/inf.*record 1, feature 1"):
        FeatureTable(X, pd.DataFrame({"a": [1, 2, 3]}))


def test_inf_in_csv_is_refused(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("who,f0\na,1.0\nb,inf\n")
    with pytest.raises(BioanonError, match="NaN/inf"):
        FeatureTable.read(p, ["who"])


def test_non_numeric_feature_column_names_the_column(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("who,mood,f0\na,happy,1\nb,sad,2\n")
    with pytest.raises(BioanonError, match=r"\['mood'\] are not numeric"):
        FeatureTable.read(p, ["who"])


def test_misspelled_label_column_suggests_closest(tmp_path):
    path = _table().write(tmp_path / "t.csv")
    with pytest.raises(BioanonError, match="did you mean 'speaker'"):
        FeatureTable.read(path, ["speakr"])


def test_empty_file_and_header_only_file(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(BioanonError, match="empty"):
        FeatureTable.read(empty, [])
    header = tmp_path / "h.csv"
    header.write_text("who,f0\n")
    with pytest.raises(BioanonError, match="no records"):
        FeatureTable.read(header, ["who"])


def test_duplicate_column_names_are_refused(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("who,f0,f0\na,1,2\n")
    with pytest.raises(BioanonError, match="duplicate"):
        FeatureTable.read(p, ["who"])
    with pytest.raises(BioanonError, match="duplicate"):
        FeatureTable(np.zeros((1, 2)), pd.DataFrame({"f0": [1]}), ["f0", "f1"])


def test_single_class_label_is_refused():
    t = FeatureTable(np.zeros((3, 2)), pd.DataFrame({"g": ["x", "x", "x"]}))
    with pytest.raises(BioanonError, match="single class"):
        t.label("g")


def test_mismatched_lengths_are_refused():
    with pytest.raises(BioanonError, match="labels have 2 rows but X has 3"):
        FeatureTable(np.zeros((3, 2)), pd.DataFrame({"g": ["x", "y"]}))


def test_wrong_shape_and_missing_file(tmp_path):
    with pytest.raises(BioanonError, match="must be 2-D"):
        FeatureTable(np.zeros(3), pd.DataFrame({"g": [1, 2, 3]}))
    with pytest.raises(BioanonError, match="does not exist"):
        FeatureTable.read(tmp_path / "missing.parquet")
    with pytest.raises(BioanonError, match="unknown table format"):
        FeatureTable.read(tmp_path / "x.xlsx")


def test_write_is_atomic_and_leaves_no_temporary_files(tmp_path):
    t = _table()
    t.write(tmp_path / "t.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
