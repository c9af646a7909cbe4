"""The library's entry points given a plausible wrong kind of argument (wave 8): one
BioanonError naming the problem and the fix, never os's TypeError, pandas' KeyError or a
column list made of a name's letters; or, where the meaning is plain, the call works (a bare
string where a list of columns is asked is one column)."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pandas as pd
import pytest

from bioanon import BioanonError, FeatureTable, Roles, audit
from bioanon.datasets import make_biometric


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=8, records_per_identity=30, n_features=32,
                          random_state=0)


@pytest.fixture(scope="module")
def halves(table):
    rows = np.arange(table.n_records)
    return table.subset(rows % 2 == 0), table.subset(rows % 2 == 1)


@pytest.mark.parametrize("path", [3, ["t.csv"], None])
def test_read_and_write_name_a_path_that_is_not_one(table, path):
    """``FeatureTable.read(3)`` was os's "expected str, bytes or os.PathLike object"."""
    with pytest.raises(BioanonError, match="path must be a file name .* e.g. FeatureTable.read"):
        FeatureTable.read(path)
    with pytest.raises(BioanonError, match="path must be a file name .* e.g. table.write"):
        table.write(path)


def test_read_of_the_current_folder_names_what_it_holds(tmp_path, monkeypatch, table):
    """``FeatureTable.read('.')`` was pathlib's "PosixPath('.') has an empty name" (the
    journal beside a release was looked up by the folder's name, which '.' lacks)."""
    table.write(tmp_path / "t.csv")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BioanonError, match="input folder '.' holds 't.csv', not a Parquet"):
        FeatureTable.read(".")


def test_a_bare_string_of_columns_is_one_column(tmp_path, table):
    """``label_columns='identity'`` once named the columns 'i', 'd', 'e', ...; ``drop_labels``
    the same (a KeyError listing the letters)."""
    p = tmp_path / "t.csv"
    table.drop_labels(["gender", "expression", "environment"]).write(p)
    assert FeatureTable.read(p, label_columns="identity").labels.columns.tolist() == [
        "identity"]
    assert "identity" not in table.drop_labels("identity").labels.columns
    with pytest.raises(BioanonError, match="label column 'nope' not found; available"):
        table.drop_labels(["nope"])


def test_roles_take_a_bare_string_as_one_column_and_refuse_a_list_for_one():
    """``Roles(identifying='gender')`` gave the letters of 'gender' the identifying role;
    ``interest=['digit']`` was a TypeError (unhashable list); ``sensitive=0`` (a DataFrame's
    integer column) was called an empty name."""
    assert Roles(sensitive="speaker", identifying="file", keep="split").of() == {
        "speaker": "sensitive", "file": "identifying", "split": "kept"}
    assert Roles(sensitive=0).of() == {0: "sensitive"}
    with pytest.raises(BioanonError, match=r"the interest column \['digit'\] is not a column "
                                           r"name \(a list\); name one column"):
        Roles(sensitive="speaker", interest=["digit"]).of()
    with pytest.raises(BioanonError, match="empty column name given the role sensitive"):
        Roles(sensitive=" ").of()


def test_audit_refuses_a_list_of_accepted_risks_and_a_target_that_is_no_number(halves):
    """A list of risk names was a ValueError from dict(); a text target a TypeError from
    a comparison; a bare string of labels named the columns 'g', 'e', ..."""
    m, h = halves
    kw = {"interest": "expression", "sensitive": "identity"}
    with pytest.raises(BioanonError, match=r"accept_risks=\['record-membership'\] must map "
                                           "each accepted risk"):
        audit(m, m, h, **kw, accept_risks=["record-membership"])
    for wrong in ("x", float("nan"), 2.0):
        with pytest.raises(BioanonError, match="target_recognition=.* is out of range") as e:
            audit(m, m, h, **kw, target_recognition=wrong)
        assert e.value.parameter == "target_recognition"
    res = audit(m, m.drop_labels("identity"), h, **kw, labels="gender", random_state=0)
    assert res.verdict.status in ("met", "not met", "inconclusive")


def test_an_estimator_fitted_on_a_frame_with_its_labels_names_them(table):
    """``SelectiveMeanAnonymizer(...).fit(table.to_frame())`` was NumPy's "could not convert
    string to float: 'person00'"."""
    from bioanon import SelectiveMeanAnonymizer
    from bioanon.table import table_of

    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5)
    with pytest.raises(BioanonError, match=r"X \(a DataFrame\) holds 4 non-numeric column\(s\) "
                                           r"\(\['identity', .*pass a FeatureTable"):
        sma.fit(table.to_frame())
    assert sma.fit(table_of(table.to_frame())).n_features_in_ == 32


def test_a_parq_file_is_a_parquet_table_for_every_reader(tmp_path: pathlib.Path) -> None:
    # one list of Parquet extensions: the table reader refused '.parq' (unknown format)
    # where the dask path and the audit's option check took it
    from bioanon.auditing.inputs import _parquet_rows
    from bioanon.table import PARQUET_SUFFIXES, format_of

    t = make_biometric(n_identities=3, records_per_identity=4, n_features=32, random_state=0)
    p = t.write(tmp_path / "t.parq")
    back = FeatureTable.read(p)
    assert back.n_records == t.n_records and list(back.labels) == list(t.labels)
    assert _parquet_rows(str(p)) == t.n_records
    assert {format_of(f"x{ext}") for ext in PARQUET_SUFFIXES} == {"parquet"}
    assert set(PARQUET_SUFFIXES) == {".parquet", ".parq", ".pq"}


@pytest.mark.parametrize("index, says", [
    ([0, 300], r"index holds positions from 0 to 300, but the table has 240 records; give "
               r"positions from 0 to 239 \(or -240 to -1 counting from the end\)"),
    ([-241], "index holds positions from -241 to -241"),
    ([True, False], r"index is a boolean mask of shape \(2,\) for 240 records"),
    ([0.0, 1.0], "index must be a sequence of record positions .* type float64"),
    (3, r"got one value \(3\); wrap it in a list"),
])
def test_subset_names_an_index_out_of_range(table, index, says):
    """``table.subset([0, 300])`` was NumPy's "index 300 is out of bounds for axis 0 with
    size 240" (an IndexError naming neither the parameter nor the fix)."""
    with pytest.raises(BioanonError, match=says) as e:
        table.subset(index)
    assert e.value.parameter == "index"
    assert table.subset([0, -1]).n_records == 2
    assert table.subset(np.arange(table.n_records) < 5).n_records == 5


def test_an_integer_parameter_from_float_text_is_quoted_as_typed():
    """``k=1e30`` was read through a float and echoed as 1000000000000000019884624838656;
    digits were read through a float too (99999999999999999999999 became ...1611392)."""
    from bioanon.anonymize.params import Param

    p = Param("int", low=2, help="group size")
    with pytest.raises(BioanonError, match=r"^k=1e30 is too large; use an integer >= 2 "
                                           r"\(group size\)$"):
        p.parse("k", "1e30")
    assert p.parse("k", "99999999999999999999999") == 99999999999999999999999
    assert p.parse("k", "1e3") == 1000


def test_dp_mix_clip_past_float32_is_refused_without_numpy_warning(table):
    """``DPMixAnonymizer(clip=1e300)`` printed NumPy's "overflow encountered in cast" (the
    clipping ratio in float32), then its release came out NaN/inf."""
    import warnings

    from bioanon.anonymize.base import SettingError
    from bioanon.anonymize.dp_mix import DPMixAnonymizer

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SettingError, match="lower clip"):
            DPMixAnonymizer("expression", g=4, clip=1e300, random_state=0).fit_transform(table)


def test_an_estimator_given_a_sparse_or_an_overflowing_array_names_the_fix(table):
    """A sparse X was scikit-learn's TypeError; float64 values past float32 printed NumPy's
    overflow warning, then scikit-learn's "contains infinity or a value too large"."""
    import warnings

    import scipy.sparse as sp

    from bioanon import SelectiveMeanAnonymizer

    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5)
    with pytest.raises(BioanonError, match="Sparse data was passed for X, but dense data is "
                                           r"required. Use '.toarray\(\)'"):
        sma.fit(sp.csr_matrix(table.X), table.labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(BioanonError, match=r"too large for 32-bit floats \(beyond ±3.4e38"
                                               r"\), first in column #0 at record 0; rescale"):
            sma.fit(np.full(table.X.shape, 1e300), table.labels)


def test_label_columns_given_as_a_number_is_one_column(tmp_path, table):
    """``FeatureTable.read(p, label_columns=3)`` was TypeError: 'int' object is not iterable."""
    p = tmp_path / "t.csv"
    table.write(p)
    with pytest.raises(BioanonError, match="label column '3' not found"):
        FeatureTable.read(p, label_columns=3)


@pytest.mark.parametrize("name, value", [("max_candidates", 0), ("max_candidates", 1.5),
                                         ("max_records", "abc"), ("max_records", float("nan"))])
def test_audit_counts_out_of_range_are_named(halves, name, value):
    """``max_candidates=0`` was blamed on the tables ("the sizes are too small to show
    anything: 0 INPUT records against 0 HOLDOUT"), 1.5 was cut to 1 and ``max_records='abc'``
    was int()'s ValueError."""
    m, h = halves
    with pytest.raises(BioanonError, match=f"^{name}=.* must be an integer of at least") as e:
        audit(m, m, h, interest="expression", sensitive="identity", **{name: value})
    assert e.value.parameter == name


def test_a_label_column_of_numbers_and_text_is_named(tmp_path, table):
    """A label column mixing ints and strings (ids 1, 2 and 'p3' gathered from two sources)
    was Python's TypeError ("'<' not supported between instances of 'int' and 'str'") when an
    estimator sorted its classes, Arrow's when the table was written, and an audit called the
    holdout of another population; the table, ``from_frame`` and an estimator's ``y`` now
    name the column and the fix."""
    from bioanon import SelectiveMeanAnonymizer

    mixed = [i % 3 if i % 2 else f"e{i % 3}" for i in range(table.n_records)]
    says = r"label column 'expression' holds both numbers and text \('e0' at record 0 and 1 " \
           r"at record 1\); make it one type \(pandas: df\['expression'\].astype\(str\)\)"
    with pytest.raises(BioanonError, match=says):
        FeatureTable(table.X, table.labels.assign(expression=mixed), table.feature_names)
    with pytest.raises(BioanonError, match=says):
        FeatureTable.from_frame(table.to_frame().assign(expression=mixed),
                                list(table.labels.columns))
    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5)
    with pytest.raises(BioanonError, match=says):
        sma.fit(table.X, table.labels.assign(expression=mixed))
    with pytest.raises(BioanonError, match=says):
        sma.fit(table.X, np.array(mixed, dtype=object))
    # numbers of two kinds, and text with empty values, are one type each
    ok = table.labels.assign(expression=[1 if i % 2 else 2.0 for i in range(table.n_records)],
                             gender=[None if i == 0 else "f" for i in range(table.n_records)])
    FeatureTable(table.X, ok, table.feature_names).write(tmp_path / "t.parquet")


def test_a_masked_array_with_masked_values_is_refused(table):
    """A NumPy masked array was read through its mask: the values under it became features
    without a word. With a masked value it is refused by name; without one it is read."""
    from bioanon import SelectiveMeanAnonymizer

    mask = np.zeros(table.X.shape, bool)
    mask[3, 1] = True
    X = np.ma.masked_array(table.X, mask=mask)
    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5)
    with pytest.raises(BioanonError, match=r"^X is a masked array with 1 masked value\(s\)"):
        sma.fit(X, table.labels)
    with pytest.raises(BioanonError, match="masked array"):
        FeatureTable(X, table.labels, table.feature_names)
    read = FeatureTable(np.ma.masked_array(table.X), table.labels, table.feature_names)
    assert np.array_equal(read.X, table.X)


def test_features_of_dates_rows_of_two_lengths_or_a_sparse_matrix_are_named(table):
    """Dates as features were read as their count of microseconds rounded to float32, without
    a word (by FeatureTable and by an estimator); a list of rows of two lengths was NumPy's
    ValueError ("inhomogeneous shape"); a SciPy sparse matrix was "not numeric"."""
    import scipy.sparse as sp

    from bioanon import SelectiveMeanAnonymizer

    dates = np.datetime64("2024-01-01", "s") + (table.X * 1000).astype("timedelta64[s]")
    ragged = [[1.0, 2.0], [1.0]] + [[1.0, 2.0]] * (table.n_records - 2)
    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5)
    for X, says in [(dates, r"dates or durations \(datetime64\[s\]\) are not measurements"),
                    (dates - dates, r"dates or durations \(timedelta64\[s\]\)"),
                    (ragged, r"rows of different lengths \(record 0 has 2 values, record 1 "
                             r"has 1\)")]:
        with pytest.raises(BioanonError, match=says):
            FeatureTable(X, table.labels)
        with pytest.raises(BioanonError, match=says):
            sma.fit(X, table.labels)
    with pytest.raises(BioanonError, match=r"SciPy sparse matrix; pass a dense array"):
        FeatureTable(sp.csr_matrix(table.X), table.labels)


def test_a_label_column_of_lists_is_refused_in_a_role_and_dropped_without_one(table, tmp_path):
    """A label column of lists or mappings (a Parquet list or struct column) given a role was
    pandas' "unhashable type"; kept as it is, NPZ's "setting an array element with a
    sequence". Without a role it is dropped, as any other label column no role names."""
    from bioanon import SelectiveMeanAnonymizer
    from bioanon.release import release

    lists = [[v] for v in table.labels["expression"]]
    t = FeatureTable(table.X, table.labels.assign(tags=lists), table.feature_names)
    sma = SelectiveMeanAnonymizer("expression", g=4, t=0.5, random_state=0)
    with pytest.raises(BioanonError, match=r"label column 'tags' holds lists \(\['expr"):
        t.label("tags")
    with pytest.raises(BioanonError, match="label column 'tags' holds lists"):
        release(t, sma, Roles(interest="expression", sensitive="identity", keep=["tags"]),
                force=True)
    with pytest.raises(BioanonError, match="label column 'expression' holds mappings"):
        SelectiveMeanAnonymizer("expression", g=4, t=0.5).fit(
            table.X, table.labels.assign(expression=[{"v": v} for v in lists]))
    res = release(t, sma, Roles(interest="expression", sensitive="identity",
                                identifying=["tags"]))
    assert list(res.table.labels.columns) == ["expression"] and "tags" in res.dropped


def test_a_1d_x_is_refused_in_one_line_without_the_array():
    """scikit-learn's message printed every value of a 1-D X over many lines."""
    from bioanon import SelectiveMeanAnonymizer

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    with pytest.raises(BioanonError) as info:
        SelectiveMeanAnonymizer("expression", g=8, t=0.5).fit(t.X[:, 0], t.labels)
    assert "\n" not in str(info.value) and "Reshape your data" in str(info.value)
    assert "(shape (48,))" in str(info.value)


@pytest.mark.parametrize("interest, sensitive, says", [
    (["expression"], "identity", r"the interest column \['expression'\] is not a column name "
                                 r"\(a list\); name one column by its name"),
    ("expression", ("identity",), r"the sensitive column \('identity',\) is not a column "
                                  r"name \(a tuple\)"),
])
def test_evaluate_names_a_role_given_a_list(table, interest, sensitive, says):
    """``evaluate(t, ['expression'], 'identity')`` was pandas' "unhashable type: 'list'"
    (a TypeError from deep inside the label lookup)."""
    from bioanon import SelectiveMeanAnonymizer, evaluate

    with pytest.raises(BioanonError, match=says):
        evaluate(table, interest, sensitive, models=["knn"], n_jobs=1,
                 anonymizer=SelectiveMeanAnonymizer("expression", g=4, t=0.5))


@pytest.mark.parametrize("seed", [1.5, -3, None, 2**40, "7"])
def test_evaluate_names_a_seed_out_of_range(table, seed):
    """The evaluation seed 1.5 was NumPy's "SeedSequence expects int or sequence of ints",
    -3 its "expected non-negative integer", None Python's "int() argument must be a string
    ... not 'NoneType'" (the seed is written in the report: it must be a number)."""
    from bioanon import SelectiveMeanAnonymizer, evaluate

    with pytest.raises(BioanonError, match=rf"random_state={seed!r} is out of range; use a "
                                           r"whole number from 0 to 4294967295 \(a secret "
                                           r"key\)$"):
        evaluate(table, "expression", "identity", models=["knn"], n_jobs=1, random_state=seed,
                 anonymizer=SelectiveMeanAnonymizer("expression", g=4, t=0.5))


def test_a_label_column_named_by_a_tuple_is_written_to_parquet(tmp_path):
    """A label column named ``('a', 1)`` (a DataFrame's column made by a groupby) was pyarrow's
    KeyError "Column ('a', 1) does not exist in schema" at ``write``: Arrow names it
    "('a', '1')". It is written under its name as text, as a CSV header writes it."""
    t = FeatureTable(np.zeros((2, 2)), pd.DataFrame({("a", 1): ["x", "y"]}))
    t.write(tmp_path / "t.parquet")
    back = FeatureTable.read(tmp_path / "t.parquet")
    assert back.labels.columns.tolist() == ["('a', 1)"]
    assert back.labels.iloc[:, 0].tolist() == ["x", "y"]


def test_label_and_keep_as_feature_take_one_name_as_one_column(tmp_path, table):
    """``table.label(['identity'])`` was pandas' "unhashable type: 'list'";
    ``FeatureTable.read(path, keep_as_feature='f0')`` read the letters 'f' and '0' ("keep_as_
    feature=f names no feature column"), as label_columns once did."""
    with pytest.raises(BioanonError, match=r"the label column \['identity'\] is not a column "
                                           r"name \(a list\)"):
        table.label(["identity"])
    p = tmp_path / "t.csv"
    frame = table.to_frame()
    frame.assign(take=np.arange(len(frame)) % 3).to_csv(p, index=False)
    read = FeatureTable.read(p, keep_as_feature="take")
    assert "take" in read.feature_names and list(read.meta["kept_as_feature"]) == ["take"]


def test_a_file_to_write_typed_as_a_folder_is_refused_and_nothing_written(tmp_path, table):
    """``table.write('t.parquet/')`` and a release's ``write`` wrote ``t.parquet``: a path drops
    the slash (wave 15). A user's file of that name is left as it was."""
    from bioanon import SelectiveMeanAnonymizer
    from bioanon.release import release

    users = tmp_path / "t.parquet"
    users.write_bytes(b"the user's own file")
    with pytest.raises(BioanonError, match=r"output '.*t.parquet/' ends with a slash, which "
                                           r"names a folder; name the file to write \('"):
        table.write(str(users) + "/")
    res = release(table, SelectiveMeanAnonymizer("expression", g=4, t=0.5),
                  Roles(sensitive="identity", interest="expression"))
    with pytest.raises(BioanonError, match="ends with a slash"):
        res.write(str(users) + os.sep)
    assert users.read_bytes() == b"the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
    table.write(str(tmp_path / "u.parquet"))  # the name without the slash is written
    assert FeatureTable.read(tmp_path / "u.parquet").n_records == table.n_records


def test_the_command_line_takes_a_slash_where_the_output_may_be_a_folder():
    """The slash is refused only where ``-o`` names a file: ``--dask`` may write a folder of
    Parquet parts, and a folder output (``evaluate --out``) is one."""
    import typer

    from bioanon.cli.app import app
    from bioanon.cli.logs import _file_spelled_as_folder

    group = typer.main.get_command(app)
    anonymize = group.get_command(None, "anonymize")  # type: ignore[attr-defined]
    evaluate = group.get_command(None, "evaluate")  # type: ignore[attr-defined]
    said = _file_spelled_as_folder(anonymize, ["t.csv", "-o", "o.parquet/"])
    assert said is not None and "give -o 'o.parquet'" in said and "--dask" in said
    assert _file_spelled_as_folder(anonymize, ["t.csv", "-o", "parts/", "--dask"]) is None
    # '--dask' as the value of another option is no flag
    assert _file_spelled_as_folder(anonymize, ["t.csv", "--label", "--dask", "-o", "o/"])
    assert _file_spelled_as_folder(anonymize, ["t.csv", "-o", "o.parquet"]) is None
    assert _file_spelled_as_folder(anonymize, ["t.csv", "--", "-o", "x/"]) is None
    assert _file_spelled_as_folder(evaluate, ["t.csv", "--out", "rep/"]) is None
