"""Which consumers rank a search's tuning split: the linear ranking panel where it learns the
interest as well as a forest on clear records, the pick among the forest and it where it does
not (a table whose classes no hyperplane separates)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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


def test_the_forest_joins_where_no_linear_consumer_learns_the_interest() -> None:
    t = _rings()
    opts, why = ranking_options(t, "ring", EvaluationOptions.of(), seed=0)
    assert why is not None and why["ranks_by"] == "forest panel"
    assert max(why["linear"].values()) < why["forest"] - TOLERANCE
    # the forest that ranks is a smaller one (a proxy: the confirmation's is the consumer's),
    # and it is the utility views' model, so that its one fit serves both
    assert opts.consumer_panel == "forest-ranking" and opts.utility_model == "ranking_forest"
    assert opts.consumer_models() == ("ranking_forest", "lda", "logreg")
    from bioanon.attack.recognizers import make_recognizer
    assert (make_recognizer("ranking_forest", 0).n_estimators
            == make_recognizer("forest", 0).n_estimators // 2)
    # a utility model of the user's own is kept
    mine, _ = ranking_options(t, "ring", EvaluationOptions.of(utility_model="knn"), seed=0)
    assert mine.consumer_panel == "forest-ranking" and mine.utility_model == "knn"
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
    assert res.ranking is not None and res.ranking["ranks_by"] == "forest panel"
    assert res.to_dict()["ranking"] == res.ranking
    # the rows' clear figure is the clear pick's, the forest (it learns the rings), well
    # above the half a linear model gets on them
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
    the interest (the search's rule), the pick among the forest and them where they do not;
    said in the summary."""
    from bioanon.anonymize import GaussianNoiseAnonymizer
    from bioanon.tuning.grid_search import sweep

    kw = {"models": ["knn"], "attackers": ["naive"], "random_state": 0}
    t = make_biometric(n_identities=20, records_per_identity=20, n_features=32,
                       random_state=0)
    gauss = sweep(t, GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "expression", "identity", **kw)
    assert gauss.ranking is not None and gauss.ranking["ranks_by"] == "ranking panel"
    assert "ranking panel" in gauss.summary("noise")["cas_by"]
    rings = sweep(_rings(), GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "ring", "person", **kw)
    assert rings.ranking is not None and rings.ranking["ranks_by"] == "forest panel"
    assert rings.to_dict()["cas_by"].startswith("a forest or a linear consumer: the "
                                                "consumer's pick among a forest of half")
    # the forest learns the rings on a lightly noised release, and the pick (made on the
    # release) is the forest: a linear pick would sit near the half a hyperplane gets
    assert rings.rows[0]["cas"] >= 0.7
    # a mode the user named is kept: no check
    off = sweep(t, GaussianNoiseAnonymizer(), {"sigma": [0.5]}, "expression", "identity",
                consumer_panel="off", **kw)
    assert off.ranking is None and off.summary()["cas_by"] == "the utility model"


def test_under_the_forest_panel_a_release_linear_consumers_learn_better_ranks_by_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``forest-ranking``: the forest (the utility views' own fit, read out of bag, never
    fitted again) and the linear consumers; the pick is made on the release as the whole
    panel makes it. A release whose classes differ by a small shift spread over every
    feature (a forest's axis-aligned splits see little of it, LDA all of it) is ranked by
    the linear pick, not by the forest the search used to rank by alone."""
    from bioanon.anonymize import GaussianNoiseAnonymizer
    from bioanon.evaluation import Evaluation
    from bioanon.evaluation import consumer as consumer_mod

    rng = np.random.default_rng(5)
    n_people, per, d = 40, 12, 48
    y = rng.integers(0, 2, n_people * per)
    X = (rng.normal(size=(y.size, d)) + 0.35 * (2 * y[:, None] - 1)).astype(np.float32)
    labels = pd.DataFrame({"side": np.where(y == 1, "a", "b"),
                           "person": np.repeat([f"p{i}" for i in range(n_people)], per)})
    t = FeatureTable(X, labels, [f"f{i}" for i in range(d)])
    made: list[str] = []
    real = consumer_mod.make_recognizer
    monkeypatch.setattr(consumer_mod, "make_recognizer",
                        lambda model, seed: made.append(str(model)) or real(model, seed))
    ev = Evaluation(t, "side", "person", anonymizer=GaussianNoiseAnonymizer(sigma=0.3),
                    models=["knn"], attackers="naive", n_jobs=1, verification=False,
                    selection="none", consumer_panel="forest-ranking",
                    utility_model="ranking_forest", random_state=0
                    ).evaluate(recognition=False)
    panel = ev.utility_raw_["side"]["consumer"]
    rows = {m["model"]: m for m in panel["models"]}
    assert list(rows) == ["ranking_forest", "lda", "logreg"] and "ranking_forest" not in made
    assert "forest of half the trees and the linear consumers" in panel["rule"]
    # the linear consumers cross-validate clearly better on this release than the forest
    forest = rows["ranking_forest"]
    assert rows["lda"]["release_cv"]["value"] > forest["release_cv"]["ci"][1]
    assert panel["pick"] in ("lda", "logreg")
    assert ev.cas().value == rows[panel["pick"]]["release_to_clear"]["value"]
    assert ev.cas().value > forest["release_to_clear"]["value"]


def test_the_check_fits_the_linear_consumers_on_one_blas_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The linear consumers' folds run with one BLAS thread, as the judge runs its fits: on
    two BLAS threads of a 2-core machine SP-SW-HAR's logistic regression folds took 3.0 s
    instead of 0.24 s, and counted one record differently (1,148 right against 1,147)."""
    import contextlib

    import threadpoolctl

    from bioanon.evaluation import consumer as consumer_mod

    limits: list[int | None] = []
    real_limits, real_hits = threadpoolctl.threadpool_limits, consumer_mod.fold_hits

    @contextlib.contextmanager
    def watched(limits_arg=None, user_api=None):
        limits.append(limits_arg)
        with real_limits(limits=limits_arg, user_api=user_api):
            yield
        limits.pop()

    inside: list[list[int | None]] = []
    monkeypatch.setattr(threadpoolctl, "threadpool_limits",
                        lambda limits=None, user_api=None: watched(limits, user_api))
    monkeypatch.setattr(consumer_mod, "fold_hits",
                        lambda *a, **k: inside.append(list(limits)) or real_hits(*a, **k))
    ranking_options(_rings(), "ring", EvaluationOptions.of(), seed=0)
    assert inside and all(1 in seen for seen in inside)
