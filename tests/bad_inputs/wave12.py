"""Cases of wave 12 (reliability, round twelve): inputs a data owner gives by mistake, or
writes with another tool, that were handled badly, each kept fixed here.

Before the fixes, ``evaluate``, ``audit``, ``tune``, ``tune-k`` and ``demo`` replaced a file
of the user's at one of their output names in ``--out`` (a ``report.json`` of their own)
without a word. A table saved as JSON and named ``.csv`` was "duplicate column name(s)
['{"identity":"person00"', ...]" (an array of records) or "label column 'expression' not
found" (JSON lines). A Parquet decimal feature column was refused as "not numeric", with the
advice to name it a label. A Parquet label column of strings stored as binary (older
writers) read as Python bytes, and given a role was an internal error (scikit-learn's
"Unknown label type: unknown"); one of bytes that are not text was the same. A CSV label
``NA`` (a country's code), ``null`` or ``N/A`` was taken for a missing value: refused as an
empty value given a role, written back as an empty cell when kept. A method's parameter typed
in the wrong case (``G=8`` for ``g``) got no "did you mean".
"""

from __future__ import annotations

from pathlib import Path

from .cases import FAST, Case, _table, anon

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment", "--method", "noise", "--sigma", "1"]


def _parquet(d: Path) -> Path:
    p = d / "t.parquet"
    _table().write(p)
    return p


def _json(d: Path, lines: bool) -> Path:
    p = d / "t.csv"
    _table().to_frame().to_json(p, orient="records", lines=lines)
    return p


def _users_report(d: Path) -> list[str]:
    src = d / "t.parquet"
    _table().write(src)
    (d / "rep").mkdir()
    (d / "rep" / "report.json").write_text('{"mine": true}\n')
    return ["evaluate", str(src), *EV, "--out", str(d / "rep")]


def _arrow(d: Path, column: str, values: list, kind: str) -> Path:
    """The small table as Parquet written by Arrow, ``column`` replaced by ``values`` of the
    Arrow type ``kind`` (no pandas or bioanon metadata, as Spark or polars write it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _table().to_frame()
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    at = table.schema.get_field_index(column)
    typed = pa.decimal128(9, 3) if kind == "decimal" else pa.binary()
    table = table.set_column(at, column, pa.array(values, typed))
    p = d / "t.parquet"
    pq.write_table(table, p)
    return p


def _decimal(d: Path) -> list[str]:
    import decimal

    values = [decimal.Decimal(f"{v:.3f}") for v in _table().X[:, 0]]
    return anon(_arrow(d, "f0", values, "decimal"), d, *FAST)


def _binary(d: Path, text: bool) -> list[str]:
    frame = _table().to_frame()
    values = [v.encode() if text else b"\xff" + v.encode() for v in frame["expression"]]
    return anon(_arrow(d, "expression", values, "binary"), d, *FAST)


def _na_label(d: Path) -> list[str]:
    frame = _table().to_frame()
    frame["expression"] = frame["expression"].replace({"expr0": "NA"})
    p = d / "t.csv"
    frame.to_csv(p, index=False)
    return anon(p, d, *FAST)


def wave12_cases() -> list[Case]:
    return [
        Case("evaluate-users-report-json-in-out", _users_report,
             says="is a file bioanon did not write (the folder holds no bioanon output); "
                  "move it away or choose another --out"),
        Case("anonymize-json-array-named-csv", lambda d: anon(_json(d, False), d, *FAST),
             says="'t.csv' is JSON, not CSV text; convert it to Parquet"),
        Case("anonymize-json-lines-named-csv", lambda d: anon(_json(d, True), d, *FAST),
             says="'t.csv' is JSON, not CSV text"),
        Case("anonymize-parquet-decimal-feature-valid", _decimal, "ok",
             ("o.parquet", "o.parquet.manifest.json")),
        Case("anonymize-parquet-binary-text-interest-valid", lambda d: _binary(d, True), "ok",
             ("o.parquet", "o.parquet.manifest.json")),
        Case("anonymize-parquet-binary-bytes-interest", lambda d: _binary(d, False),
             says="label column 'expression' holds bytes (b'\\xffexpr"),
        Case("anonymize-csv-label-na-is-a-class-valid", _na_label, "ok",
             ("o.parquet", "o.parquet.manifest.json")),
        # "has no parameter 'G'; it accepts ..., g, ...": no suggestion for a case slip
        Case("anonymize-parameter-in-the-wrong-case",
             lambda d: anon(_parquet(d), d, "--method", "vp-mix", "--param", "G=8"),
             says="has no parameter 'G' (did you mean 'g'?)"),
    ]
