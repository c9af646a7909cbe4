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
    assert [ax.get_title() for ax in fig.axes] == ["CAS of 'expression'",
                                                   *(s.name for s in REGISTRY)]
    plt.close(fig)
    spec = RiskSpec("echo", EchoRisk, "advantage", "target_advantage", None, "echo", 0.0)
    monkeypatch.setattr(chart, "REGISTRY", (*REGISTRY, spec))
    fig = search_figure(SearchResult([], 0.05), "identity", "expression")
    assert [ax.get_title() for ax in fig.axes][-1] == "echo"
    plt.close(fig)


def test_the_search_chart_reads_at_1280_pixels_with_33_settings() -> None:
    """33 settings: one row each (labels never overlap), the chosen row shaded, no legend
    inside a panel, the title above every panel, and the image no wider than 1,280 px."""
    import io

    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image

    from bioanon.certification.certificate import report_and_chart  # noqa: F401 (dpi 110)

    rng = np.random.default_rng(0)
    rows = []
    for j in range(33):
        v = float(rng.uniform(-0.1, 0.3))
        rows.append({"method": ["noise", "synthetic", "vp-mix"][j % 3],
                     "params": {"k": j, "constant": 1}, "setting": f"s{j}",
                     "cas": float(rng.uniform(0.3, 0.95)), "cas_ci": [0.2, 0.99],
                     "clear": 0.97, "interest_chance": 0.1, "met": v < 0.05,
                     "risks": [{"risk": s.name, "level": "record", "value": v,
                                "ci": [v - 0.05, v + 0.05],
                                "status": "met" if v < 0.05 else "not met"}
                               for s in REGISTRY]})
    chosen = max((j for j, r in enumerate(rows) if r["met"]), key=lambda j: rows[j]["cas"])
    result = SearchResult(rows, 0.05, chosen=chosen)
    fig = search_figure(result, "identity", "expression")
    renderer = fig.canvas.get_renderer()
    labels = [t for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert len(labels) == 33  # sorted by CAS: the first that meets every target is chosen
    first_met = next(t for t in labels if t.get_fontweight() == "bold")
    assert first_met.get_text().startswith(f"#{chosen + 1} ")
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))
    assert all(ax.get_legend() is None for ax in fig.axes)
    title = fig._suptitle.get_window_extent(renderer)
    assert all(title.y0 > ax.get_window_extent(renderer).y1 for ax in fig.axes)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    with Image.open(io.BytesIO(buf.getvalue())) as img:
        assert img.size[0] <= 1280


class LevelEchoRisk(EchoRisk):
    """A stand-in risk judged at the privacy level (its target a Level: one per level)."""

    def results(self) -> list:
        from bioanon.evaluation.risks.base import target_at

        return [risk_result("echo", lv, "advantage", 0.0, (-0.01, 0.01), "echo attacker",
                            0.0, "no signal", target_at(self.target, lv), 0.01, "",
                            {"n": self.n_})
                for lv in (self.ctx.level, "identity")]


ECHO = RiskSpec("echo", LevelEchoRisk, "advantage", "level", None,
                "echo advantage", 0.0, question="does the release echo X?", dp_bounded=True)


def test_a_registered_risk_reaches_the_plan_the_report_and_the_command_line(
        table, monkeypatch) -> None:
    """One registry line (patched here) and nothing else: the plan gets its rows, the judge
    runs it, the caps give its half-widths, the report's risk table asks its question, the
    accepted names and the command line's flags and help name it."""
    import typer
    from typer.testing import CliRunner

    from bioanon.cli.options import accept_help, judge_options, level_help
    from bioanon.evaluation.risks.registry import check_accepted
    from bioanon.plan import make_plan
    from bioanon.report.build import build_report
    from bioanon.report.risks import risk_rows

    monkeypatch.setattr(registry, "REGISTRY", (*REGISTRY, ECHO))
    big = make_biometric(n_identities=40, records_per_identity=12, n_features=32)
    plan = make_plan(big, "expression", "identity", level="basic")
    echo_rows = [r for r in plan.rows if r.risk == "echo"]
    assert [r.name for r in echo_rows] == ["record-echo", "identity-echo"]
    member = plan.row("record-membership")
    assert member is not None and echo_rows[0].smallest == member.smallest
    assert echo_rows[0].target == 0.14 and echo_rows[1].target == 0.20  # the level's targets

    ev = Evaluation(table, "expression", "identity",
                    anonymizer=GaussianNoiseAnonymizer(sigma=1.0), **FAST).evaluate()
    assert {r.name for r in ev.risks_ if r.risk == "echo"} == {"record-echo", "identity-echo"}
    rep = build_report(ev).to_dict()
    assert "record-echo" in rep["dataset"]["fit_sizes"]["half_widths"]
    rows = [r for r in risk_rows(rep) if r["risk"].endswith(" echo")]
    assert len(rows) == 2 and rows[0]["question"] == "does the release echo X?"

    assert check_accepted({"identity-echo": "tested elsewhere"}) == {
        "identity-echo": "tested elsewhere"}
    assert "identity-echo" in accept_help() and "echo" in level_help()
    app = typer.Typer()

    @app.command()
    @judge_options("evaluate")
    def judge_only(*, judge: dict) -> None:
        print(sorted(judge["accept_risks"]), judge["level"].name)

    helps = {p.opts[0]: p.help for p in typer.main.get_command(app).params}
    assert "identity-echo" in helps["--accept-risk"]
    assert "membership, inference and echo" in helps["--level"]
    assert "--membership" in helps and "--echo" not in helps  # it declares no switch
    res = CliRunner().invoke(app, ["--accept-risk", "identity-echo", "--reason", "why",
                                   "--level", "basic"])
    assert res.exit_code == 0 and "['identity-echo'] basic" in res.output, res.output


def test_the_command_lines_switches_are_the_registrys() -> None:
    from bioanon.cli import app

    evaluate = typer_command(app, "evaluate")
    flags = {o for p in evaluate.params for o in p.opts}
    switches = {f"--{s.switch}" for s in REGISTRY if s.switch}
    assert switches and switches <= flags
    assert {"--target-advantage", "--level", "--accept-risk"} <= flags


def typer_command(app, name):
    import typer

    return typer.main.get_command(app).get_command(None, name)  # type: ignore[attr-defined]


def test_the_search_trade_off_and_chart_read_the_panel_risk_from_the_registry(monkeypatch):
    """The risk the attack panel judges is the registry's (``panel``), never a literal: a
    registry whose panel risk has another name is followed."""
    import ast
    from dataclasses import replace as _replace
    from pathlib import Path
    from types import SimpleNamespace

    from bioanon.certification import tradeoff
    from bioanon.evaluation.risks import registry as reg

    specs = tuple(_replace(s, name="spotting") if s.panel else s for s in reg.REGISTRY)
    monkeypatch.setattr(reg, "REGISTRY", specs)
    assert reg.panel_risks() == ("spotting",)
    spotted = SimpleNamespace(risk="spotting", ci=(0.0, 0.07))
    assert tradeoff._recognition_ub([spotted]) == 0.07
    assert tradeoff._has_recognition({"_risks": [spotted]})
    assert not tradeoff._has_recognition({"_risks": [SimpleNamespace(risk="recognition")]})
    cert = Path(__file__).resolve().parents[1] / "src" / "bioanon" / "certification"
    for path in [*cert.joinpath("search").glob("*.py"), cert / "tradeoff.py", cert / "chart.py"]:
        literals = [n.lineno for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(n, ast.Constant) and n.value == "recognition"]
        assert not literals, f"{path.name}: 'recognition' spelled out at lines {literals}"
