"""One flag vocabulary: -o/--out everywhere (old spellings hidden), choices and readable
metavars in help, --json summaries, a missing input reported first."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from bioanon.anonymize.registry import methods
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.report.summary import SUMMARY_KEYS

runner = CliRunner()
WIDE = {"COLUMNS": "200", "TERMINAL_WIDTH": "200"}
WRITERS = ["anonymize", "extract", "evaluate", "tune", "tune-k", "preview", "train-decoupler",
           "demo", "release"]
#: every command that reads an input, with the least arguments that name one
READERS = {
    "anonymize": ["anonymize", "nothere.parquet"],
    "release": ["release", "nothere.parquet"],
    "evaluate": ["evaluate", "nothere.parquet"],
    "tune": ["tune", "nothere.parquet"],
    "tune-k": ["tune-k", "nothere.parquet"],
    "train-decoupler": ["train-decoupler", "nothere.parquet"],
    "preview": ["preview", "nothere.parquet", "nothere2.parquet"],
    "extract": ["extract", "voice", "nothere"],
}
FAST = ["--models", "knn", "--attackers", "naive,parrot", "--selection", "none", "--jobs", "1"]
ROLES = ["--interest", "expression", "--sensitive", "identity", "--label", "gender",
         "--label", "environment"]


def _command(name: str):
    group = typer.main.get_command(app)
    with group.make_context("bioanon", [name], resilient_parsing=True) as ctx:
        return group.get_command(ctx, name)


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "tiny.csv"
    make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                   random_state=3).write(path)
    return path


@pytest.mark.parametrize("name", WRITERS)
def test_every_writer_takes_o_out_and_shows_no_old_spelling(name):
    cmd = _command(name)
    outs = [p for p in cmd.params if "--out" in p.opts]
    assert len(outs) == 1 and "-o" in outs[0].opts, [p.opts for p in cmd.params]
    res = runner.invoke(app, [name, "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    assert "-o, --out" in res.output  # plain help: short and long form side by side
    assert "--output" not in res.output  # the old spelling is hidden
    for unreadable in ("<str>", "<bool>", "<int>", "<path>", "<list[str]>"):
        assert unreadable not in res.output, (name, unreadable)


def test_method_help_lists_every_registered_method():
    for name in ("anonymize", "evaluate", "tune"):
        (method,) = [p for p in _command(name).params if p.name == "method"]
        for registered in methods():
            assert registered in method.help, (name, registered)


def test_boolean_flags_have_no_forms():
    opts = {o for p in _command("evaluate").params for o in p.secondary_opts}
    assert {"--no-allow-replacement", "--no-preview"} <= opts
    assert "--no-force" in {o for p in _command("anonymize").params for o in p.secondary_opts}


def test_old_and_new_output_spellings_both_write(tiny_csv, tmp_path):
    for flag in ("--output", "-o", "--out"):
        out = tmp_path / f"rel{flag.strip('-')}.csv"
        res = runner.invoke(app, ["anonymize", str(tiny_csv), *ROLES, "--g", "4", flag,
                                  str(out)])
        assert res.exit_code == 0, (flag, res.output)
        assert len(pd.read_csv(out)) == 120


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_missing_input_is_reported_first(name):
    res = runner.invoke(app, READERS[name])
    assert res.exit_code == 2
    assert res.output.startswith("error: input") and "does not exist" in res.output, res.output
    assert "Missing option" not in res.output and "--interest" not in res.output
    assert "Traceback" not in res.output


def test_a_missing_input_comes_before_a_bad_option(tmp_path):
    res = runner.invoke(app, ["evaluate", "nothere.parquet", "--sensitive", "identity",
                              "-o", str(tmp_path / "r"), "--method", "no-such-method"])
    assert res.exit_code == 2 and "does not exist" in res.output, res.output
    assert "no-such-method" not in res.output


def _json_run(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res  # the whole of stdout is one JSON document


def test_evaluate_json_prints_report_summary(tiny_csv, tmp_path):
    out = tmp_path / "r"
    doc, res = _json_run(["evaluate", str(tiny_csv), *ROLES, "--g", "4", "-o", str(out),
                          *FAST, "--json", "--seed", "7"])
    assert tuple(doc) == SUMMARY_KEYS
    assert doc == json.loads((out / "report.json").read_text())["summary"]
    assert doc["interest"] == "expression" and doc["sensitive"] == "identity"
    assert 0 <= doc["worst_case"]["accuracy"] <= 1 and len(doc["worst_case"]["ci"]) == 2
    assert {a["mode"] for a in doc["attacks"]} == {"naive", "parrot"}
    assert isinstance(doc["verdict"]["met"], bool)
    assert str(tmp_path) not in res.stdout and "seed" not in res.stdout  # no paths, no seeds
    assert "wrote" in res.stderr  # notes go to stderr


def test_tune_json_prints_the_sweep_summary(tiny_csv, tmp_path, monkeypatch):
    out = tmp_path / "t"
    doc, res = _json_run(["tune", str(tiny_csv), *ROLES, "--grid", "g=4,8", "-o", str(out),
                          "--models", "knn", "--attackers", "naive", "--json"])
    assert set(doc) == {"method", "chance", "baseline", "target_advantage", "cas_by",
                        "settings", "recommended", "skipped", "confirmation"}
    assert [s["params"] for s in doc["settings"]] == [{"g": 4}, {"g": 8}]
    assert doc == json.loads((out / "tune.json").read_text())["summary"]
    assert str(tmp_path) not in res.stdout
    for s in doc["settings"]:  # every rate with its 95% interval
        for rate in ("cas", "worst_case"):
            lo, hi = s[f"{rate}_ci"]
            assert lo <= s[rate] <= hi
    # the terminal table says the same intervals
    from rich.console import Console

    import bioanon.cli.tune as tune_cli

    wide = Console(record=True, width=200)
    monkeypatch.setattr(tune_cli, "console", wide)
    tune_cli.print_table(doc)
    text = wide.export_text()
    for s in doc["settings"]:
        for rate in ("cas", "worst_case"):
            lo, hi = s[f"{rate}_ci"]
            assert f"{s[rate]:.3f} [{lo:.3f}, {hi:.3f}]" in text


def test_tune_k_json_prints_the_k_summary(tiny_csv, tmp_path):
    doc, _ = _json_run(["tune-k", str(tiny_csv), "--sensitive", "identity", "--label",
                        "gender", "--label", "environment", "--label", "expression",
                        "-o", str(tmp_path / "k"), "--k-max", "4", "--json"])
    assert [r["k"] for r in doc["per_k"]] == [2, 3, 4]
    assert doc["recommended_k"] in (2, 3, 4)
    for r in doc["per_k"]:  # every rate with its 95% interval over the records
        for rate, ci in (("record_linkage_rate", "record_linkage_ci"),
                         ("identity_rank1_naive", "identity_rank1_ci")):
            lo, hi = r[ci]
            assert lo <= r[rate] <= hi and hi - lo < 1
