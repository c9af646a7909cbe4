"""The ``evaluate`` command with the attack panel options, and its one-line errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric

runner = CliRunner()


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("panel") / "table.parquet"
    make_biometric(n_identities=8, records_per_identity=24, n_features=32,
                   random_state=2).write(path)
    return path


def _run(table_file, out, *extra):
    return runner.invoke(app, [
        "evaluate", str(table_file), "--interest", "expression", "--sensitive", "identity",
        "--label", "gender", "--label", "environment", "--out", str(out), "--g", "8",
        "--rp", "0.1", "--seed", "3", *extra])


def test_evaluate_with_panel_options(table_file, tmp_path):
    res = _run(table_file, tmp_path / "rep", "--models", "knn,logreg", "--attackers",
               "naive,parrot50,reverse,linkage", "--selection", "random,center,metadata",
               "--identities", "4,3", "--n-random", "3", "--metadata", "gender")
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    modes = [(a["mode"], a["model"]) for a in rep["privacy"]["attacks"]]
    assert modes == [("naive", "knn"), ("naive", "logreg"), ("parrot50", "knn"),
                     ("parrot50", "logreg"), ("reverse", "knn"), ("reverse", "logreg"),
                     ("linkage", "cosine_nn")]
    for a in rep["privacy"]["attacks"]:
        assert {"train_data", "ci", "advantage", "top_k"} <= set(a)
    sel = rep["privacy"]["selection"]
    assert set(sel["strategies"]) == {"random", "center", "metadata"}
    assert [p["n_identities"] for p in sel["strategies"]["center"]] == [4, 3]
    assert len(sel["strategies"]["random"][0]["runs"]) == 3
    assert rep["params"]["evaluation"]["seed"] == 3
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "identity selection chart" in html and "top-k chart" in html
    assert "Accuracy per mode and recognizer" in html


@pytest.mark.parametrize("extra,message", [
    (["--attackers", "naive,parot"], "unknown attacker mode 'parot'"),
    (["--models", "knn,svm"], "unknown recognizer 'svm'"),
    (["--selection", "random", "--identities", "20"], "asked for 20 identities but there are"),
    (["--selection", "centre"], "unknown selection strategy 'centre'"),
])
def test_evaluate_bad_panel_input_exits_2(table_file, tmp_path, extra, message):
    models = [] if "--models" in extra else ["--models", "knn"]  # an option given twice is
    res = _run(table_file, tmp_path / "bad", *models, *extra)  # refused (it names both)
    assert res.exit_code == 2
    out = " ".join(res.output.split())
    assert message in out and "Traceback" not in res.output
    assert not (tmp_path / "bad" / "report.json").exists()
