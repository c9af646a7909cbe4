"""The ``demo`` command: the release path on the built-in synthetic dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..io import check_output_dir
from ..privacy import leak_warnings_silenced
from ..release import write_release
from .common import (
    app,
    console,
    err_console,
    print_summary,
    progress_bar,
    user_errors,
)
from .options import LevelOpt, parse_level

#: what the demo searches: dp-cells (few parameters, every one noisy: it survives the
#: model-aware attackers) beside synthetic (a per-class Gaussian fitted without noise: the
#: model-aware attackers read its members, record membership 0.2–0.9 here, so the search
#: shows why it is refused), judged on every risk by a reduced panel (every attacker mode,
#: two fast recognizers) so that ``make demo`` stays short
DEMO_METHODS = ["dp-cells", "synthetic"]
DEMO_MODELS = "knn,linear_svm"
#: the demo's synthetic population, sized so that the plan shows every risk at the default
#: level with room (:mod:`bioanon.plan`): 800 people with 13 records each (10,400 records).
#: At 520 × 10 the certified setting's record membership read 0.005-0.09 from one split to
#: the next against the target 0.10, and the identity level (which needs about 501 people:
#: :func:`bioanon.levels.identity_rule`) could rule out only 0.137 against 0.14: the verdict
#: was a draw. At 800 people the identity level can rule out about 0.11, and at 10,400
#: records the record level about 0.04
DEMO_IDENTITIES = 800
DEMO_RECORDS_PER_IDENTITY = 13


@app.command()
@user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", help="Folder for the release and its report.")] =
    Path("demo-report"),
    seed: Annotated[int, typer.Option(help="Seed of the synthetic data, the search and the "
                                           "release (never written).")] = 0,
    budget_minutes: Annotated[float, typer.Option(
        "--budget-minutes", help="Time budget of the search.")] = 2.0,
    level: LevelOpt = None,
) -> None:
    """Walk the release path on the built-in SYNTHETIC dataset: search, certify, release.

    The same path as `bioanon release`: candidate settings judged on a tuning split against
    every risk (recognition, membership, inference on members), the most useful one meeting
    every target confirmed on a fresh split and seed, then the whole table released
    (OUT/release.parquet, its manifest) with the report (OUT/report.json, OUT/report.html,
    OUT/search.png). When no setting meets every target the demo, like `bioanon release`,
    writes the report of the closest one, says which risk fell short (and at which --level a
    more useful release would pass), writes no release, and exits 1.
    """
    from ..certification import NotCertified, certify
    from ..certification.certificate import write_report
    from ..datasets import make_biometric
    from ..release import Roles
    from ..release_unit import check_unit_paths
    from .release import print_search

    files = ["report.json", "report.html", "search.png", "release.parquet",
             "release.parquet.manifest.json"]
    check_output_dir(out, [], files)
    check_unit_paths(out / "release.parquet")  # its reports' folders, its journal
    parse_level(level)  # before the data are drawn
    table = make_biometric(n_identities=DEMO_IDENTITIES,
                           records_per_identity=DEMO_RECORDS_PER_IDENTITY, random_state=seed)
    console.print(f"synthetic dataset (no real people): {table.n_records} records × "
                  f"{table.n_features} features; keep 'expression', "
                  "hide 'identity'; searching "
                  f"{', '.join(DEMO_METHODS)} (bioanon release searches every method)")
    roles = Roles(sensitive="identity", interest="expression")
    try:
        with progress_bar("certifying") as update, leak_warnings_silenced():
            rel = certify(table, roles, methods=DEMO_METHODS, models=DEMO_MODELS,
                          budget_minutes=budget_minutes,
                          random_state=seed, level=level, report_closest=True, progress=update,
                          on_plan=lambda plan: console.print(plan.render(), highlight=False,
                                                             soft_wrap=True))
    except NotCertified as exc:  # the safe path: the report says why, no release is written
        _not_certified(exc, out)
        return
    print_search(rel.rows, rel.search.skipped, rel.search.not_evaluated,
                 tradeoff=rel.search.tradeoff)
    write_report(rel.report, rel.search_png, out)
    print_summary(rel.report, verdict=False)
    assert rel.table is not None  # in memory: the table comes back to be written
    write_release(rel.table, rel.manifest, out / "release.parquet")
    from ..metrics.results import passing_words

    console.print(f"verdict: certified — {passing_words(rel.report.get('risks') or [])}; wrote "
                  f"{out / 'release.parquet'} (dropped {rel.dropped}), {out / 'report.json'}, "
                  f"{out / 'report.html'} and search.png", highlight=False)


def _not_certified(exc: Any, out: Path) -> None:
    """The refused demo: the closest setting's report, and the run's one verdict."""
    from ..certification.certificate import write_report
    from .release import print_search

    result = exc.search
    print_search(exc.rows, exc.skipped, exc.not_evaluated, chosen=False,
                 tradeoff=result.tradeoff, fresh=result.confirmation is not None)
    if result.confirmation is None and result.closest_report is None:
        err_console.print(f"verdict: NOT certified — {exc}; nothing was "
                          "written", highlight=False)
        raise typer.Exit(1) from None
    report, png = exc.report_and_chart()
    write_report(report, png, out)
    print_summary(report, verdict=False)  # the closest setting's figures; one verdict below
    judged = ("the confirmation run." if result.confirmation is not None else
              "the closest setting on the tuning split.")
    console.print(f"verdict: NOT certified — {exc}. No release was "
                  f"written; {out / 'report.html'} shows every risk of {judged}",
                  highlight=False, soft_wrap=True)
    raise typer.Exit(1)  # as release: not certified
