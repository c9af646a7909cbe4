"""Cases found in wave 6's twentieth session: inputs a data owner hands over by mistake — a
column of measurements given a class role, a named pipe or device where a file belongs, a
CSV saved as UTF-16 or with trailing commas, complex features. Before the fixes they gave an
internal error (a measured useful column), a hang (a pipe), a silent cast (complex numbers)
or a refusal naming a column the user never made (trailing commas).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .audit import au
from .cases import FAST, ROLES, Case, _csv, _table, _wav_folder, anon


def _measured(d: Path, column: str) -> Path:
    """The table with ``column`` replaced by a measurement (a float per record)."""
    frame = _table().to_frame()
    frame[column] = np.random.default_rng(0).normal(size=len(frame))
    p = d / "t.parquet"
    frame.to_parquet(p, index=False)
    return p


def _pipe(d: Path, name: str = "t.csv") -> Path:
    """A named pipe where the table belongs (nothing ever writes to it: a read blocks)."""
    p = d / name
    os.mkfifo(p)
    return p


def _utf16_csv(d: Path) -> Path:
    p = d / "t.csv"
    _table().to_frame().to_csv(p, index=False, encoding="utf-16")
    return p


def _trailing_commas(d: Path) -> Path:
    p = d / "t.csv"
    lines = _table().to_frame().to_csv(index=False).strip().split("\n")
    p.write_text("\n".join(line + "," for line in lines) + "\n")
    return p


def _complex_npz(d: Path) -> Path:
    t = _table()
    p = d / "t.npz"
    np.savez(p, X=t.X.astype(np.complex128),
             **{c: t.labels[c].to_numpy().astype(str) for c in t.labels.columns})
    return p


#: the roles evaluate takes: the useful and sensitive columns, the others read and left out
LABELS = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
          "environment"]


def _motion_with_a_text_cell(d: Path) -> list[str]:
    """Two streams of the same channels, the first with one cell of text in 'ax': the first
    stream's channels once decided every other's, so the good stream was dropped instead."""
    src = d / "streams"
    src.mkdir()
    t = np.arange(400) * 20.0
    for name, phase in (("s1.csv", 0.0), ("s2.csv", 1.0)):
        frame = pd.DataFrame({"timestamp": t, "ax": np.sin(t + phase), "ay": np.cos(t)})
        if name == "s1.csv":
            frame["ax"] = frame["ax"].astype(object)
            frame.loc[7, "ax"] = "n/a?"
        frame.to_csv(src / name, index=False)
    seg = pd.DataFrame([(f, 0, 400, "walk") for f in ("s1.csv", "s2.csv")],
                       columns=["file", "start_row", "end_row", "activity"])
    seg.to_csv(d / "seg.csv", index=False)
    return ["extract", "motion", str(src), "--labels", str(d / "seg.csv"), "-o",
            str(d / "m.parquet")]


def _labels_listing_a_file_twice(d: Path) -> list[str]:
    """A labels CSV naming one recording twice: it was extracted twice, as two records."""
    src = _wav_folder(d)
    (d / "labels.csv").write_text("file,speaker\nok0.wav,a\nok1.wav,b\nok0.wav,a\n")
    return ["extract", "voice", str(src), "--labels", str(d / "labels.csv"), "-o",
            str(d / "v.parquet")]


def _release(src: Path, d: Path) -> list[str]:
    return ["release", str(src), "-o", str(d / "o.parquet"), *ROLES]


def wave7_cases() -> list[Case]:
    measured = "holds measurements, not classes"
    pipe = "is not a regular file (a pipe, a device or a socket)"
    c = [
        Case("anonymize-measured-interest-is-named-not-an-internal-error",
             lambda d: anon(_measured(d, "expression"), d, *FAST), says=measured),
        Case("release-measured-interest-is-named", lambda d: _release(
            _measured(d, "expression"), d), says=measured),
        Case("release-measured-sensitive-is-named", lambda d: _release(
            _measured(d, "identity"), d), says=measured),
        Case("evaluate-measured-interest-is-named", lambda d: [
            "evaluate", str(_measured(d, "expression")), "--out", str(d / "ev"), *LABELS,
            *FAST], says=measured),
        Case("anonymize-named-pipe-input-does-not-hang", lambda d: anon(_pipe(d), d, *FAST),
             says=pipe),
        Case("release-named-pipe-input-does-not-hang", lambda d: _release(_pipe(d), d),
             says=pipe),
        Case("release-device-input-is-refused", lambda d: _release(Path("/dev/zero"), d),
             says=pipe),
        Case("audit-named-pipe-control-does-not-hang", lambda d: au(
            d, control=_pipe(d, "pipe.parquet")), says=pipe),
        Case("release-public-data-named-pipe-does-not-hang", lambda d: [
            *_release(_csv(d), d), "--public-data", str(_pipe(d, "pub.parquet")),
            "--epsilon", "1"], says=pipe),
        Case("anonymize-utf16-csv-names-the-encoding", lambda d: anon(_utf16_csv(d), d, *FAST),
             says="it is not UTF-8 text"),
        Case("anonymize-trailing-commas-are-named", lambda d: anon(_trailing_commas(d), d,
                                                                    *FAST),
             says="ends every row with a separator"),
        Case("anonymize-complex-npz-features-are-refused", lambda d: anon(
            _complex_npz(d), d, *FAST, out="o.npz",
            roles=LABELS),
            says="holds complex numbers"),
    ]
    # silent recordings: listed as skipped (the speaker encoder once failed on them with an
    # internal error), and 8-bit unsigned silence (128) is silence too
    silent = {"zero.wav": np.zeros(4000, np.int16), "u8.wav": np.full(4000, 128, np.uint8)}
    for features in ("mfcc", "speaker"):
        c.append(Case(f"extract-voice-{features}-silent-recordings-are-skipped", lambda d, f=
                      features: ["extract", "voice", str(_wav_folder(d, silent)), "-o",
                                 str(d / "v.parquet"), "--features", f],
                      "ok", ("v.parquet", "v.parquet.skipped.csv"), says="2 input(s) skipped"))
    c.append(Case("extract-voice-only-silent-recordings", lambda d: [
        "extract", "voice", str(_wav_folder(d, silent, 0)), "-o", str(d / "v.parquet")],
        says="no recording could be read"))
    # a group that is a role column: named before the plan (the plan once read it as the
    # unit of its games and said it "can rule out 2.558", an advantage above 1)
    for role in ("expression", "identity"):
        c.append(Case(f"release-group-{role}-is-a-role-column", lambda d, r=role: [
            *_release(_csv(d, n_id=40, per=10), d), "--group", r],
            says="must differ from the sensitive and useful columns"))
    # a release holding HOLDOUT's records: HOLDOUT was given to the release process, so it
    # holds no non-members (it was judged, and read as a recognizer's training set)
    c.append(Case("audit-released-holding-holdout-records-is-refused", lambda d: au(
        d, released=d / "ho.parquet"), says="RELEASED rows are HOLDOUT's records"))
    c.append(Case("evaluate-additional-is-the-interest", lambda d: [
        "evaluate", str(_csv(d)), "--out", str(d / "ev"), *LABELS, *FAST, "--additional",
        "expression"], says="column 'expression' is given two roles (interest and additional)"))
    # an output under a path whose folder is a file: said so (it said the folder "does not
    # exist", or "is not writable")
    c.append(Case("anonymize-output-under-a-file", lambda d: [
        "anonymize", str(_csv(d)), "-o", str(d / "t.csv" / "o.parquet"), *ROLES, *FAST],
        says="is a file; name a file inside a folder"))
    c.append(Case("evaluate-out-under-a-file", lambda d: [
        "evaluate", str(_csv(d)), "--out", str(d / "t.csv" / "ev"), *LABELS, *FAST],
        says="which is a file; name a folder for the report"))
    c.append(Case("extract-voice-labels-listing-a-file-twice", _labels_listing_a_file_twice,
                  says="the labels list 1 file(s) more than once"))
    c.append(Case("extract-motion-text-cell-skips-its-stream-not-the-others",
                  _motion_with_a_text_cell, "ok", ("m.parquet", "m.parquet.skipped.csv"),
                  says="1 input(s) skipped"))
    # wave 6, twenty-first session: an attribute named twice was an internal error (a
    # two-column frame where one column belonged); it is tracked once
    c.append(Case("tune-k-attribute-named-twice-is-tracked-once", lambda d: [
        "tune-k", str(_csv(d)), "--out", str(d / "tk"), "--sensitive", "identity", "--label",
        "gender", "--label", "environment", "--attribute", "expression", "--attribute",
        "expression", "--k-max", "4"], "ok", ("tk/tune-k.json", "tk/tune-k.png",
                                                            "tk/dendrogram.png")))
    # anonymize on a table that declares its features (bioanon's Parquet, an NPZ): a
    # --keep-as-feature naming a label column or nothing was left without effect, exit 0
    # (release refused it already)
    for name, col, fix in (("a-label-column", "environment", "it is a label column there"),
                           ("no-column", "nope", "name feature columns")):
        c.append(Case(f"anonymize-bioanon-parquet-keep-as-feature-naming-{name}",
                      lambda d, col=col: [*anon(_parquet(d), d, *FAST), "--keep-as-feature",
                                          col], says=f"--keep-as-feature {col} names no "
                                                     "feature column of 't.parquet' (written "
                                                     "by bioanon, whose metadata says which "
                                                     f"columns are features); {fix}"))
    # a declared layout for a method that reads none (no layout parameter): exit 0 with the
    # layout left without effect
    layout = "has no effect with method 'selective-mean'"
    c.append(Case("anonymize-layout-for-a-method-reading-none", lambda d: [
        *anon(_csv(d), d, *FAST), "--layout", "4x8"], says=layout))
    c.append(Case("evaluate-layout-for-a-method-reading-none", lambda d: [
        "evaluate", str(_csv(d)), "--out", str(d / "ev"), *LABELS, *FAST, "--layout", "4x8"],
        says=layout))
    c.append(Case("release-layout-with-methods-reading-none", lambda d: [
        *_release(_csv(d, n_id=40, per=10), d), "--methods", "noise", "--layout", "4x8"],
        says="has no effect with the methods noise"))
    c.append(Case("anonymize-npz-keep-as-feature-naming-no-column", lambda d: [
        *anon(_bioanon_npz(d), d, *FAST), "--keep-as-feature", "nope"],
        says="--keep-as-feature nope names no feature column of 't.npz' (an NPZ file"))
    return c


def _parquet(d: Path) -> Path:
    p = d / "t.parquet"
    _table().write(p)
    return p


def _bioanon_npz(d: Path) -> Path:
    p = d / "t.npz"
    _table().write(p)
    return p
