"""The consumer's panel: the pick made by cross-validation on the release alone, scored on
clear held-out records, against the clear data's own pick; where it runs (an evaluation, a
search's confirmation), and the ranking panel (the linear consumers) a search's tuning split
ranks its settings by."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.certification.search import search
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation import Evaluation
from bioanon.evaluation.consumer import CONSUMER_MODELS, consumer_panel, folds_for
from bioanon.evaluation.options import EvaluationOptions
from bioanon.report.build import build_report
from bioanon.report.html import consumer_section
from bioanon.table import FeatureTable

FAST = ("logreg", "lda", "knn")


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=8, records_per_identity=40, n_features=32,
                          random_state=3)


def _split(table: FeatureTable) -> tuple[np.ndarray, ...]:
    y = table.labels["expression"].to_numpy()
    rng = np.random.default_rng(0)
    order = rng.permutation(table.n_records)
    tr, te = order[:240], order[240:]
    return table.X[tr], y[tr], table.X[te], y[te]


def test_the_pick_reads_the_release_alone(table: FeatureTable) -> None:
    X, y, Xt, yt = _split(table)
    release = X + np.random.default_rng(1).normal(scale=2.0, size=X.shape).astype(np.float32)
    out = consumer_panel(X, y, release, Xt, yt, seed=0, models=FAST)
    # other clear records (training or held out) cannot change the release's pick
    other = consumer_panel(X[::-1].copy(), y, release, Xt[:40], yt[:40], seed=0, models=FAST)
    assert out["pick"] == other["pick"]
    rows = {m["model"]: m for m in out["models"]}
    # the pick: the first model in the panel's order not clearly below the best (within
    # the best's 95% interval); every model before it is clearly below
    for side, pick in (("release_cv", out["pick"]), ("clear_cv", out["clear_pick"])):
        best = max((m[side] for m in out["models"]), key=lambda c: c["value"])
        order = [m["model"] for m in out["models"]]
        assert rows[pick][side]["value"] >= best["ci"][0]
        assert all(rows[m][side]["value"] < best["ci"][0] for m in order[:order.index(pick)])
    cv = rows[out["pick"]]["release_cv"]  # every rate with its Wilson interval
    assert cv["ci"][0] <= cv["value"] <= cv["ci"][1] and cv["n"] == y.size
    # the headline is the pick's release -> clear score, the baseline the clear pick's
    assert out["cas"] == rows[out["pick"]]["release_to_clear"]
    assert out["clear"] == rows[out["clear_pick"]]["clear_to_clear"]
    lo, hi = out["cas"]["ci"]
    assert lo <= out["cas"]["value"] <= hi and out["cas"]["n"] == yt.size


def test_folds_follow_the_smallest_class() -> None:
    assert folds_for(np.repeat(["a", "b"], [10, 10])) == 3
    assert folds_for(np.repeat(["a", "b"], [2, 10])) == 2
    assert folds_for(np.repeat(["a", "b"], [1, 10])) == 0


def test_the_option_is_checked_and_the_tuning_split_ranks_by_the_linear_consumers() -> None:
    from bioanon.evaluation.panel_modes import RANKING_MODELS, RANKING_VIEW_MODEL

    with pytest.raises(BioanonError, match="consumer_panel"):
        EvaluationOptions.of(consumer_panel="sometimes")
    tuning = EvaluationOptions.of().for_tuning()
    assert tuning.consumer_panel == "ranking" and tuning.consumer_models() == RANKING_MODELS
    assert tuning.utility_model == RANKING_VIEW_MODEL  # the views by a model the panel reuses
    assert EvaluationOptions.of(utility_model="knn").for_tuning().utility_model == "knn"
    assert EvaluationOptions.of(consumer_panel="always").for_tuning().consumer_panel == "always"
    assert EvaluationOptions.of(consumer_panel="off").for_tuning().consumer_panel == "off"
    assert EvaluationOptions.of().consumer_models() == CONSUMER_MODELS
    assert EvaluationOptions.of().runs_consumer_panel()
    assert not EvaluationOptions.of(consumer_panel="off").runs_consumer_panel()


def _evaluate(table: FeatureTable, panel: str) -> Any:
    anon = SelectiveMeanAnonymizer("expression", g=4, r_p=0.1)
    return Evaluation(table, "expression", "identity", anonymizer=anon, models=["knn"],
                      attackers="naive", n_jobs=1, verification=False, selection="none",
                      consumer_panel=panel, random_state=0).evaluate()


def test_an_evaluation_shows_the_panel_and_ranks_by_the_pick(table: FeatureTable) -> None:
    ev = _evaluate(table, "final")
    report = build_report(ev)
    panel = report["utility"]["consumer"]
    assert [m["model"] for m in panel["models"]] == list(CONSUMER_MODELS)  # forest stays a row
    u = ev.utility()["expression"]
    assert u.cas.value == panel["cas"]["value"] and u.clear.value == panel["clear"]["value"]
    assert report["utility"]["cas"]["value"] == panel["cas"]["value"]
    assert report["utility"]["interest"]["clear"] == panel["clear"]["value"]
    short = report.summary()["consumer"]
    assert short["pick"] == panel["pick"] and len(short["models"]) == len(CONSUMER_MODELS)
    html = consumer_section(panel)
    assert "release&#x27;s pick" in html or "release's pick" in html
    off = build_report(_evaluate(table, "off"))
    assert off["utility"]["consumer"] is None
    assert off.summary()["consumer"] is None


def test_a_search_judges_its_tuning_split_cheaply_and_confirms_with_the_pick(
        table: FeatureTable) -> None:
    why = "test of the consumer's panel"
    res = search(table, "expression", "identity", methods=["noise"], target_advantage=0.5,
                 models=["knn"], attackers="naive,parrot", n_jobs=1, budget_minutes=None,
                 level=0.99, random_state=7,
                 accept_risks={"identity-membership": why, "identity-inference": why})
    assert res.confirmation is not None
    assert res.confirmation["utility"]["consumer"] is not None
    assert res.confirmation["params"]["evaluation"]["consumer_panel"] == "final"
    pick = res.confirmation["utility"]["consumer"]
    assert res.confirmation["utility"]["cas"]["value"] == pick["cas"]["value"]


def test_the_forest_is_cross_validated_out_of_bag_and_read_once(
        table: FeatureTable, monkeypatch: pytest.MonkeyPatch) -> None:
    """The forest's cross-validated figure is its out-of-bag accuracy (the one fit on the
    whole release), and the utility views' forest (same records, same seed) is read instead
    of fitted again: the same panel, with no forest fitted by the panel."""
    from sklearn.ensemble import RandomForestClassifier

    from bioanon.attack.recognizers import make_recognizer
    from bioanon.evaluation import consumer as consumer_mod
    from bioanon.evaluation.consumer import oob_hits

    X, y, Xt, yt = _split(table)
    release = X + np.random.default_rng(2).normal(scale=1.5, size=X.shape).astype(np.float32)
    out = consumer_panel(X, y, release, Xt, yt, seed=3, models=("forest", "lda"))
    forest = make_recognizer("forest", 3).set_params(oob_score=True).fit(release, y)
    plain = make_recognizer("forest", 3).fit(release, y)  # the out-of-bag figures change no tree
    assert np.array_equal(forest.predict(Xt), plain.predict(Xt))
    row = out["models"][0]
    assert row["release_cv"]["value"] == pytest.approx(oob_hits(forest, y) / y.size)
    assert row["release_to_clear"]["value"] == pytest.approx(float(np.mean(plain.predict(Xt)
                                                                           == yt)))
    clear = make_recognizer("forest", 3).set_params(oob_score=True).fit(X, y)
    fits: list[str] = []
    real = consumer_mod.make_recognizer

    def counted(model: Any, seed: Any) -> Any:
        fits.append(str(model))
        return real(model, seed)

    monkeypatch.setattr(consumer_mod, "make_recognizer", counted)
    again = consumer_panel(X, y, release, Xt, yt, seed=3, models=("forest", "lda"),
                           fitted={("release", "forest"): forest, ("clear", "forest"): clear})
    # made (to fit, or to read its kind) for LDA alone: no forest is made again
    assert again == out and set(fits) == {"lda"}
    # a forest fitted without its out-of-bag predictions is fitted again, not misread
    assert oob_hits(RandomForestClassifier(5, random_state=0).fit(X, y), y) is None
    consumer_panel(X, y, release, Xt, yt, seed=3, models=("forest",),
                   fitted={("release", "forest"): plain})
    assert fits[-2:] == ["forest", "forest"]


def test_an_evaluation_hands_its_utility_forests_to_the_panel(
        table: FeatureTable, monkeypatch: pytest.MonkeyPatch) -> None:
    from bioanon.evaluation import consumer as consumer_mod

    made: list[str] = []
    real = consumer_mod.make_recognizer
    monkeypatch.setattr(consumer_mod, "make_recognizer",
                        lambda model, seed: made.append(str(model)) or real(model, seed))
    ev = _evaluate(table, "final")
    assert "forest" not in made and set(made) == set(CONSUMER_MODELS) - {"forest"}
    rows = ev.utility_raw_["expression"]["consumer"]["models"]
    assert rows[0]["model"] == "forest" and rows[0]["release_cv"] is not None


def test_a_panel_added_to_a_tuning_evaluation_makes_the_final_report(
        table: FeatureTable) -> None:
    """A refusal's closest setting is reported from the search's own evaluation of it (the
    consumer's panel added: with_consumer_panel): the same report as a final evaluation of
    the same split and seed, every figure equal."""
    from bioanon.anonymize import GaussianNoiseAnonymizer

    def ev(panel: str) -> Any:
        return Evaluation(table, "expression", "identity",
                          anonymizer=GaussianNoiseAnonymizer(sigma=1.0), models=["knn"],
                          attackers="naive,parrot", n_jobs=1, verification=False,
                          selection="none", consumer_panel=panel, random_state=4)

    final = build_report(ev("final").evaluate())
    tuning = ev("off").evaluate()
    assert tuning.utility_raw_["expression"].get("consumer") is None
    options = EvaluationOptions.of(models=["knn"], attackers="naive,parrot", n_jobs=1,
                                   verification=False, selection="none",
                                   consumer_panel="final")
    added = build_report(tuning.with_consumer_panel(options))
    import json

    def same(a: Any, b: Any) -> bool:  # NaN (a level not measured) equals itself here
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True,
                                                                          default=str)

    assert same(added["utility"], final["utility"]) and same(added["risks"], final["risks"])
    assert added["params"]["evaluation"]["consumer_panel"] == "final"
    # judged as a search's tuning split judges (the ranking panel, its views by LDA), then
    # given the whole panel: the final report again, every utility view the forest's
    ranked = Evaluation(table, "expression", "identity",
                        anonymizer=GaussianNoiseAnonymizer(sigma=1.0), random_state=4,
                        options=options.for_tuning()).evaluate()
    first = ranked.utility_raw_["expression"]["consumer"]
    assert [m["model"] for m in first["models"]] == ["lda", "logreg"]
    again = build_report(ranked.with_consumer_panel(options))
    assert same(again["utility"], final["utility"]) and same(again["risks"], final["risks"])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_folds_run_apart_give_each_model_s_own_figures(table: FeatureTable,
                                                          n_jobs: int) -> None:
    """A model's folds run as tasks of their own beside its fit on all the records: the same
    cross-validated hits and predictions as the model's one task (the forest, read out of
    bag, stays one task)."""
    from bioanon.evaluation.consumer import _fit_task, fit_tasks

    X, y, Xt, _ = _split(table)
    tasks = [(m, 5, X, y, Xt, 3, None) for m in ("forest", "logreg", "knn")]
    tasks.append(("lda", 5, X, y, Xt, 0, None))  # no folds: the fit alone
    got = fit_tasks(tasks, n_jobs)
    for task, (hits, pred) in zip(tasks, got, strict=True):
        want_hits, want_pred = _fit_task(*task)
        assert hits == want_hits and np.array_equal(pred, want_pred), task[0]
    assert got[0][0] is not None and got[3][0] is None
