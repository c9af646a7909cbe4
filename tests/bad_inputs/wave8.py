"""Cases of wave 8 (reliability, round eight): inputs a data owner gives by mistake that
were handled badly, each kept fixed here (0 tracebacks, 0 wrong exits, 0 silent accepts,
0 hangs).

Before the fixes: a typo in a size option ran the machine out of memory (``tune-k
--k-max 1000000000`` listed a billion k values; ``train-decoupler --latent-dim 1000000000``
failed inside torch's allocator as an internal error); ``extract voice --n-mfcc 41`` asked
for more coefficients than the 40 mel bands give (an error about feature names), ``--rate
1e300`` was an internal error, and ``--n-steps``, ``--size`` and ``--upsample`` typos ran out
of memory (refused as "release the table in parts (--dask)", an option extract lacks).
"""

from __future__ import annotations

from pathlib import Path

from .audit import au
from .cases import ROLES, Case, _csv, _motion, _png, _table, _wav_folder, anon

TD = ["--sensitive", "identity", "--label", "gender", "--label", "environment", "--label",
      "expression"]


def _train_decoupler(d: Path, *extra: str) -> list[str]:
    return ["train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"), *TD, "--epochs", "1",
            *extra]


def _faces(d: Path) -> Path:
    src = d / "imgs"
    src.mkdir()
    for i in range(3):
        _png(src / f"p{i}.png", 16)
    return src


def _csv_audit(d: Path) -> list[str | Path]:
    """INPUT, RELEASED and --control HOLDOUT of :func:`bad_inputs.audit.au`, all CSV."""
    import numpy as np

    t = _table(n_id=8, per=30)
    rows = np.arange(t.n_records)
    src, ho, rel = d / "in.csv", d / "ho.csv", d / "rel.csv"
    t.subset(rows % 2 == 0).write(src)
    t.subset(rows % 2 == 1).write(ho)
    t.subset(rows % 2 == 0).drop_labels(["identity"]).write(rel)
    return [src, rel, "--control", ho]


def _labels(d: Path, header: str, row: str) -> Path:
    p = d / "l.csv"
    p.write_text(header + "\n" + "".join(row.format(i=i) + "\n" for i in range(3)))
    return p


def _voice(d: Path, *extra: str) -> list[str]:
    return ["extract", "voice", str(_wav_folder(d)), "-o", str(d / "v.parquet"), *extra]


def wave8_cases() -> list[Case]:
    cases = [
        Case("tune-k-k-max-a-billion-is-refused-by-the-records", lambda d: [
            "tune-k", str(_csv(d)), "--out", str(d / "tk"), *TD, "--k-max", "1000000000"],
            says="k=1000000000 exceeds the 48 records; lower the largest k to at most 48"),
        Case("train-decoupler-latent-dim-a-billion-is-refused", lambda d: _train_decoupler(
            d, "--latent-dim", "1000000000"),
            says="--latent-dim 1000000000 and --hidden 256 make a decoupler of"),
        Case("train-decoupler-hidden-a-hundred-million-is-refused", lambda d: _train_decoupler(
            d, "--hidden", "100000000"), says="lower the latent size or the hidden width"),
        # extract: the layout of the features sized past what the method gives or memory holds
        Case("extract-voice-n-mfcc-above-the-mel-bands", lambda d: _voice(d, "--n-mfcc", "41"),
             says="--n-mfcc 41 is more coefficients than the 40 mel bands give"),
        Case("extract-voice-n-steps-a-billion", lambda d: _voice(d, "--n-steps", "1000000000"),
             says="--n-steps 1000000000 is out of range; use at most 1000"),
        Case("extract-face-size-100000", lambda d: [
            "extract", "face", str(_faces(d)), "-o", str(d / "f.parquet"), "--size", "100000"],
            says="--size 100000 is too large; use at most 1024 pixels"),
        Case("extract-face-upsample-1000", lambda d: [
            "extract", "face", str(_faces(d)), "-o", str(d / "f.parquet"), "--upsample",
            "1000"], says="--upsample 1000 is out of range; use 0 to 3"),
        Case("extract-motion-rate-1e300", lambda d: [
            *_motion(d, [("s1.csv", 0, 400, "walk")]), "--rate", "1e300"],
            says="--rate 1e+300 is out of range; use a rate above 0 and at most 100000 Hz"),
        # method parameters: a risk loop of a billion rounds ran for hours; dp-mix's public
        # standardization given half (center alone) was dropped without a word, and of the
        # wrong length was an internal error (NumPy's broadcast message)
        Case("anonymize-cluster-mix-max-rounds-a-billion", lambda d: anon(
            _csv(d), d, "--method", "cluster-mix", "--k", "4", "--param",
            "max_rounds=1000000000"),
            says="max_rounds=1000000000 is out of range; use an integer in [0, 1000]"),
        Case("anonymize-dp-mix-center-without-scale", lambda d: anon(
            _csv(d), d, "--method", "dp-mix", "--g", "4", "--param", "center=0"),
            says="center=0 has no effect with method 'dp-mix': applies with scale"),
        Case("anonymize-dp-mix-scale-without-center", lambda d: anon(
            _csv(d), d, "--method", "dp-mix", "--g", "4", "--param", "scale=1"),
            says="scale=1 has no effect with method 'dp-mix': applies with center"),
        Case("anonymize-dp-mix-center-of-two-values-for-32-features", lambda d: anon(
            _csv(d), d, "--method", "dp-mix", "--g", "4", "--param", "center=1,2", "--param",
            "scale=1,2"), says="center has 2 values for the 32 features; give one per feature"),
    ]
    # dp-synthetic's and dp-basis' center of the wrong length: NumPy's broadcast error too
    for method in ("dp-synthetic", "dp-basis"):
        cases.append(Case(f"anonymize-{method}-center-of-two-values-for-32-features",
                          lambda d, m=method: anon(_csv(d), d, "--method", m, "--param",
                                                   "center=1,2", "--param", "bounds=-5,5"),
                          says="center has 2 values for the 32 features; give one per "
                               "feature"))
    # one risk accepted twice with two reasons: the second reason replaced the first, unsaid
    twice = ["--accept-risk", "record-membership", "--reason", "a", "--accept-risk",
             "record-membership", "--reason", "b"]
    said = "--accept-risk record-membership is given twice, with the reasons 'a' and 'b'"
    cases += [
        Case("release-accept-risk-twice-with-two-reasons", lambda d: [
            "release", str(_csv(d)), "-o", str(d / "o.parquet"), *ROLES, *twice], says=said),
        Case("audit-accept-risk-twice-with-two-reasons", lambda d: au(d, *twice), says=said),
    ]
    # a grid none of whose settings could be evaluated: the refusal spoke the library's
    # allow_replacement=True where the command line takes --allow-replacement
    cases.append(Case("tune-grid-of-no-usable-setting-names-the-flag", lambda d: [
        "tune", str(_csv(d)), "--out", str(d / "tu"), "--interest", "expression",
        "--sensitive", "identity", "--label", "gender", "--label", "environment", "--grid",
        "g=4"], says="or allow sampling with replacement (--allow-replacement))"))
    # a labels CSV naming a column twice: pandas kept 'speaker' and 'speaker.1' (or 'file.1'),
    # each extracted as a label of its own, exit 0
    for col, header, row in (("speaker", "file,speaker,speaker", "ok{i}.wav,a,b"),
                             ("file", "file,file", "ok{i}.wav,ok{i}.wav")):
        cases.append(Case(f"extract-voice-labels-naming-{col}-twice", lambda d, h=header, r=row:
                          _voice(d, "--labels", str(_labels(d, h, r))),
                          says=f"l.csv' names the column '{col}' more than once"))
    # the motion segment table: an empty or text row number was an internal error; a time in
    # seconds was cut to a row; two labels for the same rows kept the later one, unsaid; an
    # empty label labelled windows 'nan'
    for name, rows, says in (
            ("empty-start-row", [("s1.csv", None, 400, "walk")],
             "has start_row empty and end_row 400; give whole row numbers"),
            ("text-start-row", [("s1.csv", "abc", 400, "walk")],
             "has start_row 'abc' and end_row 400; give whole row numbers"),
            ("seconds-not-rows", [("s1.csv", 0.5, 7.8, "walk")],
             "has start_row 0.5 and end_row 7.8; give whole row numbers of the stream"),
            ("overlapping-labels", [("s1.csv", 0, 300, "walk"), ("s1.csv", 200, 400, "run")],
             "segments 1 and 2 of 's1.csv' overlap (rows 200 to 300) with different labels "
             "('walk' and 'run')"),
            ("empty-label", [("s1.csv", 0, 400, None)],
             "segment 1 ('s1.csv') has no 'activity' value"),
            ("reversed", [("s1.csv", 300, 100, "walk")],
             "runs from row 300 to row 100; give 0 <= start_row < end_row")):
        cases.append(Case(f"extract-motion-segment-{name}", lambda d, r=rows: [
            *_motion(d, r), "--window", "50"], says=says))
    # clipping bounds of one value (bounds=1,1): a release of ones, exit 0
    for method, extra in (("laplace", ("--epsilon", "1")), ("dp-synthetic", ())):
        cases.append(Case(f"anonymize-{method}-bounds-of-one-value", lambda d, m=method, e=extra:
                          anon(_csv(d), d, "--method", m, *e, "--param", "bounds=1,1"),
                          says="bounds (1, 1) clip every feature to one value"))
    # audit --sample-records with no Parquet table: CSV tables are read whole, the option was
    # left without effect
    cases.append(Case("audit-sample-records-without-a-parquet-table", lambda d: [
        "audit", *map(str, _csv_audit(d)), "--interest", "expression", "--sensitive",
        "identity", "--sample-records", "100"],
        says="--sample-records has no effect here: it samples a Parquet table"))
    # an empty path (an unset shell variable, --out "$REPORT") was taken for the current
    # folder: evaluate and tune-k wrote their reports there, exit 0, and datasets listed it
    empty = "is empty; name a path (an empty value, such as an unset shell variable"
    cases += [
        Case("evaluate-out-empty-string", lambda d: [
            "evaluate", str(_csv(d)), "--out", "", "--interest", "expression", "--sensitive",
            "identity", "--label", "gender", "--label", "environment", "--g", "4"],
            says=f"--out {empty}"),
        Case("tune-k-out-empty-string", lambda d: [
            "tune-k", str(_csv(d)), "--out", "", *TD, "--k-max", "3"], says=f"--out {empty}"),
        Case("datasets-home-empty-string", lambda d: ["datasets", "--home", ""],
             says=f"--home {empty}"),
        Case("anonymize-out-empty-string", lambda d: [
            "anonymize", str(_csv(d)), "-o", "", *ROLES, "--g", "4"], says=f"--out {empty}"),
        Case("release-public-data-empty-string", lambda d: [
            "release", str(_csv(d)), "-o", str(d / "o.parquet"), *ROLES, "--public-data", "",
            "--epsilon", "1"], says=f"--public-data {empty}"),
        Case("anonymize-input-empty-string", lambda d: [
            "anonymize", "", "-o", str(d / "o.parquet"), *ROLES], says=f"INPUT {empty}"),
    ]
    return cases
