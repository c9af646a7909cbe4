"""Disclosure metrics: information loss, anonymity sets, rank-1 panel, homogeneity; and the
k-anonymity family through the evaluation protocol."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bioanon import evaluate
from bioanon.anonymize import BlurAnonymizer, KSameAnonymizer
from bioanon.cli import app
from bioanon.errors import BioanonError
from bioanon.metrics import (
    anonymity_sets,
    homogeneity,
    information_loss,
    k_anonymity,
    rank1_panel,
)
from bioanon.table import FeatureTable


def test_information_loss_and_shape_check() -> None:
    X = np.zeros((4, 3))
    R = X.copy()
    R[0] = [1.0, 2.0, 2.0]  # distance 3 for one record out of four
    assert information_loss(X, R) == pytest.approx(0.75)
    with pytest.raises(BioanonError, match="shapes differ"):
        information_loss(X, R[:3])


def test_anonymity_sets_with_rounding() -> None:
    R = np.array([[1.0, 2.0], [1.0 + 1e-9, 2.0], [5.0, 5.0], [5.0, 5.0]])
    assert k_anonymity(R) == 1  # exact comparison sees three sets
    assert k_anonymity(R, decimals=6) == 2
    sets = anonymity_sets(R, decimals=6)
    assert sets[0] == sets[1] and sets[2] == sets[3] and sets[0] != sets[2]


def test_rank1_panel_blur_is_seen_through_by_parrot() -> None:
    rng = np.random.default_rng(0)
    faces = rng.uniform(0, 255, size=(12, 64))
    gallery = faces + rng.normal(scale=5, size=faces.shape)
    probe = faces + rng.normal(scale=5, size=faces.shape)
    ids = np.arange(12)
    blur = BlurAnonymizer(sigma=1.0, image_shape=(8, 8))
    panel = rank1_panel(gallery, blur.fit_transform(gallery), ids, probe,
                        blur.fit_transform(probe), ids)
    assert panel["clear"] == 1.0
    assert panel["parrot"] >= 0.9  # mild blur does not stop a matched recognizer
    ks = KSameAnonymizer(k=3)
    panel_k = rank1_panel(gallery, ks.fit_transform(gallery), ids, probe,
                          ks.fit_transform(probe), ids)
    assert max(panel_k["naive"], panel_k["reverse"], panel_k["parrot"]) <= 1 / 3 + 1e-12


def test_homogeneity_per_attribute_and_set() -> None:
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    lab = pd.DataFrame({"g": list("mmmffmff"), "age": [1, 1, 1, 2, 2, 2, 3, 4]})
    h = homogeneity(groups, lab, attribute_sets=[("g", "age")])
    assert h["g"] == pytest.approx(2 / 3)
    assert h["age"] == pytest.approx(2 / 3)
    assert h["g+age"] == pytest.approx(1 / 3)
    with pytest.raises(BioanonError, match="not found"):
        homogeneity(groups, lab, attributes=["sex"])


def test_ksame_through_evaluation(small_table: FeatureTable) -> None:
    rep = evaluate(small_table, "expression", "identity", anonymizer=KSameAnonymizer(k=5),
                   models=["knn"], random_state=0)
    assert rep["params"]["anonymizer"]["k"] == 5
    linkage = [a for a in rep["privacy"]["attacks"] if a["mode"] == "linkage"][0]
    clear = rep["privacy"]["clear"][0]["accuracy"]
    assert 0.0 <= linkage["record_top_k"][0] <= 1 / 5 + 1e-12  # record-level bound
    assert clear > rep["privacy"]["chance"]


def test_cli_evaluate_with_baseline(tmp_path, small_table: FeatureTable) -> None:
    src = tmp_path / "t.parquet"
    small_table.write(src)
    res = CliRunner().invoke(app, [
        "evaluate", str(src), "--sensitive", "identity", "--interest", "expression",
        "--label", "environment", "--out", str(tmp_path / "rep"), "--method", "pixelate",
        "--block", "2", "--param", "image_shape=8x4", "--models", "knn"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "rep" / "report.json").exists()
    bad = CliRunner().invoke(app, [
        "evaluate", str(src), "--sensitive", "identity", "--interest", "expression",
        "--label", "environment", "--out", str(tmp_path / "rep2"), "--method", "blur",
        "--sigma", "1", "--models", "knn"])
    assert bad.exit_code == 2 and "image_shape" in bad.output
