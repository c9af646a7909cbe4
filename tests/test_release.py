"""The release policy: column roles, the join check, the manifest, file modes."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import (
    NO_ROLE,
    Roles,
    join_rate,
    manifest_path,
    release,
    resolve_roles,
    verify_release,
    write_release,
)
from bioanon.table import FeatureTable


@pytest.fixture()
def leaky_table() -> FeatureTable:
    """Synthetic table plus label columns nobody named: a record id, a file name, a take."""
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=3)
    n = t.n_records
    labels = t.labels.copy()
    labels["record_id"] = np.arange(n)
    labels["original_file"] = [f"{p}/take{i}.wav" for i, p in enumerate(labels["identity"])]
    labels["uid"] = [f"u{i:04d}" for i in range(n)]
    labels["batch"] = np.random.default_rng(0).choice(["a", "b"], n)  # harmless
    return FeatureTable(t.X, labels, t.feature_names, dict(t.meta))


def _anon(**kw):
    return SelectiveMeanAnonymizer(interest="expression", g=8, t=0.5, random_state=0, **kw)


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_unnamed_label_columns_are_dropped_by_the_library(leaky_table):
    res = release(leaky_table, _anon(), Roles(sensitive="identity", interest="expression"))
    assert list(res.table.labels.columns) == ["expression"]
    for col in ("record_id", "original_file", "uid", "gender", "environment", "identity"):
        assert col in res.dropped
    roles = res.manifest_roles()
    assert roles["record_id"] == NO_ROLE and roles["identity"] == "sensitive"
    assert set(roles) == set(leaky_table.labels.columns)  # every column listed
    assert res.manifest["certified"] is False


def test_cli_drops_unnamed_columns_says_which_and_matches_the_library(tmp_path, leaky_table):
    src = tmp_path / "in.parquet"
    leaky_table.write(src)
    out = tmp_path / "rel.parquet"
    r = _run("anonymize", src, "-o", out, "--interest", "expression", "--sensitive", "identity",
             "--g", "8", "--t", "0.5", "--keep", "batch")
    assert r.exit_code == 0, r.output
    dropped_lines = [ln for ln in r.output.splitlines() if ln.startswith("dropped label")]
    assert len(dropped_lines) == 1 and "record_id" in dropped_lines[0]
    assert "not certified" in r.output
    released = FeatureTable.read(out)
    lib = release(leaky_table, _anon(), Roles(sensitive="identity", interest="expression",
                                              keep=["batch"]))
    assert list(released.labels.columns) == list(lib.table.labels.columns)
    assert list(released.labels.columns) == ["expression", "batch"]
    text = manifest_path(out).read_text()
    assert str(tmp_path) not in text and "random_state" not in text  # no path, no seed
    man = json.loads(text)
    assert man["input"]["name"] == "in.parquet" and man["certified"] is False
    assert man["dropped"] == lib.dropped
    assert {c["name"]: c["role"] for c in man["columns"]} == lib.manifest_roles()
    assert man["join_check"]["passed"] is True
    assert verify_release(out)


def test_a_kept_column_that_singles_out_identities_is_refused(tmp_path, leaky_table):
    src = tmp_path / "in.parquet"
    leaky_table.write(src)
    out = tmp_path / "rel.parquet"
    r = _run("anonymize", src, "-o", out, "--interest", "expression", "--sensitive", "identity",
             "--g", "8", "--t", "0.5", "--keep", "uid")
    assert r.exit_code == 2, r.output
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "uid" in errors[0] and "100.0%" in errors[0]
    assert not out.exists() and not manifest_path(out).exists()
    with pytest.raises(BioanonError, match="uid"):
        release(leaky_table, _anon(), Roles(sensitive="identity", interest="expression",
                                            quasi=["uid"]))
    forced = _run("anonymize", src, "-o", out, "--interest", "expression", "--sensitive",
                  "identity", "--g", "8", "--t", "0.5", "--keep", "uid", "--force")
    assert forced.exit_code == 0, forced.output
    check = json.loads(manifest_path(out).read_text())["join_check"]
    assert check["forced"] is True and check["passed"] is False and check["rate"] == 1.0


def test_gender_kept_beside_interest_is_checked_against_the_reference():
    # gender names 3 of 6 identities: the join rate doubles chance and is refused
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=3)
    plan = resolve_roles(t.labels.columns, Roles(sensitive="identity", interest="expression",
                                                 keep=["gender"]))
    rate = join_rate(t.labels, ["expression", "gender"], "identity")
    assert rate > 1.2 * join_rate(t.labels, [], "identity")
    with pytest.raises(BioanonError, match="gender"):
        release(t, _anon(), Roles(sensitive="identity", interest="expression",
                                  keep=["gender"]))
    # as an additional attribute (needed for utility) it sets the reference instead
    assert plan.checked == ["gender"]


def test_one_role_per_column(leaky_table, tmp_path):
    with pytest.raises(BioanonError, match="two roles"):
        Roles(sensitive="identity", interest="identity").of()
    src = tmp_path / "x.parquet"  # an existing input: a missing one is reported first
    leaky_table.write(src)
    r = _run("anonymize", src, "-o", tmp_path / "y.parquet", "--interest", "identity",
             "--sensitive", "identity")
    assert r.exit_code == 2 and "two roles" in r.output and "Traceback" not in r.output
    # a --label column clashing with another role is named as the user gave it, and never
    # released
    r = _run("anonymize", src, "-o", tmp_path / "y.parquet", "--interest", "expression",
             "--sensitive", "identity", "--additional", "gender", "--label", "gender")
    assert r.exit_code == 2 and "(additional and other label)" in r.output
    plan = resolve_roles(leaky_table.labels.columns,
                         Roles(sensitive="identity", interest="expression", other=["gender"]))
    assert plan.roles["gender"] == "other label" and "gender" in plan.dropped


def test_anonymizer_roles_must_match(leaky_table):
    with pytest.raises(BioanonError, match="interest"):
        release(leaky_table, _anon(), Roles(sensitive="identity", interest="gender"))


def test_prefitted_anonymizer_releases_with_the_same_policy(leaky_table):
    anon = _anon().fit(leaky_table.X, leaky_table.labels)
    res = release(leaky_table, anon, Roles(sensitive="identity", interest="expression"),
                  fit=False, keep_order=True)
    assert list(res.table.labels.columns) == ["expression"]
    assert res.table.n_records == leaky_table.n_records


def test_csv_numeric_id_column_must_be_named(tmp_path, leaky_table):
    frame = leaky_table.to_frame().drop(columns=["original_file", "uid", "batch"])
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "rel.csv"
    base = ["--interest", "expression", "--sensitive", "identity", "--g", "8", "--t", "0.5"]
    r = _run("anonymize", src, "-o", out, *base, "--identifying", "gender",
             "--identifying", "environment")
    assert r.exit_code == 2 and "record_id" in r.output, r.output
    assert not out.exists()
    ok = _run("anonymize", src, "-o", out, *base, "--identifying", "gender", "--identifying",
              "environment", "--identifying", "record_id")
    assert ok.exit_code == 0, ok.output
    assert "record_id" not in pd.read_csv(out).columns


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_output_modes_follow_the_umask(tmp_path, leaky_table, mask):
    res = release(leaky_table, _anon(), Roles(sensitive="identity", interest="expression"))
    old = os.umask(mask)
    try:
        out, man = write_release(res.table, res.manifest, tmp_path / "rel.parquet")
        leaky_table.write(tmp_path / "plain.csv")
    finally:
        os.umask(old)
    for p in (out, man, tmp_path / "plain.csv"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask
    assert verify_release(out)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("compiled", [True, False])
def test_in_place_shuffle_keeps_rows_with_their_labels(compiled, monkeypatch):
    """The compiled cycle-following permutation (large tables) and Fisher-Yates (small ones,
    or no numba) both move every row with its labels, and leave the caller's input alone."""
    from bioanon.anonymize import mix_kernel
    from bioanon.release import shuffle

    if compiled and mix_kernel.permute_kernel() is None:
        pytest.skip("numba (the scale extra) is not installed")
    monkeypatch.setattr(mix_kernel, "MIN_ROWS", 1 if compiled else 10**9)
    n = 500
    X = np.repeat(np.arange(n, dtype=np.float32)[:, None], 4, axis=1)
    t = FeatureTable(X.copy(), pd.DataFrame({"k": np.arange(n)}))
    s = shuffle(t, in_place=True)
    assert np.shares_memory(s.X, t.X)  # no second copy of the features
    np.testing.assert_array_equal(s.X[:, 0], s.labels["k"].to_numpy())  # still paired
    assert sorted(s.labels["k"]) == list(range(n))  # a permutation
    assert not np.array_equal(s.labels["k"].to_numpy(), np.arange(n))  # and not the identity
    table = FeatureTable(X, pd.DataFrame({"p": np.arange(n) % 2, "who": np.arange(n) % 5}))

    class Keep:  # an anonymizer that hands back its input: release() must copy, not shuffle it
        def fit(self, X, y=None):
            return self

        def transform(self, X, y=None):
            return X.X

    before = table.X.copy()
    release(table, Keep(), Roles(sensitive="who", interest="p"))
    np.testing.assert_array_equal(table.X, before)


def test_manifest_says_how_many_records_relevance_was_fitted_on(tmp_path):
    t = make_biometric(n_identities=6, records_per_identity=40, n_features=32, random_state=1)
    src = t.write(tmp_path / "in.parquet")
    runner = CliRunner()
    for records, expected in (("100", 100), ("none", t.n_records)):
        out = tmp_path / f"out-{records}.parquet"
        res = runner.invoke(app, ["anonymize", str(src), "-o", str(out), "--interest",
                                  "expression", "--sensitive", "identity", "--g", "8",
                                  "--param", f"relevance_records={records}"])
        assert res.exit_code == 0, res.output
        man = json.loads(manifest_path(out).read_text())
        assert man["relevance_fit"] == {"records": expected, "of": t.n_records,
                                        "sample": "stratified by the attribute scored"}
        assert man["params"]["relevance_records"] == (None if records == "none" else 100)
    res = runner.invoke(app, ["anonymize", str(src), "-o", str(tmp_path / "x.parquet"),
                              "--interest", "expression", "--sensitive", "identity",
                              "--param", "relevance_records=3"])
    assert res.exit_code == 2
    assert "relevance_records=3 is out of range" in res.output
    assert not (tmp_path / "x.parquet").exists()


def test_a_shuffled_release_pairs_every_released_row_with_its_own_labels(monkeypatch):
    """release() shuffles a mixing method's output as it is computed (one pass): the rows are
    the input-order release's rows, each still beside its own record's labels."""
    from bioanon.anonymize import selective_mean

    t = make_biometric(n_identities=6, records_per_identity=40, n_features=32, random_state=2)
    roles = Roles(sensitive="identity", interest="expression")
    for min_rows in (1, 10**9):  # the compiled kernel and the SciPy path
        monkeypatch.setattr(selective_mean, "MIN_ROWS", min_rows)
        kept = release(t, SelectiveMeanAnonymizer("expression", g=8, t=0.5, random_state=4),
                       roles, keep_order=True)
        mixed = release(t, SelectiveMeanAnonymizer("expression", g=8, t=0.5, random_state=4),
                        roles)
        where = {row.tobytes(): i for i, row in enumerate(kept.table.X)}
        src = np.array([where[row.tobytes()] for row in mixed.table.X])
        assert sorted(src) == list(range(t.n_records))  # the same rows, once each
        assert not np.array_equal(src, np.arange(t.n_records))  # shuffled
        np.testing.assert_array_equal(mixed.table.labels["expression"].to_numpy(),
                                      kept.table.labels["expression"].to_numpy()[src])
        assert mixed.manifest["output"]["shuffled"] is True
