"""Bad-input cases for every command and option in ``--help`` (issue 22), generated in a folder.

Each ``add(id, build, kind, outputs)`` is one case (see :mod:`bad_inputs.cases`): ``build(d)``
writes the inputs into the empty folder ``d`` and returns the command line. Adding a case for
a new option is one ``add`` line; :mod:`bad_inputs.coverage` fails while an option has none.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .cases import (
    FAST,
    ROLES,
    Case,
    _csv,
    _frame_csv,
    _frame_of,
    _pixels,
    _table,
    _wav_folder,
    _write_text,
    anon,
)

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment"]
REL_ROLES = ["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
             "--identifying", "environment"]
DASK = [*ROLES, "--dask", "--workers", "1"]


# ---------------------------------------------------------------------- Parquet folders
def _parts(d: Path, name: str = "t.parquet", n_parts: int = 2) -> Path:
    """A folder of Parquet parts (as dask, Spark and pyarrow write them) of the small table."""
    src = d / "whole.parquet"
    _csv(d, "whole.parquet")
    df = pd.read_parquet(src)
    src.unlink()
    folder = d / name
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), n_parts)):
        pq.write_table(pa.Table.from_pandas(df.iloc[part], preserve_index=False),
                       folder / f"part-{i:03d}.parquet")
    return folder


def _parts_with(d: Path, name: str, content: bytes | Callable[[pd.DataFrame], pd.DataFrame]
                ) -> Path:
    """A Parquet folder with one more part: raw bytes, or a frame edited from the table."""
    folder = _parts(d)
    if isinstance(content, bytes):
        (folder / name).write_bytes(content)
    else:
        df = pd.read_parquet(folder / "part-000.parquet")
        pq.write_table(pa.Table.from_pandas(content(df), preserve_index=False), folder / name)
    return folder


def _parquet_with_nan(d: Path) -> Path:
    """A Parquet file whose second row group holds a NaN feature (found by a dask worker)."""
    df = _frame_csv(d, lambda f: f, "x.csv")
    frame = pd.read_csv(df)
    df.unlink()
    frame.loc[40, "f3"] = np.nan
    p = d / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), p, row_group_size=24)
    return p


def _empty_dir(d: Path, name: str) -> Path:
    p = d / name
    p.mkdir()
    return p


def _not_a_scheduler() -> str:
    """The address of a local service that answers every connection with junk (a web server,
    a proxy): what a mistyped port reaches. It lives for the rest of the test process."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            conn, _ = srv.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" * 64)

    threading.Thread(target=serve, daemon=True).start()
    return f"tcp://127.0.0.1:{srv.getsockname()[1]}"


def _home(d: Path, labels_csv: bytes) -> Path:
    """A data home holding one dataset folder whose labels.csv has these bytes."""
    ds = d / "home" / "ds"
    ds.mkdir(parents=True)
    (ds / "labels.csv").write_bytes(labels_csv)
    (ds / "README.md").write_text("# ds\n", encoding="utf-8")
    return d / "home"


#: a bad value for every flag of the shared method-option group, with the method that has the
#: parameter (the error comes from the declared range or from the method not having it)
METHOD_FLAGS: list[tuple[str, str, list[str]]] = [
    ("--g", "1", []), ("--t", "1.5", ["--g", "8"]), ("--w", "0.5", FAST),
    ("--rp", "2", FAST), ("--rs", "-1", FAST), ("--relevance", "magic", FAST),
    ("--k", "0", ["--method", "ksame"]), ("--sigma", "-1", ["--method", "noise"]),
    ("--block", "0", ["--method", "pixelate"]), ("--epsilon", "0", ["--method", "laplace"]),
    ("--sampler", "magic", ["--method", "sanitizer"]),
    ("--decoupler", "missing.pt", ["--method", "sanitizer", "--sampler", "suppress"]),
    ("--rq", "0.1", FAST),  # no --additional attribute: r_q would do nothing
    ("--allow-replacement", "", ["--method", "noise", "--sigma", "1"]),  # noise has no such
    ("--param", "nope=1", FAST), ("--method", "magic", []), ("--seed", "-1", FAST),
]


def option_cases() -> list[Case]:
    c: list[Case] = []

    def add(id: str, build: Callable[[Path], list[str]], kind: str = "error",
            outputs: tuple[str, ...] = (), xfail: str | None = None) -> None:
        c.append(Case(id, build, kind, outputs, xfail))

    rel = ("o.parquet", "o.parquet.manifest.json")
    # --- anonymize: options the method or the path would ignore
    add("anonymize-rq-without-additional", lambda d: anon(_csv(d), d, *FAST, "--rq", "0.1"))
    add("anonymize-rq-column-not-additional", lambda d: anon(
        _csv(d), d, *FAST, "--rq", "gender=0.1",
        roles=["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
               "--additional", "environment"]))
    add("anonymize-param-rq-without-additional",
        lambda d: anon(_csv(d), d, *FAST, "--param", "r_q=0.2"))
    add("anonymize-w-without-retained-features",
        lambda d: anon(_csv(d), d, *FAST, "--rp", "0", "--w", "5"))
    add("anonymize-relevance-without-retention",
        lambda d: anon(_csv(d), d, *FAST, "--rp", "0", "--relevance", "mutual_info"))
    add("anonymize-vp-mix-t-without-additional",
        lambda d: anon(_csv(d), d, "--method", "vp-mix", "--g", "4", "--t", "0.5"))
    add("anonymize-laplace-clip-quantile-with-bounds", lambda d: anon(
        _csv(d), d, "--method", "laplace", "--epsilon", "1", "--param", "bounds=-5,5",
        "--param", "clip_quantile=0.1"))
    add("anonymize-allow-replacement-noise",
        lambda d: anon(_csv(d), d, "--method", "noise", "--sigma", "1", "--allow-replacement"))
    add("anonymize-block-on-selective-mean", lambda d: anon(_csv(d), d, *FAST, "--block", "4"))
    add("anonymize-layout-wrong-count", lambda d: anon(_csv(d), d, "--method", "dp-cells",
                                                       "--layout", "4x4"))
    add("anonymize-pixelate-block-0",
        lambda d: anon(_pixels(d, "p.parquet", n=12), d, "--method", "pixelate", "--block", "0",
                       roles=["--sensitive", "who"]))
    add("anonymize-additional-weight-ignored",
        lambda d: anon(_csv(d), d, *FAST, "--additional", "environment=0.5",
                       roles=["--interest", "expression", "--sensitive", "identity",
                              "--identifying", "gender"]))
    add("anonymize-label-missing-column", lambda d: anon(_csv(d), d, *FAST, "--label", "nope"))
    add("anonymize-quasi-singles-out-identity",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(uid=[f"u{i}" for i in range(len(df))])),
                       d, *FAST, "--quasi", "uid"))
    add("anonymize-force-missing-keep-column",
        lambda d: anon(_csv(d), d, *FAST, "--force", "--keep", "nope"))
    add("anonymize-keep-sensitive-valid", lambda d: anon(_csv(d), d, *FAST, "--keep-sensitive"),
        "ok", rel)
    add("anonymize-keep-order-valid-quiet",
        lambda d: ["-q", *anon(_csv(d), d, *FAST, "--keep-order")], "ok", rel)
    add("anonymize-verbose-bad-value", lambda d: anon(_csv(d), d, "-v", "--g", "0"))
    # --- anonymize: settings that would release the records nearly unchanged
    add("anonymize-noise-sigma-below-resolution",
        lambda d: anon(_csv(d), d, "--method", "noise", "--sigma", "1e-12"))
    add("anonymize-noise-std-sigma-below-resolution",
        lambda d: anon(_csv(d), d, "--method", "noise", "--sigma", "1e-9", "--param",
                       "scale=std"))
    add("anonymize-laplace-epsilon-huge",
        lambda d: anon(_csv(d), d, "--method", "laplace", "--epsilon", "1e15"))
    add("anonymize-blur-sigma-below-a-pixel",
        lambda d: anon(_pixels(d, "p.parquet", n=12), d, "--method", "blur", "--sigma", "0.05",
                       roles=["--sensitive", "who"]))
    add("anonymize-w-drowns-donors",
        lambda d: anon(_csv(d), d, *FAST, "--rp", "1", "--w", "1e12"))
    add("anonymize-vp-mix-w-drowns-donors",
        lambda d: anon(_csv(d), d, "--method", "vp-mix", "--g", "4", "--rp", "1", "--w",
                       "1e12"))
    # --- anonymize: --param parsing
    add("anonymize-param-twice", lambda d: anon(_csv(d), d, "--param", "g=8", "--param", "g=9"))
    add("anonymize-param-empty-value", lambda d: anon(_csv(d), d, "--param", "g="))
    add("anonymize-param-no-equals", lambda d: anon(_csv(d), d, "--param", "g"))
    add("anonymize-param-nan", lambda d: anon(_csv(d), d, "--g", "8", "--param", "t=nan"))
    add("anonymize-param-flag-conflict", lambda d: anon(_csv(d), d, "--g", "8", "--param",
                                                        "g=16"))
    add("anonymize-param-post-step-unknown", lambda d: anon(
        _csv(d), d, "--method", "vp-mix+leace", "--param", "nope.x=1"))
    add("anonymize-param-int-given-float", lambda d: anon(_csv(d), d, "--param", "g=8.5"))
    add("anonymize-param-random-state", lambda d: anon(_csv(d), d, *FAST, "--param",
                                                       "random_state=3"))
    add("anonymize-param-role-conflict", lambda d: anon(_csv(d), d, *FAST, "--param",
                                                        "interest=gender"))
    add("anonymize-param-bool-not-a-bool", lambda d: anon(_csv(d), d, *FAST, "--param",
                                                          "include_self=maybe"))
    add("anonymize-param-floats-not-numbers", lambda d: anon(
        _csv(d), d, "--method", "laplace", "--epsilon", "1", "--param", "bounds=a,b"))
    add("anonymize-rq-out-of-range", lambda d: anon(
        _csv(d), d, *FAST, "--rq", "environment=2",
        roles=["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
               "--additional", "environment"]))
    # --- anonymize: Parquet folders (in memory)
    add("anonymize-parquet-folder-valid", lambda d: anon(_parts(d), d, *FAST), "ok", rel)
    add("anonymize-parquet-folder-corrupt-part",
        lambda d: anon(_parts_with(d, "part-009.parquet", b"PAR1 not really"), d, *FAST))
    add("anonymize-parquet-folder-inconsistent-parts", lambda d: anon(
        _parts_with(d, "part-009.parquet", lambda df: df.drop(columns=["f3"])), d, *FAST))
    add("anonymize-parquet-folder-retyped-part", lambda d: anon(
        _parts_with(d, "part-009.parquet", lambda df: df.assign(f3=df["f3"].astype(str))),
        d, *FAST))
    add("anonymize-parquet-folder-empty", lambda d: anon(_empty_dir(d, "t.parquet"), d, *FAST))
    add("anonymize-parquet-folder-zero-byte-part",
        lambda d: anon(_parts_with(d, "part-009.parquet", b""), d, *FAST))
    add("anonymize-parquet-folder-stray-file",
        lambda d: anon(_parts_with(d, "notes.txt", b"hello"), d, *FAST))
    add("anonymize-output-inside-input-folder",
        lambda d: anon(_parts(d), d, *FAST, out="t.parquet/o.parquet"))
    # --- anonymize: the dask path
    add("anonymize-dask-output-named-parquet",
        lambda d: anon(_csv(d, "t.parquet"), d, "--dask", "--workers", "1", "--g", "4", "--t",
                       "0.5", "--bucket-size", "48", "--fit-sample", "48"),
        "ok", ("o.parquet/part-000000.parquet", "o.parquet.manifest.json"))
    add("anonymize-dask-output-csv", lambda d: anon(_csv(d, "t.parquet"), d, "--dask",
                                                    out="o.csv"))
    add("anonymize-dask-csv-input", lambda d: anon(_csv(d), d, "--dask", out="o"))
    add("anonymize-dask-nan-found-by-a-worker",
        lambda d: anon(_parquet_with_nan(d), d, *FAST, "--dask", "--workers", "1", out="o"))
    add("anonymize-dask-corrupt-part", lambda d: anon(
        _parts_with(d, "part-009.parquet", b"PAR1 junk PAR1"), d, *FAST, "--dask", out="o"))
    add("anonymize-dask-inconsistent-parts", lambda d: anon(
        _parts_with(d, "part-009.parquet", lambda df: df.drop(columns=["f3"])), d, *FAST,
        "--dask", out="o"))
    add("anonymize-dask-empty-folder",
        lambda d: anon(_empty_dir(d, "t.parquet"), d, *FAST, "--dask", out="o"))
    add("anonymize-dask-bucket-size-0",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--dask", "--bucket-size", "0", out="o"))
    add("anonymize-dask-fit-sample-0",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--dask", "--fit-sample", "0", out="o"))
    add("anonymize-dask-workers-0",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--dask", "--workers", "0", out="o"))
    add("anonymize-bucket-size-without-dask",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--bucket-size", "100"))
    add("anonymize-fit-sample-without-dask",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--fit-sample", "100"))
    add("anonymize-workers-without-dask",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST, "--workers", "2"))
    add("anonymize-dask-and-scheduler", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--dask", "--scheduler", "tcp://127.0.0.1:1", out="o"))
    add("anonymize-scheduler-unreachable", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--scheduler", "tcp://127.0.0.1:1", out="o"))
    add("anonymize-scheduler-not-dask", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--scheduler", _not_a_scheduler(), out="o"))
    add("anonymize-scheduler-no-port", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--scheduler", "tcp://127.0.0.1", out="o"))
    add("anonymize-scheduler-no-scheme", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--scheduler", "localhost:8786", out="o"))
    add("anonymize-dask-keep-order", lambda d: anon(
        _csv(d, "t.parquet"), d, *FAST, "--dask", "--keep-order", out="o"))
    add("anonymize-dask-not-a-mixing-method", lambda d: anon(
        _csv(d, "t.parquet"), d, "--method", "noise", "--sigma", "1", "--dask", out="o"))
    # --- the shared method options, on every command that takes them
    for cmd, head in [("evaluate", lambda d: ["evaluate", str(_csv(d)), *EV, "--out",
                                              str(d / "rep")]),
                      ("tune", lambda d: ["tune", str(_csv(d)), *EV, "--out", str(d / "tune"),
                                          "--grid", "r_p=0,0.1"])]:
        for flag, value, extra in METHOD_FLAGS:
            add(f"{cmd}-method-option-{flag[2:]}",
                lambda d, h=head, f=flag, v=value, e=extra: [*h(d), *e, f, *([v] if v else [])])
    # --- evaluate
    ev = lambda d, *extra: ["evaluate", str(_csv(d)), *EV, "--out", str(d / "rep"), *extra]  # noqa: E731
    add("evaluate-additional-weight-nan", lambda d: [
        "evaluate", str(_csv(d)), "--interest", "expression", "--sensitive", "identity",
        "--label", "gender", "--additional", "environment=nan", "--out", str(d / "rep")])
    add("evaluate-target-advantage-nan", lambda d: ev(d, "--target-advantage", "nan"))
    add("evaluate-target-advantage-above-1", lambda d: ev(d, "--target-advantage", "1.5"))
    add("evaluate-target-membership-below-half", lambda d: ev(d, "--target-membership", "0.3"))
    add("evaluate-target-inference-nan", lambda d: ev(d, "--target-inference", "nan"))
    add("evaluate-level-unknown", lambda d: ev(d, "--level", "loose"))
    add("evaluate-layout-not-a-layout", lambda d: ev(d, "--layout", "4by8"))
    add("evaluate-accept-risk-unknown", lambda d: ev(d, "--accept-risk", "record-magic",
                                                     "--reason", "why"))
    add("evaluate-reason-without-accept-risk", lambda d: ev(d, "--reason", "why"))
    add("evaluate-preview-out-is-input", lambda d: [
        "evaluate", str(_csv(d)), *EV, "--preview", "--out", str(d / "t.csv")])
    add("evaluate-selection-unknown", lambda d: ev(d, "--selection", "magic"))
    add("evaluate-identities-not-numbers", lambda d: ev(d, "--identities", "3,abc"))
    add("evaluate-n-random-0", lambda d: ev(d, "--n-random", "0"))
    add("evaluate-n-random-without-random-selection",
        lambda d: ev(d, "--selection", "none", "--n-random", "3"))
    add("evaluate-metadata-without-metadata-selection",
        lambda d: ev(d, "--selection", "random", "--metadata", "gender"))
    add("evaluate-metadata-missing-column", lambda d: ev(d, "--metadata", "nope"))
    add("evaluate-group-missing-column", lambda d: ev(d, "--group", "nope"))
    add("evaluate-jobs-0", lambda d: ev(d, "--jobs", "0"))
    add("evaluate-test-size-1", lambda d: ev(d, "--test-size", "1"))
    add("evaluate-test-size-nan", lambda d: ev(d, "--test-size", "nan"))
    add("evaluate-json-bad-input", lambda d: ev(d, "--json", "--models", ","))
    add("evaluate-quiet-bad-input", lambda d: ["-q", *ev(d, "--attackers", ",")])
    add("evaluate-verbose-bad-input", lambda d: [*ev(d, "--attackers", "magic"), "-v"])
    # --- tune
    tu = lambda d, *extra: ["tune", str(_csv(d)), *EV, "--out", str(d / "tune"), *extra]  # noqa: E731
    add("tune-grid-twice", lambda d: tu(d, "--grid", "g=8", "--grid", "g=16"))
    add("tune-grid-and-param", lambda d: tu(d, "--grid", "g=8,16", "--g", "16"))
    add("tune-grid-no-values", lambda d: tu(d, "--grid", "g=,"))
    add("tune-grid-nan", lambda d: tu(d, "--grid", "t=0.5,nan"))
    add("tune-grid-repeated-value", lambda d: tu(d, "--grid", "g=8,8"))
    add("tune-grid-random-state", lambda d: tu(d, "--grid", "random_state=1,2"))
    add("tune-grid-post-step-unknown",
        lambda d: tu(d, "--method", "vp-mix+leace", "--grid", "leace.nope=1"))
    add("tune-grid-bool-not-a-bool", lambda d: tu(d, "--grid", "include_self=true,maybe"))
    add("tune-additional-weight-negative", lambda d: [
        "tune", str(_csv(d)), "--interest", "expression", "--sensitive", "identity", "--label",
        "gender", "--additional", "environment=-1", "--grid", "g=8", "--out", str(d / "tune")])
    add("tune-target-advantage-negative",
        lambda d: tu(d, "--grid", "g=8", "--target-advantage", "-0.1"))
    add("tune-models-empty", lambda d: tu(d, "--grid", "g=8", "--models", ","))
    add("tune-attackers-unknown", lambda d: tu(d, "--grid", "g=8", "--attackers", "magic"))
    add("tune-group-missing-column", lambda d: tu(d, "--grid", "g=8", "--group", "nope"))
    add("tune-consumer-panel-unknown",
        lambda d: tu(d, "--grid", "g=8", "--consumer-panel", "sometimes"))
    add("tune-json-bad-input", lambda d: tu(d, "--grid", "nope=1", "--json"))
    add("tune-quiet-bad-input", lambda d: tu(d, "--grid", "g=1", "--quiet"))
    add("tune-verbose-bad-input", lambda d: tu(d, "--grid", "g=8", "-v", "--seed", "-1"))
    add("tune-missing-interest", lambda d: [
        "tune", str(_csv(d)), "--sensitive", "identity", "--grid", "g=8", "--out",
        str(d / "tune")])
    # --- release (every check comes before the search)
    rl = lambda d, *extra, out="o.parquet": [  # noqa: E731
        "release", str(_csv(d)), "-o", str(d / out), *REL_ROLES, *extra]
    add("release-output-unknown-extension", lambda d: rl(d, out="o.txt"))
    add("release-layout-too-many-features", lambda d: rl(d, "--layout", "4x8+1"))
    add("release-output-equals-input", lambda d: rl(d, out="t.csv"))
    add("release-report-folder-is-a-file", lambda d: rl(
        d, out=_write_text(d / "o.parquet.report", "x").name[: -len(".report")]))
    add("release-interest-missing", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), "--interest", "nope",
        "--sensitive", "identity", "--identifying", "gender", "--identifying", "environment"])
    add("release-sensitive-missing", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), "--interest", "expression",
        "--sensitive", "nope", "--identifying", "gender", "--identifying", "environment"])
    add("release-interest-is-sensitive", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), "--interest", "identity",
        "--sensitive", "identity", "--identifying", "gender", "--identifying", "environment"])
    add("release-additional-weight-nan", lambda d: [
        "release", str(_csv(d)), "-o", str(d / "o.parquet"), "--interest", "expression",
        "--sensitive", "identity", "--identifying", "gender", "--additional",
        "environment=nan"])
    add("release-label-missing-column", lambda d: rl(d, "--label", "nope"))
    add("release-quasi-singles-out-identity", lambda d: [
        "release", str(_frame_csv(d, lambda df: df.assign(uid=[f"u{i}" for i in
                                                               range(len(df))]))),
        "-o", str(d / "o.parquet"), *REL_ROLES, "--quasi", "uid"])
    add("release-keep-missing-column", lambda d: rl(d, "--keep", "nope"))
    add("release-force-keep-missing-column", lambda d: rl(d, "--force", "--keep", "nope"))
    add("release-target-advantage-nan", lambda d: rl(d, "--target-advantage", "nan"))
    add("release-target-membership-above-1", lambda d: rl(d, "--target-membership", "1.2"))
    add("release-target-inference-negative", lambda d: rl(d, "--target-inference", "-0.1"))
    add("release-level-above-1", lambda d: rl(d, "--level", "1.5"))
    add("release-accept-risk-without-reason", lambda d: rl(d, "--accept-risk",
                                                           "identity-membership"))
    add("release-reason-without-accept-risk", lambda d: rl(d, "--reason", "why"))
    add("release-methods-unknown", lambda d: rl(d, "--methods", "magic"))
    add("release-exhaustive-methods-unknown", lambda d: rl(d, "--exhaustive", "--methods",
                                                           "magic"))
    add("release-no-exhaustive-level-above-1", lambda d: rl(d, "--no-exhaustive", "--level",
                                                            "1.5"))
    add("release-min-utility-above-1", lambda d: rl(d, "--min-utility", "1.5"))
    add("release-min-utility-negative", lambda d: rl(d, "--min-utility", "-0.1"))
    add("release-min-utility-nan", lambda d: rl(d, "--min-utility", "nan"))
    # --- release on the dask path (certified on a panel sample, released bucket by bucket)
    rd = lambda d, *extra: ["release", str(_csv(d, "t.parquet")), "-o", str(d / "rel"),  # noqa: E731
                            *REL_ROLES, *extra]
    add("release-dask-output-named-csv", lambda d: [
        "release", str(_csv(d, "t.parquet")), "-o", str(d / "rel.csv"), *REL_ROLES, "--dask"])
    add("release-dask-keep-column", lambda d: rd(d, "--dask", "--keep", "environment"))
    add("release-scheduler-not-an-address", lambda d: rd(d, "--scheduler", "localhost:8786"))
    add("release-dask-workers-0", lambda d: rd(d, "--dask", "--workers", "0"))
    add("release-dask-bucket-size-0", lambda d: rd(d, "--dask", "--bucket-size", "0"))
    add("release-dask-sample-records-nan", lambda d: rd(d, "--dask", "--sample-records",
                                                        "nan"))
    # options of the dask path given without it: refused, never silently ignored
    add("release-workers-without-dask", lambda d: rl(d, "--workers", "2"))
    add("release-bucket-size-without-dask", lambda d: rl(d, "--bucket-size", "100"))
    add("release-sample-records-without-dask", lambda d: rl(d, "--sample-records", "100"))
    add("release-workers-with-scheduler", lambda d: rd(d, "--scheduler", "tcp://127.0.0.1:1",
                                                       "--workers", "2"))
    add("release-dask-and-scheduler", lambda d: rd(d, "--dask", "--scheduler",
                                                   "tcp://127.0.0.1:1"))
    add("release-methods-empty", lambda d: rl(d, "--methods", ","))
    add("release-budget-minutes-0", lambda d: rl(d, "--budget-minutes", "0"))
    add("release-keep-sensitive-missing-group", lambda d: rl(d, "--keep-sensitive", "--group",
                                                             "nope"))
    add("release-seed-out-of-range", lambda d: rl(d, "--seed", str(2**32)))
    add("release-models-unknown", lambda d: rl(d, "--models", "magic"))
    add("release-attackers-empty", lambda d: rl(d, "--attackers", ","))
    add("release-jobs-negative", lambda d: rl(d, "--jobs", "-2"))
    add("release-json-bad-input", lambda d: rl(d, "--json", "--methods", "magic"))
    add("release-quiet-bad-input", lambda d: rl(d, "-q", "--models", ","))
    add("release-verbose-bad-input", lambda d: rl(d, "--verbose", "--target-advantage", "2"))
    add("release-csv-numeric-id-unnamed", lambda d: [
        "release", str(_frame_csv(d, lambda df: df.assign(record_id=np.arange(len(df))))),
        "-o", str(d / "o.parquet"), *REL_ROLES])
    add("release-parquet-folder-corrupt-part", lambda d: [
        "release", str(_parts_with(d, "part-009.parquet", b"junk")), "-o",
        str(d / "o.parquet"), *REL_ROLES])
    # --- release with a declared differential-privacy budget (checked before the search)
    pub = lambda d: str(_csv(d, "pub.csv", n_id=2, seed=1))  # noqa: E731
    add("release-epsilon-0", lambda d: rl(d, "--epsilon", "0"))
    add("release-epsilon-inf", lambda d: rl(d, "--epsilon", "inf"))
    add("release-delta-1", lambda d: rl(d, "--epsilon", "1", "--delta", "1"))
    add("release-delta-without-epsilon", lambda d: rl(d, "--delta", "1e-6"))
    add("release-public-data-missing", lambda d: rl(d, "--epsilon", "1", "--public-data",
                                                    str(d / "nope.csv")))
    add("release-public-data-corrupt", lambda d: rl(d, "--epsilon", "1", "--public-data",
                                                    str(_write_text(d / "pub.parquet", "junk"))))
    add("release-public-data-wrong-columns", lambda d: rl(
        d, "--epsilon", "1", "--public-data",
        str(_frame_csv(d, lambda df: df.drop(columns=["f3", "f7"]), "pub.csv"))))
    add("release-public-data-is-the-input", lambda d: rl(d, "--epsilon", "1", "--public-data",
                                                         str(d / "t.csv")))
    add("release-public-data-holds-released-records", lambda d: rl(
        d, "--epsilon", "1", "--public-data", str(_csv(d, "pub.parquet"))))
    # without --epsilon public data are a public basis's source: these public people share
    # their ids with the input's (make_biometric names people person00, person01, ...)
    add("release-public-data-without-epsilon-holds-the-inputs-people",
        lambda d: rl(d, "--public-data", pub(d)))
    add("release-privacy-unit-unknown", lambda d: rl(d, "--epsilon", "1", "--privacy-unit",
                                                     "person"))
    add("release-privacy-unit-identity-dp-mix", lambda d: rl(
        d, "--epsilon", "1", "--privacy-unit", "identity", "--methods", "dp-mix"))
    add("release-max-records-per-identity-record-unit", lambda d: rl(
        d, "--epsilon", "1", "--max-records-per-identity", "5"))
    add("release-max-records-per-identity-0", lambda d: rl(
        d, "--epsilon", "1", "--privacy-unit", "identity", "--max-records-per-identity", "0"))
    add("release-epsilon-non-dp-methods", lambda d: rl(d, "--epsilon", "1", "--methods",
                                                       "noise,selective-mean"))
    add("release-epsilon-on-the-dask-path", lambda d: [
        "release", str(_csv(d, "t.parquet")), "-o", str(d / "rel"), *REL_ROLES, "--dask",
        "--epsilon", "1"])
    # the streamed DP release of the dask path (--dask --epsilon E --public-data FILE)
    rs = lambda d, *extra: [*rd(d, "--dask", "--epsilon", "1", "--public-data", pub(d)),  # noqa: E731
                            *extra]
    add("release-dask-public-data-without-epsilon", lambda d: rd(d, "--dask", "--public-data",
                                                                 pub(d)))
    add("release-dask-epsilon-privacy-unit-identity", lambda d: rs(d, "--privacy-unit",
                                                                   "identity"))
    add("release-dask-epsilon-methods-dp-mix", lambda d: rs(d, "--methods", "dp-mix"))
    add("release-dask-epsilon-bucket-size", lambda d: rs(d, "--bucket-size", "100"))
    add("release-dask-epsilon-workers-0", lambda d: rs(d, "--workers", "0"))
    add("release-scheduler-epsilon", lambda d: [
        *rd(d, "--scheduler", "tcp://127.0.0.1:1"), "--epsilon", "1", "--public-data", pub(d)])
    add("release-dask-epsilon-additional", lambda d: rs(d, "--additional", "environment"))
    add("release-dask-epsilon-delta-not-below-1-over-n", lambda d: rs(d, "--delta", "0.05"))
    add("release-dask-epsilon-public-data-wrong-columns", lambda d: rd(
        d, "--dask", "--epsilon", "1", "--public-data",
        str(_frame_csv(d, lambda df: df.drop(columns=["f3", "f7"]), "pub.csv"))))
    # --- what the options and the table's shape decide: refused before the search, never
    # a search that ends "not certified"
    add("release-keep-as-feature-no-such-column", lambda d: rl(d, "--keep-as-feature",
                                                               "nope"))
    add("release-delta-not-below-1-over-n", lambda d: rl(d, "--epsilon", "1", "--delta",
                                                         "0.05"))
    add("release-public-data-extra-column", lambda d: rl(
        d, "--epsilon", "1", "--public-data", str(_frame_of(
            d, _table(n_id=2, seed=1).to_frame().assign(f_extra=0.5), "pub.csv"))))
    add("release-group-splits-nothing", lambda d: [
        "release", str(_frame_csv(d, lambda df: df.assign(session=df["identity"]))), "-o",
        str(d / "o.parquet"), *REL_ROLES, "--group", "session"])
    add("release-identity-with-one-record", lambda d: [
        "release", str(_frame_csv(d, lambda df: df.drop(
            index=df.index[df["identity"] == df["identity"].iloc[-1]][1:]))), "-o",
        str(d / "o.parquet"), *REL_ROLES])
    add("release-scheduler-unreachable", lambda d: rd(d, "--scheduler", "tcp://127.0.0.1:1"))
    # --- demo
    add("demo-budget-minutes-nan", lambda d: ["demo", "--out", str(d / "rep"),
                                              "--budget-minutes", "nan"])
    add("demo-budget-minutes-negative", lambda d: ["-v", "demo", "--out", str(d / "rep"),
                                                   "--budget-minutes", "-1"])
    add("demo-quiet-seed-negative", lambda d: ["demo", "-q", "--out", str(d / "rep"),
                                               "--seed", "-5"])
    # --- methods and datasets
    add("methods-valid-json", lambda d: ["methods", "--json"], "ok")
    add("methods-valid-quiet", lambda d: ["-q", "methods"], "ok")
    add("methods-verbose-valid", lambda d: ["methods", "-v"], "ok")
    add("datasets-home-missing", lambda d: ["datasets", "--home", str(d / "nope")])
    add("datasets-home-is-a-file", lambda d: ["datasets", "--home",
                                              str(_write_text(d / "h", "x"))])
    add("datasets-json-home-missing", lambda d: ["datasets", "--json", "--home",
                                                 str(d / "nope")])
    add("datasets-valid-empty-home", lambda d: ["datasets", "--home", str(_empty_dir(d, "h"))],
        "ok")
    add("datasets-verbose-and-quiet", lambda d: [
        "-v", "datasets", "-q", "--json", "--home", str(_empty_dir(d, "h"))])
    add("datasets-unknown-option", lambda d: ["datasets", "--bogus"])
    for what, content in [("binary", bytes(range(128, 256)) * 4), ("ragged", b"a,b\n1\n1,2,3\n"),
                          ("empty", b"")]:
        add(f"datasets-{what}-labels-csv",
            lambda d, c=content: ["datasets", "--home", str(_home(d, c))])
    add("anonymize-missing-required-out", lambda d: ["anonymize", str(_csv(d)), *ROLES])
    add("anonymize-int-option-not-a-number", lambda d: anon(_csv(d), d, "--g", "eight"))
    add("unknown-command", lambda d: ["anonymise", str(_csv(d))])
    # --- preview
    pv = lambda d, *extra: ["preview", str(_pixels(d, "a.parquet")),  # noqa: E731
                            str(_pixels(d, "b.parquet", seed=1)), "-o", str(d / "s.png"), *extra]
    add("preview-by-missing-column", lambda d: pv(d, "--by", "nope"))
    add("preview-shape-malformed", lambda d: pv(d, "--shape", "3x"))
    add("preview-shape-wrong-size", lambda d: pv(d, "--shape", "3x3"))
    add("preview-images-is-a-file", lambda d: pv(d, "--images", str(_write_text(d / "i", "x"))))
    add("preview-images-is-input", lambda d: pv(d, "--images", str(d / "a.parquet")))
    add("preview-html-equals-output", lambda d: pv(d, "--html", str(d / "s.png")))
    add("preview-html-equals-released", lambda d: pv(d, "--html", str(d / "b.parquet")))
    add("preview-quiet-valid", lambda d: ["-q", *pv(d, "--n", "2")], "ok", ("s.png",))
    add("preview-verbose-n-0", lambda d: ["-v", *pv(d, "--n", "0")])
    # --- train-decoupler
    td = lambda d, *extra: ["train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"),  # noqa: E731
                            "--sensitive", "identity", "--label", "gender", "--label",
                            "environment", "--label", "expression", *extra]
    for flag, value in [("--latent-dim", "-1"), ("--sensitive-dim", "0"), ("--beta", "nan"),
                        ("--alpha-vae", "-1"), ("--alpha-aligner", "inf"),
                        ("--alpha-dcorr", "-0.5"), ("--alpha-adversary", "nan"),
                        ("--epochs", "0"), ("--batch-size", "0"), ("--lr", "0"),
                        ("--hidden", "0"), ("--architecture", "magic"), ("--seed", "-1")]:
        add(f"train-decoupler-{flag[2:]}-{value}", lambda d, f=flag, v=value: td(d, f, v))
    add("train-decoupler-sensitive-dim-above-latent",
        lambda d: td(d, "--sensitive-dim", "64", "--latent-dim", "8"))
    add("train-decoupler-image-shape-without-conv", lambda d: td(d, "--image-shape", "4x8"))
    add("train-decoupler-label-missing", lambda d: [
        "train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"), "--sensitive", "identity",
        "--label", "nope", "-q"])
    add("train-decoupler-verbose-output-is-a-folder",
        lambda d: td(d, "-v", "-o", str(_empty_dir(d, "d.pt"))))
    # --- tune-k
    tk = lambda d, *extra: ["tune-k", str(_csv(d)), "--out", str(d / "tk"),  # noqa: E731
                            "--sensitive", "identity", "--label", "gender", "--label",
                            "environment", "--label", "expression", *extra]
    add("tune-k-clusterer-unknown", lambda d: tk(d, "--clusterer", "magic"))
    add("tune-k-linkage-unknown", lambda d: tk(d, "--clusterer", "hierarchical", "--linkage",
                                               "magic"))
    add("tune-k-attribute-missing", lambda d: tk(d, "--attribute", "nope"))
    add("tune-k-dendrogram-max-0-never-draws", lambda d: ["-q", *tk(d, "--dendrogram-max", "0")],
        "ok", ("tk/tune-k.json", "tk/tune-k.png"))
    add("tune-k-dendrogram-max-negative", lambda d: tk(d, "--dendrogram-max", "-1"))
    add("tune-k-seed-negative", lambda d: tk(d, "--seed", "-3"))
    add("tune-k-json-k-max-below-k-min", lambda d: tk(d, "--json", "--k-min", "6", "--k-max",
                                                      "4"))
    add("tune-k-label-missing", lambda d: ["tune-k", str(_csv(d)), "--out", str(d / "tk"),
                                           "--label", "nope", "-q"])
    add("tune-k-verbose-out-is-a-file", lambda d: [
        "-v", "tune-k", str(_csv(d)), "--sensitive", "identity", "--out",
        str(_write_text(d / "r", "x"))])
    # --- extract: each kind's options refused on another kind, and out of range
    vx = lambda d, *extra: ["extract", "voice", str(_wav_folder(d)), "-o",  # noqa: E731
                            str(d / "v.parquet"), *extra]
    for flag, value in [("--size", "32"), ("--components", "10"), ("--upsample", "2"),
                        ("--no-face", "skip"), ("--window", "100"), ("--hop", "50"),
                        ("--step", "2"), ("--channels", "ax"), ("--rate", "50"),
                        ("--gravity", "remove"), ("--time-column", "t"),
                        ("--device", "watch"), ("--where", "hand=left"),
                        ("--label-column", "activity2")]:
        add(f"extract-voice-with-{flag[2:]}", lambda d, f=flag, v=value: vx(d, f, v))
    add("extract-voice-stream-labels", lambda d: vx(d, "--stream-labels",
                                                    str(_write_text(d / "s.csv", "file\n"))))
    add("extract-voice-n-steps-0", lambda d: vx(d, "--n-steps", "0"))
    add("extract-voice-n-mfcc-with-speaker", lambda d: vx(d, "--features", "speaker",
                                                          "--n-mfcc", "13"))
    add("extract-voice-file-column-without-labels", lambda d: vx(d, "--file-column", "name"))
    add("extract-voice-keep-file-valid", lambda d: ["-q", *vx(d, "--keep-file")], "ok",
        ("v.parquet",))
    add("extract-voice-verbose-output-unknown-extension",
        lambda d: ["extract", "voice", str(_wav_folder(d)), "-o", str(d / "v.txt"), "-v"])
    add("extract-face-n-mfcc", lambda d: ["extract", "face", str(_empty_dir(d, "imgs")), "-o",
                                          str(d / "f.parquet"), "--n-mfcc", "13"])
    add("extract-face-size-too-small", lambda d: ["extract", "face", str(_empty_dir(d, "imgs")),
                                                  "-o", str(d / "f.parquet"), "--size", "2"])
    mo = lambda d, *extra: ["extract", "motion", str(_empty_dir(d, "streams")), "-o",  # noqa: E731
                            str(d / "m.parquet"), "--labels",
                            str(_write_text(d / "seg.csv", "file,start_row,end_row,activity\n")),
                            *extra]
    add("extract-motion-keep-file", lambda d: mo(d, "--keep-file"))
    add("extract-motion-hop-0", lambda d: mo(d, "--hop", "0"))
    add("extract-motion-step-0", lambda d: mo(d, "--step", "0"))
    add("extract-motion-rate-negative", lambda d: mo(d, "--rate", "-50"))
    add("extract-motion-where-malformed", lambda d: mo(d, "--where", "hand"))
    add("extract-motion-step-with-stats", lambda d: mo(d, "--features", "stats", "--step", "2"))
    # --- the evaluation's options, declared once (each with a value it refuses), and each
    # registered risk's switch: derived, so a new option or risk brings its own case
    from bioanon.cli.options import judge_flags, switches

    for cmd, head in (("evaluate", ev), ("release", rl)):
        for f in judge_flags(cmd).values():
            if f.bad is not None:
                flag = f.flag.split("/")[0]
                add(f"{cmd}-declared-{flag[2:]}-refused",
                    lambda d, h=head, a=(flag, *f.bad): h(d, *a))
        for switch in switches(cmd):
            flag = switch.replace("_", "-")
            add(f"{cmd}-no-{flag}-level-unknown",
                lambda d, h=head, f=flag: h(d, f"--no-{f}", "--level", "loose"))
    return c
