"""A refused ``release`` writes the closest setting's report, marked NOT certified, and no
table or manifest; a previous release there stays until a new one replaces it (the report then
goes beside it, to ``OUTPUT.refused-report/``)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.release_unit import (
    refused_report_path,
    report_path,
    verify_release,
    write_unit,
)


def test_a_refusal_writes_its_report_alone(tmp_path):
    src = tmp_path / "t.parquet"
    make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                   random_state=0).write(src)
    out = tmp_path / "rel.parquet"
    write_unit(out, table=lambda tmp: tmp.write_bytes(b"an older release") and None,
               manifest={"certified": True},
               report=lambda d: (d / "report.json").write_text("{}"))
    assert verify_release(out)
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(out), "--interest", "expression", "--sensitive",
        "identity", "--identifying", "gender", "--identifying", "environment",
        "--methods", "noise", "--models", "knn", "--attackers", "naive", "--jobs", "1",
        "--seed", "1", "--target-advantage", "0.1", "--level", "0.99",
        "--accept-risk", "identity-membership", "--reason", "10 people",  # too few to show
        "--accept-risk", "identity-inference", "--reason", "10 people"])
    assert res.exit_code == 1, res.output
    said = " ".join(res.output.split())
    assert f"report (NOT certified) is in {refused_report_path(out)}/" in said
    assert f"the previous release at {out} stays as it was" in said
    assert verify_release(out) and out.read_bytes() == b"an older release"
    assert (report_path(out) / "report.json").read_text() == "{}"  # the release's own
    refused = refused_report_path(out)
    assert sorted(p.name for p in refused.iterdir()) == [  # the marker: bioanon wrote it
        ".bioanon-report", "report.html", "report.json", "search.png"]
    doc = json.loads((refused / "report.json").read_text())
    assert doc["release"]["certified"] is False and doc["release"]["written"] is False
    assert doc["release"]["setting"].startswith("noise(")
    page = (refused / "report.html").read_text()
    assert page.index("NOT certified — no release was written") < page.index("id='verdict'")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "rel.parquet", "rel.parquet.manifest.json", "rel.parquet.refused-report",
        "rel.parquet.report", "t.parquet"]
