"""Cases of wave 11 (reliability, round eleven): inputs a data owner gives by mistake that were
handled badly, each kept fixed here (0 tracebacks, 0 wrong exits, 0 silent accepts).

Before the fixes, a Parquet label column of lists, maps or structs (as Spark or Arrow write
them) given a role was an internal error (pandas' "unhashable type: 'numpy.ndarray'", exit
1) in ``anonymize``, ``evaluate`` and ``release``; kept as it is (``--keep``), it was an
internal error when written to NPZ ("setting an array element with a sequence") or, a map, to
Parquet (Arrow's "Expected bytes, got a 'int' object"). An NPZ whose ``X`` holds dates was
read as their count of microseconds rounded to float32, without a word. ``audit`` ran on an
INPUT whose interest or sensitive column has an empty value (the utility read ``CAS 0.000``,
exit 1), called an empty value in RELEASED or HOLDOUT "values INPUT never has ([nan])", and
refused the CSV copy of INPUT when INPUT's interest is boolean (``True``/``False`` read back
as ``1``/``0``: "values INPUT never has (['0', '1'])").

A table file whose name says another format was refused in a reader's words for another
problem: a Parquet or NPZ file, an Excel workbook or a gzip archive named ``.csv`` as "not
UTF-8 text: save it as UTF-8", a web page saved by a failed download as "the table has no
records", a CSV file named ``.npz`` as "an array of Python objects", named ``.parquet`` as
"Parquet magic bytes not found". A CSV in UTF-16 without a byte order mark, or starting with
a comment line, was "label column 'expression' not found"; two CSV files joined with their
headers, "feature column(s) [...] are not numeric". An output whose name is longer than the
file system allows was told to "free space or choose another output". ``evaluate`` of a table
of 2 records per identity, or at ``--test-size 0.9``, failed after the anonymization on
scikit-learn's "Requesting 2-fold cross-validation but provided less than 2 examples" (exit
1), and of 3 records per identity on k-NN's "Expected n_neighbors <= n_samples_fit";
``--identities ,`` ran with the default counts, and ``tune --grid g=8,,16`` ran as
``g=8,16``. A labels CSV (``extract --labels``) separated
by semicolons was "file-name column of the labels 'file' not found (did you mean
'file;who'?)", one in Latin-1 Python's "'utf-8' codec can't decode byte 0xe9 in position 3"
(a position in pandas' chunk), and an Excel workbook named ``.csv`` the same. Features in far
units were internal errors: ``anonymize --method ksame`` of features about 1e30 ("operands
could not be broadcast"), ``evaluate`` of features about 1e-42 ("Input X contains
infinity", after NumPy's "overflow encountered in cast"). ``--method vp-mix`` named a class too
small for its donors by its code ("interest class '0'"), not its value. A URL given as an input
(``https://``, ``s3://``, ``file://``) was "input file 'https:/example.org/t.csv' does not
exist".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from .cases import FAST, Case, _csv, _table, _wav, anon

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment"]
LISTS = "holds lists"


def _nested(d: Path, column: str, how: str) -> Path:
    """The small table as Parquet written by Arrow (no pandas or bioanon metadata), ``column``
    holding each value as a one-item list, a struct or a map (``column`` new: ``extra``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _table().to_frame()
    values = (frame[column].tolist() if column in frame.columns
              else [f"v{i % 3}" for i in range(len(frame))])
    arr = (pa.array([[v] for v in values]) if how == "list"
           else pa.array([{"v": v} for v in values]) if how == "struct"
           else pa.array([[("k", v)] for v in values], type=pa.map_(pa.string(), pa.string())))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if column in frame.columns:
        table = table.set_column(table.schema.get_field_index(column), column, arr)
    else:
        table = table.append_column(column, arr)
    p = d / "t.parquet"
    pq.write_table(table.replace_schema_metadata(None), p)
    return p


def _nested_cases() -> list[Case]:
    def kept(how: str, out: str) -> Callable[[Path], list[str]]:
        return lambda d: anon(_nested(d, "extra", how), d, *FAST, "--keep", "extra", "--force",
                              out=out)

    return [
        Case("anonymize-parquet-sensitive-column-of-lists", lambda d: anon(
            _nested(d, "identity", "list"), d, *FAST),
            says="label column 'identity' holds lists (['person00'] at record 0), not one "
                 "value per record"),
        Case("evaluate-parquet-interest-column-of-structs", lambda d: [
            "evaluate", str(_nested(d, "expression", "struct")), *EV, "--out", str(d / "rep")],
            says="label column 'expression' holds mappings"),
        Case("release-parquet-interest-column-of-lists", lambda d: [
            "release", str(_nested(d, "expression", "list")), "-o", str(d / "o.parquet"),
            "--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
            "--identifying", "environment"], says=LISTS),
        Case("anonymize-parquet-kept-column-of-lists-to-npz", kept("list", "o.npz"),
             says="label column 'extra' holds lists (['v0'] at record 0)"),
        Case("anonymize-parquet-kept-map-column-to-parquet", kept("map", "o.parquet"),
             says="label column 'extra' holds lists ([('k', 'v0')] at record 0)"),
    ]


def _npz_dates(d: Path, unit: str) -> list[str]:
    p = d / "t.npz"
    t = _table()
    X = (np.datetime64("2024-01-01", "s") + (t.X * 1000).astype("timedelta64[s]")
         if unit == "dates" else (t.X * 1000).astype("timedelta64[ms]"))
    np.savez(p, X=X, identity=t.labels["identity"].to_numpy(str),
             expression=t.labels["expression"].to_numpy(str))
    return ["anonymize", str(p), "-o", str(d / "o.npz"), "--interest", "expression",
            "--sensitive", "identity", *FAST]


def _npz_cases() -> list[Case]:
    return [Case(f"anonymize-npz-features-of-{unit}", lambda d, u=unit: _npz_dates(d, u),
                 says="X: dates or durations")
            for unit in ("dates", "durations")]


def _audit_cases() -> list[Case]:
    from .audit import au

    def edited(d: Path, which: str, column: str) -> list[str]:
        """The audit's files, one label value of ``which`` table made empty."""
        import pandas as pd

        from bioanon.table import FeatureTable

        args = au(d)
        i = {"INPUT": 1, "RELEASED": 2, "HOLDOUT": 4}[which]
        p = Path(args[i])
        if p.suffix == ".csv":
            frame = pd.read_csv(p)
            frame.loc[2, column] = None
            frame.to_csv(p, index=False)
        else:
            t = FeatureTable.read(p)
            labels = t.labels.copy()
            labels.loc[2, column] = None
            FeatureTable(t.X, labels, t.feature_names).write(p)
        return args

    return [
        Case("audit-input-interest-with-an-empty-value",
             lambda d: edited(d, "INPUT", "expression"),
             says="INPUT's 'expression' has 1 empty value(s) (first at record 2)"),
        Case("audit-input-sensitive-with-an-empty-value",
             lambda d: edited(d, "INPUT", "identity"),
             says="INPUT's 'identity' has 1 empty value(s)"),
        Case("audit-released-interest-with-an-empty-value",
             lambda d: edited(d, "RELEASED", "expression"),
             says="RELEASED's 'expression' has 1 empty value(s)"),
        Case("audit-holdout-interest-with-an-empty-value",
             lambda d: edited(d, "HOLDOUT", "expression"),
             says="HOLDOUT's 'expression' has 1 empty value(s)"),
    ]


def _named(d: Path, name: str, data: bytes) -> Path:
    p = d / name
    p.write_bytes(data)
    return p


def _as_bytes(fmt: str) -> bytes:
    """The small table as the bytes of a ``fmt`` file (parquet, npz, gzip, xlsx)."""
    import gzip
    import io
    import zipfile

    frame = _table().to_frame()
    buf = io.BytesIO()
    if fmt == "parquet":
        frame.to_parquet(buf, index=False)
    elif fmt == "npz":
        np.savez(buf, X=_table().X)
    elif fmt == "gzip":
        return gzip.compress(frame.to_csv(index=False).encode())
    else:  # the parts of a workbook every .xlsx holds first
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("[Content_Types].xml", "<Types/>")
            z.writestr("xl/worksheets/sheet1.xml", frame.to_csv(index=False))
    return buf.getvalue()


def _file_cases() -> list[Case]:
    csv = _table().to_frame().to_csv(index=False)
    lines = csv.splitlines(keepends=True)
    page = b"<!DOCTYPE html>\n<html><body><h1>404 Not Found</h1></body></html>\n"
    cases = [
        # "not UTF-8 text (byte 270 is b'\\xb9'); save it as UTF-8"
        ("parquet-file-named-csv", "t.csv", _as_bytes("parquet"),
         "'t.csv' is a Parquet file, not CSV text as its name says; rename it to end in "
         ".parquet"),
        ("npz-file-named-csv", "t.csv", _as_bytes("npz"), "rename it to end in .npz"),
        # "holds an array of Python objects, which bioanon does not load"
        ("csv-file-named-npz", "t.npz", csv.encode(),
         "'t.npz' is CSV text, not an NPZ file as its name says; rename it to end in .csv"),
        # "Parquet magic bytes not found in footer"
        ("csv-file-named-parquet", "t.parquet", csv.encode(), "rename it to end in .csv"),
        ("excel-workbook-named-csv", "t.csv", _as_bytes("xlsx"),
         "'t.csv' is an Excel workbook (.xlsx), not CSV text"),
        ("gzip-file-named-csv", "t.csv", _as_bytes("gzip"), "is gzip-compressed"),
        # a failed download: "the table has no records"
        ("web-page-named-csv", "t.csv", page, "'t.csv' is a web page (HTML), not CSV text"),
        # "label column 'expression' not found (did you mean ' e x p r e s s i o n '?)"
        ("utf16-csv-without-byte-order-mark", "t.csv", csv.encode("utf-16-le"),
         "is UTF-16 text (without a byte order mark): it is not UTF-8 text"),
        # "label column 'expression' not found; available: # exported by tool X"
        ("csv-starting-with-a-comment-line", "t.csv", ("# exported by tool X\n" + csv).encode(),
         "'t.csv' starts with a comment line ('# exported by tool X'), not its header"),
        # two files joined: "feature column(s) ['f0', 'f1', ...] are not numeric"
        ("csv-repeating-its-header", "t.csv", "".join(lines[:11] + lines[:1] + lines[11:])
         .encode(), "'t.csv' repeats its header as record 10 (line 12)"),
    ]
    return [Case(f"anonymize-{id}", lambda d, n=name, b=data: anon(_named(d, n, b), d, *FAST),
                 says=says) for id, name, data, says in cases]


def _long_name_cases() -> list[Case]:
    # "File name too long: '...'; free space or choose another output"
    long = "o" * 300
    says = "choose a shorter name"
    return [
        Case("anonymize-output-name-too-long", lambda d: anon(
            _csv(d), d, *FAST, out=f"{long}.parquet"), says=says),
        Case("evaluate-out-folder-name-too-long", lambda d: [
            "evaluate", str(_csv(d)), *EV, "--out", str(d / long)], says=says),
    ]


def _sized(d: Path, per: int) -> Path:
    p = d / "t.csv"
    _table(n_id=4, per=per).write(p)
    return p


def _small_cases() -> list[Case]:
    noise = ["--method", "noise", "--sigma", "1"]

    def ev(per: int, *extra: str) -> Callable[[Path], list[str]]:
        return lambda d: ["evaluate", str(_sized(d, per)), *EV, *noise, *extra, "--out",
                          str(d / "rep")]

    return [
        # scikit-learn's "Requesting 2-fold cross-validation but provided less than 2
        # examples for at least one class", after the anonymization (exit 1)
        Case("evaluate-test-size-leaving-one-record-to-train", ev(12, "--test-size", "0.9"),
             says="at --test-size 0.9 'identity' value 'person00' keeps 1 of its 12 records "
                  "to train; the attacks need 2 or more per identity: lower it, e.g. "
                  "--test-size 0.25"),
        Case("evaluate-two-records-per-identity", ev(2),
             says="'identity' value 'person00' has 2 records; the attacks need 2 or more per "
                  "identity to train beside 1 to test"),
        # 8 training records: the consumer's k-NN (5 neighbours) on a 2-fold split was
        # "Expected n_neighbors <= n_samples_fit" (exit 1)
        Case("evaluate-three-records-per-identity-valid", ev(3), "ok",
             ("rep/report.html", "rep/report.json")),
        # the default counts, without a word
        Case("evaluate-identities-only-a-comma", ev(12, "--identities", ","),
             says="--identities ',' names no identity count"),
        # read as g=8,16 without a word (the lead's, after the helper's round)
        Case("tune-grid-value-lost-between-commas",
             lambda d: ["tune", str(_sized(d, 12)), *EV, "--grid", "g=8,,16", "--out",
                        str(d / "tune")],
             says="has an empty value (two commas in a row, or one at an end)"),
    ]


def _labelled_voice(d: Path, labels: bytes) -> list[str]:
    src = d / "wavs"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        _wav(src / f"a{i}.wav", rng.normal(size=4000).astype(np.float32))
    (d / "l.csv").write_bytes(labels)
    return ["extract", "voice", str(src), "--labels", str(d / "l.csv"), "-o",
            str(d / "v.parquet")]


def _labels_cases() -> list[Case]:
    text = "file,who\na0.wav,José\na1.wav,y\na2.wav,x\na3.wav,y\n"
    return [
        # "file-name column of the labels 'file' not found (did you mean 'file;who'?)"
        Case("extract-voice-labels-separated-by-semicolons", lambda d: _labelled_voice(
            d, text.replace(",", ";").encode()),
            says="'l.csv' looks separated by semicolons (its header is one column, "
                 "'file;who')"),
        # Python's "'utf-8' codec can't decode byte 0xe9 in position 3" (of pandas' chunk)
        Case("extract-voice-labels-in-latin-1", lambda d: _labelled_voice(
            d, text.encode("latin-1")),
            says="it is not UTF-8 text (byte 19 is b'\\xe9'); save it as UTF-8"),
        Case("extract-voice-labels-an-excel-workbook", lambda d: _labelled_voice(
            d, _as_bytes("xlsx")), says="'l.csv' is an Excel workbook (.xlsx), not CSV text"),
    ]


def _scaled(d: Path, scale: float) -> Path:
    """The small table, its features multiplied by ``scale`` (other units), as bioanon
    writes it."""
    from bioanon.table import FeatureTable

    t = _table()
    p = d / "t.parquet"
    FeatureTable(t.X.astype(np.float64) * scale, t.labels, t.feature_names).write(p)
    return p


def _scale_cases() -> list[Case]:
    rel = ("o.parquet", "o.parquet.manifest.json")
    return [
        # NaN distances in the clustering's float32 products: "operands could not be
        # broadcast together with shapes (39,) (45,)" (exit 1)
        Case("anonymize-ksame-features-of-1e30-valid", lambda d: anon(
            _scaled(d, 1e30), d, "--method", "ksame", "--k", "3"), "ok", rel),
        # the utility models' power of two (2**140) as float32 was inf: NumPy's "overflow
        # encountered in cast", then scikit-learn's "Input X contains infinity" (exit 1)
        Case("evaluate-features-of-1e-42-valid", lambda d: [
            "evaluate", str(_scaled(d, 1e-42)), *EV, "--g", "4", "--t", "0.5", "--out",
            str(d / "rep")], "ok", ("rep/report.html", "rep/report.json")),
    ]


def _naming_cases() -> list[Case]:
    # "interest class '0' has 14 records": the class's code, not its value
    strata = ["--interest", "expression", "--sensitive", "identity", "--additional", "gender",
              "--identifying", "environment"]
    return [Case("anonymize-vp-mix-class-too-small-is-named", lambda d: anon(
        _csv(d), d, "--method", "vp-mix"), says="interest class 'expr0' has 14 records"),
        # with an additional attribute, a stratum's code within its class
        Case("anonymize-vp-mix-stratum-too-small-is-named", lambda d: anon(
            _csv(d), d, "--method", "vp-mix", "--param", "g=8", "--param", "t=0.5",
            roles=strata), says="interest class 'expr1 / F' has 3 records")]


def _url_cases() -> list[Case]:
    # "input file 'https:/example.org/t.csv' does not exist; check the path" (pathlib folds
    # the '//'): no word that a URL is not read
    from .audit import au

    return [
        Case("anonymize-input-a-url", lambda d: anon("https://example.org/t.csv", d, *FAST),
             says="input file 'https://example.org/t.csv' is a URL; bioanon reads local "
                  "files: download it first"),
        Case("anonymize-input-a-file-url", lambda d: anon(f"file://{_csv(d)}", d, *FAST),
             says="is a file: URL; pass the path itself"),
        Case("audit-released-a-url", lambda d: au(d, released=Path("s3://bucket/rel.csv")),
             says="'s3://bucket/rel.csv' is a URL"),
    ]


def wave11_cases() -> list[Case]:
    return [*_nested_cases(), *_npz_cases(), *_audit_cases(), *_file_cases(),
            *_long_name_cases(), *_small_cases(), *_labels_cases(), *_scale_cases(),
            *_naming_cases(), *_url_cases()]
