"""Which consumers rank a search's tuning split: the linear ranking panel where it learns the
interest as well as a forest on clear records, the forest where it does not (a table whose
classes no hyperplane separates)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bioanon.certification.search import search
from bioanon.certification.search.ranking import TOLERANCE, ranking_options
from bioanon.datasets import make_biometric
from bioanon.evaluation.options import EvaluationOptions
from bioanon.table import FeatureTable


def _rings(n_people: int = 40, per: int = 15, seed: int = 0) -> FeatureTable:
    """Two classes no linear model tells apart: inside or outside a sphere."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_people * per, 8)).astype(np.float32)
    inside = np.linalg.norm(X, axis=1) < np.sqrt(8 - 0.7)
    labels = pd.DataFrame({"ring": np.where(inside, "in", "out"),
                           "person": np.repeat([f"p{i}" for i in range(n_people)], per)})
    return FeatureTable(X, labels, [f"f{i}" for i in range(8)])


def test_linear_consumers_rank_where_they_learn_as_well_as_a_forest() -> None:
    t = make_biometric(n_identities=20, records_per_identity=20, n_features=32,
                       random_state=0)
    opts, why = ranking_options(t, "expression", EvaluationOptions.of(), seed=0)
    assert opts.consumer_panel == "ranking" and why is not None
    assert max(why["linear"].values()) >= why["forest"] - TOLERANCE
    assert why["ranks_by"] == "ranking panel"


def test_the_forest_ranks_where_no_linear_consumer_learns_the_interest() -> None:
    t = _rings()
    opts, why = ranking_options(t, "ring", EvaluationOptions.of(), seed=0)
    assert why is not None and why["ranks_by"] == "forest"
    assert max(why["linear"].values()) < why["forest"] - TOLERANCE
    assert opts.consumer_panel == "off" and opts.utility_model == "forest"
    # options that ask for no ranking panel are not checked
    for panel in ("always", "off"):
        mine, none = ranking_options(t, "ring", EvaluationOptions.of(consumer_panel=panel), 0)
        assert none is None and mine.consumer_panel == panel


def test_a_search_says_what_ranked_its_settings() -> None:
    t = _rings()
    why = "a test of the ranking panel"
    res = search(t, "ring", "person", methods=["noise"], models=["knn"],
                 attackers="naive", n_jobs=1, budget_minutes=None, level=0.99,
                 target_advantage=0.9, random_state=0,
                 accept_risks={"identity-membership": why, "identity-inference": why})
    assert res.ranking is not None and res.ranking["ranks_by"] == "forest"
    assert res.to_dict()["ranking"] == res.ranking
    # the rows' clear figure is the forest's (it learns the rings), well above the half a
    # linear model gets on them
    assert res.rows and all(r["clear"] >= 0.7 for r in res.rows)


def test_a_worker_s_judge_runs_one_job() -> None:
    """Stage 1's worker processes get the judge with one job: the tuning options the
    ranking check chose follow it (each worker would otherwise fit on every core)."""
    from dataclasses import replace

    from bioanon.certification.search.judging import Judge

    t = make_biometric(n_identities=8, records_per_identity=20, n_features=32,
                       random_state=1)
    opts = EvaluationOptions.of(n_jobs=-1)
    tuning, why = ranking_options(t, "expression", opts, seed=0)
    judge = Judge(t, "expression", "identity", {}, opts, None, 0, tuning_options=tuning,
                  ranking=why)
    assert judge.for_tuning.consumer_panel == "ranking" and judge.for_tuning.n_jobs == -1
    worker = replace(judge, options=replace(opts, n_jobs=1))
    assert worker.for_tuning.consumer_panel == "ranking" and worker.for_tuning.n_jobs == 1


def test_a_sweep_ranks_its_points_as_the_search_ranks_its_settings() -> None:
    """``bioanon tune``'s points: the ranking panel's pick where the linear consumers learn
    the interest (the search's rule), the forest where they do not; said in the summary."""
    from bioanon.anonymize import GaussianNoiseAnonymizer
    from bioanon.tuning.grid_search import sweep

    kw = {"models": ["knn"], "attackers": ["naive"], "random_state": 0}
    t = make_biometric(n_identities=20, records_per_identity=20, n_features=32,
                       random_state=0)
    gauss = sweep(t, GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "expression", "identity", **kw)
    assert gauss.ranking is not None and gauss.ranking["ranks_by"] == "ranking panel"
    assert "ranking panel" in gauss.summary("noise")["cas_by"]
    rings = sweep(_rings(), GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "ring", "person", **kw)
    assert rings.ranking is not None and rings.ranking["ranks_by"] == "forest"
    assert rings.to_dict()["cas_by"].startswith("the forest")
    # the forest learns the rings on a lightly noised release; a linear pick would sit near
    # the half a hyperplane gets
    assert rings.rows[0]["cas"] >= 0.7
    # a mode the user named is kept: no check
    off = sweep(t, GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "expression", "identity",
                consumer_panel="off", **kw)
    assert off.ranking is None and off.summary()["cas_by"] == "the utility model"
