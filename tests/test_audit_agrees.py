"""``bioanon audit`` of a release that ``bioanon release`` certified agrees with its
certificate: the same risks judged, each risk's intervals overlapping, the same verdict.

One difference is by design (docs/audit.md, "An audit beside a certificate"): the release
drops the identity column and shuffles its rows, so an auditor outside the process cannot
know whose record each released row is and cannot measure record recognition; the
certificate can (the process knows). The audit says so ("not showable at this size") and
agrees once recognition is accepted by name on the certificate's word.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric

runner = CliRunner()
ROLES = ["--interest", "expression", "--sensitive", "identity"]
#: a level the sizes can show (120 people split in two): every row of both plans showable
#: (the release's recognition target is 0.1: at 60 people and 0.05 a leak-free release is
#: chosen with margin with chance 0.8 at best, so the release would refuse at most seeds)
LEVEL = ["--level", "0.5"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    """INPUT and HOLDOUT split by person; INPUT released and certified (a per-class
    Gaussian, one worker, a pinned seed); (folder, the release's report.json, manifest)."""
    d = tmp_path_factory.mktemp("agree")
    t = make_biometric(n_identities=120, records_per_identity=10, n_features=32,
                       random_state=0)
    ids = t.labels["identity"].astype(str).to_numpy()
    people = np.unique(ids)
    inp = np.isin(ids, people[np.random.default_rng(0).permutation(people.size)[:60]])
    t.subset(np.flatnonzero(inp)).write(d / "input.parquet")
    t.subset(np.flatnonzero(~inp)).write(d / "holdout.parquet")
    (d / "out").mkdir()
    res = runner.invoke(app, [
        "release", str(d / "input.parquet"), "-o", str(d / "out" / "rel.parquet"), *ROLES,
        "--identifying", "gender", "--identifying", "environment", "--methods", "synthetic",
        "--models", "knn", "--attackers", "naive", "--jobs", "1", "--seed", "1", *LEVEL,
        "--target-advantage", "0.1", "-q"])
    assert res.exit_code == 0, res.output
    report = json.loads((d / "out" / "rel.parquet.report" / "report.json").read_text())
    manifest = json.loads((d / "out" / "rel.parquet.manifest.json").read_text())
    return d, report, manifest


def _audit(d: Path, *extra: str) -> tuple[int, dict]:
    res = runner.invoke(app, ["audit", str(d / "input.parquet"),
                              str(d / "out" / "rel.parquet"), "--control",
                              str(d / "holdout.parquet"), *ROLES, *LEVEL, "--seed", "1",
                              "--json", "-q", *extra])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def test_the_audit_judges_the_certificates_risks_with_overlapping_intervals(certified):
    d, report, manifest = certified
    assert manifest["certified"] is True and report["verdict"]["met"]
    _, doc = _audit(d)
    cert = {r["name"]: r for r in report["verdict"]["risks"]}
    mine = {r["name"]: r for r in doc["risks"]}
    # the same risks (the audit adds the label join, which the release checks as a rule)
    assert set(cert) <= set(mine), (sorted(cert), sorted(mine))
    assert set(mine) - set(cert) == {"record-label-join"}
    measured = [n for n in cert if n != "record-recognition"]
    for name in measured:
        a, b = cert[name]["ci"], mine[name]["ci"]
        assert all(math.isfinite(x) for x in (*a, *b)), name
        assert a[0] <= b[1] and b[0] <= a[1], (name, a, b)  # the intervals overlap
        assert cert[name]["target"] == mine[name]["target"], name
        assert mine[name]["status"] == cert[name]["status"] == "met", name
    # recognition: the certificate measured it; the audit cannot (no identity column in
    # the release, rows shuffled) and says so, never "met"
    assert math.isfinite(cert["record-recognition"]["value"])
    assert mine["record-recognition"]["status"] == "inconclusive at this size"
    assert "no 'identity' column" in mine["record-recognition"]["reason"]
    assert doc["verdict"]["status"] == "not showable at this size"


def test_the_same_verdict_once_recognition_is_taken_on_the_certificates_word(certified):
    d, report, _ = certified
    code, doc = _audit(d, "--accept-risk", "record-recognition", "--reason",
                       "judged by the release's own certificate")
    assert doc["verdict"]["met"] is report["verdict"]["met"] is True
    assert code == 0
    assert doc["verdict"]["risks"]["record-recognition"] == "accepted"
