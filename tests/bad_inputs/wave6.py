"""Cases of issue 46 (reliability, round six): each one a defect found there, so that the
held-out corpus keeps it fixed (0 tracebacks, 0 wrong exits, 0 silent accepts).

``says`` names the refusal a case must end in: the defect was often an internal error or a
refusal naming something the user never typed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .audit import au
from .cases import FAST, ROLES, Case, _csv, _frame_csv, _table, anon


def _release(d: Path, *extra: str, name: str = "t.csv") -> list[str]:
    return ["release", str(_csv(d, name)), "-o", str(d / "o.parquet"), *ROLES, *extra]


def _public_with_a_text_feature(d: Path, suffix: str) -> tuple[Path, Path]:
    """A private table and public data of another person whose feature 'f3' is text."""
    t = _table(n_id=6)
    ids = t.labels["identity"].to_numpy()
    src, pub = d / f"in{suffix}", d / "pub.csv"
    t.subset(np.flatnonzero(ids != ids[0])).write(src)
    frame = t.subset(np.flatnonzero(ids == ids[0])).to_frame()
    frame["f3"] = frame["f3"].astype(str) + "x"
    frame.to_csv(pub, index=False)
    return src, pub


def _public_of_another_person(d: Path) -> Path:
    """Public data: the records of the person :func:`_public_with_a_text_feature` leaves out
    of its input, numbers throughout."""
    t = _table(n_id=6)
    ids = t.labels["identity"].to_numpy()
    pub = d / "pub-ok.csv"
    t.subset(np.flatnonzero(ids == ids[0])).write(pub)
    return pub


def wave6_cases() -> list[Case]:
    c: list[Case] = []
    # extreme budgets: refused before any work, naming the option and the range it can take
    for method, value in (("dp-cells", "1e308"), ("dp-basis", "1e308"),
                          ("dp-synthetic", "1e-308"), ("laplace", "1e-308")):
        c.append(Case(f"anonymize-{method}-epsilon-{value}-is-out-of-range", lambda d, m=method,
                      v=value: anon(_csv(d), d, "--method", m, "--param", f"epsilon={v}"),
                      says="is out of range; use a number in [1e-06, 1000000]"))
    c.append(Case("anonymize-dp-cells-mu-1e308-is-out-of-range", lambda d: anon(
        _csv(d), d, "--method", "dp-cells", "--param", "mu=1e308"),
        says="mu=1e+308 is out of range; use a number in [1e-06, 1000]"))
    c.append(Case("anonymize-dp-cells-mu-1e-308-names-mu-not-rho", lambda d: anon(
        _csv(d), d, "--method", "dp-cells", "--param", "mu=1e-308"),
        says="mu=1e-308 is out of range"))
    for value, extra in (("1e308", ()), ("1e-308", ()), ("1e308", ("--dask",)),
                         ("1e308", ("--methods", "dp-cells"))):
        tail = "".join("-" + x.strip("-") for x in extra)
        c.append(Case(f"release-epsilon-{value}{tail}-is-out-of-range",
                      lambda d, v=value, e=extra: _release(d, "--epsilon", v, *e),
                      says=f"--epsilon {float(value):g} is out of range; use a number in "
                           "[1e-06, 1000000]"))
    # a typo in --workers must not fork-storm the machine; an unreachable scheduler is named
    # before the search
    c.append(Case("release-dask-workers-4096-is-refused-by-the-cores-and-memory",
                  lambda d: _release(d, "--dask", "--workers", "4096", name="t.parquet"),
                  says="--workers 4096 is more than this machine can run: at most"))
    c.append(Case("anonymize-dask-workers-4096-is-refused-by-the-cores-and-memory",
                  lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--dask", "--workers", "4096",
                                 out="o"),
                  says="--workers 4096 is more than this machine can run: at most"))
    c.append(Case("release-scheduler-inproc-nowhere-is-named-before-the-search",
                  lambda d: _release(d, "--scheduler", "inproc://nowhere", name="t.parquet"),
                  says="cannot reach the dask scheduler at inproc://nowhere"))
    c.append(Case("release-streamed-scheduler-inproc-nowhere-is-named-before-the-search",
                  lambda d: _release(d, "--scheduler", "inproc://nowhere", "--epsilon", "1",
                                     "--public-data", str(_csv(d, "pub.parquet", seed=1)),
                                     name="t.parquet"),
                  says="cannot reach the dask scheduler at inproc://nowhere"))
    c.append(Case("anonymize-scheduler-inproc-nowhere-is-named",
                  lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--scheduler",
                                 "inproc://nowhere", out="o"),
                  says="cannot reach the dask scheduler at inproc://nowhere"))
    # a class-conditional method on a table of one interest class: refused as the selective
    # mean and release refuse it
    for method in ("dp-cells", "dp-synthetic", "synthetic"):
        c.append(Case(f"anonymize-{method}-one-interest-class-is-refused", lambda d, m=method:
                      anon(_frame_csv(d, lambda f: f.assign(expression="same")), d, "--method",
                           m), says="interest column 'expression' has one class"))
    # a table too small to measure utility is refused by the plan, before the search
    accept = [a for r in ("record-recognition", "record-membership", "record-inference",
                          "identity-membership", "identity-inference")
              for a in ("--accept-risk", r)]
    c.append(Case("release-10-records-utility-is-refused-by-the-plan", lambda d: [
        "release", str(_csv(d, n_id=5, per=2)), "-o", str(d / "o.parquet"), *ROLES, *accept,
        "--reason", "a test"], says="utility cannot be measured at this size: on the 5 records"))
    # a text-typed feature of the public data is a wrong type, not a missing column
    for suffix, extra in ((".csv", ()), (".parquet", ("--dask",))):
        path = "-dask" if extra else ""
        c.append(Case(f"release{path}-public-data-text-feature-is-named-by-its-type",
                      lambda d, s=suffix, e=extra: [
                          "release", str((p := _public_with_a_text_feature(d, s))[0]), "-o",
                          str(d / ("o" if e else "o.parquet")), *ROLES, "--epsilon", "1",
                          "--public-data", str(p[1]),
                          *e],
                      says="--public-data column 'f3' holds text (dtype "))
    # --public-data without --epsilon (a public basis's source): checked the same way, and
    # against the input's people; a --methods list that takes no public basis is refused
    c.append(Case("release-public-basis-text-feature-is-named-by-its-type", lambda d: [
        "release", str((p := _public_with_a_text_feature(d, ".csv"))[0]), "-o",
        str(d / "o.parquet"), *ROLES, "--public-data", str(p[1])],
        says="--public-data column 'f3' holds text (dtype "))
    c.append(Case("release-public-basis-holding-a-person-of-the-input", lambda d: [
        "release", str(_csv(d, n_id=6)), "-o", str(d / "o.parquet"), *ROLES,
        "--public-data", str(_csv(d, "pub.csv", n_id=2, seed=3))],
        says="--public-data holds 2 person(s) of the input in column 'identity'"))
    c.append(Case("release-public-basis-methods-taking-none", lambda d: [
        "release", str(_public_with_a_text_feature(d, ".csv")[0]), "-o",
        str(d / "o.parquet"), *ROLES, "--methods", "noise", "--public-data",
        str(_public_of_another_person(d))],
        says="--public-data gives a public basis, which none of --methods"))
    # demo takes --level (its refusal names the level at which a release would pass)
    c.append(Case("demo-level-bogus-is-refused-before-the-data-are-drawn", lambda d: [
        "demo", "--out", str(d / "rep"), "--level", "bogus"], says="--level 'bogus'"))
    # an npz label array of Python objects: named as such, with the fix (not numpy's words)
    c.append(Case("release-npz-object-labels-name-the-fix", lambda d: [
        "release", str(_object_npz(d)), "-o", str(d / "o.npz"), *ROLES],
        says="holds an array of Python objects, which bioanon does not load"))
    # a column that is not there: the label columns listed first, not a run of features
    c.append(Case("release-unknown-sensitive-lists-the-label-columns", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), "--sensitive", "nosuch",
        "--interest", "expression"],
        says="available: identity, gender, expression, environment (and 32 numeric"))
    # a data home that is a file, not a folder
    c.append(Case("datasets-home-that-is-a-file-says-so", lambda d: [
        "datasets", "--home", str(_csv(d))], says="is a file, not a folder"))
    # a CSV written with semicolons: named as such, not as a missing column
    c.append(Case("release-semicolon-csv-names-its-separator", lambda d: [
        "release", str(_semicolon_csv(d)), "-o", str(d / "o.parquet"), *ROLES],
        says="looks separated by semicolons"))
    c.append(Case("release-decimal-comma-csv-names-both-conventions", lambda d: [
        "release", str(_semicolon_csv(d, decimal=",")), "-o", str(d / "o.parquet"), *ROLES],
        says="sep=';', decimal=','"))
    c.append(Case("release-gzipped-csv-is-named-as-compressed", lambda d: [
        "release", str(_gzipped_csv(d)), "-o", str(d / "o.parquet"), *ROLES],
        says="'t.csv.gz' names a compressed file (.gz); bioanon reads and writes"))
    # pandas' index written as a column: the refusal says what that column is
    c.append(Case("anonymize-pandas-index-column-is-named", lambda d: anon(
        _with_pandas_index(d), d, "--method", "noise", "--sigma", "1"),
        says="is the DataFrame's index, which pandas wrote as a column"))
    # the input under a second name (a hard link) named as the output: the path differs, the
    # file is the same; the release would have replaced that name's data
    for cmd in ("anonymize", "release"):
        c.append(Case(f"{cmd}-output-a-hard-link-to-the-input", lambda d, cmd=cmd: [
            cmd, str(_hard_linked(d)), "-o", str(d / "t.csv"), *ROLES,
            *(FAST if cmd == "anonymize" else [])],
            says="is the input file"))
    # one person under two spellings (' p1' and 'p1'): two people to the judge, every risk of
    # that person measured on halves; refused, naming both values and the fix
    c.append(Case("release-sensitive-values-differing-only-by-spaces", lambda d: [
        "release", str(_frame_csv(d, _padded_identity)), "-o", str(d / "o.parquet"), *ROLES],
        says="differ only by surrounding spaces"))
    # a useful column that decides the sensitive one (each person one value): refused before
    # any work, in every command that judges, instead of a search that can only fail
    gives_away = "useful column 'identity' gives the sensitive column 'gender' away"
    swapped = ["--interest", "identity", "--sensitive", "gender"]
    c.append(Case("release-useful-column-decides-the-sensitive-one", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), *swapped,
        "--identifying", "environment", "--label", "expression"], says=gives_away))
    c.append(Case("evaluate-useful-column-decides-the-sensitive-one", lambda d: [
        "evaluate", str(_csv(d)), "-o", str(d / "ev"), *swapped, "--label", "expression",
        "--label", "environment"], says=gives_away))
    c.append(Case("audit-useful-column-decides-the-sensitive-one",
                  lambda d: au(d, roles=swapped), says=gives_away))
    return c


def _padded_identity(frame: pd.DataFrame) -> pd.DataFrame:
    ids = frame["identity"].astype(str)
    frame["identity"] = ids.where(np.arange(len(ids)) % 2 == 0, ids + " ")
    return frame


def _hard_linked(d: Path) -> Path:
    """The input table and a second name of the same file (a hard link)."""
    src = _csv(d)
    link = d / "same.csv"
    link.hardlink_to(src)
    return link


def _semicolon_csv(d: Path, decimal: str = ".") -> Path:
    p = d / "t.csv"
    _table().to_frame().to_csv(p, index=False, sep=";", decimal=decimal)
    return p


def _gzipped_csv(d: Path) -> Path:
    p = d / "t.csv.gz"
    _table().to_frame().to_csv(p, index=False)  # pandas compresses by the extension
    return p


def _with_pandas_index(d: Path) -> Path:
    frame = _table().to_frame()
    frame.index = [f"r{i}" for i in range(len(frame))]
    p = d / "t.parquet"
    frame.to_parquet(p)
    return p


def _object_npz(d: Path) -> Path:
    """The README's table saved to npz from pandas: its label columns as object arrays."""
    frame = _table().to_frame()
    p = d / "t.npz"
    np.savez(p, X=frame.filter(like="f").to_numpy(),
             **{c: frame[c].to_numpy(dtype=object) for c in ("identity", "expression")})
    return p
