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


# ---------------------------------------------------------------------- issue 22
def test_a_setting_the_method_declares_a_no_op_is_refused_before_any_work():
    from bioanon.anonymize import (
        GaussianNoiseAnonymizer,
        LaplaceAnonymizer,
        SelectiveMeanAnonymizer,
        VarianceMixAnonymizer,
    )

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    X = t.X + 1000.0  # large values: float32 resolution about 1e-4
    with pytest.raises(BioanonError, match="unchanged at float32 precision"):
        GaussianNoiseAnonymizer(sigma=1e-6).check_changes(X)
    GaussianNoiseAnonymizer(sigma=1e-2).check_changes(X)  # a real change passes
    with pytest.raises(BioanonError, match="sigma"):
        GaussianNoiseAnonymizer(sigma=1e-9, scale="std").check_changes(None)  # needs no data
    with pytest.raises(BioanonError, match="epsilon"):
        LaplaceAnonymizer(epsilon=1e15).check_changes(X)
    LaplaceAnonymizer(epsilon=1.0).check_changes(X)
    with pytest.raises(BioanonError, match="w=1e\\+12"):
        SelectiveMeanAnonymizer("expression", r_p=1.0, w=1e12).check_changes(None)
    with pytest.raises(BioanonError, match="w=1e\\+12"):
        VarianceMixAnonymizer("expression", r_p=1.0, w=1e12).check_changes(None)
    from bioanon.anonymize import BlurAnonymizer

    with pytest.raises(BioanonError, match="copies the image"):
        BlurAnonymizer(sigma=0.05).check_changes(None)
    BlurAnonymizer(sigma=1.0).check_changes(None)
    # the record dominating only the retained share of features is the method's purpose
    SelectiveMeanAnonymizer("expression", r_p=0.5, w=1e12).check_changes(None)


def test_parameters_a_setting_ignores_are_declared_by_the_method():
    from bioanon.anonymize import SelectiveMeanAnonymizer, VarianceMixAnonymizer

    assert "r_q" in SelectiveMeanAnonymizer("e").ignored_params()
    assert "r_q" not in SelectiveMeanAnonymizer("e", additional=["a"]).ignored_params()
    assert "r_q" in SelectiveMeanAnonymizer("e", additional=["a"],
                                            r_q={"b": 0.1}).ignored_params()
    assert {"w", "relevance"} <= set(SelectiveMeanAnonymizer("e", r_p=0.0).ignored_params())
    assert "w" not in SelectiveMeanAnonymizer("e", r_p=0.1).ignored_params()
    assert "t" in VarianceMixAnonymizer("e").ignored_params()
    assert "t" not in VarianceMixAnonymizer("e", additional=["a"]).ignored_params()


def test_rq_on_a_column_that_is_not_additional_is_refused(table_csv, tmp_path):
    """The one silent accept left by wave 2: --rq did nothing and the release was written."""
    out = tmp_path / "o.parquet"
    res = _run("anonymize", table_csv, "-o", out, "--interest", "expression", "--sensitive",
               "identity", "--label", "gender", "--label", "environment", "--g", "8", "--t",
               "0.5", "--rq", "0.1")
    _user_error(res, "r_q=0.1", "--additional")
    assert not out.exists()


def _folder(tmp_path, name="t.parquet", parts=2):
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    df = t.to_frame()
    folder = tmp_path / name
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(df)), parts)):
        pq.write_table(pa.Table.from_pandas(df.iloc[rows], preserve_index=False),
                       folder / f"part-{i}.parquet")
    return folder, t


def test_a_folder_of_parquet_parts_reads_as_one_table(tmp_path):
    folder, t = _folder(tmp_path)
    back = FeatureTable.read(folder, label_columns=list(t.labels.columns))
    assert back.n_records == t.n_records and back.feature_names == t.feature_names
    np.testing.assert_array_equal(back.X, t.X)
    assert list(back.labels["identity"]) == list(t.labels["identity"])


@pytest.mark.parametrize("damage, text", [
    (lambda f: (f / "part-9.parquet").write_bytes(b"PAR1junk"), "not a readable Parquet"),
    (lambda f: (f / "part-9.parquet").write_bytes(b""), "is empty"),
    (lambda f: (f / "notes.txt").write_text("x"), "not a Parquet part"),
    (lambda f: [p.unlink() for p in f.iterdir()], "holds no Parquet files"),
])
def test_a_damaged_parquet_folder_is_named_with_its_part(tmp_path, damage, text):
    folder, t = _folder(tmp_path)
    damage(folder)
    with pytest.raises(BioanonError, match=text):
        FeatureTable.read(folder)


def test_parts_with_other_columns_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder, t = _folder(tmp_path)
    pq.write_table(pa.Table.from_pandas(t.to_frame().drop(columns=["f3"]).iloc[:4],
                                        preserve_index=False), folder / "part-9.parquet")
    with pytest.raises(BioanonError, match="other columns or types"):
        FeatureTable.read(folder)


def test_an_unreachable_scheduler_is_named_at_once():
    from bioanon.scale.cluster import check_reachable

    with pytest.raises(BioanonError, match="tcp://127.0.0.1:1"):
        check_reachable("tcp://127.0.0.1:1")  # nothing listens on port 1
    with pytest.raises(BioanonError, match="HOST:PORT"):
        check_reachable("tcp://127.0.0.1")


def test_dask_failures_that_are_not_bugs_become_one_line():
    from bioanon.scale.cluster import dask_failure

    class KilledWorker(Exception):
        pass

    assert isinstance(dask_failure(KilledWorker("x")), BioanonError)
    assert "tcp://h:1" in str(dask_failure(ConnectionResetError("gone"), "tcp://h:1"))
    bug = KeyError("a bug")
    assert dask_failure(bug) is bug  # a bug stays a bug (with its traceback)


def test_dask_output_may_be_named_like_a_parquet_file():
    from pathlib import Path

    from bioanon.scale.run import check_folder_name

    check_folder_name(Path("released.parquet"))
    check_folder_name(Path("released"))
    with pytest.raises(BioanonError, match="NAME.parquet"):
        check_folder_name(Path("released.csv"))


def test_help_reflows_docstring_paragraphs_but_keeps_lists():
    from bioanon.cli.vocabulary import reflow

    text = "First line\n    of a title.\n\n    Prose that was\n    broken by hand.\n\n" \
           "    - item one\n    - item two"
    assert reflow(text) == ("First line of a title.\n\nProse that was broken by hand.\n\n"
                            "- item one\n- item two")
    res = CliRunner().invoke(app, ["release", "--help-all"], env={"COLUMNS": "200"})
    assert "the upper 95% bound of the cross-fitted" in " ".join(res.output.split())  # details


def test_usage_errors_are_one_error_line_with_status_2():
    for argv in (["methods", "--bogus"], ["nocommand"], ["datasets", "-v", "-q"]):
        _user_error(_run(*argv), "--help")
