"""A risk ``bioanon audit`` cannot show at these sizes is "not showable", never met; but when
its estimate is already above the target, the verdict says so (the brief: a risk the table
cannot show never hides an estimate above its target): in the verdict line, in
``report.json`` (``verdict.above_target``, ``verdict.words``) and on report.html's first
screen."""

from __future__ import annotations

import json
import math

import numpy as np
from typer.testing import CliRunner

from bioanon.auditing.risks import above_target, above_target_words
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.metrics.results import INCONCLUSIVE, RiskResult


def _risk(level: str, value: float, ci: tuple[float, float], target: float,
          status: str) -> RiskResult:
    return RiskResult("membership", level, "advantage", value, ci, "nearest released", 0.0,
                      "no signal (advantage 0)", target, status)


def test_only_an_inconclusive_estimate_above_its_target_is_named():
    risks = [_risk("identity", 0.30, (0.13, 0.47), 0.14, INCONCLUSIVE),   # named
             _risk("record", 0.05, (-0.10, 0.20), 0.10, INCONCLUSIVE),    # within: not named
             _risk("group", math.nan, (math.nan, math.nan), 0.10, INCONCLUSIVE),  # unmeasured
             _risk("record", 0.40, (0.30, 0.50), 0.10, "not met")]        # its own status
    above = above_target(risks)
    assert [x["name"] for x in above] == ["identity-membership"]
    words = above_target_words(above)
    assert words.startswith("estimate above its target")
    assert "identity-membership +0.300 [+0.130, +0.470] > 0.14" in words
    assert above_target_words([]) == ""
    two = above_target_words(above * 2)
    assert two.startswith("2 estimates above their targets")


def test_the_audit_of_a_three_record_release_names_the_estimate_it_cannot_show(tmp_path):
    """Three noisy copies of members: the record game is too small to decide, and record
    membership reads above its target anyway."""
    t = make_biometric(n_identities=12, records_per_identity=20, n_features=32,
                       random_state=0)
    frame = t.to_frame()
    first = frame.groupby("identity").cumcount().to_numpy() < 10
    members, holdout = frame[first], frame[~first]
    feats = [c for c in frame.columns if c.startswith("f")]
    rng = np.random.default_rng(1)
    released = members[feats + ["expression"]].iloc[:3].copy()
    released[feats] = released[feats] + rng.normal(0, 1.0, size=(3, len(feats)))
    for name, part in (("in", members), ("hold", holdout), ("rel", released)):
        part.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "report"
    res = CliRunner().invoke(app, [
        "audit", str(tmp_path / "in.csv"), str(tmp_path / "rel.csv"),
        "--control", str(tmp_path / "hold.csv"), "--interest", "expression",
        "--sensitive", "identity", "--seed", "0", "-o", str(out), "-q"])
    assert res.exit_code == 1, res.output
    doc = json.loads((out / "report.json").read_text())
    verdict = doc["verdict"]
    assert verdict["status"] == "not showable at this size", verdict
    over = {r["name"] for r in doc["risks"]
            if r["status"] == INCONCLUSIVE and r["value"] is not None
            and r["value"] > r["target"]}
    assert over, doc["risks"]  # the case this test is made of
    assert {x["name"] for x in verdict["above_target"]} == over
    line = next(x for x in res.output.splitlines() if x.startswith("verdict at level"))
    assert "above its target" in line or "above their targets" in line, line
    assert all(name in res.output for name in over)
    html = (out / "report.html").read_text()
    assert "Not showable is not safe" in html
