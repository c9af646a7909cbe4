"""Parameter sweeps: every setting judged by its worst case; the recommendation meets the target."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable
from bioanon.tuning.grid_search import parse_grid, sweep

FAST = {"models": ["knn"], "attackers": ["naive", "parrot", "linkage"]}


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=8, records_per_identity=30, n_features=32,
                          random_state=5)


def test_parse_grid_types_and_errors():
    assert parse_grid(["g=4,8", "w=1.5", "relevance=mutual_info"]) == {
        "g": [4, 8], "w": [1.5], "relevance": ["mutual_info"]}
    with pytest.raises(BioanonError, match="KEY=V1,V2"):
        parse_grid(["g"])
    # a value lost between commas is said, not dropped (g=8,,16 was read as g=8,16)
    for typo in ("g=8,,16", "g=8,16,", "g=,8"):
        with pytest.raises(BioanonError, match="has an empty value"):
            parse_grid([typo])
        with pytest.raises(BioanonError, match="has an empty value"):
            parse_grid([typo], SelectiveMeanAnonymizer)


def test_sweep_ranks_settings_recommends_by_the_verdict_rule_and_confirms(table):
    base = SelectiveMeanAnonymizer("expression", r_p=0.0, random_state=0)
    res = sweep(table, base, {"g": [2, 4, 12], "t": [1.0]}, "expression", "identity",
                target_advantage=0.25, **FAST)
    assert len(res.rows) == 3
    by_g = {r["params"]["g"]: r for r in res.rows}
    # g=2 mixes each record with one donor: the worst case is well above g=12's
    assert by_g[2]["worst_case"] > by_g[12]["worst_case"] + 0.1
    assert not by_g[2]["met"]
    assert res.recommended is not None
    rec = res.rows[res.recommended]
    assert rec["met"] and rec["advantage_ci"][1] <= 0.25  # the upper bound, not the point
    assert all(r["cas"] <= rec["cas"] for r in res.rows if r["met"])
    # confirmed on a fresh split and seed; both figures are kept
    conf = res.confirmation
    assert conf is not None and conf["seed"] != 0
    assert {"met", "worst_case", "utility", "advantage"} <= set(conf)
    doc = res.to_dict()
    assert doc["recommended"]["worst_case"] == rec["worst_case"]
    assert doc["confirmation"]["worst_case"]["accuracy"] == conf["worst_case"]["accuracy"]


def test_a_no_op_setting_in_the_grid_is_refused_before_any_work(table):
    calls = []
    with pytest.raises(BioanonError, match="^g=1 is out of range; use an integer >= 2"):
        sweep(table, SelectiveMeanAnonymizer("expression", r_p=0.0), {"g": [4, 1]},
              "expression", "identity", progress=lambda *a: calls.append(a), **FAST)
    assert calls == []


def test_grid_values_are_converted_by_the_declared_constraints():
    from bioanon.anonymize import SelectiveMeanAnonymizer as SM

    assert parse_grid(["g=16,32", "include_self=true,false"], SM) == {
        "g": [16, 32], "include_self": [True, False]}
    with pytest.raises(BioanonError, match="^g='abc' is not valid; use an integer >= 2"):
        parse_grid(["g=abc"], SM)


def test_unsupported_settings_are_skipped_not_fatal(table):
    base = SelectiveMeanAnonymizer("expression", r_p=0.0, random_state=0)
    res = sweep(table, base, {"g": [4, 500]}, "expression", "identity", **FAST)
    assert [r["params"]["g"] for r in res.rows] == [4]
    assert res.skipped and "needs" in res.skipped[0]["reason"]


def test_unknown_parameter_is_one_line(table):
    with pytest.raises(BioanonError, match="did you mean 'r_p'"):
        sweep(table, SelectiveMeanAnonymizer("expression"), {"rp": [0.1]}, "expression",
              "identity", **FAST)


def test_tune_command_writes_json_and_plot(table, tmp_path):
    src = tmp_path / "t.parquet"
    table.write(src)
    runner = CliRunner()
    res = runner.invoke(app, ["tune", str(src), "--interest", "expression", "--sensitive",
                              "identity", "--grid", "g=4,16", "--rp", "0", "--models", "knn",
                              "--attackers", "naive,parrot", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "o" / "tune.json").read_text())
    assert len(doc["rows"]) == 2 and "random_state" not in json.dumps(doc)
    assert (tmp_path / "o" / "tune.png").stat().st_size > 1000
    bad = runner.invoke(app, ["tune", str(src), "--interest", "expression", "--sensitive",
                              "identity", "--grid", "gg=4", "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "no parameter 'gg'" in bad.output
    assert not (tmp_path / "o2").exists()


def test_a_parameter_the_method_needs_may_come_from_the_grid_alone(table, tmp_path):
    """``noise`` needs sigma: swept by the grid, it needs no fixed value beside it, and each
    row is judged at its own sigma; a bad swept value is named as such."""
    src = tmp_path / "t.parquet"
    table.write(src)
    runner = CliRunner()
    res = runner.invoke(app, ["tune", str(src), "--interest", "expression", "--sensitive",
                              "identity", "--method", "noise", "--grid", "sigma=0.5,4",
                              "--models", "knn", "--attackers", "naive,parrot",
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    rows = json.loads((tmp_path / "o" / "tune.json").read_text())["rows"]
    assert [r["params"]["sigma"] for r in rows] == [0.5, 4.0]
    assert rows[0]["cas"] >= rows[1]["cas"]  # more noise keeps no more
    bad = runner.invoke(app, ["tune", str(src), "--interest", "expression", "--sensitive",
                              "identity", "--method", "noise", "--grid", "sigma=-1,2",
                              "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "sigma=-1.0 is out of range" in bad.output
    assert not (tmp_path / "o2").exists()


def test_a_skipped_grid_point_names_the_command_line_s_flag(table, tmp_path):
    """A grid point the table cannot take is skipped with its reason; on the command line the
    reason names the flag (``--allow-replacement``), not the library's
    ``allow_replacement=True``, which tune.json keeps as the parameter's name."""
    src = tmp_path / "t.parquet"
    table.write(src)
    res = CliRunner().invoke(app, ["tune", str(src), "--interest", "expression", "--sensitive",
                                   "identity", "--grid", "g=4,1000", "--rp", "0", "--models",
                                   "knn", "--attackers", "naive,parrot", "--out",
                                   str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "skipped {'g': 1000}" in said and "(--allow-replacement)" in said, said
    assert "allow_replacement=True" not in said
    skipped = json.loads((tmp_path / "o" / "tune.json").read_text())["skipped"]
    assert [s["parameter"] for s in skipped] == ["allow_replacement"]


def test_an_empty_group_value_is_refused_before_any_setting_runs(table, monkeypatch):
    labels = table.labels.copy()
    labels["session"] = ["a", "b"] * (table.n_records // 2)
    labels.loc[3, "session"] = None
    t = FeatureTable(table.X, labels, table.feature_names)
    ran = []
    monkeypatch.setattr("bioanon.tuning.grid_search.evaluate",
                        lambda *a, **k: ran.append(1))
    with pytest.raises(BioanonError, match="label column 'session' has 1 empty value"):
        sweep(t, SelectiveMeanAnonymizer("expression", r_p=0.1), {"g": [2, 4]},
              "expression", "identity", group="session", **FAST)
    assert not ran  # it was "no setting of the grid could be evaluated", after every one

