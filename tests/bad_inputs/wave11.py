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
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from .cases import FAST, Case, _table, anon

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


def wave11_cases() -> list[Case]:
    return [*_nested_cases(), *_npz_cases(), *_audit_cases()]
