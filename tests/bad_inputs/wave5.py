"""Cases of issue 38 (reliability, round five): each one a defect found there, so that the
held-out corpus keeps it fixed (0 tracebacks, 0 wrong exits, 0 partial outputs, 0 inputs
modified, 0 silent accepts, 0 hangs).

``says`` names the refusal a case must end in (or what a valid run must say): the defect
was often a wrong refusal, which exit status 2 alone would not catch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .cases import Case, _table, anon

REL = ("o.parquet", "o.parquet.manifest.json")


def _wide_csv(d: Path, n: int = 10, width: int = 20_000) -> Path:
    """10 records × 20,000 features: the duplicate-column checks were quadratic (minutes at
    100,000 columns) and pandas parsed a wide CSV row chunk by row chunk."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(n, width)).astype(np.float32),
                         columns=[f"f{j}" for j in range(width)])
    frame.insert(0, "speaker", [f"s{i % 5}" for i in range(n)])
    frame.insert(1, "digit", [f"d{i % 2}" for i in range(n)])
    p = d / "wide.csv"
    frame.to_csv(p, index=False)
    return p


def _float32_extremes(d: Path) -> Path:
    """Measurements at the top of float32's range: every float32 past 2**24 is a whole
    number, and they were refused as 'a different integer on every record'."""
    t = _table()
    frame = t.to_frame()
    rng = np.random.default_rng(1)
    for j in range(3):
        frame[f"f{j}"] = (rng.choice([-1.0, 1.0], size=len(frame))
                          * rng.uniform(1e37, 3e38, size=len(frame))).astype(np.float32)
    p = d / "t.csv"
    frame.to_csv(p, index=False)
    return p


def _public_with_a_numeric_label(d: Path) -> tuple[Path, Path]:
    """A private table and public data of another person whose table also holds the input's
    label column 'environment', coded as numbers: read alone it looks like a feature."""
    t = _table(n_id=6)
    ids = t.labels["identity"].to_numpy()
    private = t.subset(np.flatnonzero(ids != ids[0]))
    public = t.subset(np.flatnonzero(ids == ids[0]))
    src, pub = d / "in.csv", d / "pub.csv"
    private.write(src)
    frame = pd.DataFrame(public.X, columns=public.feature_names)
    frame["environment"] = np.arange(len(frame)) % 2
    frame.to_csv(pub, index=False)
    return src, pub


def wave5_cases() -> list[Case]:
    c: list[Case] = []
    c.append(Case("anonymize-wide-csv-10x20000-runs-in-seconds", lambda d: [
        "-q", "anonymize", str(_wide_csv(d)), "-o", str(d / "o.parquet"), "--sensitive",
        "speaker", "--identifying", "digit", "--method", "noise", "--param", "sigma=1"],
        "ok", REL))
    c.append(Case("release-wide-csv-10x20000-is-refused-by-its-plan", lambda d: [
        "release", str(_wide_csv(d)), "-o", str(d / "o.parquet"), "--interest", "digit",
        "--sensitive", "speaker"], says="cannot be shown on this table"))
    c.append(Case("anonymize-float32-features-at-3e38-are-features", lambda d: [
        "-q", *anon(_float32_extremes(d), d, "--method", "noise", "--param", "sigma=1")],
        "ok", REL))
    c.append(Case("release-public-data-holding-a-numeric-label-of-the-input", lambda d: [
        "release", str((paths := _public_with_a_numeric_label(d))[0]), "-o",
        str(d / "o.csv"), "--interest", "expression", "--sensitive", "identity",
        "--identifying", "gender", "--identifying", "environment", "--epsilon", "1",
        "--public-data", str(paths[1])], says="cannot be shown on this table"))
    c.append(Case("release-help-all-says-the-refusal-writes-its-report", lambda d: [
        "release", "--help-all"], "ok", (), says="only the closest setting's report is written"))
    return c
