"""Tuning k: the sweep, the knee, the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable
from bioanon.tuning.k_tuning import knee, tune_k


def test_knee_finds_where_the_curve_flattens() -> None:
    x = np.arange(2, 21)
    y = np.minimum(x, 6) + 0.01 * x  # steep until 6, then flat
    assert x[knee(x, y)] == 6
    assert knee([1, 2], [0, 1]) == 0


def test_sweep_bounds_and_monotone_loss(small_table: FeatureTable) -> None:
    ids = small_table.labels["identity"].to_numpy()
    r = tune_k(small_table.X, range(2, 9), identity=ids,
               attributes=small_table.labels[["expression"]])
    assert r.ks == list(range(2, 9))
    assert all(a < b for a, b in zip(r.information_loss, r.information_loss[1:], strict=False))
    for k, link in zip(r.ks, r.record_linkage, strict=True):
        assert link <= 1.0 / k + 1e-12
    assert r.recommended_k in r.ks
    assert r.identity_rank1 is not None and len(r.identity_rank1) == 7
    assert r.notes  # several records per identity: the note says what 1/k bounds
    assert len(r.homogeneity["expression"]) == 7
    with pytest.raises(BioanonError, match="exceeds"):
        tune_k(small_table.X[:5], range(2, 8))


def test_cli_tune_k(tmp_path, small_table: FeatureTable) -> None:
    src = tmp_path / "t.parquet"
    small_table.write(src)
    out = tmp_path / "tune"
    res = CliRunner().invoke(app, ["tune-k", str(src), "--out", str(out), "--sensitive",
                                   "identity", "--attribute", "expression", "--label",
                                   "environment", "--k-max", "8"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "tune-k.json").read_text())
    assert doc["recommended_k"] in range(2, 9)
    assert (out / "tune-k.png").stat().st_size > 0
    assert (out / "dendrogram.png").stat().st_size > 0  # 240 records: small enough
    assert "labels" not in doc and "clusters" not in doc  # no assignments
    bad = CliRunner().invoke(app, ["tune-k", str(src), "--out", str(out), "--k-min", "1"])
    assert bad.exit_code == 2 and "--k-min" in bad.output


def test_tune_k_refuses_attributes_naming_a_column_twice():
    """A frame naming one attribute twice was a NumPy shape error inside the sweep."""
    t = make_biometric(n_identities=5, records_per_identity=6, n_features=32, random_state=0)
    with pytest.raises(BioanonError, match=r"attributes name \['expression'\] more than once"):
        tune_k(t.X, range(2, 4), attributes=t.labels[["expression", "expression"]])
