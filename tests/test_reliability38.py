"""Issue 38 (reliability, round five): each defect as a test that failed before its fix."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_setting_out_of_memory_is_skipped_with_its_reason(monkeypatch):
    """A setting whose model does not fit in memory (features × features on a wide table)
    is skipped by the search and named; the other settings are still judged."""
    from bioanon.anonymize.baselines import GaussianNoiseAnonymizer
    from bioanon.certification.search import search

    apply = GaussianNoiseAnonymizer._apply

    def heavy(self, X, rng):
        if float(self.sigma) == 3.0:
            raise MemoryError
        return apply(self, X, rng)

    monkeypatch.setattr(GaussianNoiseAnonymizer, "_apply", heavy)
    t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
    res = search(t, "expression", "identity", methods=["noise"], target_advantage=0.5,
                 models=["knn"], attackers="naive,parrot", random_state=0, n_jobs=1)
    assert [r["setting"] for r in res.rows] == ["noise(sigma=1, scale=std)"]
    skipped = [s for s in res.skipped if s.get("setting") == "noise(sigma=3, scale=std)"]
    assert skipped and "out of memory on 32 features" in skipped[0]["reason"]


def test_public_data_holding_a_numeric_label_of_the_input_is_accepted():
    """A public table read on its own holds the input's numeric label ('digit', 'cls') as a
    feature column: it is a label of the input, not a feature the input lacks. A real extra
    feature column is still refused (in memory and on the streamed path)."""
    import numpy as np
    import pandas as pd

    from bioanon.certification.dp_budget import DPBudget
    from bioanon.certification.streamed import _check_public_columns
    from bioanon.errors import BioanonError
    from bioanon.table import FeatureTable

    t = make_biometric(n_identities=12, records_per_identity=20, n_features=32, random_state=0)
    ids = t.labels["identity"].to_numpy()
    private = t.subset(np.flatnonzero(ids != ids[0]))
    pub = t.subset(np.flatnonzero(ids == ids[0]))
    digit = (np.arange(pub.n_records) % 10).astype(np.float32)
    with_label = FeatureTable(np.c_[pub.X, digit], pub.labels.drop(columns=["expression"]),
                              [*pub.feature_names, "expression"])
    got = DPBudget(epsilon=1.0, public=with_label).public_X(private)
    np.testing.assert_array_equal(got, pub.X.astype(np.float64))
    _check_public_columns(with_label, private.feature_names, list(private.labels.columns))
    extra = FeatureTable(np.c_[pub.X, digit], pd.DataFrame(index=range(pub.n_records)),
                         [*pub.feature_names, "f_extra"])
    with pytest.raises(BioanonError, match=r"has 1 feature column\(s\) the input lacks"):
        DPBudget(epsilon=1.0, public=extra).public_X(private)
    with pytest.raises(BioanonError, match=r"has 1 feature column\(s\) the input lacks"):
        _check_public_columns(extra, private.feature_names, list(private.labels.columns))


def test_a_sigterm_held_during_the_switch_says_the_release_was_written(tmp_path,
                                                                        monkeypatch):
    """SIGTERM in the middle of the switch is handled once the new unit is whole: the line
    says so instead of "no output was written"."""
    import os
    import signal

    import bioanon.release_unit as ru
    from bioanon.release_unit import verify_release

    src = tmp_path / "in.parquet"
    make_biometric(n_identities=4, records_per_identity=16, n_features=32,
                   random_state=0).write(src)
    out = tmp_path / "rel.parquet"

    def term(step):
        if step == "report-replaced":
            os.kill(os.getpid(), signal.SIGTERM)  # held until the switch is complete

    monkeypatch.setattr(ru, "_step_hook", term)
    res = _run("anonymize", src, "-o", out, "--interest", "expression", "--sensitive",
               "identity", "--identifying", "gender", "--identifying", "environment",
               "--method", "noise", "--param", "sigma=1")
    assert res.exit_code == 130, res.output
    assert f"interrupted after {out} was written whole" in " ".join(res.output.split())
    assert verify_release(out)


def test_bioanon_without_arguments_shows_its_help_not_an_error_line():
    res = CliRunner().invoke(app, [], prog_name="bioanon")
    assert res.exit_code == 2  # click's status for a group typed without a command
    assert res.output.startswith("Usage: bioanon") and "Commands:" in res.output
    assert not [ln for ln in res.output.splitlines() if ln.startswith("error:")]


def test_the_command_list_fits_80_columns_without_clipping():
    from bioanon.cli.logs import SUMMARIES

    res = CliRunner().invoke(app, ["--help"], terminal_width=80, env={"COLUMNS": "80"})
    assert res.exit_code == 0
    listing = res.output.split("Commands:")[1].strip().splitlines()
    assert [ln.split()[0] for ln in listing] == list(SUMMARIES)  # one line each, in order
    assert all(len(ln) <= 80 and "..." not in ln for ln in listing), listing


def test_the_terminal_risk_table_is_one_line_per_risk_in_80_columns(monkeypatch):
    """Attackers named by a key in the table and listed in full below it (the table used to
    wrap each attacker over 5-10 lines)."""
    import io

    from rich.console import Console

    import bioanon.cli.common as common

    long = "nearest released | density ratio (DOMIAS-style, k=1) | tracing, best g=6"
    risks = [{"name": f"{lvl}-{risk}", "risk": risk, "level": lvl, "statistic": "advantage",
              "value": 0.1 * k, "ci": [0.0, 0.2 + 0.1 * k], "attacker": long if k else "naive",
              "baseline": 0.0, "baseline_name": "no signal", "target": 0.1,
              "status": "met" if k < 2 else "inconclusive at this size", "reason": "why",
              "extras": {"auc": 0.6, "auc_ci": [0.5, 0.7], "n_members": 60,
                         "n_nonmembers": 60, "unit": "records"}}
             for k, (lvl, risk) in enumerate([("record", "recognition"),
                                              ("record", "membership"),
                                              ("identity", "membership")])]
    out = io.StringIO()
    monkeypatch.setattr(common, "console", Console(file=out, width=80, markup=False))
    common.print_risks({"risks": risks})
    lines = out.getvalue().splitlines()
    assert all(len(ln) <= 80 for ln in lines)
    for r in risks:  # one line per risk, naming its attacker's key
        (line,) = [ln for ln in lines if ln.strip().startswith(f"{r['level']} {r['risk']} ")]
        assert line.split()[-1] in ("A1", "A2")
    assert any(ln.startswith("A2 nearest released | density ratio") for ln in lines)
    assert sum("identity membership: why" in ln for ln in lines) == 1


def test_a_bug_ends_in_one_line_not_a_traceback(monkeypatch, tmp_path):
    """Any exception that is not a user error: one 'error: internal error' line, exit 1,
    no traceback (with -v the traceback follows, for the report)."""
    import bioanon.datasets.catalog as catalog

    def broken(root=None):
        raise TypeError("affine_transform(): incompatible function arguments")

    monkeypatch.setattr(catalog, "list_datasets", broken)
    res = _run("datasets", "--home", tmp_path)
    assert res.exit_code == 1 and "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "internal error (TypeError: affine_transform()" in lines[0]
    assert "bug in bioanon" in lines[0]
    res = _run("-v", "datasets", "--home", tmp_path)
    assert res.exit_code == 1 and "Traceback" in res.output


def test_charts_draw_values_that_are_not_numbers_and_a_failed_chart_is_a_note(monkeypatch):
    """Values that are not numbers (None, pandas NA, strings) reached matplotlib's C++
    transforms as object arrays and ended savefig in 'affine_transform(): incompatible
    function arguments': they are drawn as gaps now; and a chart that fails all the same
    leaves a note in report.html instead of losing the report."""
    import pandas as pd

    from bioanon.report import charts, html

    item = {"column": "digit", "chance": pd.NA, "clear": 0.9, "anonymized_to_clear": None,
            "anonymized": "0.5", "anonymized_to_anonymized": float("nan"), "n": 50,
            "ci": {"clear": [0.8, pd.NA]}}
    report = {"utility": {"interest": item, "additional": {}}, "dataset": {"n_test": 50}}
    assert charts.utility_chart(report).startswith(b"\x89PNG")
    attacks = [{"mode": "naive", "model": "knn", "accuracy": pd.NA, "ci": [None, 0.2]},
               {"mode": "parrot", "model": "knn", "accuracy": 0.4, "ci": [0.5, 0.3]}]
    report["privacy"] = {"attacks": attacks, "chance": None, "sensitive": "speaker",
                         "clear": [{"model": "knn", "accuracy": "x"}]}
    assert charts.attack_chart(report).startswith(b"\x89PNG")

    def broken(report):
        raise TypeError("affine_transform(): incompatible function arguments")

    monkeypatch.setattr(html, "utility_chart", broken)
    page = html.chart_img(html.utility_chart, report, "utility chart")
    assert "could not be drawn (TypeError)" in page


def test_an_extra_is_installed_from_this_checkout_by_the_python_that_runs_bioanon():
    """bioanon is installed from its checkout (make demo): the hint must install the extra
    from there, into the Python running bioanon, and parse as a shell command."""
    import shlex
    import sys
    from pathlib import Path

    from bioanon.errors import install_hint
    from bioanon.features.image import FACE_EXTRA

    root = Path(__file__).resolve().parents[1]
    words = shlex.split(FACE_EXTRA.split(": ", 1)[1])
    assert words == [sys.executable, "-m", "pip", "install", "-e", f"{root}[face]"]
    voice = shlex.split(install_hint("voice", then="--no-deps resemblyzer").split(": ", 1)[1])
    assert "&&" in voice and voice[-3:] == ["install", "--no-deps", "resemblyzer"]
