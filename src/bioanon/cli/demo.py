"""The ``demo`` command: the release path on the built-in synthetic dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..io import atomic_path, check_output_dir
from ..release import write_release
from .common import app, console, err_console, print_summary, progress_bar, user_errors

#: what the demo searches: the variance-preserving mix and the synthetic release (full and
#: diagonal covariance; the settings that hide recognition by construction) at their
#: candidate settings, judged on every risk
#: by a reduced panel (every attacker mode, two fast recognizers) so that ``make demo`` stays
#: short
DEMO_METHODS = ["vp-mix", "synthetic"]
DEMO_MODELS = "knn,linear_svm"
#: records per synthetic person in the demo: enough that a release with no advantage has an
#: upper 95% bound well under the 0.05 target on the confirmation split
DEMO_RECORDS_PER_IDENTITY = 100


@app.command()
@user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", help="Folder for the release and its report.")] =
    Path("demo-report"),
    seed: Annotated[int, typer.Option(help="Seed of the synthetic data, the search and the "
                                           "release (never written).")] = 0,
    budget_minutes: Annotated[float, typer.Option(
        "--budget-minutes", help="Time budget of the search.")] = 2.0,
) -> None:
    """Walk the release path on the built-in SYNTHETIC dataset: search, certify, release.

    The same path as `bioanon release`: candidate settings judged on a tuning split against
    every risk (recognition, membership, inference on members), the most useful one meeting
    every target confirmed on a fresh split and seed, then the whole table released
    (OUT/release.parquet, its manifest) with the report (OUT/report.json, OUT/report.html,
    OUT/search.png). When no setting meets every target the demo still writes the report of
    the closest one, says which risk fell short, writes no release, and exits 0.
    """
    from ..datasets import make_biometric
    from ..release import Roles
    from ..tuning.search import certified_release, certified_report, search

    files = ["report.json", "report.html", "search.png", "release.parquet",
             "release.parquet.manifest.json"]
    check_output_dir(out, [], files)
    table = make_biometric(records_per_identity=DEMO_RECORDS_PER_IDENTITY, random_state=seed)
    console.print(f"synthetic dataset (no real people): {table.n_records} records × "
                  f"{table.n_features} features; keep 'expression' (+ 'environment'), "
                  "hide 'identity'; searching "
                  f"{', '.join(DEMO_METHODS)} (bioanon release searches every method)")
    roles = Roles(sensitive="identity", interest="expression", additional=["environment"])
    add = {"environment": 0.5}
    with progress_bar("searching") as update:
        result = search(table, "expression", "identity", add, methods=DEMO_METHODS,
                        models=DEMO_MODELS, budget_minutes=budget_minutes, progress=update,
                        random_state=seed, report_closest=True)
    from ..tuning.search import row_line

    for row in result.rows:
        console.print(row_line(row), highlight=False, soft_wrap=True)
    if result.confirmation is None and result.closest_report is None:
        err_console.print(result.failure_line() + "; nothing was written", highlight=False)
        raise typer.Exit(1)
    report, fig = certified_report(result, "identity", "expression")
    paths = report.write(out)
    with atomic_path(out / "search.png") as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    print_summary(report)
    if not result.certified:  # the safe path: the report says why, no release is written
        console.print(f"verdict: NOT certified — {result.failure_line()}. No release was "
                      f"written; {paths['html']} shows every risk of "
                      + ("the confirmation run." if result.confirmation is not None else
                         "the closest setting on a fresh split."), highlight=False,
                      soft_wrap=True)
        return
    with progress_bar("releasing") as update:
        rel = certified_release(table, result, roles, random_state=seed, progress=update)
    write_release(rel.table, rel.manifest, out / "release.parquet")
    console.print(f"verdict: certified — every risk within its target; wrote "
                  f"{out / 'release.parquet'} (dropped {rel.dropped}), {paths['json']}, "
                  f"{paths['html']} and search.png", highlight=False)
