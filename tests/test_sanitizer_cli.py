"""The sanitizer from the command line: train-decoupler, anonymize, evaluate, clear errors."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

pytest.importorskip("torch")
runner = CliRunner()
TINY = ["--latent-dim", "6", "--sensitive-dim", "2", "--hidden", "32", "--epochs", "2",
        "--batch-size", "64"]
LABELS = ["--label", "identity", "--label", "expression", "--label", "environment"]


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture()
def tables(tmp_path):
    """An auxiliary and an owner table with disjoint identities."""
    t = make_biometric(n_identities=8, records_per_identity=25, n_features=32, random_state=2)
    ids = t.labels["identity"].isin(sorted(t.labels["identity"].unique())[:4]).to_numpy()
    aux, owner = tmp_path / "aux.csv", tmp_path / "owner.csv"
    t.subset(ids.nonzero()[0]).write(aux)
    t.subset((~ids).nonzero()[0]).write(owner)
    return aux, owner


def test_train_then_anonymize_with_the_decoupler(tables, tmp_path):
    aux, owner = tables
    dec = tmp_path / "decoupler.pt"
    res = _run("train-decoupler", aux, "-o", dec, "--sensitive", "gender", *LABELS, *TINY,
               "--seed", "0")
    assert res.exit_code == 0, res.output
    assert dec.is_file() and "aligner accuracy" in res.output
    out = tmp_path / "released.parquet"
    res = _run("anonymize", owner, "-o", out, "--sensitive", "gender", *LABELS,
               "--method", "sanitizer", "--decoupler", dec, "--sampler", "dp-sample",
               "--epsilon", "1.0")
    assert res.exit_code == 0, res.output
    released = FeatureTable.read(out)
    assert released.X.shape == (100, 32)
    assert "gender" not in released.labels.columns
    manifest = json.loads((tmp_path / "released.parquet.manifest.json").read_text())
    privacy = manifest["params"]["privacy"]
    assert privacy["epsilon"] == 1.0
    assert privacy["split"]["mean_and_class_sizes"] == 0.3
    assert "not the whole record" in privacy["protects"]
    assert manifest["params"]["decoupler"] == "decoupler.pt"
    assert "loaded" in manifest["params"]["decoupler_training"]
    assert "seed" not in json.dumps(manifest).lower()


def test_decoupler_for_other_labels_or_features_is_one_clear_line(tables, tmp_path):
    aux, owner = tables
    dec = tmp_path / "decoupler.pt"
    assert _run("train-decoupler", aux, "-o", dec, "--sensitive", "gender", *LABELS,
                *TINY).exit_code == 0
    res = _run("anonymize", owner, "-o", tmp_path / "r.csv", "--sensitive", "identity",
               "--label", "gender", "--label", "expression", "--label", "environment",
               "--method", "sanitizer", "--decoupler", dec)
    assert res.exit_code == 2, res.output
    assert "isolate 'gender', not 'identity'" in res.output
    assert "Traceback" not in res.output
    narrow = tmp_path / "narrow.csv"
    t = FeatureTable.read(owner, label_columns=["identity", "gender", "expression",
                                                "environment"])
    FeatureTable(t.X[:, :20], t.labels).write(narrow)
    res = _run("anonymize", narrow, "-o", tmp_path / "r2.csv", "--sensitive", "gender",
               *LABELS, "--method", "sanitizer", "--decoupler", dec)
    assert res.exit_code == 2 and "trained on 32 features" in res.output
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "r2.csv").exists()
    res = _run("anonymize", owner, "-o", tmp_path / "r3.csv", "--sensitive", "gender",
               *LABELS, "--method", "sanitizer", "--decoupler", tmp_path / "none.pt")
    assert res.exit_code == 2 and "not found" in res.output


def test_evaluate_trains_the_decoupler_on_the_training_split(tables, tmp_path):
    aux, _ = tables
    res = _run("evaluate", aux, "--out", tmp_path / "rep", "--interest", "expression",
               "--sensitive", "gender", "--label", "identity", "--label", "environment",
               "--method", "sanitizer", "--sampler", "dp-obfuscate", "--epsilon", "2",
               "--models", "knn", "--param", "epochs=2", "--param", "latent_dim=6",
               "--param", "sensitive_dim=2", "--param", "hidden=32")
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    params = report["params"]["anonymizer"]
    assert params["sampler"] == "dp-obfuscate"
    assert params["privacy"]["epsilon"] == 2.0
    assert "training split" in params["decoupler_training"]


def test_bad_sanitizer_options_are_user_errors(tables, tmp_path):
    aux, _ = tables
    res = _run("train-decoupler", aux, "-o", tmp_path / "d.pt", "--sensitive", "gender",
               *LABELS, "--architecture", "conv")
    assert res.exit_code == 2 and "image_shape" in res.output
    res = _run("train-decoupler", aux, "-o", aux, "--sensitive", "gender", *LABELS)
    assert res.exit_code == 2 and "is the input file" in res.output
    res = _run("evaluate", aux, "--out", tmp_path / "rep", "--interest", "expression",
               "--sensitive", "gender", *LABELS[:2], "--label", "environment",
               "--method", "sanitizer", "--sampler", "laplace")
    assert res.exit_code == 2 and "sampler='laplace' is unknown" in res.output
