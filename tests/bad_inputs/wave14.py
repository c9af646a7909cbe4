"""Cases of wave 14 (reliability, round fourteen): inputs a data owner gives by mistake, or
writes with another tool, that were handled badly, each kept fixed here.

Before the fixes, an output that is a symbolic link leading back to itself (``o.parquet ->
o.parquet``, a loop left by a script) was an internal error (Python's "Symlink loop from
..."), exit 1, in ``anonymize``, ``release``, ``evaluate --out``, ``preview`` and
``train-decoupler``; now it is refused in one line. An input that is a symbolic link leading
nowhere (a loop, or a link to a moved file) was "input file 't.csv' does not exist", a name
``ls`` lists; now the refusal says it is a link and where it leads.
An NPZ whose label arrays were saved big-endian (``>i8``, ``>U12``: another machine's NumPy,
a MATLAB export) was an internal error given a role (pandas' "Big-endian buffer not supported
on little-endian compiler"); now it is read as the same values in this machine's order.
``evaluate --identities 99999999999999999999`` on a table of 8 people was refused as "asked
for 99999999999999999999 identities but there are only 2147483648" (the count's form was
checked against a made-up table of 2**31 people); now the table's own 8 are named.
``extract voice`` of a recording whose every sample is one value other than zero (a 16-bit
file of -1 throughout, an ADC's offset with the microphone off) described it as a voice;
silence at zero was skipped already. Now it is skipped as silent (a constant offset), and a
folder of nothing else is refused.
``extract face`` of photos of 1×1 or 2×2 pixels (thumbnails, tracking pixels) centre-cropped
and enlarged each into a crop of one grey and wrote it as a face's features ("2 records ×
4096 pixels features"); now they are skipped as too small to hold a face (under 16×16), and
a folder of nothing else is refused.
A CSV saved by a spreadsheet with rows of separators only below its data (``,,,,``: cells
once touched there) was refused as "features contain 64 NaN/inf value(s) ... (first at
record 48); impute or drop those records first"; rows without any value are no records, and
are now skipped as blank lines are; in an ``extract motion`` stream, whose rows the segment
table counts, the stream was skipped for "4 sensor value(s) that are NaN ... at row 400",
and its rows of no value after the data are now left out.
A Parquet file whose features are one column of lists of numbers per record (an embedding
as Arrow, Spark or Hugging Face write it: ``list<double>``, ``large_list``,
``fixed_size_list<float>[32]``) was refused as "feature column(s) ['emb'] are not numeric;
name them as label columns": advice that drops the features. Now the column is named as a
list of numbers with the one line of pandas that expands it into columns.
``tune-k --k-max 99999999999999999999`` (past 2**63) was an internal error (Python's
"Python int too large to convert to C ssize_t", from counting the k values), where a billion
was already refused by the table's records; now it is refused the same way.
``train-decoupler -o dec.parquet`` wrote the decoupler's PyTorch weights into a file named as
a table, exit 0 (read later as a Parquet table, it is a broken file); now a table's name is
refused before training, asking for a ``.pt`` name.
``extract motion --step 200`` (or any step not below ``--window``) kept one sample of each
channel a window and wrote it as the window's raw features ("3 records × 2 raw features"),
exit 0; now it is refused, naming the window.
``evaluate --additional gender=`` (a weight from an unset shell variable) ran with the default
weight 1 without a word, as wave 13's empty options did; now the empty weight is refused
(``tune`` and ``release`` read the weight the same way).
A CSV feature column of percentages (``"12.5%"``, as a spreadsheet formats a share) was only
"not numeric; name them as label columns": now the note wave 13 gave thousands separators and
decimal commas names the percent signs and the pandas line that strips them.
``extract voice --labels labels.parquet`` (a labels table saved with ``to_parquet``) was
refused as "'labels.parquet' is a Parquet file, not CSV text as its name says; rename it to
end in .parquet", the name it had; now a Parquet labels table is read as one (``extract
motion``'s segment table too).
``audit --sensitive`` naming a column in accents composed otherwise than INPUT's (a macOS
name's NFD ``identite\u0301`` for ``identité``) was "INPUT has no column 'identité'; ...
(it has [..., 'identité'])": the name it listed looked the same; now audit names columns as
every other command does (wave 13: "looks the same but is written with other characters").
A CSV row of fewer fields than its header (a row cut short, a line broken in two) was read
with NaN for the fields it lacks and refused as "features contain 31 NaN/inf value(s) ...
impute or drop those records first", advice to impute values the file never held; now the
line and both counts are named (a row whose last value is empty, its commas kept, is still
refused for its NaN value).
A CSV row of more fields than its header (a value with a comma and no quotes: ``1,5``) was
"cannot read 't.csv' as csv: Error tokenizing data. C error: Expected 36 fields in line 6,
saw 38", a parser's words; now the line, both counts and the likely cause are named.
``extract motion --where activity==walk`` (a comparison as Python or SQL writes it) kept the
windows whose activity is "=walk", none, and said only that the value matched nothing; now
the double '=' is refused with the form that works.

Kept by unit tests rather than cases here (their defect shows in a library call, or in a
file's values, not in a run's outcome): ``evaluate(t, ['expression'], 'identity')`` was
pandas' "unhashable type: 'list'", and an evaluation seed of 1.5, -3 or None NumPy's
"SeedSequence expects int", "expected non-negative integer" or Python's "int() argument must
be ... not 'NoneType'"; ``table.label(['identity'])`` was the same TypeError,
``FeatureTable.read(path, keep_as_feature='f0')`` read the letters 'f' and '0', and a label
column named by a tuple was pyarrow's KeyError at ``write`` (tests/test_library_inputs.py); a
photo stored sideways with an EXIF orientation tag was read lying down, where the frontal face
detector finds no face (tests/test_image_read.py); ``preview`` of a pixel table of 0-255 grey
levels drew every pixel past 1 white, a blank sheet and blank released images, exit 0
(tests/test_preview.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .cases import FAST, ROLES, Case, _motion, _table, _wav_folder, anon

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment"]
TK = ["--sensitive", "identity", "--label", "gender", "--label", "environment", "--label",
      "expression"]
LOOP = "is a symbolic link that leads back to itself (a loop)"


def _parquet(d: Path, name: str = "t.parquet") -> Path:
    p = d / name
    _table().write(p)
    return p


def _looped(d: Path, name: str) -> Path:
    """A symbolic link at ``name`` pointing at itself."""
    os.symlink(d / name, d / name)
    return d / name


def _big_endian_npz(d: Path) -> list[str]:
    t = _table()
    frame = t.to_frame()
    ex = frame["expression"].astype("category").cat.codes.to_numpy()
    p = d / "t.npz"
    np.savez(p, X=t.X.astype(">f8"), who=frame["identity"].to_numpy().astype(">U12"),
             ex=ex.astype(">i8"))
    return ["anonymize", str(p), "-o", str(d / "o.npz"), "--sensitive", "who", "--interest",
            "ex", *FAST]


def _tiny_photos(d: Path, n_good: int) -> list[str]:
    from PIL import Image

    src = d / "imgs"
    src.mkdir()
    for i in range(n_good):
        Image.fromarray(np.random.default_rng(i).integers(0, 255, (48, 48), np.uint8)).save(
            src / f"ok{i}.png")
    Image.new("L", (1, 1), 128).save(src / "pixel.png")
    Image.new("L", (2, 2), 30).save(src / "thumb.png")
    return ["extract", "face", str(src), "-o", str(d / "f.parquet")]


def _empty_rows_below(d: Path) -> list[str]:
    frame = _table().to_frame()
    p = d / "t.csv"
    p.write_text(frame.to_csv(index=False) + ("," * (frame.shape[1] - 1) + "\n") * 3,
                 encoding="utf-8")
    return anon(p, d, *FAST)


def _embedding_column(d: Path) -> list[str]:
    """The small table as Arrow writes it with its features as one large_list column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = _table()
    table = pa.Table.from_pandas(t.labels, preserve_index=False).append_column(
        "emb", pa.array(list(t.X.astype(np.float64)), pa.large_list(pa.float64())))
    pq.write_table(table.replace_schema_metadata(None), d / "t.parquet")
    return anon(d / "t.parquet", d, *FAST)


def _percentages(d: Path) -> list[str]:
    frame = _table().to_frame()
    frame["f0"] = frame["f0"].map(lambda v: f"{v * 100:.1f}%")
    frame.to_csv(d / "t.csv", index=False)
    return anon(d / "t.csv", d, *FAST)


def _parquet_labels(d: Path) -> list[str]:
    import pandas as pd

    src = _wav_folder(d)
    pd.DataFrame({"file": [f"ok{i}.wav" for i in range(3)], "who": list("abc")}).to_parquet(
        d / "labels.parquet")
    return ["extract", "voice", str(src), "--labels", str(d / "labels.parquet"), "-o",
            str(d / "v.parquet")]


def _long_row(d: Path) -> list[str]:
    lines = _table().to_frame().to_csv(index=False).splitlines()
    lines[5] += ",9,9"
    (d / "t.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return anon(d / "t.csv", d, *FAST)


def _short_row(d: Path, empty_last: bool = False) -> list[str]:
    lines = _table().to_frame().to_csv(index=False).splitlines()
    fields = lines[5].split(",")
    # a row cut after its fifth field, or one whose last value is empty, its comma kept
    lines[5] = ",".join(fields[:-1] + [""]) if empty_last else ",".join(fields[:5])
    (d / "t.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return anon(d / "t.csv", d, *FAST)


def _stream_with_empty_rows(d: Path) -> list[str]:
    argv = _motion(d, [("s1.csv", 0, 400, "walk")])
    stream = d / "streams" / "s1.csv"
    stream.write_text(stream.read_text(encoding="utf-8") + ",,\n,,\n", encoding="utf-8")
    return argv


def _parquet_segments(d: Path) -> list[str]:
    import pandas as pd

    argv = _motion(d, [("s1.csv", 0, 400, "walk")])
    pd.read_csv(d / "seg.csv").to_parquet(d / "seg.parquet")
    return [str(d / "seg.parquet") if a == str(d / "seg.csv") else a for a in argv]


def _audit_decomposed(d: Path) -> list[str]:
    from bioanon.table import FeatureTable

    from .audit import _files

    src, rel, ho = _files(d)
    for p in (src, ho):
        t = FeatureTable.read(p)
        FeatureTable(t.X, t.labels.rename(columns={"identity": "identit\u00e9"}),
                     t.feature_names, t.meta).write(p)
    return ["audit", str(src), str(rel), "--control", str(ho), "--interest", "expression",
            "--sensitive", "identite\u0301"]


def wave14_cases() -> list[Case]:
    return [
        Case("anonymize-output-a-symlink-loop",
             lambda d: anon(_parquet(d), d, *FAST, out=_looped(d, "o.parquet").name),
             says=LOOP),
        Case("evaluate-out-a-symlink-loop",
             lambda d: ["evaluate", str(_parquet(d)), *EV, "--method", "noise", "--sigma",
                        "1", "--out", str(_looped(d, "rep"))],
             says=LOOP),
        Case("anonymize-input-a-symlink-loop",
             lambda d: anon(_looped(d, "t.csv"), d, *FAST, roles=ROLES),
             says="is a symbolic link to"),
        Case("anonymize-npz-big-endian-labels-valid", _big_endian_npz, "ok",
             ("o.npz", "o.npz.manifest.json")),
        Case("evaluate-identities-past-two-billion-names-the-tables-count",
             lambda d: ["evaluate", str(_parquet(d)), *EV, "--method", "noise", "--sigma",
                        "1", "--selection", "random", "--identities", "99999999999999999999",
                        "--out", str(d / "rep")],
             says="asked for 99999999999999999999 identities but there are only 4; lower "
                  "--identities to at most 4"),
        Case("extract-voice-only-recordings-of-a-constant-offset",
             lambda d: ["extract", "voice", str(_wav_folder(
                 d, {f"dc{i}.wav": np.full(4000, -1, np.int16) for i in range(2)}, 0)),
                 "-o", str(d / "v.parquet")],
             says="is silent (every sample is -1, a constant offset: no sound)"),
        Case("extract-voice-recording-of-a-constant-offset-skipped-valid",
             lambda d: ["extract", "voice", str(_wav_folder(
                 d, {"dc.wav": np.full(4000, 0.25, np.float32)})), "-o",
                 str(d / "v.parquet")], "ok", ("v.parquet", "v.parquet.skipped.csv")),
        Case("extract-face-only-photos-of-one-or-two-pixels", lambda d: _tiny_photos(d, 0),
             says="the photo is 1×1 pixels, too small to hold a face (at least 16×16)"),
        Case("extract-face-photo-of-one-pixel-skipped-valid", lambda d: _tiny_photos(d, 2),
             "ok", ("f.parquet", "f.parquet.skipped.csv"),
             says="2 input(s) skipped and 2 centre-cropped"),
        Case("anonymize-csv-with-a-spreadsheets-empty-rows-below-valid", _empty_rows_below,
             "ok", ("o.parquet", "o.parquet.manifest.json"), says="(48 records)"),
        Case("anonymize-parquet-features-as-one-column-of-lists", _embedding_column,
             says="column 'emb' holds a list of numbers per record (large_list<element: double>: "
                  "an embedding?), where bioanon reads one feature a column: expand it into "
                  "columns first"),
        Case("tune-k-k-max-past-two-to-the-63",
             lambda d: ["tune-k", str(_parquet(d)), *TK, "--k-max", "99999999999999999999",
                        "--out", str(d / "tk")],
             says="k=99999999999999999999 exceeds the 48 records"),
        Case("train-decoupler-output-named-as-a-table",
             lambda d: ["train-decoupler", str(_parquet(d)), "-o", str(d / "dec.parquet"), *TK,
                        "--epochs", "1"],
             says="names a table (.parquet), but train-decoupler writes a PyTorch file"),
        Case("extract-motion-step-as-long-as-the-window",
             lambda d: [*_motion(d, [("s1.csv", 0, 400, "walk")]), "--window", "100",
                        "--step", "100"],
             says="--step 100 keeps every 100-th sample of a window of 100: only its first "
                  "sample of each channel would be left"),
        Case("evaluate-additional-weight-empty-after-the-equals-sign",
             lambda d: ["evaluate", str(_parquet(d)), "--interest", "expression", "--sensitive",
                        "identity", "--additional", "gender=", "--label", "environment",
                        "--method", "noise", "--sigma", "1", "--out", str(d / "rep")],
             says="--additional 'gender=' has an empty value after '='; write gender=0.5, or "
                  "gender alone for the default 1"),
        Case("anonymize-csv-feature-of-percentages", _percentages,
             says="column 'f0' holds numbers written with percent signs ('-67.2%'): strip "
                  "them, e.g. df['f0'] = df['f0'].str.rstrip('%').astype(float) / 100,"),
        Case("extract-voice-labels-saved-as-parquet-valid", _parquet_labels, "ok",
             ("v.parquet",)),
        Case("anonymize-csv-row-of-more-fields-than-the-header", _long_row,
             says="line 6 of 't.csv' holds 38 fields where its header names 36: a value "
                  "holding a comma without quotes around it"),
        Case("anonymize-csv-row-of-fewer-fields-than-the-header", _short_row,
             says="line 6 of 't.csv' holds 5 fields where its header names 36: a row cut "
                  "short or a line broken in two; correct that line"),
        Case("anonymize-csv-row-whose-last-value-is-empty",
             lambda d: _short_row(d, empty_last=True),
             says="features contain 1 NaN/inf value(s) in column 'f31' (first at record 4)"),
        Case("extract-motion-stream-with-a-spreadsheets-empty-rows-below-valid",
             _stream_with_empty_rows, "ok", ("m.parquet",)),
        Case("extract-motion-segments-saved-as-parquet-valid", _parquet_segments, "ok",
             ("m.parquet",)),
        Case("extract-motion-where-with-a-double-equals-sign",
             lambda d: [*_motion(d, [("s1.csv", 0, 400, "walk")]), "--where",
                        "activity==walk"],
             says="--where 'activity==walk' compares with '==': write COLUMN=VALUE with one "
                  "'=', e.g. --where activity=walk"),
        Case("audit-sensitive-named-in-decomposed-unicode", _audit_decomposed,
             says="INPUT's label column 'identite\u0301' not found: the table names it "
                  "'identit\\xe9', which looks the same but is written with other "
                  "characters"),
    ]
