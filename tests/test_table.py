"""FeatureTable: round trips through every format and a clear error for each bad input."""

from __future__ import annotations

import datetime
import decimal

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


@pytest.mark.parametrize("dtype", ["Int64", "UInt8", "Int16"])
def test_a_parquet_integer_label_with_missing_values_stays_integer(tmp_path, dtype):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # written by another tool (no pandas metadata in the file: Spark, polars, pyarrow)
    pq.write_table(pa.table({"age": pa.array([31, None, 36, 31], type=dtype.lower()),
                             "n": [1, 2, 3, 4], "m0": np.arange(4.0)}), tmp_path / "in.parquet")
    back = FeatureTable.read(tmp_path / "in.parquet", label_columns=["age", "n"])
    assert str(back.labels["age"].dtype) == dtype and back.labels["n"].dtype == np.int64
    back.write(tmp_path / "out.parquet")  # a kept column is written as it came (not 31.0)
    column = pq.read_table(tmp_path / "out.parquet", columns=["age"]).column(0)
    assert str(column.type) == dtype.lower() and column.to_pylist() == [31, None, 36, 31]


def test_a_parquet_decimal_feature_is_read_as_a_number(tmp_path):
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    values = [decimal.Decimal(v) for v in ("1.250", "-0.500", "3.000", "0.125")]
    pq.write_table(pa.table({"who": ["a", "b", "a", "b"], "m0": np.arange(4.0),
                             "d": pa.array(values, pa.decimal128(6, 3))}), tmp_path / "d.parquet")
    back = FeatureTable.read(tmp_path / "d.parquet", label_columns=["who"])
    assert back.feature_names == ["m0", "d"]
    assert back.X[:, 1].tolist() == [1.25, -0.5, 3.0, 0.125]
    values[2] = None  # a missing decimal: refused by name, as a missing float is
    pq.write_table(pa.table({"who": ["a", "b", "a", "b"],
                             "d": pa.array(values, pa.decimal128(6, 3))}), tmp_path / "n.parquet")
    with pytest.raises(BioanonError, match="NaN/inf value.*column 'd'.*record 2"):
        FeatureTable.read(tmp_path / "n.parquet", label_columns=["who"])


@pytest.mark.parametrize("named", [True, False])
def test_a_csv_label_pandas_takes_for_missing_is_a_class(tmp_path, named):
    path = tmp_path / "t.csv"  # Namibia's code, a null token, an empty cell
    path.write_text("land,who,m0\nNA,null,0.5\nDE,ab,0.7\n,ab,0.9\nNA,cd,1.1\n")
    back = FeatureTable.read(path, label_columns=["land", "who"] if named else None)
    assert back.labels["land"].tolist()[:2] == ["NA", "DE"] and pd.isna(back.labels["land"][2])
    assert back.labels["who"].tolist() == ["null", "ab", "ab", "cd"]
    back.write(tmp_path / "out.csv")  # written back as the file has it
    assert (tmp_path / "out.csv").read_text().splitlines()[1:4] == [
        "NA,null,0.5", "DE,ab,0.7", ",ab,0.9"]


def test_labels_stored_as_bytes_are_read_as_text_or_refused_as_a_role(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"who": pa.array([b"p1", b"p2", b"p1"], pa.binary()),
                             "raw": pa.array([b"\xff", b"a", b"b"], pa.binary()),
                             "m0": np.arange(3.0)}), tmp_path / "b.parquet")
    back = FeatureTable.read(tmp_path / "b.parquet", label_columns=["who", "raw"])
    assert back.labels["who"].tolist() == ["p1", "p2", "p1"]  # an old writer's strings
    assert back.label("who").tolist() == ["p1", "p2", "p1"]
    with pytest.raises(BioanonError, match=r"label column 'raw' holds bytes \(b'\\xff' at "
                                           r"record 0\), not text; decode them"):
        back.label("raw")  # not UTF-8: bytes, refused once given a role
    np.savez(tmp_path / "b.npz", X=np.zeros((3, 2)), who=np.array([b"p1", b"p2", b"p1"]))
    assert FeatureTable.read(tmp_path / "b.npz").labels["who"].tolist() == ["p1", "p2", "p1"]


def test_nan_in_features_is_refused_with_position():
    X = np.zeros((3, 2))
    X[1, 1] = np.nan
    with pytest.raises(BioanonError, match=r"NaN/inf.*in column 'f1' \(first at record 1\)"):
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
    t = FeatureTable(np.zeros((3, 2)), pd.DataFrame({"g": np.ones(3, dtype=np.int64)}))
    with pytest.raises(BioanonError, match=r"has a single class \(1\); choose"):
        t.label("g")  # the value as the user wrote it, not NumPy's repr


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


def test_npz_accepts_a_label_named_file(tmp_path):
    t = FeatureTable(np.ones((2, 2)), pd.DataFrame({"file": ["a.wav", "b.wav"]}))
    back = FeatureTable.read(t.write(tmp_path / "t.npz"))
    assert back.labels["file"].tolist() == ["a.wav", "b.wav"]


def test_parquet_in_many_row_groups_round_trips_and_is_hashed(tmp_path, monkeypatch):
    """Row groups written from two alternating column buffers and read back through the
    pipelined reader keep every value, label and order; the hash computed while writing is
    the file's."""
    import pyarrow.parquet as pq

    from bioanon import table as table_module
    from bioanon.io import file_sha256

    monkeypatch.setattr(table_module, "_ROW_GROUP_BYTES", 7 * 4 * 5)  # 7 rows of 5 features
    rng = np.random.default_rng(3)
    X = rng.normal(size=(53, 5)).astype(np.float32)
    labels = pd.DataFrame({"who": rng.choice(["ann", "bo", "cy"], 53), "n": np.arange(53)})
    t = FeatureTable(X, labels, [f"f{j}" for j in range(5)])
    digest = t.write_to(tmp_path / "t.parquet")
    assert digest == file_sha256(tmp_path / "t.parquet")
    meta = pq.ParquetFile(tmp_path / "t.parquet").metadata
    assert meta.num_row_groups == 8  # 7 full groups of 7 rows and one of 4
    stats = meta.row_group(0)
    assert stats.column(0).is_stats_set and not stats.column(3).is_stats_set  # labels only
    back = FeatureTable.read(tmp_path / "t.parquet")
    np.testing.assert_array_equal(back.X, X)
    assert back.labels["who"].tolist() == labels["who"].tolist()
    assert back.labels["n"].tolist() == list(range(53))


def test_parquet_with_null_feature_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    tab = pa.table({"who": ["a", "b", "c"], "f0": pa.array([1.0, None, 3.0])})
    pq.write_table(tab, tmp_path / "null.parquet")
    with pytest.raises(BioanonError,
                       match=r"NaN/inf value\(s\) in column 'f0' \(first at record 1\)"):
        FeatureTable.read(tmp_path / "null.parquet", label_columns=["who"])


def test_finite_check_finds_the_first_bad_cell_without_a_full_mask():
    from bioanon.table import check_finite

    X = np.zeros((4, 3), dtype=np.float32)
    check_finite(X)  # finite: no error
    X[2, 1] = -np.inf
    with pytest.raises(BioanonError, match=r"column #1 \(first at record 2\)"):
        check_finite(X)


def test_fill_rows_in_small_buffers_casts_and_keeps_every_value(monkeypatch):
    """Columns of several dtypes copied through a column buffer smaller than the rows (so
    that several blocks and a short last one are transposed) land where a direct copy puts
    them; an overflowing float64 becomes inf, as before."""
    from bioanon import table as table_module

    monkeypatch.setattr(table_module, "_FILL_BYTES", 4 * 3 * 4)  # 4 rows of 3 columns
    rng = np.random.default_rng(5)
    cols = [rng.normal(size=11), rng.integers(-5, 5, 11), rng.random(11) > 0.5]
    cols[0][7] = 1e300
    X = np.full((14, 3), -1.0, dtype=np.float32)
    with np.errstate(over="ignore"):
        expected = np.stack(cols, axis=1).astype(np.float32)
    table_module.fill_rows(X, 2, cols)
    np.testing.assert_array_equal(X[2:13], expected)
    assert np.isinf(X[9, 0])
    assert (X[:2] == -1).all() and (X[13] == -1).all()  # rows outside untouched


class _CountingName(str):
    """A column name that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        type(self).compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_duplicate_names_are_found_in_one_pass():
    """Checking 3,000 distinct names compares them a handful of times, not 3,000² / 2
    (``list.count`` per name made a 100,000-column CSV read for minutes)."""
    from bioanon.table import duplicates

    names = [_CountingName(f"f{j}") for j in range(3000)]
    _CountingName.compared = 0
    assert duplicates([*names, names[7], names[9]]) == ["f7", "f9"]
    assert _CountingName.compared < 100


def test_a_wide_csv_is_read_whole(tmp_path):
    """10 records × 20,000 features: read, labels and features in place (a wide table is
    parsed in one pass, not row chunk by row chunk)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 20_000)).astype(np.float32)
    t = FeatureTable(X, pd.DataFrame({"who": list("abcdeabcde")}))
    p = t.write(tmp_path / "wide.csv")
    back = FeatureTable.read(p, keep_as_feature=[])
    assert back.feature_names == t.feature_names
    assert list(back.labels["who"]) == list("abcdeabcde")
    np.testing.assert_array_equal(back.X, X)


def test_categorical_labels_read_as_their_values(tmp_path):
    """A label stored as a pandas categorical is read as its values (strings as strings,
    numbers as numbers): how a label is stored never changes a split, a figure or the judge's
    seed (pandas orders a categorical's codes and groups by its categories)."""
    from bioanon.certification.judge_seed import table_digest
    from bioanon.datasets import make_biometric

    t = make_biometric(n_identities=6, records_per_identity=10, n_features=32, random_state=0)
    frame = t.to_frame()
    cat = frame.copy()
    cat["expression"] = pd.Categorical(cat["expression"],
                                       categories=sorted(set(cat["expression"]))[::-1])
    cat["n"] = pd.Categorical(np.arange(len(cat)) % 3)
    frame["n"] = np.arange(len(frame)) % 3
    cat.to_parquet(tmp_path / "cat.parquet")
    labels = ["identity", "expression", "gender", "environment", "n"]
    a = FeatureTable.read(tmp_path / "cat.parquet", labels)
    b = FeatureTable.from_frame(frame, labels)
    assert not any(isinstance(d, pd.CategoricalDtype) for d in a.labels.dtypes)
    assert a.labels["n"].dtype.kind == "i"
    pd.testing.assert_frame_equal(a.labels, b.labels, check_dtype=False)
    assert pd.factorize(a.labels["expression"])[0].tolist() == (
        pd.factorize(b.labels["expression"])[0].tolist())  # codes by appearance in both
    assert table_digest(a) == table_digest(b)


def test_a_csv_label_keeps_the_text_the_file_holds(tmp_path):
    # pandas reads "00" as 0, "1e3" as 1000.0 and "true" as True: a label released from a CSV
    # must carry the values the file holds, so such a column keeps its text; a column whose
    # every value reads back the same ("0" ... "9") keeps its numbers
    from typer.testing import CliRunner

    from bioanon.cli import app
    from bioanon.datasets import make_biometric

    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=0)
    n = t.n_records
    df = pd.DataFrame(t.X, columns=t.feature_names)
    codes = t.labels["expression"].astype("category").cat.codes.to_numpy()
    df.insert(0, "expression", [f"0{c}" for c in codes])
    df.insert(1, "identity", t.labels["identity"].astype(str).to_numpy())
    df.insert(2, "flag", np.where(np.arange(n) % 2, "true", "false"))
    df.insert(3, "take", np.arange(n) % 5)
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    back = FeatureTable.read(src, label_columns=["expression", "identity", "flag", "take"])
    assert back.labels["expression"].tolist() == df["expression"].tolist()
    assert back.labels["flag"].tolist() == df["flag"].tolist()
    assert back.labels["take"].tolist() == df["take"].tolist()  # numbers read back the same
    assert back.feature_names == t.feature_names
    df.drop(columns=["flag", "take"]).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(out), "--interest",
                                   "expression", "--sensitive", "identity", "--method", "noise",
                                   "--param", "sigma=1", "--seed", "0"])
    assert res.exit_code == 0, res.output
    released = pd.read_csv(out, dtype=str)
    assert sorted(set(released["expression"])) == sorted(set(df["expression"]))


@pytest.mark.parametrize("dtype", [object, "string"])
def test_npz_writes_an_empty_label_value_empty_not_as_a_class(tmp_path, dtype):
    """An empty value of a text label column (a kept column of a CSV with an empty cell)
    was written to NPZ as the text 'nan' or '<NA>': read back, a class of its own. It is
    written '' (as CSV writes it), which every label check reads as empty."""
    labels = pd.DataFrame({"site": pd.Series(["a", None, "b", "a"], dtype=dtype)})
    FeatureTable(np.zeros((4, 2)), labels).write(tmp_path / "t.npz")
    back = FeatureTable.read(tmp_path / "t.npz")
    assert back.labels["site"].tolist() == ["a", "", "b", "a"]
    with pytest.raises(BioanonError, match=r"'site' has 1 empty value\(s\) \(first at record 1\)"):
        back.label("site")


@pytest.mark.parametrize("ext", [".parquet", ".npz", ".csv"])
def test_a_float16_label_is_grouped_as_float32_and_written_back_as_float16(tmp_path, ext):
    """pandas cannot group or index float16 ("float16 indexes are not supported", an
    internal error of evaluate); the column is held as float32 (exact) and written back in
    the type it came in, through the subsets and shuffles of a release."""
    labels = pd.DataFrame({"who": np.float16([0.1, 0.2, 0.1, 0.2]), "s": list("abab")})
    t = FeatureTable(np.zeros((4, 2)), labels)
    assert t.labels["who"].dtype == np.float32
    assert t.labels.groupby("who").size().tolist() == [2, 2]
    t.subset([3, 2, 1, 0]).write(tmp_path / f"t{ext}")
    if ext == ".npz":
        assert np.load(tmp_path / "t.npz")["who"].dtype == np.float16
    elif ext == ".parquet":
        import pyarrow.parquet as pq

        assert str(pq.read_schema(tmp_path / "t.parquet").field("who").type) == "halffloat"
    else:
        assert (tmp_path / "t.csv").read_text().splitlines()[1].startswith("0.2,b")


@pytest.mark.parametrize(("values", "kind"), [
    (lambda: [datetime.date(2020, 1, d) for d in (1, 2)], "dates"),
    (lambda: [decimal.Decimal(d) for d in (1, 2)], "decimal numbers"),
    (lambda: pd.date_range("2020", periods=2, tz="UTC"), "timestamps with a time zone"),
])
def test_a_useful_label_of_objects_models_cannot_learn_is_refused(values, kind):
    """Dates, decimals and zoned timestamps reached scikit-learn as Python objects ("Unknown
    label type: unknown", an internal error); as a target they are refused in one line, as
    the sensitive column (compared, never learned as such) they pass."""
    t = FeatureTable(np.zeros((2, 1)), pd.DataFrame({"c": values()}))
    t.label("c")
    with pytest.raises(BioanonError, match=f"label column 'c' holds {kind} .*astype\\(str\\)"):
        t.label("c", target=True)


def test_a_column_without_any_value_is_named_empty_not_records_to_drop():
    X = np.ones((3, 2))
    X[:, 1] = np.nan
    with pytest.raises(BioanonError, match="column 'f1' is empty .*any of the 3 records.*drop it"):
        FeatureTable(X, pd.DataFrame({"a": [1, 2, 3]}))
    with pytest.raises(BioanonError, match=r"has no feature columns \(shape \(3, 0\)"):
        FeatureTable(np.zeros((3, 0)), pd.DataFrame({"a": [1, 2, 3]}))


def test_npz_feature_names_saved_as_bytes_are_read_as_text(tmp_path):
    """Names saved as bytes were read as "b'g0'" and written back so."""
    p = tmp_path / "t.npz"
    np.savez(p, X=np.zeros((2, 2)), who=np.array(["a", "b"]),
             feature_names=np.array([b"g0", b"g1"]))
    assert FeatureTable.read(p).feature_names == ["g0", "g1"]
    np.savez(p, X=np.zeros((2, 2)), who=np.array(["a", "b"]),
             feature_names=np.array([b"\xff0", b"g1"]))
    with pytest.raises(BioanonError, match="holds bytes that are not UTF-8 text"):
        FeatureTable.read(p)


def test_feature_names_as_one_string_and_meta_not_a_mapping_are_refused():
    """'xyz' named three features x, y, z; a list as meta failed at the table's first copy
    (Python's "cannot convert dictionary update sequence"); None is no meta."""
    X, labels = np.zeros((2, 3)), pd.DataFrame({"a": [1, 2]})
    with pytest.raises(BioanonError, match="not the one string 'xyz'"):
        FeatureTable(X, labels, feature_names="xyz")
    with pytest.raises(BioanonError, match="meta must be a mapping .* not list"):
        FeatureTable(X, labels, meta=[1])
    assert FeatureTable(X, labels, meta=None).subset([0]).meta == {}


def test_kept_parquet_label_columns_are_written_back_in_their_arrow_types(tmp_path):
    """Through pandas a dictionary column came back as plain text, ``string`` as
    large_string, ``decimal128(7, 2)`` as ``decimal128(3, 2)``: a kept column left in
    another type than it came in. Each is cast back to the type the input recorded."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from bioanon.cli import app
    from bioanon.datasets import make_biometric

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    n = t.n_records
    typed = {"site": pa.array(["north", "south"] * (n // 2)).dictionary_encode(),
             "batch": pa.array([decimal.Decimal("1.25")] * n, pa.decimal128(7, 2)),
             "room": pa.array(["a"] * n, pa.string())}
    table = pa.Table.from_pandas(t.to_frame(), preserve_index=False).replace_schema_metadata()
    for name, values in typed.items():
        table = table.append_column(name, values)
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    pq.write_table(table, src)
    keep = [a for c in typed for a in ("--keep", c)]
    res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(out), "--interest",
                                   "expression", "--sensitive", "identity", "--identifying",
                                   "gender", "--identifying", "environment", *keep, "--force",
                                   "--method", "noise", "--param", "sigma=1", "--seed", "0"])
    assert res.exit_code == 0, res.output
    back = pq.read_schema(out)
    for name, values in typed.items():
        assert back.field(name).type == values.type, name
    # the types travel in memory only: the release names no input column it dropped
    assert b"arrow_label_types" not in back.metadata[b"bioanon"]


@pytest.mark.parametrize("name", ["X", "feature_names"])
def test_a_label_named_like_an_npz_array_is_not_written_over_it(tmp_path, name):
    """The label's array replaced the features (or their names) in the file, without a
    word; nothing is written now."""
    t = FeatureTable(np.ones((2, 3)), pd.DataFrame({name: ["a", "b"]}))
    with pytest.raises(BioanonError, match=f"label column '{name}' cannot go into an NPZ"):
        t.write(tmp_path / "t.npz")
    assert not (tmp_path / "t.npz").exists()
    t.write(tmp_path / "t.parquet")


def test_a_csv_whose_last_label_is_missing_is_read_even_with_a_cell_past_csv_s_limit(
        tmp_path):
    """The short-row check reads a CSV again only when its last column holds an empty value;
    a label missing there is a legitimate table, and a cell longer than Python's csv field
    limit (131,072 characters; pandas reads it) before it must not turn that reading into a
    refusal ("field larger than field limit")."""
    rng = np.random.default_rng(0)

    def frame(huge_at: int) -> pd.DataFrame:
        df = pd.DataFrame(rng.normal(size=(40, 4)), columns=[f"f{i}" for i in range(4)])
        notes = ["y"] * 40
        notes[huge_at] = "x" * 200_000
        df.insert(0, "note", notes)
        df["person"] = [f"p{i % 4}" for i in range(40)]
        df.loc[5, "person"] = None
        return df

    frame(0).to_csv(tmp_path / "t.csv", index=False)
    t = FeatureTable.read(tmp_path / "t.csv", label_columns=["note", "person"])
    assert t.n_records == 40 and t.X.shape == (40, 4)
    # a row cut short before such a cell is still named, with its line
    frame(39).to_csv(tmp_path / "short.csv", index=False)
    lines = (tmp_path / "short.csv").read_text().splitlines()
    lines[3] = ",".join(lines[3].split(",")[:3])
    (tmp_path / "short.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(BioanonError, match="line 4 of 'short.csv' holds 3 fields where its "
                                           "header names 6"):
        FeatureTable.read(tmp_path / "short.csv", label_columns=["note", "person"])
