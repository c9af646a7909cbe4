"""``bioanon release``: search, certify, release (the safe path).

The command parses, checks every output before any work, calls the library's front door for
the path (:func:`bioanon.certify`; with ``--dask``/``--scheduler``,
:func:`~bioanon.certification.parquet.certify_parquet`; with ``--dask --epsilon``,
:func:`~bioanon.certification.streamed.certify_streamed`: the one skeleton of
:mod:`bioanon.certification.run` behind all three), prints the plan the library tells it and
one verdict, and with ``--json`` one document of one schema for every outcome
(``docs/release-json.md``). Exit status: 0 certified, 1 not certified (the closest setting's
report only), 2 a user error or a plan refusal (nothing written).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..io import check_output_dir, check_output_file, file_sha256
from ..plan import PlanRefused
from ..privacy import leak_warnings_silenced
from ..release import NO_ROLE, Roles, manifest_path
from ..table import format_of
from .common import (
    OUT_FLAGS,
    AddOpt,
    InputArg,
    JsonOpt,
    LabelOpt,
    SensitiveOpt,
    app,
    cli_message,
    err_console,
    flag_words,
    notes_console,
    parse_weighted,
    print_json,
    print_summary,
    progress_bar,
    read_release_input,
    refusal_where,
    refuse_unused,
    undeclared_epsilon_note,
    user_errors,
)
from .help_pages import late_help
from .logs import JSON_ERROR_DOCS
from .options import (
    ForceOpt,
    IdentOpt,
    KeepAsFeatureOpt,
    KeepOpt,
    LayoutOpt,
    QuasiOpt,
    judge_options,
)
from .release_flags import release_options, settings_from

RELEASE_HELP = """Search methods and settings, certify one against every risk, and release.

First the plan, from the table's shape alone: which risks at which level this table can
show (the smallest membership advantage its sample can rule out); a level it cannot show
stops the run at once with one line naming the ways forward (more identities or records,
--epsilon E --privacy-unit identity with --public-data, or --accept-risk LEVEL-RISK
--reason "..."; one --reason may cover several --accept-risk). Then every applicable
method's settings are judged on a tuning split against every risk (recognition: the upper
95% bound of the cross-fitted worst attack's advantage over max(chance, control) within
--target-advantage; membership and inference on members: the upper 95% bound of their
membership advantage TPR − FPR within the --level's target at the record and identity
levels, or covered by a strict DP guarantee whose bound is within it; a level that cannot
be shown is "inconclusive at this size" and fails unless accepted; utility: CAS). The most
useful setting that meets every target is re-evaluated on a fresh split with a fresh seed;
only if that confirmation meets every target too is the whole table anonymized and written
with OUTPUT.manifest.json (certified) and OUTPUT.report/. Otherwise only the closest
setting's report is written to OUTPUT.report/ (marked NOT certified; no table, no manifest;
to OUTPUT.refused-report/ when a release is at OUTPUT already: it stays) and the exit status
is 1. Column roles work as in anonymize: label columns without a role
are dropped. Every path (in memory, --dask, --dask --epsilon) runs the same checks before
any work: the plan, the methods named, the columns (metadata-looking numeric columns of a
table that does not record its labels, --keep-as-feature naming no feature column).

With --epsilon E the search considers only the DP methods, every setting at exactly E
(the budget is yours: never searched upwards; the other parameters vary). With
--public-data FILE (people not in the release, same feature columns) the clipping box,
centre and clip radius come from it and the guarantee is strict; without it the bounds
come from the data and the manifest, report and terminal say "not strict". The manifest
and report state epsilon, delta, the privacy unit and strict or not; the certificate's
empirical risks must be met all the same.

With --public-data FILE and no --epsilon, the public records are the source of a public
basis: the search also tries dp-cells (and dp-basis) in their principal directions (stated,
no privacy cost; their clipping box too). The table must hold the input's feature columns,
as numbers, and none of its people (by the --sensitive column, where it has one); the
manifest names it and says what it was used for, never its values.

With --dask or --scheduler (Parquet in, a folder of Parquet parts out) the search and
the confirmation run on a stratified panel sample (--sample-records), judging the bucketed
rule the release uses (sets drawn within random buckets of --bucket-size records); only
methods that mix the records given can be bucketed (the others are skipped, with the
reason). The certified setting then releases every record bucket by bucket, out of core.

With --dask --epsilon E --public-data FILE the search considers the DP methods whose
statistics are sums (dp-basis, record unit), each setting judged on the panel sample as
the stream applies it; the certified setting's statistics are then fitted on every record
in streaming passes over the Parquet partitions (one partition in memory at a time) and
each partition's records are sampled from the noisy model, written as one part in the
input's order; the passes run as dask reductions on the local cluster (--workers) or on
the --scheduler named. Without --public-data it is refused: the bounds must be public.

With --json, stdout holds one document of the same schema for every outcome (certified,
not certified, plan refused, input error): docs/release-json.md.
"""

OutputOpt = Annotated[Path, typer.Option(*OUT_FLAGS, help="Released table to write (with "
                                                          "OUT.manifest.json and OUT.report/).")]
InterestOpt = Annotated[str, typer.Option(
    "--interest", help="Column of the attribute whose utility (CAS) must survive.")]
PublicDataOpt = Annotated[Path | None, typer.Option(
    "--public-data", help="Table of people NOT in the release, same feature columns: the "
                          "--epsilon bounds come from it (strict); without --epsilon, a public "
                          "basis (its principal directions, no privacy cost).")]

def privacy_unit_help() -> str:
    """``--privacy-unit``'s help as ``--help-all`` shows it: the DP methods that cover each
    unit, read from their declarations (:func:`~bioanon.anonymize.registry.methods_covering`)."""
    from ..anonymize.registry import methods_covering

    return ("What --epsilon protects: record (default; the DP methods: "
            f"{', '.join(methods_covering('record'))}) or identity (every record of one "
            "--sensitive value; the DP methods whose accounting covers it: "
            f"{', '.join(methods_covering('identity'))}; in memory only).")


late_help("release", "--privacy-unit", privacy_unit_help)
DaskOpt = Annotated[bool, typer.Option(
    "--dask", help="Certify on a stratified panel sample, then release bucket by bucket on a "
                   "local dask cluster (Parquet in, a folder of Parquet parts out; the judge "
                   "evaluates the bucketed rule; needs the 'scale' extra).")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="As --dask, on this dask scheduler, tcp://HOST:PORT (workers must "
                        "share the output's file system).")]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", help="Workers of the local dask cluster (default: one per core).")]
BucketSizeOpt = Annotated[int, typer.Option(
    "--bucket-size", help="Records per bucket on the dask path (sets are drawn within a "
                          "bucket; the search judges this rule).")]
SampleRecordsOpt = Annotated[int, typer.Option(
    "--sample-records", help="Records of the stratified panel sample the dask path searches "
                             "and confirms on.")]


def json_input_errors(func: Any) -> Any:
    """With ``--json``, an option refused by the checks every command shares (run by
    :func:`~bioanon.cli.common.user_errors` before the command's body) is one document too."""
    import functools

    from .common import _check_common

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("as_json"):
            try:
                _check_common(kwargs)
            except BioanonError as exc:  # said again, as one line, by user_errors
                print_json(outcome_doc("input error", message=cli_message(exc)))
        return func(*args, **kwargs)

    return wrapper


@app.command("release", help=RELEASE_HELP)
@json_input_errors
@user_errors
@judge_options("release")
@release_options(after="force")
def release_command(
    input: InputArg, output: OutputOpt, interest: InterestOpt, sensitive: SensitiveOpt,
    additional: AddOpt = None, label: LabelOpt = None, identifying: IdentOpt = None,
    quasi: QuasiOpt = None, keep: KeepOpt = None, keep_as_feature: KeepAsFeatureOpt = None,
    force: ForceOpt = False, public_data: PublicDataOpt = None, as_json: JsonOpt = False,
    dask: DaskOpt = False, scheduler: SchedulerOpt = None, workers: WorkersOpt = None,
    bucket_size: BucketSizeOpt = 50_000, sample_records: SampleRecordsOpt = 50_000,
    layout: LayoutOpt = None, *,
    judge: dict[str, Any], release: dict[str, Any],
) -> None:
    """The ``release`` command (its help: :data:`RELEASE_HELP`): parse, certify, print. The
    release settings' flags come from their declarations (:mod:`.release_flags`), the
    evaluation's from theirs (:func:`~bioanon.cli.options.judge_options`)."""
    from ..certification.settings import source_for

    bucketed = dask or scheduler is not None
    path = source_for(dask=dask, scheduler=scheduler, epsilon=release["epsilon"])
    with json_outcome(as_json, output):
        _refuse_unused(path, dask, scheduler)
        if layout is not None:
            from ..layout import parse_layout

            parse_layout(layout)  # the grammar, before any work
        _check_outputs(input, output, bucketed, public_data)
        if bucketed and (keep or quasi or force):
            raise BioanonError("--keep/--quasi/--force are not available on the dask path "
                               "(the join check reads the labels in memory); release those "
                               "columns with the in-memory path")
        if bucketed and release["epsilon"] is None:  # in memory, the library says the same
            if public_data is not None:
                raise BioanonError("--public-data on the dask path belongs to a declared "
                                   "budget (--dask --epsilon E); a public basis without one "
                                   "is searched in memory: drop --dask, or add --epsilon E")
            _no_budget(release["delta"], release["privacy_unit"],
                       release["max_records_per_identity"])
        roles = Roles(sensitive=sensitive, interest=interest,
                      additional=parse_weighted(additional, 1.0, "--additional"),
                      identifying=identifying or [], quasi=quasi or [],
                      keep=keep or [], other=label or [])
        roles.of()  # one role per column, before any work
        options = {**settings_from(release, path),  # parsed as declared, checked in one place
                   "keep_as_feature": list(keep_as_feature or []), "report_closest": True,
                   "on_plan": lambda plan: notes_console(as_json).print(
                       plan.render(), highlight=False, soft_wrap=True),
                   "options": EvaluationOptions.of(**judge)}
        if release["keep_sensitive"]:
            _unfit_warning()
        if path == "memory":
            _release_in_memory(input, output, roles, options, public_data, force=force,
                               as_json=as_json, layout=layout)
        else:
            _release_on_dask(path, input, output, roles, options, public_data,
                             dict(scheduler=scheduler, local=dask, n_workers=workers,
                                  bucket_size=bucket_size, sample_records=sample_records),
                             as_json=as_json)


# ---------------------------------------------------------------------- before any work
def _refuse_unused(path: str, dask: bool, scheduler: str | None) -> None:
    """An option of another path is an error, not ignored."""
    streamed, bucketed = path == "streamed", path != "memory"
    refuse_unused({
        "workers": (dask and not scheduler,
                    "it sizes the local dask cluster of --dask (add --dask to use it; a "
                    "--scheduler brings its own workers)"),
        "bucket_size": (bucketed and not streamed,
                        "it sets the buckets of the dask path's mixing methods (add --dask to "
                        "use it; --epsilon streams partitions, it draws no buckets)"),
        "sample_records": (bucketed, "it sets the panel sample of the dask path (add --dask "
                                     "to use it)"),
        "dask": (not scheduler, "--scheduler already runs the dask path on that cluster"),
        "layout": (not bucketed, "it declares the trajectories of the in-memory release (the "
                                 "dask path judges its methods without a temporal basis)"),
    })


def _check_outputs(input: Path, output: Path, bucketed: bool, public_data: Path | None) -> None:
    """Every output checked before any work (never an input, never the public data, never a
    file, link or folder of the user's that the unit would replace: OUTPUT.report,
    OUTPUT.refused-report)."""
    from ..certification import REPORT_FILES, report_dir
    from ..release_unit import check_unit_paths

    if not bucketed:
        format_of(output)
        check_output_file(output, [input])
    check_output_file(manifest_path(output), [input])
    check_output_dir(report_dir(output), [input], REPORT_FILES)
    check_unit_paths(output)  # the reports' folders, the journal: nothing of the user's lost
    if public_data is not None:  # never written over
        for out_path in ([] if bucketed else [output]) + [manifest_path(output)]:
            try:
                check_output_file(out_path, [public_data])
            except BioanonError as exc:  # it said "is the input file": INPUT is another
                raise BioanonError(str(exc).replace("is the input file",
                                                    "is the --public-data file", 1)) from None
        check_output_dir(report_dir(output), [public_data], REPORT_FILES)


def _no_budget(*values: Any) -> None:
    """Refuse the options of a declared budget without ``--epsilon``."""
    flags = ("--delta", "--privacy-unit", "--max-records-per-identity")
    given = [f for f, v in zip(flags, values, strict=True) if v is not None]
    if given:
        many = len(given) > 1
        raise BioanonError(f"{', '.join(given)} {'belong' if many else 'belongs'} to a "
                           f"declared privacy budget; add --epsilon E or drop "
                           f"{'them' if many else 'it'}")


def _public_table(public_data: Path | None, input_sha256: str | None = None) -> Any:
    """The public table read and checked (one-line errors): a declared budget's strict
    bounds, or without one the source of a public basis (the library checks its columns and
    people against the input)."""
    from ..table import FeatureTable

    if public_data is None:
        return None
    try:
        public = FeatureTable.read(public_data)  # non-numeric columns: labels, unused
    except BioanonError as exc:
        raise BioanonError(f"--public-data: {exc}") from None
    if input_sha256 and public_data.is_file() and file_sha256(public_data) == input_sha256:
        raise BioanonError("--public-data is the input itself; give a table of people NOT "
                           "in the release (auxiliary or public data)")
    return public


def _unfit_warning() -> None:
    err_console.print("warning: --keep-sensitive releases the sensitive column: for an "
                      "auditor's attack only, unfit for a real release", highlight=False)


# ---------------------------------------------------------------------- the three paths
def _release_in_memory(input: Path, output: Path, roles: Roles, options: dict[str, Any],
                       public_data: Path | None, *, force: bool, as_json: bool,
                       layout: str | None = None) -> None:
    """Read the table, certify it (:func:`bioanon.certify`), write the release unit."""
    from ..certification import certify

    group = options["options"].group
    table = read_release_input(input, [*roles.of(), group], options["keep_as_feature"])
    from ..layout import with_layout

    table = with_layout(table, layout)
    input_sha256 = file_sha256(input)
    public = _public_table(public_data, input_sha256)
    with _certifying("certifying", options.get("epsilon") is not None, output,
                     as_json) as update:
        out = certify(table, roles, force=force, input_name=input.name,
                      input_sha256=input_sha256, progress=update, public=public,
                      public_name=None if public_data is None else public_data.name,
                      **options)
    unnamed = [c["name"] for c in out.manifest["columns"]
               if c["role"] == NO_ROLE and not c["released"]]
    if unnamed:
        err_console.print(f"dropped label columns without a role: {unnamed} (name one with "
                          "--keep to release it)", highlight=False, soft_wrap=True)
    out.write(output)  # the report first, the release pair last (together)
    _certified(out, output, f"wrote {output} ({out.n_records} records)", as_json)


def _release_on_dask(path: str, input: Path, output: Path, roles: Roles,
                     options: dict[str, Any], public_data: Path | None,
                     dask: dict[str, Any], *, as_json: bool) -> None:
    """``--dask``/``--scheduler`` (bucketed) or ``--dask --epsilon`` (streamed): certify on a
    panel sample, then release out of core."""
    from .._version import __version__

    if path == "bucketed":
        from ..certification.parquet import certify_parquet

        with _certifying("certifying (panel sample), then releasing (dask)", False, output,
                         as_json) as update:
            out = certify_parquet(input, output, roles, version=__version__, progress=update,
                                  **dask, **options)
        _bucket_note(out)
        r, how = out.written, "bucketed"
        wrote = f"{r.n_records:,} records in {r.n_buckets} bucket parts"
    else:
        from ..certification.streamed import certify_streamed

        public = _public_table(public_data)
        with _certifying("certifying (panel sample), then releasing (streamed)", True,
                         output, as_json) as update:
            out = certify_streamed(input, output, roles, public=public,
                                   public_name=None if public_data is None
                                   else public_data.name,
                                   sample_records=dask["sample_records"], version=__version__,
                                   scheduler=dask["scheduler"], local=dask["local"],
                                   n_workers=dask["n_workers"], progress=update, **options)
        r, how = out.written, "as streamed"
        wrote = f"{r.n_records:,} records in {r.n_parts} parts, {r.passes} passes over the input"
    s = out.sample or {}
    _certified(out, output, f"(judged {how} on a panel sample of {s['n_records']:,} of "
                            f"{s['total_records']:,} records); wrote {output}/ ({wrote})",
               as_json)


def _bucket_note(out: Any) -> None:
    """Say when a bucket's smallest class is too small a pool for the sets."""
    from ..scale.bucketed import POOL_PER_SET

    g = out.manifest.get("params", {}).get("g")
    fewest = out.written.smallest_class_in_a_bucket
    if isinstance(g, int) and fewest < POOL_PER_SET * g:
        err_console.print(
            f"note: a bucket holds only {fewest} records of its smallest interest class, fewer "
            f"than {POOL_PER_SET} × g = {POOL_PER_SET * g}: sets drawn from so small a pool make "
            "the release depart from the whole-class one; raise --bucket-size",
            highlight=False, soft_wrap=True)


# ---------------------------------------------------------------------- the outcome
@contextmanager
def _certifying(text: str, dp: bool, output: Path, as_json: bool) -> Any:
    """Run the library under a progress bar, without the DP methods' leak warnings (with a
    budget, one statement at the end says strict or not; without one, no epsilon is
    claimed: :func:`~bioanon.privacy.leak_warnings_silenced`); a refusal (not certified)
    is printed, its report written, and the command exits 1."""
    from ..certification import NotCertified

    try:
        with progress_bar(text) as update, leak_warnings_silenced():
            yield update
    except NotCertified as exc:
        print_search(exc.rows, exc.skipped, exc.not_evaluated, chosen=False,
                     tradeoff=exc.search.tradeoff,
                     fresh=exc.search.confirmation is not None)
        _refuse(exc, as_json, output)


@contextmanager
def json_outcome(as_json: bool, output: Path) -> Any:
    """With ``--json``, a plan refusal or an input error is one document too (exit 2; the
    error line goes to stderr as always)."""
    try:
        yield
    except PlanRefused as exc:  # its parameters become flags (user_errors says the line)
        if as_json:
            print_json(outcome_doc("plan refused", message=cli_message(exc),
                                   plan=exc.plan.to_dict()))
        raise
    except BioanonError as exc:
        if as_json:
            print_json(outcome_doc("input error", message=cli_message(exc)))
        raise


#: the outcomes of ``release`` and their exit status
OUTCOMES = {"certified": 0, "not certified": 1, "plan refused": 2, "input error": 2,
            "internal error": 1, "interrupted": 130}


def outcome_doc(outcome: str, *, message: str | None = None, setting: str | None = None,
                short_of: str | None = None, table: Path | None = None,
                manifest: Path | None = None, report: Path | None = None,
                plan: Any = None, verdict: Any = None, summary: Any = None,
                differential_privacy: Any = None, tradeoff: Any = None,
                refusal: Any = None) -> dict[str, Any]:
    """The one ``--json`` document of ``release``, whatever the outcome
    (``docs/release-json.md``): every key always present, null when it does not apply."""
    return {"certified": outcome == "certified", "outcome": outcome,
            "exit_code": OUTCOMES[outcome], "message": message, "setting": setting,
            "short_of": short_of,
            "output": {"table": None if table is None else str(table),
                       "manifest": None if manifest is None else str(manifest),
                       "report": None if report is None else str(report)},
            "plan": plan, "verdict": verdict, "summary": summary,
            "differential_privacy": differential_privacy, "tradeoff": tradeoff,
            "refusal": refusal}


def _error_doc(message: str, kind: str, exit_code: int) -> dict[str, Any]:
    """``release``'s document of an error the command line catches around it (a usage error,
    an interruption, a bug): the schema of every outcome."""
    outcome = {"internal": "internal error", "interrupted": "interrupted"}.get(kind,
                                                                              "input error")
    return outcome_doc(outcome, message=message)


JSON_ERROR_DOCS["release"] = _error_doc


def _certified(out: Any, output: Path, wrote: str, as_json: bool) -> None:
    """The certified outcome: the search, the summary (one verdict), the final line."""
    from ..certification import report_dir

    print_search(out.rows, out.search.skipped, out.search.not_evaluated,
                 tradeoff=out.search.tradeoff)
    dp = out.manifest.get("differential_privacy")
    line = (f"certified: {out.setting} {wrote}, {manifest_path(output).name} and "
            f"{report_dir(output).name}/" + _budget_clause(dp))
    if as_json:
        plan = out.search.plan
        print_json(outcome_doc(
            "certified", message=line, setting=out.setting, table=output,
            manifest=manifest_path(output), report=report_dir(output),
            plan=None if plan is None else plan.to_dict(), verdict=out.verdict,
            summary=out.report.summary(), differential_privacy=dp,
            tradeoff=_tradeoff_json(out.search.tradeoff)))
    else:
        print_summary(out.report)
    if dp and not dp["strict"]:
        err_console.print("warning: " + _budget_line(dp) + dp["statement"], highlight=False,
                          soft_wrap=True)
    notes_console(as_json).print(line, highlight=False, soft_wrap=True)
    undeclared_epsilon_note(out.manifest, as_json)


def _tradeoff_json(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trade-off table for ``--json`` (no in-process field)."""
    from ..certification.tradeoff import public

    return public(table)


def _budget_line(statement: dict[str, Any]) -> str:
    return (f"differential privacy: epsilon {statement['epsilon']:g}, delta "
            f"{statement['delta']:.3g} ({statement['delta_rule']}), privacy unit "
            f"{statement['privacy_unit']}; ")


def _budget_clause(statement: dict[str, Any] | None) -> str:
    """The final line's statement of a declared budget: ε and strict or NOT strict."""
    if not statement:
        return ""
    how = "strict" if statement["strict"] else "NOT strict (bounds from the data; give " \
                                               "--public-data)"
    return "; " + _budget_line(statement) + how


def print_search(rows: list[dict[str, Any]], skipped: list[dict[str, Any]],
                 not_evaluated: list[str], chosen: bool = True,
                 tradeoff: list[dict[str, Any]] | None = None, fresh: bool = True) -> None:
    """One line per evaluated setting, per skipped setting, the budget's note (``chosen``
    False: nothing was certified, the report is the closest setting's), then the trade-off
    table (per level, the best CAS meeting its targets: :mod:`bioanon.certification.tradeoff`).
    ``fresh``: the report below was judged on the fresh split (the chosen setting's, or a
    failed confirmation's); False: the closest setting's on the tuning split, which decided."""
    from ..certification.search import row_line as search_row_line
    from ..certification.tradeoff import table_lines

    whose = "the chosen setting's" if chosen else "the closest setting's"
    where = ("judged again on a fresh split" if fresh or chosen
             else "on this tuning split, which decided the refusal")
    if rows:  # the tuning split's figures; the report's split is said
        err_console.print(f"search, on the tuning split (the report below is {whose}, "
                          f"{where}):", highlight=False, soft_wrap=True)
    for row in rows:
        err_console.print(search_row_line(row), highlight=False, soft_wrap=True)
    for skip in skipped:  # every setting or method left out is named, with its reason
        what = skip.get("setting") or skip.get("method")
        err_console.print(f"  {what}: skipped ({skip['reason']})", highlight=False,
                          soft_wrap=True)
    if not_evaluated:
        err_console.print(f"budget reached: {len(not_evaluated)} setting(s) not judged by "
                          f"the panel: {', '.join(not_evaluated)}", highlight=False,
                          soft_wrap=True)
    for line in table_lines(tradeoff) if tradeoff else ():
        err_console.print(flag_words(line), highlight=False, soft_wrap=True)


def _refuse(exc: Any, as_json: bool, output: Path) -> NoReturn:
    """Say why nothing was certified (one verdict), write the closest setting's report (NOT
    certified; no table, no manifest) and exit 1 (not a user error)."""
    written = exc.write_report(output)
    where = refusal_where(written, output)
    if as_json:
        plan = exc.search.plan
        print_json(outcome_doc(
            "not certified", message=flag_words(str(exc)), setting=exc.setting,
            short_of=exc.short_of,
            report=written, plan=None if plan is None else plan.to_dict(),
            verdict=exc.confirmation,
            summary=None if exc.report is None else exc.report.summary(),
            tradeoff=_tradeoff_json(exc.search.tradeoff),
            refusal=None if exc.refusal is None else
            {**exc.refusal, "line": flag_words(exc.refusal["line"])}))
    err_console.print(f"verdict: NOT certified — {flag_words(str(exc))}; {where}",
                      highlight=False, soft_wrap=True)
    raise typer.Exit(1)
