"""Bad and borderline inputs for every command, generated in a folder (no data committed).

Each :class:`Case` builds its input files in an empty folder and returns the command line to
run there. ``kind`` is ``"error"`` (a user error: exit 2, one ``error:`` line, nothing written)
or ``"ok"`` (a valid input: exit 0 and exactly the files named in ``outputs`` appear).
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable


@dataclass(frozen=True)
class Case:
    """One corpus entry."""

    id: str
    build: Callable[[Path], list[str]]
    kind: str = "error"
    outputs: tuple[str, ...] = ()
    xfail: str | None = None
    #: words the error line (or, for a valid input, the output) must hold: the right refusal
    says: str | None = None


#: a Python or NumPy warning as the command line prints it (``warning: overflow encountered in
#: cast (RuntimeWarning)``): text a refusal must come without; bioanon's own
#: PrivacyLeakWarning is a message to the user, not such text
_FOREIGN_WARNING = re.compile(r"\((?!PrivacyLeakWarning\))\w*Warning\)")


def foreign_warning(output: str) -> bool:
    """The output holds a library's warning (NumPy's overflow, pandas', scikit-learn's)."""
    return bool(_FOREIGN_WARNING.search(" ".join(output.split())))


# ---------------------------------------------------------------------- tiny inputs
def _table(n_id: int = 4, per: int = 12, seed: int = 0) -> FeatureTable:
    return make_biometric(n_identities=n_id, records_per_identity=per, n_features=32,
                          random_state=seed)


def _csv(d: Path, name: str = "t.csv", **kw: int) -> Path:
    p = d / name
    _table(**kw).write(p)
    return p


def _frame_csv(d: Path, edit: Callable[[pd.DataFrame], pd.DataFrame],
               name: str = "t.csv") -> Path:
    p = d / name
    edit(_table().to_frame()).to_csv(p, index=False)
    return p


def _frame_parquet(d: Path, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Path:
    p = d / "t.parquet"
    edit(_table().to_frame()).to_parquet(p, index=False)
    return p


def _frame_of(d: Path, frame: pd.DataFrame, name: str = "t.csv") -> Path:
    p = d / name
    frame.to_csv(p, index=False)
    return p


def _set_cell(value: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def edit(df: pd.DataFrame) -> pd.DataFrame:
        df["f5"] = df["f5"].astype(np.float64)  # a float32 column would hold 1e308 as inf
        df.loc[3, "f5"] = value
        return df
    return edit


ROLES = ["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
         "--identifying", "environment"]
FAST = ["--g", "8", "--t", "0.5"]


def anon(src: Path | str, d: Path, *extra: str, out: str = "o.parquet",
         roles: list[str] = ROLES) -> list[str]:
    return ["anonymize", str(src), "-o", str(d / out), *roles, *extra]


def _npz(d: Path, **labels: np.ndarray) -> Path:
    p = d / "t.npz"
    np.savez(p, X=np.random.default_rng(0).normal(size=(12, 4)), **labels)
    return p


def _wav(p: Path, data: np.ndarray, sr: int = 8000) -> None:
    from scipy.io import wavfile

    wavfile.write(p, sr, data)


def _png(p: Path, side: int = 8) -> None:
    """A valid grey PNG written with zlib only."""
    raw = b"".join(b"\x00" + bytes(range(side)) for _ in range(side))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + tag + body
                + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF))
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8,
                                                                    0, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _wav_folder(d: Path, extra: dict[str, bytes | np.ndarray] | None = None,
                n_good: int = 3) -> Path:
    src = d / "wavs"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(n_good):
        _wav(src / f"ok{i}.wav", rng.normal(size=4000).astype(np.float32))
    for name, content in (extra or {}).items():
        if isinstance(content, bytes):
            (src / name).write_bytes(content)
        else:
            _wav(src / name, content)
    return src


def _nan_wav() -> np.ndarray:
    x = np.random.default_rng(1).normal(size=4000).astype(np.float32)
    x[50:60] = np.nan
    return x


def _motion(d: Path, seg_rows: list[tuple]) -> list[str]:
    src = d / "streams"
    src.mkdir()
    t = np.arange(400) * 20.0
    pd.DataFrame({"timestamp": t, "ax": np.sin(t), "ay": np.cos(t)}).to_csv(src / "s1.csv",
                                                                          index=False)
    seg = pd.DataFrame(seg_rows, columns=["file", "start_row", "end_row", "activity"])
    seg.to_csv(d / "seg.csv", index=False)
    return ["extract", "motion", str(src), "--labels", str(d / "seg.csv"), "-o",
            str(d / "m.parquet")]


def _unwritable(d: Path) -> Path:
    """A folder this process cannot write (root ignores modes: use /proc)."""
    if os.geteuid() == 0:
        return Path("/proc")
    ro = d / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    return ro


def _tampered_decoupler(d: Path) -> Path:
    p = d / "dec.pt"
    p.write_bytes(b"PK\x03\x04 this is not a decoupler")
    return p


def _pixels(d: Path, name: str, n: int = 6, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    t = FeatureTable(rng.random((n, 16)), pd.DataFrame({"who": list("ab" * (n // 2))}),
                     meta={"image_shape": [4, 4]})
    p = d / name
    t.write(p)
    return p


# ---------------------------------------------------------------------- the cases
def _cases() -> list[Case]:
    c: list[Case] = []

    def add(id: str, build: Callable[[Path], list[str]], kind: str = "error",
            outputs: tuple[str, ...] = (), xfail: str | None = None,
            says: str | None = None) -> None:
        c.append(Case(id, build, kind, outputs, xfail, says))

    rel = ("o.parquet", "o.parquet.manifest.json")
    # --- anonymize: valid inputs
    add("anonymize-valid-csv", lambda d: anon(_csv(d), d, *FAST), "ok", rel)
    add("anonymize-valid-parquet-unnamed-labels-dropped",
        lambda d: anon(_csv(d, "t.parquet"), d, *FAST,
                       roles=["--interest", "expression", "--sensitive", "identity"]), "ok", rel)
    add("anonymize-subnormal-values", lambda d: anon(_frame_csv(d, _set_cell(1e-310)), d, *FAST),
        "ok", rel)
    add("anonymize-unicode-columns",
        lambda d: anon(_frame_csv(d, lambda df: df.rename(columns={"identity": "identité",
                                                                   "f0": "φ0"})), d, *FAST,
                       roles=["--interest", "expression", "--sensitive", "identité",
                              "--identifying", "gender", "--identifying", "environment"]),
        "ok", rel)
    add("anonymize-npz-valid",
        lambda d: ["anonymize", str(_npz(d, who=np.array(list("abcd") * 3))), "-o",
                   str(d / "o.npz"), "--sensitive", "who", "--method", "noise", "--sigma", "1"],
        "ok", ("o.npz", "o.npz.manifest.json"))
    # --- anonymize: columns and roles
    add("anonymize-missing-interest-column", lambda d: anon(
        _csv(d), d, roles=["--interest", "nope", "--sensitive", "identity"]))
    add("anonymize-missing-sensitive-column", lambda d: anon(
        _csv(d), d, roles=["--interest", "expression", "--sensitive", "nope"]))
    add("anonymize-interest-is-sensitive", lambda d: anon(
        _csv(d), d, roles=["--interest", "identity", "--sensitive", "identity"]))
    add("anonymize-keep-missing-column", lambda d: anon(_csv(d), d, "--keep", "nope"))
    add("anonymize-keep-singles-out-identity",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(uid=[f"u{i}" for i in range(len(df))])),
                       d, *FAST, "--keep", "uid"))
    add("anonymize-csv-numeric-id-unnamed",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(record_id=np.arange(len(df)))),
                       d, *FAST))
    # numeric metadata of a CSV (a count, a rate, a take number) is never released unnamed
    add("anonymize-csv-numeric-metadata-unnamed", lambda d: anon(_frame_csv(
        d, lambda df: df.assign(n_samples=np.arange(len(df)) % 3 + 4000, sample_rate=8000)),
        d, *FAST))
    add("anonymize-keep-as-feature-no-such-column", lambda d: anon(
        _csv(d), d, *FAST, "--keep-as-feature", "nope"))
    add("anonymize-keep-as-feature-ok", lambda d: anon(_frame_csv(
        d, lambda df: df.assign(n_samples=np.arange(len(df)) % 3 + 4000)),
        d, *FAST, "--keep-as-feature", "n_*"), "ok", rel)
    add("anonymize-csv-text-column-unnamed", lambda d: anon(
        _csv(d), d, roles=["--interest", "expression", "--sensitive", "identity"]))
    add("anonymize-brackets-in-column-name", lambda d: anon(
        _csv(d), d, roles=["--interest", "x[/]", "--sensitive", "identity"]))
    add("anonymize-additional-bad-weight", lambda d: anon(_csv(d), d, "--additional", "a=abc"))
    add("anonymize-empty-sensitive-value",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(
            identity=df["identity"].where(df.index != 2, None))), d, *FAST))
    add("anonymize-single-class-sensitive",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(identity="p0")), d, *FAST))
    add("anonymize-single-class-interest",
        lambda d: anon(_frame_csv(d, lambda df: df.assign(expression="e0")), d, *FAST))
    add("anonymize-duplicate-column-names",
        lambda d: anon(_write_text(d / "t.csv", "identity,expression,f0,f0\n"
                                   + "a,x,1,2\nb,y,3,4\n" * 6), d, *FAST))
    # --- anonymize: values
    add("anonymize-nan-feature", lambda d: anon(_frame_csv(d, _set_cell(np.nan)), d, *FAST))
    add("anonymize-plus-inf", lambda d: anon(_frame_csv(d, _set_cell(np.inf)), d, *FAST))
    add("anonymize-minus-inf", lambda d: anon(_frame_csv(d, _set_cell(-np.inf)), d, *FAST))
    # a finite number beyond float32's range is not called NaN or inf (CSV and Parquet)
    add("anonymize-1e308-overflows-float32",
        lambda d: anon(_frame_csv(d, _set_cell(1e308)), d, *FAST),
        says="1 number(s) too large for 32-bit floats (beyond ±3.4e38), first in column 'f5' "
             "at record 3")
    add("anonymize-parquet-1e308-overflows-float32",
        lambda d: anon(_frame_parquet(d, _set_cell(-1e308)), d, *FAST),
        says="too large for 32-bit floats")
    add("anonymize-one-record",
        lambda d: anon(_write_text(d / "t.csv", "identity,expression,f0\na,x,1\n"), d, *FAST,
                       roles=["--interest", "expression", "--sensitive", "identity"]))
    # --- anonymize: files
    add("anonymize-empty-file", lambda d: anon(_write_text(d / "t.csv", ""), d))
    add("anonymize-header-only", lambda d: anon(
        _write_text(d / "t.csv", "identity,expression,gender,environment,f0,f1\n"), d))
    add("anonymize-binary-csv", lambda d: anon(_write_bytes(d / "t.csv", bytes(range(256)) * 8),
                                               d))
    add("anonymize-truncated-parquet",
        lambda d: anon(_truncate(_csv(d, "t.parquet"), 0.5), d))
    add("anonymize-input-is-directory", lambda d: anon(_mkdir(d / "t.csv"), d))
    add("anonymize-input-missing", lambda d: anon(d / "missing.csv", d))
    add("anonymize-unknown-input-extension", lambda d: anon(_write_text(d / "t.txt", "a"), d))
    add("anonymize-output-equals-input", lambda d: anon(_csv(d), d, out="t.csv"))
    add("anonymize-output-is-directory",
        lambda d: anon(_csv(d), d, out=_mkdir(d / "o.parquet").name))
    add("anonymize-output-unknown-extension", lambda d: anon(_csv(d), d, out="o.txt"))
    add("anonymize-output-folder-missing", lambda d: anon(_csv(d), d, out="nope/o.parquet"))
    add("anonymize-output-folder-unwritable",
        lambda d: ["anonymize", str(_csv(d)), "-o", str(_unwritable(d) / "o.parquet"), *ROLES,
                   *FAST])
    add("anonymize-npz-label-length", lambda d: ["anonymize", str(_npz(
        d, who=np.array(list("abc")))), "-o", str(d / "o.npz"), "--sensitive", "who",
        "--method", "noise", "--sigma", "1"])
    add("anonymize-npz-2d-label", lambda d: ["anonymize", str(_npz(
        d, who=np.zeros((12, 2)))), "-o", str(d / "o.npz"), "--sensitive", "who",
        "--method", "noise", "--sigma", "1"])
    add("anonymize-npz-without-X", lambda d: ["anonymize", str(_npz_raw(d, Y=np.zeros(3))),
                                              "-o", str(d / "o.npz"), "--sensitive", "who",
                                              "--method", "noise", "--sigma", "1"])
    add("anonymize-npz-pickled-labels", lambda d: ["anonymize", str(_npz(
        d, who=np.array([{"a": 1}] * 12, dtype=object))), "-o", str(d / "o.npz"),
        "--sensitive", "who", "--method", "noise", "--sigma", "1"])
    # --- anonymize: parameters just outside their range
    for flag, value in [("--g", "1"), ("--g", "0"), ("--g", "500"), ("--t", "1.5"),
                        ("--t", "-0.1"), ("--w", "-1"), ("--w", "nan"), ("--rp", "-0.1"),
                        ("--rp", "1.5"), ("--rs", "-0.1"), ("--rs", "1.5"), ("--seed", "-1"),
                        ("--seed", str(2**32)), ("--relevance", "magic")]:
        add(f"anonymize-{flag[2:]}-{value}", lambda d, f=flag, v=value: anon(
            _csv(d), d, "--g", "8", "--t", "0.5", f, v) if f not in ("--g", "--t") else anon(
            _csv(d), d, f, v))
    add("anonymize-g1-t1-noop", lambda d: anon(_csv(d), d, "--g", "1", "--t", "1"))
    add("anonymize-noise-sigma0-noop", lambda d: anon(_csv(d), d, "--method", "noise",
                                                      "--sigma", "0"))
    add("anonymize-laplace-epsilon-inf-noop", lambda d: anon(_csv(d), d, "--method", "laplace",
                                                             "--epsilon", "inf"))
    add("anonymize-noise-sigma-negative", lambda d: anon(_csv(d), d, "--method", "noise",
                                                         "--sigma", "-1"))
    add("anonymize-laplace-epsilon-zero", lambda d: anon(_csv(d), d, "--method", "laplace",
                                                         "--epsilon", "0"))
    add("anonymize-ksame-k0", lambda d: anon(_csv(d), d, "--method", "ksame", "--k", "0"))
    add("anonymize-ksame-k-above-records", lambda d: anon(_csv(d), d, "--method", "ksame",
                                                          "--k", "49"))
    add("anonymize-class-smaller-than-k",
        lambda d: anon(_csv(d), d, "--method", "ksame-select", "--k", "20"))
    add("anonymize-unknown-method", lambda d: anon(_csv(d), d, "--method", "magic"))
    add("anonymize-unknown-param", lambda d: anon(_csv(d), d, *FAST, "--param", "nope=1"))
    add("anonymize-sanitizer-without-decoupler",
        lambda d: anon(_csv(d), d, "--method", "sanitizer", "--sampler", "suppress"))
    add("anonymize-sanitizer-tampered-decoupler",
        lambda d: anon(_csv(d), d, "--method", "sanitizer", "--sampler", "suppress",
                       "--decoupler", str(_tampered_decoupler(d))))
    # --- evaluate (errors found before any work)
    ev = ["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
          "--identifying", "environment"]
    add("evaluate-out-is-a-file", lambda d: ["evaluate", str(_csv(d)), *ev[:4], "--label",
                                             "gender", "--out", str(_write_text(d / "r", "x"))])
    add("evaluate-missing-interest", lambda d: ["evaluate", str(_csv(d)), "--sensitive",
                                                "identity", "--out", str(d / "rep")])
    add("evaluate-unknown-model", lambda d: ["evaluate", str(_csv(d)), *ev[:4], "--models",
                                             "magic", "--out", str(d / "rep")])
    add("evaluate-unknown-attacker", lambda d: ["evaluate", str(_csv(d)), *ev[:4],
                                                "--attackers", "magic", "--out", str(d / "rep")])
    add("evaluate-interest-is-sensitive", lambda d: [
        "evaluate", str(_csv(d)), "--interest", "identity", "--sensitive", "identity", "--label",
        "gender", "--label", "environment", "--label", "expression", "--out", str(d / "rep")])
    add("evaluate-seed-negative", lambda d: ["evaluate", str(_csv(d)), *ev[:4], "--seed", "-1",
                                             "--out", str(d / "rep")])
    # --- demo
    add("demo-out-is-a-file", lambda d: ["demo", "--out", str(_write_text(d / "r", "x"))])
    add("demo-seed-negative", lambda d: ["demo", "--seed", "-1", "--out", str(d / "rep")])
    # --- extract
    add("extract-voice-valid-with-broken-files-skipped",
        lambda d: ["extract", "voice", str(_wav_folder(d, {
            "empty.wav": b"", "corrupt.wav": b"RIFF\x00\x00garbage", "nan.wav": _nan_wav()})),
            "-o", str(d / "v.parquet")], "ok", ("v.parquet", "v.parquet.skipped.csv"))
    add("extract-voice-only-broken-files",
        lambda d: ["extract", "voice", str(_wav_folder(d, {"empty.wav": b"",
                                                           "corrupt.wav": b"RIFFxx"}, 0)),
                   "-o", str(d / "v.parquet")])
    add("extract-voice-only-nan-file",
        lambda d: ["extract", "voice", str(_wav_folder(d, {"nan.wav": _nan_wav()}, 0)),
                   "-o", str(d / "v.parquet")])
    add("extract-voice-missing-folder", lambda d: ["extract", "voice", str(d / "nope"), "-o",
                                                   str(d / "v.parquet")])
    add("extract-voice-src-is-file", lambda d: ["extract", "voice", str(_write_text(
        d / "a.wav", "x")), "-o", str(d / "v.parquet")])
    add("extract-voice-n-mfcc-0", lambda d: ["extract", "voice", str(_wav_folder(d)), "-o",
                                             str(d / "v.parquet"), "--n-mfcc", "0"])
    add("extract-voice-unknown-features", lambda d: ["extract", "voice", str(_wav_folder(d)),
                                                     "-o", str(d / "v.parquet"), "--features",
                                                     "magic"])
    add("extract-voice-output-is-labels", lambda d: [
        "extract", "voice", str(_wav_folder(d)), "--labels",
        str(_write_text(d / "l.csv", "file,who\nok0.wav,a\n")), "-o", str(d / "l.csv")])
    add("extract-voice-labels-missing-file-column", lambda d: [
        "extract", "voice", str(_wav_folder(d)), "--labels",
        str(_write_text(d / "l.csv", "name,who\nok0.wav,a\n")), "-o", str(d / "v.parquet")])
    add("extract-face-only-corrupt-images", lambda d: [
        "extract", "face", str(_image_folder(d)), "-o", str(d / "f.parquet")])
    add("extract-motion-window-0", lambda d: [*_motion(d, [("s1.csv", 0, 400, "walk")]),
                                              "--window", "0"])
    add("extract-motion-segment-beyond-stream", lambda d: _motion(
        d, [("s1.csv", 500, 900, "walk")]))
    add("extract-motion-missing-label-column", lambda d: [
        *_motion(d, [("s1.csv", 0, 400, "walk")]), "--label-column", "nope"])
    # --- preview
    add("preview-valid", lambda d: ["preview", str(_pixels(d, "a.parquet")),
                                    str(_pixels(d, "b.parquet", seed=1)), "-o",
                                    str(d / "s.png")], "ok", ("s.png",))
    add("preview-n-negative", lambda d: ["preview", str(_pixels(d, "a.parquet")),
                                         str(_pixels(d, "b.parquet")), "-o", str(d / "s.png"),
                                         "--n", "-3"])
    add("preview-output-not-png", lambda d: ["preview", str(_pixels(d, "a.parquet")),
                                             str(_pixels(d, "b.parquet")), "-o",
                                             str(d / "s.jpg")])
    add("preview-record-count-differs", lambda d: [
        "preview", str(_pixels(d, "a.parquet")), str(_pixels(d, "b.parquet", n=4)), "-o",
        str(d / "s.png")])
    add("preview-html-equals-input", lambda d: [
        "preview", str(_pixels(d, "a.parquet")), str(_pixels(d, "b.parquet")), "-o",
        str(d / "s.png"), "--html", str(d / "a.parquet")])
    # --- train-decoupler
    add("train-decoupler-missing-sensitive", lambda d: [
        "train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"), "--sensitive", "nope"])
    add("train-decoupler-latent-dim-0", lambda d: [
        "train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"), "--sensitive", "identity",
        "--label", "gender", "--label", "environment", "--label", "expression",
        "--latent-dim", "0"])
    add("train-decoupler-output-equals-input", lambda d: [
        "train-decoupler", str(_csv(d)), "-o", str(d / "t.csv"), "--sensitive", "identity"])
    # --- tune and tune-k
    tn = ["--interest", "expression", "--sensitive", "identity", "--label", "gender",
          "--label", "environment"]
    add("tune-grid-not-a-number", lambda d: ["tune", str(_csv(d)), *tn, "--grid", "g=abc",
                                             "--out", str(d / "tune")])
    add("tune-grid-unknown-parameter", lambda d: ["tune", str(_csv(d)), *tn, "--grid",
                                                  "nope=1,2", "--out", str(d / "tune")])
    add("tune-out-is-a-file", lambda d: ["tune", str(_csv(d)), *tn, "--grid", "g=4,8",
                                         "--out", str(_write_text(d / "r", "x"))])
    add("tune-k-k-min-1", lambda d: ["tune-k", str(_csv(d)), "--sensitive", "identity",
                                     "--label", "gender", "--label", "environment", "--label",
                                     "expression", "--k-min", "1", "--out", str(d / "tk")])
    add("tune-k-k-max-below-k-min", lambda d: [
        "tune-k", str(_csv(d)), "--sensitive", "identity", "--label", "gender", "--label",
        "environment", "--label", "expression", "--k-min", "5", "--k-max", "3", "--out",
        str(d / "tk")])
    add("tune-k-out-is-a-file", lambda d: [
        "tune-k", str(_csv(d)), "--sensitive", "identity", "--label", "gender", "--label",
        "environment", "--label", "expression", "--out", str(_write_text(d / "r", "x"))])
    return c


def _write_text(p: Path, text: str) -> Path:
    p.write_text(text, encoding="utf-8")
    return p


def _write_bytes(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def _mkdir(p: Path) -> Path:
    p.mkdir()
    return p


def _truncate(p: Path, share: float) -> Path:
    data = p.read_bytes()
    p.write_bytes(data[: int(len(data) * share)])
    return p


def _npz_raw(d: Path, **arrays: np.ndarray) -> Path:
    p = d / "t.npz"
    np.savez(p, **arrays)
    return p


def _image_folder(d: Path) -> Path:
    src = d / "imgs"
    src.mkdir()
    (src / "empty.png").write_bytes(b"")
    (src / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    return src


def _all_cases() -> list[Case]:
    from .audit import audit_cases
    from .options import option_cases
    from .wave5 import wave5_cases
    from .wave6 import wave6_cases
    from .wave7 import wave7_cases
    from .wave8 import wave8_cases
    from .wave9 import wave9_cases
    from .wave10 import wave10_cases
    from .wave11 import wave11_cases
    from .wave12 import wave12_cases
    from .wave13 import wave13_cases
    from .wave14 import wave14_cases
    from .wave15 import wave15_cases
    from .wave16 import wave16_cases

    return [*_cases(), *option_cases(), *wave5_cases(), *audit_cases(), *wave6_cases(),
            *wave7_cases(), *wave8_cases(), *wave9_cases(), *wave10_cases(),
            *wave11_cases(), *wave12_cases(), *wave13_cases(), *wave14_cases(),
            *wave15_cases(), *wave16_cases()]


CASES: list[Case] = _all_cases()
