"""Cases of ``bioanon audit`` (issue 45): each refusal names its problem in one line.

INPUT is half of a small synthetic table, HOLDOUT the other half, RELEASED a copy of INPUT
without its identity column (CSV, as another tool writes it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bioanon.table import FeatureTable

from .cases import Case, _table

ROLES = ["--interest", "expression", "--sensitive", "identity"]


def _files(d: Path) -> tuple[Path, Path, Path]:
    """(INPUT, RELEASED, HOLDOUT): halves of an 8 × 30 table; the release a CSV copy."""
    t = _table(n_id=8, per=30)
    rows = np.arange(t.n_records)
    m, h = t.subset(rows % 2 == 0), t.subset(rows % 2 == 1)
    src, ho = d / "in.parquet", d / "ho.parquet"
    m.write(src)
    h.write(ho)
    (d / "rel").mkdir()
    rel = d / "rel" / "release.csv"
    m.drop_labels(["identity", "gender"]).to_frame().to_csv(rel, index=False)
    return src, rel, ho


def au(d: Path, *extra: str, released: Path | None = None, control: Path | None = None,
       roles: list[str] = ROLES) -> list[str]:
    src, rel, ho = _files(d)
    return ["audit", str(src), str(released or rel), "--control", str(control or ho),
            *roles, *extra]


def _edited_holdout(d: Path, how: str) -> Path:
    t = _table(n_id=8, per=30)
    h = t.subset(np.arange(t.n_records) % 2 == 1)
    if how == "features":
        h = FeatureTable(h.X[:, :16], h.labels, h.feature_names[:16])
    else:
        h = FeatureTable(h.X, h.labels.assign(expression="unseen"), h.feature_names)
    p = d / f"other_{how}.parquet"
    h.write(p)
    return p


def _renamed_release(d: Path) -> Path:
    t = _table(n_id=8, per=30)
    frame = t.to_frame().rename(columns={f: f"z{f}" for f in t.feature_names})
    p = d / "renamed.csv"
    frame.drop(columns=["identity"]).to_csv(p, index=False)
    return p


def _tiny(d: Path) -> list[str]:
    t = _table(n_id=8, per=30)
    t.subset(np.arange(0, 12, 2)).write(d / "tiny_in.parquet")
    t.subset(np.arange(1, 12, 2)).write(d / "tiny_ho.parquet")
    return ["audit", str(d / "tiny_in.parquet"), str(d / "tiny_in.parquet"), "--control",
            str(d / "tiny_ho.parquet"), *ROLES]


def _edited_release(d: Path, how: str) -> Path:
    """RELEASED (a CSV copy of INPUT) edited: a feature holding text, one interest value."""
    t = _table(n_id=8, per=30)
    frame = t.subset(np.arange(t.n_records) % 2 == 0).to_frame().drop(columns=["identity"])
    if how == "text":
        frame["f3"] = frame["f3"].astype(str)
        frame.loc[2, "f3"] = "abc"
    p = d / f"release_{how}.csv"
    frame.to_csv(p, index=False)
    return p


def _without_interest(d: Path) -> Path:
    """RELEASED (a CSV copy of INPUT) without the interest column."""
    t = _table(n_id=8, per=30)
    frame = t.subset(np.arange(t.n_records) % 2 == 0).to_frame()
    p = d / "release_no_interest.csv"
    frame.drop(columns=["identity", "expression"]).to_csv(p, index=False)
    return p


def _one_class(d: Path) -> list[str]:
    """INPUT, HOLDOUT and RELEASED whose interest holds one value."""
    t = _table(n_id=8, per=30)
    t = FeatureTable(t.X, t.labels.assign(expression="only"), t.feature_names)
    rows = np.arange(t.n_records)
    m, h = t.subset(rows % 2 == 0), t.subset(rows % 2 == 1)
    m.write(d / "in1.parquet")
    h.write(d / "ho1.parquet")
    m.drop_labels(["identity"]).to_frame().to_csv(d / "rel1.csv", index=False)
    return ["audit", str(d / "in1.parquet"), str(d / "rel1.csv"), "--control",
            str(d / "ho1.parquet"), *ROLES]


def _empty_input(d: Path) -> list[str]:
    """INPUT a CSV with its header and no record."""
    args = au(d)
    t = _table(n_id=8, per=30)
    t.to_frame().head(0).to_csv(d / "empty.csv", index=False)
    args[1] = str(d / "empty.csv")
    return args


def audit_cases() -> list[Case]:
    c: list[Case] = []

    def add(id: str, build: object, says: str | None = None) -> None:
        c.append(Case(f"audit-{id}", build, says=says))  # type: ignore[arg-type]

    add("holdout-rows-in-input", lambda d: au(d, control=d / "in.parquet"), "also in INPUT")
    add("no-common-feature", lambda d: au(d, released=_renamed_release(d)),
        "shares no feature column")
    add("label-the-release-lacks", lambda d: au(d, "--label", "gender"),
        "RELEASED lacks the label 'gender'")
    add("sensitive-as-kept-label", lambda d: au(d, "--label", "identity"),
        "cannot be a kept label")
    add("control-with-other-features", lambda d: au(d, control=_edited_holdout(d, "features")),
        "not of INPUT's population")
    add("control-with-other-label-values",
        lambda d: au(d, control=_edited_holdout(d, "labels")), "never has")
    add("sizes-too-small", _tiny, "too small")
    add("missing-released", lambda d: au(d, released=d / "nothing.csv"), "does not exist")
    add("missing-control", lambda d: au(d, control=d / "nothing.parquet"), "does not exist")
    add("interest-not-a-column",
        lambda d: au(d, roles=["--interest", "age", "--sensitive", "identity"]),
        "no column 'age'")
    add("sensitive-is-the-interest",
        lambda d: au(d, roles=["--interest", "expression", "--sensitive", "expression"]),
        "cannot be both")
    add("reproduce-without-placeholders", lambda d: au(d, "--reproduce", "true"),
        "{input} and {output}")
    add("reproduce-that-fails", lambda d: au(d, "--reproduce", "false {input} {output}",
                                             "--seed", "1", "--no-json"),
        "the reproduce command failed")
    add("out-beside-released", lambda d: au(d, "-o", str(d / "rel")), "beside")
    add("out-is-an-input-file", lambda d: au(d, "--out", str(d / "in.parquet")))
    add("level-not-a-level", lambda d: au(d, "--level", "loud"), "is not a level")
    add("seed-out-of-range", lambda d: au(d, "--seed", "-1", "--json"), "out of range")
    add("quiet-bad-input", lambda d: ["-q", *au(d, "--label", "gender", "--no-quiet")],
        "lacks the label")
    add("accept-unknown-risk", lambda d: au(d, "--accept-risk", "record-nothing", "--reason",
                                            "x"), "cannot accept unknown risk")
    add("accept-without-reason", lambda d: au(d, "--accept-risk", "identity-membership"),
        "--reason")
    # round two (a hostile user): each of these ran the audit, hung or said too little
    add("feature-holding-text", lambda d: au(d, released=_edited_release(d, "text")),
        "RELEASED's column 'f3' holds text (e.g. 'abc')")
    add("interest-with-one-value", _one_class, "has 1 value")
    add("zero-record-input-named", _empty_input, "INPUT '")
    add("reproduce-that-hangs",
        lambda d: au(d, "--reproduce", "sleep 30; cp {input} {output}",
                     "--reproduce-timeout", "0.5"), "ran over its limit")
    add("reproduce-timeout-zero",
        lambda d: au(d, "--reproduce", "cp {input} {output}", "--reproduce-timeout", "0"),
        "above 0")
    add("reproduce-writes-nothing", lambda d: au(d, "--reproduce", "true {input} {output}"),
        "wrote nothing")
    add("reproduce-writes-garbage",
        lambda d: au(d, "--reproduce", "echo hello > {output}; : {input}"),
        "is not a table bioanon reads")
    add("sensitive-is-a-feature",
        lambda d: au(d, roles=["--interest", "expression", "--sensitive", "f3"]),
        "it is a feature, not a label")
    add("sample-records-zero", lambda d: au(d, "--sample-records", "0"), "out of range")
    add("interest-the-release-lacks", lambda d: au(d, released=_without_interest(d)),
        "RELEASED lacks the interest column 'expression' (the utility is measured on it)")
    add("verbose-bad-input", lambda d: [*au(d, "--level", "0", "--no-verbose"), "-v"])
    return c


__all__ = ["audit_cases"]
