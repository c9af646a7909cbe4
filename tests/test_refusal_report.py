"""A refusal that shows why (issue 42): the report of a refused run leads with the figure that
decided (the split, the risk, its value and 95% interval against its target), in red, in
report.html, report.json's ``deciding`` and the terminal; it never says a risk is within its
target beside NOT certified, and labels whose table it shows. Accepted risks that were not
measured are counted as such (terminal, report, manifest), and the trade-off never accepts a
risk the user did not accept: it says the row needs it."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bioanon.certification import NotCertified, SearchResult, certify
from bioanon.certification.deciding import SPLITS, deciding, deciding_of_risks
from bioanon.certification.search import confirmation_utility
from bioanon.certification.tradeoff import table_lines
from bioanon.cli import app
from bioanon.cli.common import flag_words
from bioanon.datasets import make_biometric
from bioanon.release import Roles
from bioanon.report.html import render_html, tradeoff_section
from bioanon.table import FeatureTable

WHY = "10 people: too few to show"
JUDGE: dict[str, Any] = {"models": ["knn"], "attackers": "naive,parrot,reverse", "n_jobs": 1,
                         "level": 0.99, "accept_risks": {"identity-membership": WHY,
                                                         "identity-inference": WHY}}
JUDGE_CLI = ["--models", "knn", "--attackers", "naive,parrot,reverse", "--jobs", "1",
             "--level", "0.99", "--accept-risk", "identity-membership", "--reason", WHY,
             "--accept-risk", "identity-inference", "--reason", WHY]
ROLES = Roles(sensitive="identity", interest="expression")
#: the deciding object's keys (report.json)
KEYS = {"split", "risk", "level", "value", "ci", "target", "attacker"}


@pytest.fixture(scope="module")
def table() -> FeatureTable:
    return make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                          random_state=0)


@pytest.fixture(scope="module")
def refused(table: FeatureTable) -> NotCertified:
    """noise at a recognition target of 0.1: no setting meets it on the tuning split."""
    with pytest.raises(NotCertified) as info:
        certify(table, ROLES, methods=["noise"], target=0.1, random_state=1,
                report_closest=True, **JUDGE)
    return info.value


@pytest.fixture(scope="module")
def certified(table: FeatureTable) -> Any:
    """selective-mean at 0.3: certified, with two accepted levels that 10 people cannot
    show (not measured)."""
    return certify(table, ROLES, methods=["selective-mean"], target=0.3, random_state=515151,
                   **JUDGE)


def _written(exc: NotCertified, tmp_path: Path) -> tuple[dict[str, Any], str]:
    folder = exc.write_report(tmp_path / "rel.parquet")
    assert folder is not None
    return (json.loads((folder / "report.json").read_text()),
            (folder / "report.html").read_text())


def _first_screen(page: str) -> str:
    return page[:page.index("id='verdict'")]


def _fig(x: float) -> str:
    return f"{x:.3f}"


# ---------------------------------------------------------------------- decided on tuning
def test_a_refused_report_leads_with_the_figure_that_decided(refused: NotCertified,
                                                             tmp_path: Path) -> None:
    d = refused.deciding
    assert d is not None and d["split"] == "tuning" and d["risk"] == "recognition"
    assert d["value"] > d["target"] or d["ci"][1] > d["target"]
    doc, page = _written(refused, tmp_path)
    # report.json: a deciding object, beside the plan and the setting
    assert KEYS <= set(doc["deciding"]) and doc["deciding"]["split"] == "tuning"
    assert doc["deciding"]["target"] == pytest.approx(0.1)
    assert doc["summary"]["deciding"]["name"] == "record-recognition"
    # report.html: in red, at the top of the first screen, the split, value, interval, target
    first = _first_screen(page)
    red = re.search(r"<p class='bad' id='deciding'>(.*?)</p>", first)
    assert red is not None and first.index("id='deciding'") < first.index("id='risks'")
    line = red.group(1)
    for part in ("the tuning split", "record-recognition", _fig(d["value"]),
                 _fig(d["ci"][0]), _fig(d["ci"][1]), "target 0.1", "fell short"):
        assert part in line, part
    # the tuning split's row is shown, and the risk table is that setting on the same split,
    # labelled so: the very figure that decided, with every attacker's details
    assert "id='deciding-table'" in first
    assert "Risks of the closest setting on the tuning split, which decided" in first
    shown = {r["name"]: r for r in doc["risks"]}
    assert shown[d["name"]]["value"] == pytest.approx(d["value"])
    assert shown[d["name"]]["ci"] == pytest.approx(d["ci"])
    assert "within its target" not in page and "Every risk" not in page
    # the terminal's line names the same figure first
    assert str(refused).startswith(d["text"])


def test_a_refusal_whose_fresh_table_passes_never_says_within_target(
        refused: NotCertified, certified: Any, tmp_path: Path) -> None:
    """The issue's seed 4: the tuning split decided; the closest setting judged again on a
    fresh split meets every target. The report must not read as a pass."""
    result = copy.copy(refused.search)
    result.closest_report = certified.search.confirmation  # a fresh-split table that passes
    assert result.closest_report["verdict"]["met"]
    exc = NotCertified(result, "identity", "expression")
    doc, page = _written(exc, tmp_path)
    assert doc["verdict"]["refused"]["split"] == "tuning"
    assert doc["verdict"]["sentence"].startswith("NOT certified — decided by the tuning split")
    assert "within its target" not in page and "within their targets" not in page
    # report.json says the run's verdict too: a program reading verdict.met of a refused
    # report reads False; that the figures below pass on their own is said as such
    v = doc["verdict"]
    assert v["met"] is False and v["figures_pass"] is True
    assert v["risk_sentence"].startswith("The figures below are ")
    assert "met" not in v["risk_sentence"].split(":")[0] and "within" not in v["risk_sentence"]
    assert v["risk_sentence"] in v["sentence"]
    first = _first_screen(page)
    assert "id='deciding-table'" in first and "not met" in first
    verdict = page[page.index("id='verdict'"):]
    assert verdict.startswith("id='verdict'><b>NOT certified — decided by the tuning split")
    assert "<div class='bad' id='verdict'>" in page


# ---------------------------------------------------------------------- decided on confirmation
def test_a_confirmation_that_decides_is_named_and_its_table_labelled(certified: Any,
                                                                    tmp_path: Path) -> None:
    result = copy.copy(certified.search)
    cas, clear = confirmation_utility(result.confirmation)
    assert cas < clear  # the floor below is then out of reach on the fresh split
    result.min_utility = 1.0
    assert not result.certified and result.chosen is not None
    exc = NotCertified(result, "identity", "expression")
    d = exc.deciding
    assert d is not None and d["split"] == "confirmation" and d["risk"] == "utility floor"
    assert d["value"] == pytest.approx(cas) and d["target"] == pytest.approx(clear)
    doc, page = _written(exc, tmp_path)
    assert doc["deciding"]["split_label"] == SPLITS["confirmation"]
    first = _first_screen(page)
    assert "the confirmation run (fresh split)" in first.split("id='deciding'")[1]
    assert "Risks of the confirmation run (fresh split)" in first
    assert "id='deciding-table'" not in first  # the table shown is the one that decided
    assert "within its target" not in page


def test_the_risk_that_decides_is_the_measured_one_furthest_over_its_target() -> None:
    def risk(name: str, value: float, hi: float, target: float, status: str) -> dict[str, Any]:
        level, kind = name.split("-")
        return {"name": name, "risk": kind, "level": level, "statistic": "advantage",
                "value": value, "ci": [value - 0.05, hi], "target": target,
                "attacker": "a", "status": status, "reason": "r"}

    risks = [risk("record-recognition", 0.0, 0.04, 0.05, "met"),
             risk("identity-membership", 0.1, 0.5, 0.14, "inconclusive at this size"),
             risk("record-membership", 0.06, 0.107, 0.1, "not met"),
             risk("record-inference", 0.08, 0.145, 0.1, "not met")]
    d = deciding_of_risks(risks, "confirmation", "a()")
    assert d is not None and d["name"] == "record-inference" and d["ci"][1] == 0.145
    assert d["text"] == ("decided by the confirmation run (fresh split): a() fell short on "
                         "record-inference: advantage 0.080 [95% CI 0.030, 0.145], upper "
                         "bound 0.145 > target 0.1 (a)")
    assert deciding_of_risks(risks[:1], "tuning", "a()") is None
    # a confirmation that failed: the search result names it
    row = {"setting": "a()", "method": "a", "_params": {}, "cas": 0.9, "clear": 1.0,
           "risks": risks[:1], "met": True}
    res = SearchResult([row], 0.05, chosen=0,
                       confirmation={"verdict": {"met": False, "risks": risks}})
    assert deciding(res)["split"] == "confirmation"
    assert deciding(res)["name"] == "record-inference"


def test_the_terminal_says_the_deciding_figure(table: FeatureTable, tmp_path: Path) -> None:
    src = tmp_path / "t.parquet"
    table.write(src)
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(tmp_path / "rel.parquet"), "--interest", "expression",
        "--sensitive", "identity", "--methods", "noise", "--target-advantage", "0.1",
        "--seed", "1", *JUDGE_CLI])
    assert res.exit_code == 1, res.output
    said = " ".join(res.output.split())
    doc = json.loads((tmp_path / "rel.parquet.report" / "report.json").read_text())
    d = doc["deciding"]
    assert (f"verdict: NOT certified — decided by the tuning split: {d['setting']} fell short "
            f"on {d['name']}: {d['statistic']} {_fig(d['value'])} [95% CI "
            f"{_fig(d['ci'][0])}, {_fig(d['ci'][1])}]") in said
    # the tuning split decided (no confirmation ran): the report below is said to be its
    assert doc["deciding"]["split"] == "tuning", doc["deciding"]
    assert ("the report below is the closest setting's, on this tuning split, which decided "
            "the refusal") in said and "judged again on a fresh split" not in said


# ---------------------------------------------------------------------- accepted, not measured
def test_accepted_unmeasured_risks_are_counted_as_such(certified: Any, tmp_path: Path) -> None:
    risks = certified.report["risks"]
    unmeasured = [r["name"] for r in risks if r["status"] == "accepted"
                  and (r["value"] is None or r["value"] != r["value"])]
    measured = [r for r in risks if r["status"] == "met"]
    assert sorted(unmeasured) == ["identity-inference", "identity-membership"]
    words = (f"{len(measured)} risks within their targets; 2 accepted by you, not measured")
    sentence = certified.manifest["verdict"]["sentence"]
    assert words in sentence and "each with its estimate" not in sentence
    assert "Every risk" not in sentence
    certified.write(tmp_path / "rel.parquet")
    manifest = (tmp_path / "rel.parquet.manifest.json").read_text()
    page = (tmp_path / "rel.parquet.report" / "report.html").read_text()
    for text in (manifest, page):
        assert "within its target (" not in text and "each with its estimate" not in text
    assert f"target met: {words}" in page
    assert "but for 2 accepted by you, not measured" in page  # not "every risk is measured"


def test_the_terminal_counts_accepted_unmeasured_risks(table: FeatureTable,
                                                       tmp_path: Path) -> None:
    src = tmp_path / "t.parquet"
    table.write(src)
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(tmp_path / "rel.parquet"), "--interest", "expression",
        "--sensitive", "identity", "--methods", "selective-mean", "--target-advantage",
        "0.3", "--seed", "515151", *JUDGE_CLI])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "within their targets; 2 accepted by you, not measured" in said
    assert "every risk within its target" not in said


# ---------------------------------------------------------------------- the trade-off
def test_the_trade_off_says_a_row_needs_a_risk_accepted_never_accepts_it() -> None:
    entry = {"level": "strict", "record_target": 0.05, "identity_target": 0.1,
             "chosen": False, "setting": "a()", "fraction": 0.9, "cas": 0.9,
             "cas_ci": [0.88, 0.92], "clear": 1.0, "judged_by": "the full panel",
             "below_floor": False, "accepts": ["record-inference"]}
    line = table_lines([entry])[1]
    assert "needs accept_risks=record-inference (not showable here)" in line
    assert "accepting" not in line
    assert "needs --accept-risk record-inference" in flag_words(line)
    page = tradeoff_section({"tradeoff": [entry]})
    assert "needs record-inference accepted by name" in page and "accepts " not in page
    # the page as a whole, too
    assert "accepting" not in render_html({"tradeoff": [entry], "dataset": {}, "params": {},
                                           "utility": {}, "privacy": {}},
                                          sections=[tradeoff_section])


def test_a_trade_off_row_left_open_by_settings_under_the_floor_says_so() -> None:
    """A level no judged setting met, while settings the utility floor decided were not
    judged at it, reads "none among the settings judged", never a bare "none"; an entry
    they could come before names them too (terminal and page alike)."""
    none = {"level": "strict", "record_target": 0.05, "identity_target": 0.1,
            "chosen": False, "setting": None, "fraction": None, "judged_by": None,
            "below_floor": None, "accepts": [], "floored_unjudged": 5}
    line = table_lines([none])[1]
    assert line.endswith("none among the settings judged (5 settings under the utility "
                         "floor not judged at this level)")
    page = tradeoff_section({"tradeoff": [none]})
    assert "no setting judged met every target (5 settings under the utility floor" in page
    some = {**none, "setting": "a()", "fraction": 0.5, "cas": 0.5, "cas_ci": [0.4, 0.6],
            "clear": 1.0, "judged_by": "the full panel", "floored_unjudged": 1}
    assert "1 setting under the utility floor not judged at this level, more useful" in \
        table_lines([some])[1]
    assert "1 setting under the utility floor not judged" in tradeoff_section(
        {"tradeoff": [some]})
    closed = {**none, "floored_unjudged": 0}
    assert table_lines([closed])[1].endswith(": none")


def test_the_closest_report_shows_the_consumers_that_ranked_it(refused: NotCertified
                                                               ) -> None:
    """The closest setting's report is its row as the search judged it, the CAS too: the
    consumers that ranked the tuning split (here the ranking panel's pick between LDA and
    logistic regression), never the whole panel, which judges only a confirmation."""
    from bioanon.evaluation.panel_modes import RANKING_MODELS

    result = refused.search
    report = result.closest_report
    assert report is not None and result.ranking is not None
    assert result.ranking["ranks_by"] == "ranking panel"
    near, _ = result.closest()
    assert near is not None
    cas = report["utility"]["cas"]
    assert cas["value"] == pytest.approx(near["cas"])
    panel = report["utility"]["consumer"]
    assert tuple(m["model"] for m in panel["models"]) == RANKING_MODELS
    assert "whole panel judging the confirmation" in panel["rule"]


def test_a_row_the_consumer_gate_put_under_the_floor_is_named_by_the_gate_s_figure() -> None:
    # the ranking panel's CAS (0.933) is above the floor and far above chance; the whole
    # panel's pick (the forest, 0.927) is under it: the refusal says that, never "not above
    # chance" of a lower bound of 0.88 against a chance of 0.27
    row = {"method": "m", "_params": {}, "setting": "m()", "cas": 0.933,
           "cas_ci": [0.882, 0.963], "clear": 0.96, "interest_chance": 0.273, "met": False,
           "met_utility": False, "met_privacy": True, "risks": [],
           "consumer_gate": {"cas": 0.927, "cas_ci": [0.873, 0.959], "clear": 0.96,
                             "pick": "forest", "floor": 0.9312, "passed": False}}
    d = deciding(SearchResult([row], 0.3, min_utility=0.97))
    assert d is not None and d["risk"] == "utility floor" and d["value"] == 0.927
    assert "the consumer's whole panel on the tuning split, its pick forest" in d["text"]
    assert "< floor 0.97 × clear 0.960 = 0.931" in d["text"] and "chance" not in d["text"]


def test_a_refusal_for_margin_says_which_met_risk_had_no_margin() -> None:
    """A refusal decided by the margin: every figure of the deciding row meets its target, so
    its risk table read "met" on every line of a refused report. The deciding risk's line now
    says it met without margin, with the chance and the leak-free chance."""
    from bioanon.report.first_screen import NO_MARGIN, deciding_section, risk_table_section

    def risk(level: str, name: str, value: float) -> dict[str, Any]:
        return {"name": f"{level}-{name}", "risk": name, "level": level,
                "statistic": "advantage", "value": value, "ci": [value - 0.03, value + 0.03],
                "attacker": "an attacker", "baseline": 0.0, "baseline_name": "control",
                "target": 0.05, "status": "met", "status_text": "met", "met": True,
                "passes": True, "reason": "", "extras": {}}

    risks = [risk("record", "recognition", -0.011), risk("record", "membership", 0.02)]
    deciding = {"split": "tuning", "setting": "a()", "level": "record", "risk": "recognition",
                "status": "no margin", "pass_probability": 0.79,
                "leak_free_probability": 0.93, "risks": risks, "figures_of": "a()"}
    for page in (risk_table_section({"risks": risks, "deciding": deciding}),
                 deciding_section({"deciding": deciding})):
        lines = page.split("<tr>")
        recognition = next(x for x in lines if "record recognition" in x)
        membership = next(x for x in lines if "record membership" in x)
        assert NO_MARGIN in recognition and "0.79, under the 0.8" in recognition
        assert "leaking nothing: 0.93" in recognition
        assert NO_MARGIN not in membership and ">met<" in membership
    # a refusal decided otherwise (a risk over its target) keeps the rows as they are
    other = {**deciding, "status": "not met"}
    assert NO_MARGIN not in risk_table_section({"risks": risks, "deciding": other})
