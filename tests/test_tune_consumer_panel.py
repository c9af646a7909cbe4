"""``tune`` ranks its points by the consumer's panel asked for (``--consumer-panel``, library
``consumer_panel=``), as ``evaluate`` and ``release`` do: ``ranking`` is the pick between the
linear consumers on every point, never the forest alone (it once turned the panel off, so the
points' CAS was the utility model's forest, the slower and differently ranked view)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.tuning.grid_search import sweep

FAST = {"models": ["knn"], "attackers": ["naive", "parrot"], "random_state": 0}


def _sweep(table, panel: str):
    return sweep(table, SelectiveMeanAnonymizer("expression", r_p=0.1), {"g": [4, 8]},
                 "expression", "identity", consumer_panel=panel, **FAST)


def test_ranking_ranks_every_point_by_the_linear_consumers_pick():
    t = make_biometric(n_identities=8, records_per_identity=30, n_features=32, random_state=0)
    asked = _sweep(t, "ranking")
    assert asked.ranking == {"ranks_by": "ranking panel", "asked": True}
    assert "between shrunk LDA and logistic regression" in asked.ranked_by()
    # where the default's check ranks by the ranking panel too, the points read the same
    default = _sweep(t, "final")
    assert default.ranking is not None and default.ranking["ranks_by"] == "ranking panel"
    assert [(r["cas"], r["U"]) for r in asked.rows] == [(r["cas"], r["U"]) for r in default.rows]
    forest = _sweep(t, "forest-ranking")
    assert forest.ranking == {"ranks_by": "forest panel", "asked": True}
    assert forest.ranked_by().endswith("the forest out of bag; the panel asked for)")


def test_tune_takes_the_consumer_panel_and_says_which_ranked(tmp_path):
    t = make_biometric(n_identities=8, records_per_identity=30, n_features=32, random_state=0)
    src = tmp_path / "t.csv"
    t.to_frame().to_csv(src, index=False)
    out = tmp_path / "tune"
    res = CliRunner().invoke(app, [
        "tune", str(src), "--interest", "expression", "--sensitive", "identity", "--label",
        "gender", "--label", "environment", "--method", "selective-mean", "--grid", "g=4,8",
        "--models", "knn", "--attackers", "naive,parrot", "--consumer-panel", "ranking",
        "--out", str(out), "--seed", "0"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "tune.json").read_text())
    assert doc["ranking"] == {"ranks_by": "ranking panel", "asked": True}
    assert "the ranking panel" in doc["summary"]["cas_by"]
