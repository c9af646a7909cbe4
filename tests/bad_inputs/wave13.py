"""Cases of wave 13 (reliability, round thirteen): inputs a data owner gives by mistake, or
writes with another tool, that were handled badly, each kept fixed here.

Before the fixes, a Parquet label column of dates, times of day, decimals or timestamps with
a time zone (``date32``, ``time64``, ``decimal128``, ``timestamp[tz]``, as Spark or a
database export writes them) given the interest or an additional role was an internal error
in ``anonymize``, ``evaluate``, ``release`` and ``tune`` (scikit-learn's "Unknown label type:
unknown"), and in ``tune`` was "no setting of the grid could be evaluated"; as the sensitive
column they were the same internal error once a method scored the features' relevance to it
(``--rs``). Now ``anonymize`` releases them (a method takes them as the classes they are) and
the commands that train models to predict them refuse them in one line. A label column
stored as float16 (an NPZ or Parquet half-float array) was an internal error in ``evaluate``
(pandas' "float16 indexes are not supported"). An NPZ whose ``X`` has records but no column
was refused as "X is empty (shape (48, 0)); pass at least one record". A CSV column of empty
cells (or an all-null Parquet column) was "features contain 48 NaN/inf value(s) in column
'empty'; impute or drop those records first": dropping those records drops them all. An
output that is a named pipe was replaced by the release without a word. A folder of Parquet
parts holding a part without rows (Spark writes one for an empty partition) was refused in
memory as "part 'part-1.parquet': the table has no records" (the dask path read it).
``extract voice`` of recordings shorter than one 25 ms analysis frame (a few samples, a
truncated file) padded each with silence to one frame and wrote that frame repeated over the
time grid as its features: recordings of one sample each gave one row of features for all.
An option of one value given twice with different values (``--sensitive speaker --sensitive
identity``, ``-o a.parquet -o b.parquet``, ``--level strict --level basic``) ran with the last,
the other dropped without a word. A CSV feature column of numbers with one text cell (an
export's ``#DIV/0!``), or of numbers written with thousands separators (``"1,234.5"``) or
decimal commas (``"0,5"``), was only "feature column(s) ['f0'] are not numeric; name them as
label columns": the advice for a column of text, with no cell to look at.
``preview --by`` a label column with an empty value was an internal error (Python's "'<' not
supported between instances of 'float' and 'str'").
An NPZ whose ``feature_names`` are bytes (h5py, older writers) named its features ``b'g0'``,
``b'g1'``, ..., written back so (and ``--keep-as-feature g0`` named no column).
An input ``-`` (standard input, as many tools take it) was "input file '-' does not exist;
check the path", and ``-o -`` "unknown table format '-'".
A column named with accents composed otherwise than typed (a macOS file name's NFD
``identite\u0301`` for ``identité``) or holding an invisible character (a zero-width space)
was "label column 'identité' not found (did you mean 'identité'?)": two names alike on screen.
``extract voice --labels`` naming files in composed accents (NFC) while the folder, copied
from macOS, holds them decomposed (NFD) skipped every one as "No such file or directory" for
a name the folder listing showed; one made on Windows (``recordings\\a.wav``) did the same,
and ``extract motion``'s segment table so had no labelled window.
A CSV whose first line is Excel's ``sep=,`` or a title above the header was "label column
'expression' not found; available: sep=, Unnamed: 1" (or the title).
``evaluate --selection ''`` (an unset shell variable) turned the identity selection off
without a word, where the default is ``auto``; ``evaluate --label ''`` or ``--metadata ''``,
``extract motion --device ''``, ``--channels ''`` or ``--time-column ''``, ``extract
--features ''`` were dropped the same way, the default taken.
``extract motion --window 99999999999`` was an internal error (NumPy's "Maximum allowed
dimension exceeded"), and ``train-decoupler --epochs 60000000000`` trained until stopped.
A kept label column named ``X`` (or ``feature_names``) written to NPZ replaced the released
features (or their names) in the file, exit 0: the release held the label where its
features belonged.

Kept by unit tests rather than cases here (their defect shows in a file's types or values,
not in the run's outcome): kept label columns of a Parquet input came back in other Arrow
types (a dictionary column as text, ``decimal128(7, 2)`` as ``decimal128(3, 2)``) and a
float16 label as float32 (tests/test_table.py); a 16-bit grey photo was read white nearly
everywhere (tests/test_image_read.py); ``feature_names="xyz"`` named three features x, y, z
and a list as ``meta`` failed at the table's first copy (tests/test_table.py); a 1-D X
printed every value in scikit-learn's error (tests/test_library_inputs.py).
"""

from __future__ import annotations

import datetime
import decimal
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .audit import au
from .cases import FAST, ROLES, Case, _motion, _table, _wav_folder, anon

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment"]
QUICK = ["--models", "knn", "--attackers", "naive"]
REFUSED = "which the models that learn to predict it take for no kind of class"


def _typed(d: Path, column: str, kind: str) -> Path:
    """The small table as Parquet written by Arrow (no bioanon metadata), ``column``'s
    classes stored as Arrow ``kind`` values (a date, a time of day, a decimal, a zoned
    timestamp)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _table().to_frame()
    codes = frame[column].astype("category").cat.codes.to_numpy()
    values = {
        "date": lambda: pa.array([datetime.date(2020, 1, 1 + int(c)) for c in codes]),
        "time": lambda: pa.array([datetime.time(9, int(c)) for c in codes]),
        "decimal": lambda: pa.array([decimal.Decimal(int(c)) for c in codes],
                                    pa.decimal128(5, 0)),
        "zoned": lambda: pa.array([datetime.datetime(2020, 1, 1 + int(c),
                                                     tzinfo=datetime.UTC)
                                   for c in codes], pa.timestamp("us", tz="UTC")),
    }[kind]()
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    table = table.set_column(table.schema.get_field_index(column), column, values)
    p = d / "t.parquet"
    pq.write_table(table, p)
    return p


def _npz(d: Path, X: np.ndarray | None = None, **labels: np.ndarray) -> Path:
    t = _table()
    frame = t.to_frame()
    p = d / "t.npz"
    np.savez(p, X=t.X if X is None else X, who=frame["identity"].to_numpy().astype(str),
             ex=frame["expression"].to_numpy().astype(str), **labels)
    return p


def _half_sensitive(d: Path) -> list[str]:
    t = _table()
    who = (np.arange(t.n_records) // 12).astype(np.float16)
    p = _npz(d)
    arrays = dict(np.load(p))
    np.savez(p, **{**arrays, "who": who})
    return ["evaluate", str(p), "--interest", "ex", "--sensitive", "who", "--method", "noise",
            "--sigma", "1", *QUICK, "--out", str(d / "rep")]


def _empty_column(d: Path) -> list[str]:
    p = d / "t.csv"
    _table().to_frame().assign(empty=np.nan).to_csv(p, index=False)
    return anon(p, d, *FAST)


def _pipe_output(d: Path) -> list[str]:
    src = d / "t.parquet"
    _table().write(src)
    os.mkfifo(d / "o.parquet")
    return anon(src, d, *FAST)


def _spark_folder(d: Path) -> Path:
    """A folder of Parquet parts as Spark writes it: an empty partition's part holds no row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _table().to_frame()
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    src = d / "in"
    src.mkdir()
    (src / "_SUCCESS").write_bytes(b"")
    pq.write_table(table.slice(0, 24), src / "part-00000.snappy.parquet")
    pq.write_table(table.slice(0, 0), src / "part-00001.snappy.parquet")
    pq.write_table(table.slice(24), src / "part-00002.snappy.parquet")
    return src


def _short_wavs(d: Path, n_good: int) -> list[str]:
    short = {f"short{i}.wav": np.random.default_rng(i).normal(size=10).astype(np.float32)
             for i in range(3)}
    return ["extract", "voice", str(_wav_folder(d, short, n_good)), "-o", str(d / "v.parquet")]


def _twice(d: Path, *extra: str, roles: list[str] = ROLES) -> list[str]:
    src = d / "t.parquet"
    _table().write(src)
    return anon(src, d, *extra, roles=roles)


def _written(d: Path, how: str) -> list[str]:
    frame = _table().to_frame()
    f0 = frame["f0"].astype(np.float64)
    frame["f0"] = {"cell": f0.astype(object).where(frame.index != 5, "#DIV/0!"),
                   "thousands": (f0 * 10000).map(lambda v: f"{v:,.1f}"),
                   "comma": f0.map(lambda v: f"{v:.3f}".replace(".", ","))}[how]
    p = d / "t.csv"
    frame.to_csv(p, index=False)
    return anon(p, d, *FAST)


def _preview_by_empty(d: Path) -> list[str]:
    from bioanon.table import FeatureTable

    rng = np.random.default_rng(0)
    who = pd.DataFrame({"who": ["a", None, "b", "a", "b", "a"]})
    for name in ("a.parquet", "b.parquet"):
        FeatureTable(rng.random((6, 16)), who, meta={"image_shape": [4, 4]}).write(d / name)
    return ["preview", str(d / "a.parquet"), str(d / "b.parquet"), "-o", str(d / "s.png"),
            "--by", "who"]


def _npz_named(d: Path) -> Path:
    p = _npz(d)
    arrays = dict(np.load(p))
    np.savez(p, **arrays, feature_names=np.array([f"g{j}".encode() for j in range(32)]))
    return p


def _renamed(d: Path, identity: str, **extra: str) -> Path:
    p = d / "t.csv"
    frame = _table().to_frame().rename(columns={"identity": identity})
    frame.assign(**extra).to_csv(p, index=False)
    return p


def _labels_with(d: Path, **extra: str) -> Path:
    p = d / "l.csv"
    pd.DataFrame({"file": [f"ok{i}.wav" for i in range(3)], "who": list("abc"),
                  **extra}).to_csv(p, index=False)
    return p


def _accented_wavs(d: Path) -> list[str]:
    import unicodedata

    from .cases import _wav

    src = d / "wavs"
    src.mkdir()
    names = [f"voix_{i}_\u00e9t\u00e9.wav" for i in range(3)]
    for i, name in enumerate(names):
        noise = np.random.default_rng(i).normal(size=4000).astype(np.float32)
        _wav(src / unicodedata.normalize("NFD", name), noise)
    pd.DataFrame({"file": names, "who": list("abc")}).to_csv(d / "l.csv", index=False)
    return ["extract", "voice", str(src), "--labels", str(d / "l.csv"), "-o",
            str(d / "v.parquet")]


def _backslashed_wavs(d: Path) -> list[str]:
    from .cases import _wav

    (d / "recordings").mkdir()
    for i in range(3):
        _wav(d / "recordings" / f"a{i}.wav",
             np.random.default_rng(i).normal(size=4000).astype(np.float32))
    pd.DataFrame({"file": [f"recordings\\a{i}.wav" for i in range(3)],
                  "who": list("abc")}).to_csv(d / "l.csv", index=False)
    return ["extract", "voice", str(d), "--labels", str(d / "l.csv"), "-o",
            str(d / "v.parquet")]


def _backslashed_streams(d: Path) -> list[str]:
    src = d / "streams"
    (src / "s1").mkdir(parents=True)
    t = np.arange(400) * 20.0
    pd.DataFrame({"timestamp": t, "ax": np.sin(t), "ay": np.cos(t)}).to_csv(
        src / "s1" / "a.csv", index=False)
    pd.DataFrame([("s1\\a.csv", 0, 400, "walk")],
                 columns=["file", "start_row", "end_row", "activity"]).to_csv(
        d / "seg.csv", index=False)
    return ["extract", "motion", str(src), "--labels", str(d / "seg.csv"), "-o",
            str(d / "m.parquet")]


def _above_header(d: Path, line: str) -> list[str]:
    p = d / "t.csv"
    p.write_text(line + _table().to_frame().to_csv(index=False), encoding="utf-8")
    return anon(p, d, *FAST)


def wave13_cases() -> list[Case]:
    rel = ("o.parquet", "o.parquet.manifest.json")
    report = ("rep/report.html", "rep/report.json")
    return [
        Case("anonymize-parquet-date-interest-valid",
             lambda d: anon(_typed(d, "expression", "date"), d, *FAST), "ok", rel),
        Case("anonymize-parquet-time-additional-valid",
             lambda d: anon(_typed(d, "gender", "time"), d, *FAST, roles=[
                 "--interest", "expression", "--sensitive", "identity", "--additional",
                 "gender", "--identifying", "environment"]), "ok", rel),
        Case("evaluate-parquet-date-interest",
             lambda d: ["evaluate", str(_typed(d, "expression", "date")), *EV, "--method",
                        "noise", "--sigma", "1", *QUICK, "--out", str(d / "rep")],
             says=f"label column 'expression' holds dates (datetime.date(2020, 1, 2) at "
                  f"record 0), {REFUSED}"),
        Case("evaluate-parquet-decimal-interest",
             lambda d: ["evaluate", str(_typed(d, "expression", "decimal")), *EV, "--method",
                        "noise", "--sigma", "1", *QUICK, "--out", str(d / "rep")],
             says="label column 'expression' holds decimal numbers (Decimal('1') at record 0)"),
        Case("release-parquet-zoned-timestamp-interest",
             lambda d: ["release", str(_typed(d, "expression", "zoned")), "-o",
                        str(d / "o.parquet"), *EV, "--budget-minutes", "0.000001",
                        "--methods", "noise", *QUICK, "--jobs", "1"],
             says="label column 'expression' holds timestamps with a time zone"),
        Case("tune-parquet-date-interest-refused-before-the-grid",
             lambda d: ["tune", str(_typed(d, "expression", "date")), *EV, "--method",
                        "noise", "--grid", "sigma=1,2", *QUICK, "--out", str(d / "tu")],
             says="label column 'expression' holds dates"),
        Case("anonymize-parquet-date-sensitive-valid",
             lambda d: anon(_typed(d, "identity", "date"), d, *FAST), "ok", rel),
        Case("anonymize-parquet-decimal-sensitive-scored-for-relevance-valid",
             lambda d: anon(_typed(d, "identity", "decimal"), d, *FAST, "--rs", "0.2"), "ok",
             rel),
        Case("evaluate-npz-float16-sensitive-valid", _half_sensitive, "ok",
             report),
        Case("anonymize-npz-x-without-columns",
             lambda d: ["anonymize", str(_npz(d, X=np.zeros((48, 0), np.float32))), "-o",
                        str(d / "o.npz"), "--sensitive", "who", "--interest", "ex", *FAST],
             says="X has no feature columns (shape (48, 0): 48 records of nothing to "
                  "anonymize)"),
        Case("anonymize-csv-column-of-empty-cells", _empty_column,
             says="column 'empty' is empty (no value in any of the 48 records); drop it from "
                  "the table, or name it as a label column (--label COL)"),
        Case("anonymize-output-a-named-pipe", _pipe_output,
             says="is not a regular file (a pipe, a device or a socket)"),
        Case("anonymize-parquet-folder-with-an-empty-spark-part-valid",
             lambda d: anon(_spark_folder(d), d, *FAST), "ok", rel),
        Case("evaluate-parquet-folder-with-an-empty-spark-part-valid",
             lambda d: ["evaluate", str(_spark_folder(d)), *EV, "--method", "noise", "--sigma",
                        "1", *QUICK, "--out", str(d / "rep")], "ok", report),
        Case("extract-voice-recordings-shorter-than-a-frame", lambda d: _short_wavs(d, 0),
             says="holds 10 sample(s) (1.25 ms at 8000 Hz), shorter than one 25 ms analysis "
                  "frame"),
        Case("anonymize-sensitive-given-twice",
             lambda d: _twice(d, *FAST, roles=["--interest", "expression", "--sensitive",
                                                "gender", "--sensitive", "identity"]),
             says="--sensitive is given twice, as 'gender' and as 'identity'; it takes one "
                  "value (the last would be used, the other dropped): give it once"),
        Case("anonymize-out-given-twice",
             lambda d: [*_twice(d, *FAST), "-o", str(d / "b.parquet")],
             says="--out is given twice"),
        Case("anonymize-g-given-twice-with-one-value-valid",
             lambda d: _twice(d, *FAST, "--g", "8"), "ok", rel),
        Case("audit-level-given-twice", lambda d: au(d, "--level", "strict", "--level", "basic"),
             says="--level is given twice, as 'strict' and as 'basic'"),
        Case("evaluate-method-given-twice",
             lambda d: ["evaluate", _twice(d)[1], *EV, "--method", "laplace", "--method",
                        "noise", "--out", str(d / "rep")],
             says="--method is given twice, as 'laplace' and as 'noise'"),
        Case("anonymize-csv-feature-with-one-text-cell", lambda d: _written(d, "cell"),
             says="column 'f0' holds numbers but for 1 cell(s) of text ('#DIV/0!' at record "
                  "5): correct or drop those records"),
        Case("anonymize-csv-feature-with-thousands-separators",
             lambda d: _written(d, "thousands"),
             says="column 'f0' holds numbers written with thousands separators ('-6,722.4'): "
                  "read it with pandas.read_csv(path, thousands=',')"),
        Case("anonymize-csv-feature-with-decimal-commas", lambda d: _written(d, "comma"),
             says="column 'f0' holds numbers written with decimal commas ('-0,672')"),
        Case("preview-by-a-column-with-an-empty-value-valid", _preview_by_empty, "ok",
             ("s.png",)),
        Case("anonymize-npz-feature-names-as-bytes-valid",
             lambda d: ["anonymize", str(_npz_named(d)), "-o", str(d / "o.npz"), "--sensitive",
                        "who", "--interest", "ex", "--keep-as-feature", "g0", *FAST], "ok",
             ("o.npz", "o.npz.manifest.json")),
        Case("anonymize-input-a-dash", lambda d: anon("-", d, *FAST),
             says="input file '-' stands for standard input, which bioanon does not read"),
        Case("anonymize-output-a-dash", lambda d: _twice(d, *FAST)[:2] + ["-o", "-", *ROLES],
             says="'-' stands for standard input or output, which bioanon does not use"),
        Case("anonymize-column-named-in-decomposed-unicode",
             lambda d: anon(_renamed(d, "identite\u0301"), d, *FAST, roles=[
                 "--interest", "expression", "--sensitive", "identit\u00e9", "--identifying",
                 "gender", "--identifying", "environment"]),
             says="the table names it 'identite\\u0301', which looks the same but is written "
                  "with other characters (you typed 'identit\\xe9'"),
        Case("anonymize-column-named-with-a-zero-width-space",
             lambda d: anon(_renamed(d, "ident\u200bity"), d, *FAST),
             says="the table names it 'ident\\u200bity', which looks the same"),
        Case("extract-voice-labels-in-composed-accents-for-decomposed-files-valid",
             _accented_wavs, "ok", ("v.parquet",)),
        Case("extract-voice-labels-with-windows-backslashes-valid", _backslashed_wavs, "ok",
             ("v.parquet",)),
        Case("extract-motion-segments-with-windows-backslashes-valid", _backslashed_streams,
             "ok", ("m.parquet",)),
        Case("anonymize-csv-starting-with-excels-separator-line",
             lambda d: _above_header(d, "sep=,\n"),
             says="'t.csv' starts with Excel's separator line ('sep=,'), not its header"),
        Case("anonymize-csv-starting-with-a-title-line",
             lambda d: _above_header(d, "Experiment 12, lab B\n"),
             says="'t.csv' starts with a line of 2 field(s) ('Experiment 12, lab B') above "
                  "rows of 36, not its header: a title?"),
        Case("anonymize-csv-starting-with-a-blank-line-valid",
             lambda d: _above_header(d, "\n"), "ok", rel),
        Case("evaluate-selection-empty",
             lambda d: ["evaluate", _twice(d)[1], *EV, "--method", "noise", "--sigma", "1",
                        *QUICK, "--selection", "", "--out", str(d / "rep")],
             says="--selection is empty; give a value or leave the option out (an empty value, "
                  "such as an unset shell variable, is not taken for the default)"),
        Case("evaluate-label-empty",
             lambda d: ["evaluate", _twice(d)[1], *EV, "--method", "noise", "--sigma", "1",
                        *QUICK, "--label", "", "--out", str(d / "rep")],
             says="--label is empty; give a value or leave the option out"),
        Case("extract-motion-device-empty",
             lambda d: [*_motion(d, [("s1.csv", 0, 400, "walk")]), "--device", ""],
             says="--device is empty"),
        Case("extract-voice-features-empty",
             lambda d: ["extract", "voice", str(_wav_folder(d)), "-o", str(d / "v.parquet"),
                        "--features", ""], says="--features is empty"),
        Case("extract-motion-window-a-hundred-billion",
             lambda d: [*_motion(d, [("s1.csv", 0, 400, "walk")]), "--window",
                        "100000000000"],
             says="--window 100000000000 is out of range; use at most 100,000 samples"),
        Case("train-decoupler-epochs-sixty-billion",
             lambda d: ["train-decoupler", _twice(d)[1], "-o", str(d / "d.pt"), "--sensitive",
                        "identity", "--label", "gender", "--label", "environment", "--label",
                        "expression", "--epochs", "60000000000"],
             says="--epochs 60000000000 is out of range; use at most 100,000 training epochs"),
        Case("anonymize-kept-column-named-x-to-npz",
             lambda d: anon(_renamed(d, "identity", X="k"), d, *FAST, "--keep", "X", "--force",
                            out="o.npz"),
             says="label column 'X' cannot go into an NPZ file, whose array 'X' holds the "
                  "features"),
        Case("extract-voice-labels-column-named-feature-names-to-npz",
             lambda d: ["extract", "voice", str(_wav_folder(d)), "--labels",
                        str(_labels_with(d, feature_names="x")), "-o", str(d / "v.npz")],
             says="label column 'feature_names' cannot go into an NPZ file"),
        Case("extract-voice-short-recordings-skipped-valid", lambda d: _short_wavs(d, 3), "ok",
             ("v.parquet", "v.parquet.skipped.csv")),
    ]
