"""Issue 11: each defect found by the bad-input survey, as a test that failed before the fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import typer
from scipy.io import wavfile
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.cli.common import user_errors
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _user_error(res, *texts):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.exception is None or \
        isinstance(res.exception, SystemExit)
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, res.output
    for t in texts:
        assert t in lines[0], lines[0]


@pytest.fixture()
def table_csv(tmp_path):
    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    p = tmp_path / "t.csv"
    t.write(p)
    return p


def test_brackets_in_a_column_name_print_as_written(table_csv, tmp_path):
    res = _run("anonymize", table_csv, "-o", tmp_path / "o.csv", "--interest", "x[/]",
               "--sensitive", "identity")
    _user_error(res, "x[/]")
    res = _run("anonymize", table_csv, "-o", tmp_path / "o.csv", "--interest", "[bold]a",
               "--sensitive", "identity")
    _user_error(res, "[bold]a")


def test_install_hint_keeps_its_brackets():
    cmd = typer.Typer()

    @cmd.command()
    @user_errors
    def fail() -> None:
        raise BioanonError("install the face extra: pip install 'bioanon[face]'")

    res = CliRunner().invoke(cmd, [])
    _user_error(res, "pip install 'bioanon[face]'")


@pytest.mark.parametrize("labels", [
    {"who": np.array(["a", "b", "c"])},                      # 3 labels for 4 records
    {"who": np.array([["a", "b"], ["c", "d"]])},            # 2-D
])
def test_npz_label_arrays_of_the_wrong_shape(tmp_path, labels):
    p = tmp_path / "t.npz"
    np.savez(p, X=np.random.default_rng(0).normal(size=(4, 3)), **labels)
    with pytest.raises(BioanonError, match="label array 'who'"):
        FeatureTable.read(p)
    res = _run("anonymize", p, "-o", tmp_path / "o.npz", "--sensitive", "who",
               "--method", "noise", "--sigma", "1")
    _user_error(res, "who")
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize("cmd", [["anonymize", "{src}", "-o", "{tmp}/o.csv", "--interest",
                                  "expression", "--sensitive", "identity"],
                                 ["demo", "--out", "{tmp}/rep"]])
@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_seed_out_of_range(table_csv, tmp_path, cmd, seed):
    args = [a.format(src=table_csv, tmp=tmp_path) for a in cmd]
    _user_error(_run(*args, "--seed", seed), "--seed")
    assert not (tmp_path / "rep").exists() and not (tmp_path / "o.csv").exists()


def test_evaluate_and_demo_refuse_an_existing_file_as_out_before_working(table_csv, tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    res = _run("evaluate", table_csv, "--interest", "expression", "--sensitive", "identity",
               "--out", taken)
    _user_error(res, "existing file")
    _user_error(_run("demo", "--out", taken), "existing file")
    assert taken.read_text() == "mine"


def test_preview_n_negative_names_the_value(tmp_path):
    a = tmp_path / "a.csv"
    make_biometric(n_identities=3, records_per_identity=4, n_features=32).write(a)
    _user_error(_run("preview", a, a, "-o", tmp_path / "s.png", "--n", "-3"), "--n -3")


def test_tampered_decoupler_file(tmp_path):
    torch = pytest.importorskip("torch")
    from bioanon.anonymize.sanitizer.decoupler import FORMAT, FORMAT_VERSION, Decoupler

    p = tmp_path / "d.pt"
    torch.save({"format": FORMAT, "version": FORMAT_VERSION, "config": {"latent_dim": 4},
                "info": {"n_features": 3}, "state": {"w": torch.zeros(2)}}, p)
    with pytest.raises(BioanonError, match="damaged decoupler"):
        Decoupler.load(p)


def test_wav_with_nan_samples_is_skipped_and_listed(tmp_path):
    src = tmp_path / "wavs"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        wavfile.write(src / f"ok{i}.wav", 8000, rng.normal(size=4000).astype(np.float32))
    bad = rng.normal(size=4000).astype(np.float32)
    bad[100:110] = np.nan
    wavfile.write(src / "nan.wav", 8000, bad)
    out = tmp_path / "v.parquet"
    res = _run("extract", "voice", src, "-o", out)
    assert res.exit_code == 0, res.output
    assert FeatureTable.read(out).n_records == 3
    skipped = pd.read_csv(tmp_path / "v.parquet.skipped.csv")
    row = skipped[skipped["file"].str.contains("nan.wav")]
    assert len(row) == 1 and "NaN" in row["reason"].iloc[0]
