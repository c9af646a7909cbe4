"""Issue 46 (reliability, round six): crashes and storms become one line before any work,
and what a newcomer meets says one thing in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import Roles

ROLES = Roles(sensitive="identity", interest="expression", identifying=["gender",
                                                                         "environment"])


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("rel46") / "t.parquet"
    make_biometric(n_identities=4, records_per_identity=12, n_features=32,
                   random_state=0).write(p)
    return p


def test_too_many_local_workers_are_refused_by_the_library_before_the_search(
        parquet: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from bioanon.certification.parquet import certify_parquet
    from bioanon.scale.cluster import max_workers

    with pytest.raises(BioanonError, match=rf"n_workers=4096 .* at most {max_workers()}"):
        certify_parquet(parquet, tmp_path / "rel", ROLES, local=True, n_workers=4096)
    assert list(tmp_path.iterdir()) == []


def test_an_inproc_address_with_no_scheduler_is_named_at_once() -> None:
    pytest.importorskip("distributed")
    from bioanon.scale.cluster import check_reachable

    for address in ("inproc://nowhere", "inproc://192.0.2.2/1/1"):
        with pytest.raises(BioanonError, match=f"dask scheduler at {address} "):
            check_reachable(address)


def test_the_plan_says_up_front_when_utility_cannot_be_measured() -> None:
    from bioanon.plan import make_plan

    accept = {f"{lv}-{r}": "a test" for lv, rs in (("record", ("recognition", "membership",
                                                                "inference")),
                                                    ("identity", ("membership", "inference")))
              for r in rs}
    tiny = make_biometric(n_identities=5, records_per_identity=2, n_features=32,
                          random_state=0)
    plan = make_plan(tiny, "expression", "identity", accept=accept)
    assert not plan.blocked and not plan.can_proceed  # every risk accepted: utility stops it
    assert plan.refusal_line().startswith("utility cannot be measured at this size")
    assert plan.to_dict()["utility"] == plan.utility
    assert "more data: about" in plan.render().splitlines()[-1]
    usual = make_biometric(n_identities=4, records_per_identity=12, n_features=32,
                           random_state=0)
    assert make_plan(usual, "expression", "identity", accept=accept).can_proceed


def test_a_class_conditional_method_refuses_one_interest_class() -> None:
    from bioanon.anonymize.registry import build_method

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    labels = t.labels.assign(expression="same")
    for method in ("dp-cells", "dp-basis", "dp-synthetic", "dp-mix", "synthetic",
                   "basis-synthetic", "selective-mean", "vp-mix"):
        est = build_method(method, {}, interest="expression", sensitive="identity",
                           random_state=0)
        with pytest.raises(BioanonError, match="interest column 'expression' has one class"):
            est.fit(t.X, labels)


def test_a_refused_demo_exits_1_as_release_does(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's refusal (the closest setting's report written, no release) is exit 1."""
    from types import SimpleNamespace

    from typer.testing import CliRunner

    import bioanon.certification as certification
    import bioanon.certification.certificate as certificate
    import bioanon.cli.demo as demo
    import bioanon.cli.release as release
    from bioanon.certification import NotCertified
    from bioanon.cli import app

    refusal = NotCertified.__new__(NotCertified)
    Exception.__init__(refusal, "no setting met every target at level standard")
    refusal.rows, refusal.skipped, refusal.not_evaluated = [], [], []
    refusal.search = SimpleNamespace(tradeoff=None, confirmation=None, closest_report=object())
    refusal.report_and_chart = lambda: (None, b"")  # type: ignore[method-assign]

    def refuse(*args: object, **kwargs: object) -> None:
        raise refusal

    monkeypatch.setattr(certification, "certify", refuse)
    monkeypatch.setattr(certificate, "write_report", lambda *a, **k: None)
    monkeypatch.setattr(release, "print_search", lambda *a, **k: None)
    monkeypatch.setattr(demo, "print_summary", lambda *a, **k: None)
    monkeypatch.setattr(demo, "DEMO_IDENTITIES", 20)
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "d")])
    assert res.exit_code == 1, res.output
    assert "verdict: NOT certified" in res.output


def test_the_terminal_names_one_headline_utility_and_labels_the_rest_secondary() -> None:
    from bioanon.report.summary import of_clear, summary_rows

    s = {"interest": "expression", "sensitive": "identity", "chance": 0.1, "control": None,
         "cas": {"value": 0.872, "ci": [0.85, 0.89]},
         "utility": {"clear": 0.963, "anonymized": 0.8, "U": 0.451, "U_clear": 0.5,
                     "additional": {"gender": {"alpha": 1.0, "clear": 0.9, "anonymized": 0.7}},
                     "anonymized_to_clear": 0.872, "anonymized_to_anonymized": 0.9},
         "attacks": [], "worst_case": {"accuracy": 0.1, "mode": "naive", "model": "knn"},
         "worst_case_crossfit": None, "advantage": None, "membership": [],
         "contributors": None, "verification": [], "selection": {}}
    rows = summary_rows(s)
    utility = rows[:next(i for i, (k, _) in enumerate(rows) if k.startswith("chance"))]
    assert utility[0] == ("headline utility: expression CAS (trained on release, scored on "
                          "clear)", "0.872 [0.850, 0.890] (0.91 × clear 0.963)")
    assert all(k.startswith("secondary: ") for k, _ in utility[1:]) and len(utility) == 5
    assert of_clear(0.5, None) == ""


def test_the_identity_threshold_is_said_one_way_everywhere() -> None:
    """README, the plan and evaluate say the identity rule from one constant."""
    from bioanon.evaluation.risks.base import MIN_IDENTITY_LEVEL
    from bioanon.levels import MIN_IDENTITIES, identities_needed, identity_rule
    from bioanon.plan import make_plan

    assert MIN_IDENTITY_LEVEL == MIN_IDENTITIES
    need = identities_needed(0.14)
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert identity_rule() in readme and f"fewer than about {need} identities" in readme
    assert "500 people" not in readme
    t = make_biometric(n_identities=6, records_per_identity=12, n_features=32, random_state=0)
    assert f"about {need} identities (now 6)" in make_plan(t, "expression",
                                                          "identity").refusal_line()


def test_tables_are_never_clipped_when_piped(tmp_path: Path) -> None:
    """Not a terminal: the risk table prints at its full width, the datasets table folds;
    no cell ends in "…" (rich's default width there is 80 columns)."""
    import io

    from rich.console import Console
    from rich.table import Table
    from typer.testing import CliRunner

    from bioanon.cli import app
    from bioanon.cli.console import print_table

    out = Console(file=io.StringIO(), width=80, markup=False)
    tab = Table()
    for name in ("risk", "advantage [95% CI]", "target", "status", "attacker"):
        tab.add_column(name, no_wrap=True)
    tab.add_row("identity membership", "+0.750 [+0.287, +1.000]", "≤ 0.14",
                "inconclusive at this size", "A1 a long attacker name")
    print_table(tab, out)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in text and "≤ 0.14" in text and "inconclusive at this size" in text
    assert out.width == 80  # the console is left as it was

    home = tmp_path / "home"
    (home / "faces").mkdir(parents=True)
    (home / "faces" / "README.md").write_text(
        "# Faces\n\n- Licence: **research use only; not for redistribution**\n")
    (home / "faces" / "labels.csv").write_text("file,subject\na.png,1\nb.png,2\n")
    res = CliRunner().invoke(app, ["datasets", "--home", str(home)])
    assert res.exit_code == 0 and "…" not in res.output
    assert "redistribution" in res.output


def test_the_library_certify_does_not_warn_of_leaks_it_does_not_claim() -> None:
    """bioanon.certify without a budget: its DP candidates take their bounds from the data,
    but no epsilon is claimed, so no PrivacyLeakWarning reaches the caller."""
    import warnings

    import bioanon
    from bioanon.certification import NotCertified
    from bioanon.privacy import PrivacyLeakWarning

    t = make_biometric(n_identities=4, records_per_identity=12, n_features=32, random_state=0)
    why = "a test of the warnings"
    accept = {f"{lv}-{r}": why for lv, rs in (("record", ("recognition", "membership",
                                                           "inference")),
                                               ("identity", ("membership", "inference")))
              for r in rs}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            bioanon.certify(t, Roles(sensitive="identity", interest="expression"),
                            methods=["laplace"], models=["knn"], attackers="naive", n_jobs=1,
                            level=0.99, target_advantage=0.99, min_utility=0,
                            random_state=1, accept_risks=accept)
        except NotCertified:
            pass
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert leaks == []
    from bioanon.anonymize import LaplaceAnonymizer

    with pytest.warns(PrivacyLeakWarning):  # fitting a DP method directly still warns
        LaplaceAnonymizer(epsilon=10.0, random_state=0).fit_transform(t.X, t.labels)


def test_a_plan_that_refuses_risks_and_utility_says_both() -> None:
    from bioanon.plan import make_plan

    tiny = make_biometric(n_identities=5, records_per_identity=2, n_features=32,
                          random_state=0)
    line = make_plan(tiny, "expression", "identity").refusal_line()
    assert line.startswith("level 'standard' cannot be shown on this table")
    assert "; and utility cannot be measured at this size" in line
