"""Every risk has one shape (``Risk(ctx, target)``, ``evaluate()`` returns it, ``results()``
typed results) and the evaluation and the search chart derive from the registry."""

from __future__ import annotations

import pytest

import bioanon.evaluation.risks.registry as registry
from bioanon.anonymize import GaussianNoiseAnonymizer
from bioanon.certification.chart import search_figure
from bioanon.certification.search import SearchResult
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation
from bioanon.evaluation.risks import REGISTRY, RiskContext, RiskSpec, risk_result

FAST = dict(models=["knn"], attackers=["naive"], n_jobs=1, verification=False)


class EchoRisk:
    """A stand-in fourth risk: reads the shared context, reports one typed result."""

    def __init__(self, ctx: RiskContext, target: float) -> None:
        self.ctx, self.target = ctx, target

    def evaluate(self) -> EchoRisk:
        self.n_ = len(self.ctx.truth)
        return self

    def results(self) -> list:
        return [risk_result("echo", self.ctx.level, "advantage", 0.0, (0.0, 0.01), "none",
                            0.0, "chance", self.target, 0.01, "", {"n": self.n_})]


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                          random_state=0)


def test_every_registered_risk_is_built_the_same_way(table) -> None:
    names = [spec.name for spec in REGISTRY]
    assert names == ["recognition", "membership", "inference"]
    ev = Evaluation(table, "expression", "identity",
                    anonymizer=GaussianNoiseAnonymizer(sigma=1.0), **FAST).evaluate()
    assert [r.risk for r in ev.risks_][:1] == ["recognition"]
    assert {r.risk for r in ev.risks_} == set(names)


def test_a_new_risk_is_one_registry_line(table, monkeypatch) -> None:
    spec = RiskSpec("echo", EchoRisk, "advantage", "target_advantage", None, "echo", 0.0)
    monkeypatch.setattr(registry, "REGISTRY", (*REGISTRY, spec))
    ev = Evaluation(table, "expression", "identity",
                    anonymizer=GaussianNoiseAnonymizer(sigma=1.0), **FAST).evaluate()
    echo = [r for r in ev.risks_ if r.risk == "echo"]
    assert len(echo) == 1 and echo[0].extras["n"] > 0 and echo[0].target == 0.05


def test_the_search_chart_has_one_panel_per_registered_risk(monkeypatch) -> None:
    import matplotlib.pyplot as plt

    import bioanon.certification.chart as chart

    fig = search_figure(SearchResult([], 0.05), "identity", "expression")
    assert [ax.get_title() for ax in fig.axes] == [s.name for s in REGISTRY]
    plt.close(fig)
    spec = RiskSpec("echo", EchoRisk, "advantage", "target_advantage", None, "echo", 0.0)
    monkeypatch.setattr(chart, "REGISTRY", (*REGISTRY, spec))
    fig = search_figure(SearchResult([], 0.05), "identity", "expression")
    assert [ax.get_title() for ax in fig.axes][-1] == "echo"
    plt.close(fig)
