"""``bioanon release``: search, certify, release (the safe path).

The command parses, checks every output before any work, calls the library
(:func:`bioanon.tuning.search.search`, :func:`~bioanon.tuning.search.certified_release`) and
writes ``OUTPUT``, ``OUTPUT.manifest.json`` and ``OUTPUT.report/``. When no setting meets the
target it writes nothing and exits with status 1 (not a user error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import BioanonError
from ..io import atomic_path, check_output_dir, check_output_file, file_sha256
from ..release import (
    NO_ROLE,
    Roles,
    join_check,
    manifest_path,
    resolve_roles,
    write_release,
)
from ..table import format_of
from .common import (
    OUT_FLAGS,
    AddOpt,
    InputArg,
    JsonOpt,
    LabelOpt,
    SensitiveOpt,
    app,
    console,
    err_console,
    notes_console,
    parse_weighted,
    print_json,
    print_summary,
    progress_bar,
    read_release_input,
    user_errors,
)
from .release import (
    AcceptRiskOpt,
    ForceOpt,
    IdentOpt,
    KeepOpt,
    QuasiOpt,
    ReasonOpt,
    TargetInferenceOpt,
    TargetMembershipOpt,
    TargetOpt,
    parse_accept,
)


def report_dir(output: Path) -> Path:
    """Where the report of the release ``output`` goes: ``OUTPUT.report/``."""
    return output.with_name(output.name + ".report")


REPORT_FILES = ["report.json", "report.html", "search.png"]


@app.command("release")
@user_errors
def release_command(
    input: InputArg,
    output: Annotated[Path, typer.Option(*OUT_FLAGS, help="Released table to write (with "
                                                          "OUT.manifest.json and OUT.report/).")],
    interest: Annotated[str, typer.Option(
        "--interest", help="Column of the attribute whose utility (CAS) must survive.")],
    sensitive: SensitiveOpt,
    additional: AddOpt = None,
    label: LabelOpt = None,
    identifying: IdentOpt = None,
    quasi: QuasiOpt = None,
    keep: KeepOpt = None,
    force: ForceOpt = False,
    target_advantage: TargetOpt = 0.05,
    target_membership: TargetMembershipOpt = 0.6,
    target_inference: TargetInferenceOpt = 0.05,
    accept_risk: AcceptRiskOpt = None,
    reason: ReasonOpt = None,
    methods: Annotated[str | None, typer.Option(
        "--methods", help="Methods to search, comma-separated (default: every registered "
                          "method that applies to the table; bioanon methods lists them).")]
    = None,
    budget_minutes: Annotated[float, typer.Option(
        "--budget-minutes", help="Stop evaluating settings after this many minutes and "
                                 "choose among those evaluated (the confirmation follows).")]
    = 10.0,
    keep_sensitive: Annotated[bool, typer.Option(
        "--keep-sensitive", help="Keep the sensitive column in the release so that an outside "
                                 "auditor can attack it. UNFIT for a real release.")] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Make the search and the release reproducible. A secret key: never "
                       "written (the release's own seed is derived from it one way).")] = None,
    group: Annotated[str | None, typer.Option(
        "--group", help="Column of groups kept whole on one side of every split (an "
                        "execution or session id; the identity for a person-level "
                        "sensitive attribute).")] = None,
    models: Annotated[str, typer.Option(
        "--models", help="Attack recognizers, comma-separated, or 'all'.")] =
    "forest,linear_svm,knn",
    attackers: Annotated[str, typer.Option(
        "--attackers", help="Attacker modes, comma-separated, or 'all'.")] = "all",
    jobs: Annotated[int, typer.Option("--jobs", help="Parallel fits (-1: all cores).")] = -1,
    as_json: JsonOpt = False,
) -> None:
    """Search methods and settings, certify one against the privacy target, and release.

    Every applicable method's settings are judged on a tuning split against every risk
    (recognition: the upper 95% bound of the cross-fitted worst attack's advantage over
    max(chance, control) within --target-advantage; membership: the strongest attacker's AUC
    bound within --target-membership; inference on members: the advantage bound over
    non-members within --target-inference; a level too small to measure is not covered and
    fails unless accepted with --accept-risk LEVEL-RISK --reason "..."; utility: CAS). The
    most useful setting that meets the target is
    re-evaluated on a fresh split with a fresh seed; only if that confirmation meets the
    target too is the whole table anonymized and written with OUTPUT.manifest.json
    (certified) and OUTPUT.report/. Otherwise nothing is written and the exit status is 1.
    Column roles work as in anonymize: label columns without a role are dropped.
    """
    from ..attack import parse_models, parse_modes
    from ..tuning.search import certified_release, certified_report, search
    from ..tuning.search import row_line as search_row_line

    format_of(output)
    man_path = manifest_path(output)
    rep_dir = report_dir(output)
    check_output_file(output, [input])
    check_output_file(man_path, [input])
    check_output_dir(rep_dir, [input], REPORT_FILES)
    add = parse_weighted(additional, 1.0, "--additional")
    accepted = parse_accept(accept_risk, reason)
    roles = Roles(sensitive=sensitive, interest=interest, additional=list(add),
                  identifying=[*(identifying or []), *(label or [])], quasi=quasi or [],
                  keep=keep or [])
    roles.of()  # one role per column, before any work
    method_list = ([m.strip() for m in methods.split(",") if m.strip()] if methods else None)
    if methods is not None and not method_list:
        raise BioanonError("--methods is empty; name methods, e.g. --methods selective-mean")
    model_list = parse_models(models) if models.strip() != "all" else "all"
    modes = parse_modes(attackers)
    table = read_release_input(input, [*roles.of(), group])
    # the column policy and the join check before the search (a refusal costs no search)
    join_check(table.labels, resolve_roles(table.labels.columns, roles, keep_sensitive),
               sensitive, force=force)
    if keep_sensitive:
        err_console.print("warning: --keep-sensitive releases the sensitive column: for an "
                          "auditor's attack only, unfit for a real release", highlight=False)
    released_labels = [c for c in [interest, *add, *(quasi or []), *(keep or [])]]
    with progress_bar("searching") as update:
        result = search(table, interest, sensitive, add, target_advantage=target_advantage,
                        methods=method_list, budget_minutes=budget_minutes, progress=update,
                        random_state=seed, models=model_list, attackers=modes, group=group,
                        released_labels=released_labels, n_jobs=jobs,
                        target_membership=target_membership,
                        target_inference=target_inference, accept_risks=accepted)
    notes = notes_console(as_json)
    for row in result.rows:
        err_console.print(search_row_line(row), highlight=False, soft_wrap=True)
    for skip in result.skipped:
        if "setting" in skip:
            err_console.print(f"  {skip['setting']}: skipped ({skip['reason']})",
                              highlight=False, soft_wrap=True)
    if result.not_evaluated:
        err_console.print(f"budget reached: {len(result.not_evaluated)} setting(s) not "
                          "evaluated", highlight=False)
    if not result.certified:
        if as_json:
            near, why = result.closest()
            print_json({"certified": False, "message": result.failure_line(),
                        "closest": None if near is None else near["setting"], "short_of": why,
                        "confirmation": None if result.confirmation is None
                        else result.confirmation["verdict"]})
        elif result.confirmation is not None:
            console.print(result.confirmation["verdict"]["sentence"], highlight=False,
                          soft_wrap=True)
        err_console.print(result.failure_line() + "; nothing was written", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(1)
    with progress_bar("releasing") as update:
        out = certified_release(table, result, roles, keep_sensitive=keep_sensitive,
                                force=force, random_state=seed, input_name=input.name,
                                input_sha256=file_sha256(input), progress=update)
    unnamed = [c for c in out.dropped if out.manifest_roles().get(c) == NO_ROLE]
    if unnamed:
        err_console.print(f"dropped label columns without a role: {unnamed} (name one with "
                          "--keep to release it)", highlight=False, soft_wrap=True)
    report, fig = certified_report(result, sensitive, interest)
    rep_dir.mkdir(parents=True, exist_ok=True)
    report.write(rep_dir)
    with atomic_path(rep_dir / "search.png") as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    write_release(out.table, out.manifest, output)  # last: a certified release has its report
    print_summary(report, as_json)
    notes.print(f"certified: {result.rows[result.chosen or 0]['setting']}; wrote {output} "
                  f"({out.table.n_records} records), {man_path.name} and {rep_dir.name}/",
                  highlight=False, soft_wrap=True)
