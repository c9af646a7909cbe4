"""``bioanon release``: search, certify, release (the safe path).

The command parses, checks every output before any work, calls the library's front door
(:func:`bioanon.certify`; with ``--dask``/``--scheduler``,
:func:`bioanon.certification.parquet.certify_parquet`) and writes ``OUTPUT``,
``OUTPUT.manifest.json`` and ``OUTPUT.report/``. When no setting meets the target it writes
nothing and exits with status 1 (:class:`bioanon.NotCertified`: not a user error).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from ..errors import BioanonError
from ..io import check_output_dir, check_output_file, file_sha256
from ..plan import PlanRefused
from ..privacy import PrivacyLeakWarning
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
    console,
    err_console,
    notes_console,
    parse_weighted,
    print_json,
    print_summary,
    progress_bar,
    read_release_input,
    refuse_unused,
    user_errors,
)
from .options import (
    AcceptRiskOpt,
    ForceOpt,
    IdentOpt,
    KeepAsFeatureOpt,
    KeepOpt,
    LevelOpt,
    QuasiOpt,
    ReasonOpt,
    TargetInferenceOpt,
    TargetMembershipOpt,
    TargetOpt,
    parse_accept,
    parse_level,
)


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
    keep_as_feature: KeepAsFeatureOpt = None,
    force: ForceOpt = False,
    target_advantage: TargetOpt = 0.05,
    level: LevelOpt = None,
    target_membership: TargetMembershipOpt = None,
    target_inference: TargetInferenceOpt = None,
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
    exhaustive: Annotated[bool, typer.Option(
        "--exhaustive/--no-exhaustive",
        help="Judge every setting with the full recognition panel (slower). By default the "
             "panel judges only the settings that pass utility, membership and inference, "
             "most useful first, until one meets every target: the same choice.")] = False,
    min_utility: Annotated[float | None, typer.Option(
        "--min-utility", help="Utility floor: certify only a setting whose CAS reaches this "
                              "fraction of the clear accuracy, on the search's split and on the "
                              "confirmation (e.g. 0.95). Default: CAS above chance.")] = None,
    keep_sensitive: Annotated[bool, typer.Option(
        "--keep-sensitive", help="Keep the sensitive column in the release so that an outside "
                                 "auditor can attack it. UNFIT for a real release.")] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", help="Make the search and the release reproducible. A secret key: never "
                       "written (the release's own seed is derived from it one way).")] = None,
    dp_epsilon: Annotated[float | None, typer.Option(
        "--epsilon", help="Declare a differential-privacy budget: search only the DP methods "
                          "(dp-basis, dp-synthetic, dp-mix; dp-basis alone with --dask), every "
                          "setting at exactly this epsilon; the "
                          "manifest and report state it (strict only with --public-data). "
                          "Every risk must still be met.")] = None,
    dp_delta: Annotated[float | None, typer.Option(
        "--delta", help="delta of the --epsilon budget (default 1/n^2, n the records, or "
                        "the identities with --privacy-unit identity).")] = None,
    public_data: Annotated[Path | None, typer.Option(
        "--public-data", help="Table of people NOT in the release with the same feature "
                              "columns (auxiliary/public data): the clipping box, centre and "
                              "clip radius come from it, so the --epsilon guarantee holds "
                              "strictly.")] = None,
    privacy_unit: Annotated[str | None, typer.Option(
        "--privacy-unit", help="What --epsilon protects: record (default) or identity "
                               "(every record of one --sensitive value; dp-synthetic "
                               "only).")] = None,
    max_records_per_identity: Annotated[int | None, typer.Option(
        "--max-records-per-identity", help="Records of one identity the DP statistics use "
                                           "(--privacy-unit identity; default 10).")] = None,
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
    dask: Annotated[bool, typer.Option(
        "--dask", help="Certify on a stratified panel sample, then release bucket by bucket on "
                       "a local dask cluster (Parquet in, a folder of Parquet parts out; the "
                       "judge evaluates the bucketed rule; needs the 'scale' extra).")] = False,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="As --dask, on this dask scheduler, tcp://HOST:PORT (workers "
                            "must share the output's file system).")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Workers of the local dask cluster (default: one per core).")] = None,
    bucket_size: Annotated[int, typer.Option(
        "--bucket-size", help="Records per bucket on the dask path (sets are drawn within a "
                              "bucket; the search judges this rule).")] = 50_000,
    sample_records: Annotated[int, typer.Option(
        "--sample-records", help="Records of the stratified panel sample the dask path "
                                 "searches and confirms on.")] = 50_000,
) -> None:
    """Search methods and settings, certify one against every risk, and release.

    First the plan, from the table's shape alone: which risks at which level this table can
    show (the smallest membership advantage its sample can rule out); a level it cannot show
    stops the run at once with one line naming the ways forward (more identities or records,
    --epsilon E --privacy-unit identity with --public-data, or --accept-risk LEVEL-RISK
    --reason "..."). Then every applicable method's settings are judged on a tuning split
    against every risk (recognition: the upper 95% bound of the cross-fitted worst attack's
    advantage over max(chance, control) within --target-advantage; membership and inference
    on members: the upper 95% bound of their membership advantage TPR − FPR within the
    --level's target at the record and identity levels, or covered by a strict DP guarantee
    whose bound is within it; a level that cannot be shown is "inconclusive at this size"
    and fails unless accepted; utility: CAS). The
    most useful setting that meets every target is re-evaluated on a fresh split with a fresh
    seed; only if that confirmation meets every target too is the whole table anonymized and
    written with OUTPUT.manifest.json (certified) and OUTPUT.report/. Otherwise nothing is
    written and the exit status is 1. Column roles work as in anonymize: label columns without
    a role are dropped.

    With --epsilon E the search considers only the DP methods, every setting at exactly E
    (the budget is yours: never searched upwards; the other parameters vary). With
    --public-data FILE (people not in the release, same feature columns) the clipping box,
    centre and clip radius come from it and the guarantee is strict; without it the bounds
    come from the data and the manifest, report and terminal say "not strict". The manifest
    and report state epsilon, delta, the privacy unit and strict or not; the certificate's
    empirical risks must be met all the same.

    With --dask or --scheduler (Parquet in, a folder of Parquet parts out) the search and
    the confirmation run on a stratified panel sample (--sample-records), judging the bucketed
    rule the release uses (sets drawn within random buckets of --bucket-size records); only
    methods that mix the records given can be bucketed (the others are skipped, with the
    reason). The certified setting then releases every record bucket by bucket, out of core.

    With --dask --epsilon E --public-data FILE the search considers the DP method whose
    statistics are sums (dp-basis, record unit), each setting judged on the panel sample as
    the stream applies it; the certified setting's statistics are then fitted on every record
    in streaming passes over the Parquet partitions (one partition in memory at a time) and
    each partition's records are sampled from the noisy model, written as one part in the
    input's order; the passes run as dask reductions on the local cluster (--workers) or on
    the --scheduler named. Without --public-data it is refused: the bounds must be public.
    """
    from ..attack import parse_models, parse_modes
    from ..certification import REPORT_FILES, NotCertified, certify, report_dir
    from ..evaluation.options import EvaluationOptions

    bucketed = dask or scheduler is not None
    streamed = bucketed and dp_epsilon is not None  # the DP model streamed over partitions
    refuse_unused({  # an option of the dask path on the in-memory path is an error, not ignored
        "workers": (dask and not scheduler,
                    "it sizes the local dask cluster of --dask (add --dask to use it; a "
                    "--scheduler brings its own workers)"),
        "bucket_size": (bucketed and not streamed,
                        "it sets the buckets of the dask path's mixing methods (add --dask to "
                        "use it; --epsilon streams partitions, it draws no buckets)"),
        "sample_records": (bucketed, "it sets the panel sample of the dask path (add --dask "
                                     "to use it)"),
        "dask": (not scheduler, "--scheduler already runs the dask path on that cluster"),
    })
    if not bucketed:
        format_of(output)
        check_output_file(output, [input])
    man_path = manifest_path(output)
    rep_dir = report_dir(output)
    check_output_file(man_path, [input])
    check_output_dir(rep_dir, [input], REPORT_FILES)
    if public_data is not None:  # never written over
        for out_path in ([] if bucketed else [output]) + [man_path]:
            check_output_file(out_path, [public_data])
        check_output_dir(rep_dir, [public_data], REPORT_FILES)
    if bucketed and public_data is not None and dp_epsilon is None:
        raise BioanonError("--public-data belongs to a declared privacy budget; add "
                           "--epsilon E or drop it")
    add = parse_weighted(additional, 1.0, "--additional")
    accepted = parse_accept(accept_risk, reason)
    lv = parse_level(level, target_membership, target_inference)
    roles = Roles(sensitive=sensitive, interest=interest, additional=add,
                  identifying=[*(identifying or []), *(label or [])], quasi=quasi or [],
                  keep=keep or [])
    roles.of()  # one role per column, before any work
    method_list = ([m.strip() for m in methods.split(",") if m.strip()] if methods else None)
    if methods is not None and not method_list:
        raise BioanonError("--methods is empty; name methods, e.g. --methods selective-mean")
    model_list = parse_models(models) if models.strip() != "all" else "all"
    modes = parse_modes(attackers)
    judge = EvaluationOptions.of(models=model_list, attackers=modes, group=group, n_jobs=jobs,
                                 target_advantage=target_advantage,
                                 level=lv, accept_risks=accepted)
    options: dict[str, Any] = dict(methods=method_list, random_state=seed,
                                   budget_minutes=budget_minutes, exhaustive=exhaustive,
                                   min_utility=min_utility,
                                   keep_sensitive=keep_sensitive, options=judge,
                                   report_closest=True)  # a refusal writes its report
    if streamed:
        assert dp_epsilon is not None
        _release_streamed(input, output, roles, options, dp_epsilon, dp_delta, public_data,
                          privacy_unit, max_records_per_identity,
                          sample_records=sample_records, as_json=as_json, force=force,
                          scheduler=scheduler, local=dask, workers=workers)
        return
    if bucketed:
        _release_bucketed(input, output, roles, options, force=force, scheduler=scheduler,
                          local=dask, workers=workers, bucket_size=bucket_size,
                          sample_records=sample_records, as_json=as_json)
        return
    table = read_release_input(input, [*roles.of(), group], keep_as_feature)
    input_sha256 = file_sha256(input)
    options.update(_budget_options(dp_epsilon, dp_delta, public_data, privacy_unit,
                                   max_records_per_identity, input_sha256))
    if keep_sensitive:
        _unfit_warning()
    _print_plan(table, roles, judge, options, as_json)  # before any setting is judged
    try:
        with progress_bar("certifying") as update, warnings.catch_warnings():
            if dp_epsilon is not None:  # one statement line below instead of one per fit
                warnings.simplefilter("ignore", PrivacyLeakWarning)
            try:
                out = certify(table, roles, force=force, input_name=input.name,
                              input_sha256=input_sha256, progress=update, **options)
            except PlanRefused as exc:  # the plan's line, in flags
                raise BioanonError(exc.plan.refusal_line(cli=True)) from None
    except NotCertified as exc:
        print_search(exc.rows, exc.skipped, exc.not_evaluated)
        _refuse(exc, as_json, output)
    print_search(out.rows, out.search.skipped, out.search.not_evaluated)
    unnamed = [c["name"] for c in out.manifest["columns"]
               if c["role"] == NO_ROLE and not c["released"]]
    if unnamed:
        err_console.print(f"dropped label columns without a role: {unnamed} (name one with "
                          "--keep to release it)", highlight=False, soft_wrap=True)
    notes = notes_console(as_json)
    out.write(output)  # the report first, the release pair last (together)
    print_summary(out.report, as_json)
    notes.print(f"certified: {out.setting}; wrote {output} ({out.table.n_records} records), "
                f"{man_path.name} and {rep_dir.name}/", highlight=False, soft_wrap=True)
    _print_budget(out.manifest.get("differential_privacy"), as_json)


def _print_plan(table: Any, roles: Roles, judge: Any, options: dict[str, Any],
                as_json: bool) -> None:
    """The plan, from the table's shape alone, printed before the search (certify() refuses
    a level it cannot show, in one line, right after)."""
    from ..certification.memory import certification_plan, declared_budget

    for column in dict.fromkeys([roles.interest, roles.sensitive, *roles.additional]):
        table.label(column, min_classes=1)  # a missing or empty label: said before the plan
    keys = ("epsilon", "delta", "public", "privacy_unit", "max_records_per_identity",
            "public_name")
    budget = declared_budget(table, roles.sensitive, **{k: options.get(k) for k in keys})
    guarantee = budget.guarantee(table, roles.sensitive) if budget is not None else None
    plan = certification_plan(table, roles, judge, guarantee)
    notes_console(as_json).print(plan.render(), highlight=False, soft_wrap=True)


def _budget_options(epsilon: float | None, delta: float | None, public_data: Path | None,
                    privacy_unit: str | None, max_records: int | None,
                    input_sha256: str) -> dict[str, Any]:
    """certify()'s budget keywords; the public table read and checked (one-line errors)."""
    from ..table import FeatureTable

    public: FeatureTable | Path | None = None
    if public_data is not None and epsilon is not None:
        try:
            public = FeatureTable.read(public_data)  # non-numeric columns: labels, unused
        except BioanonError as exc:
            raise BioanonError(f"--public-data: {exc}") from None
        if public_data.is_file() and file_sha256(public_data) == input_sha256:
            raise BioanonError("--public-data is the input itself; give a table of people NOT "
                               "in the release (auxiliary or public data)")
    elif public_data is not None:
        public = public_data  # refused by certify() below: no budget declared
    return dict(epsilon=epsilon, delta=delta, public=public, privacy_unit=privacy_unit,
                max_records_per_identity=max_records,
                public_name=None if public_data is None else public_data.name)


def _print_budget(statement: dict[str, Any] | None, as_json: bool) -> None:
    """The declared budget, strict or not, on the terminal (the manifest holds the same)."""
    if not statement:
        return
    line = (f"differential privacy: epsilon {statement['epsilon']:g}, delta "
            f"{statement['delta']:.3g} ({statement['delta_rule']}), privacy unit "
            f"{statement['privacy_unit']}; ")
    if statement["strict"]:
        notes_console(as_json).print(line + statement["statement"], highlight=False,
                                     soft_wrap=True)
    else:
        err_console.print("warning: " + line + statement["statement"], highlight=False,
                          soft_wrap=True)


def _unfit_warning() -> None:
    err_console.print("warning: --keep-sensitive releases the sensitive column: for an "
                      "auditor's attack only, unfit for a real release", highlight=False)


def print_search(rows: list[dict[str, Any]], skipped: list[dict[str, Any]],
                  not_evaluated: list[str]) -> None:
    """One line per evaluated setting, per skipped setting, and the budget's note."""
    from ..certification.search import row_line as search_row_line

    if rows:  # the tuning split's figures: the report and the verdict are the fresh split's
        err_console.print("search, on the tuning split (the verdict and the report below are "
                          "the chosen setting's, judged again on a fresh split):",
                          highlight=False, soft_wrap=True)
    for row in rows:
        err_console.print(search_row_line(row), highlight=False, soft_wrap=True)
    for skip in skipped:  # every setting or method left out is named, with its reason
        what = skip.get("setting") or skip.get("method")
        err_console.print(f"  {what}: skipped ({skip['reason']})", highlight=False,
                          soft_wrap=True)
    if not_evaluated:
        err_console.print(f"budget reached: {len(not_evaluated)} setting(s) not "
                          f"evaluated: {', '.join(not_evaluated)}", highlight=False,
                          soft_wrap=True)


def _refuse(exc: Any, as_json: bool, output: Path) -> NoReturn:
    """Print why nothing was certified, write the closest setting's report (NOT certified;
    no table, no manifest) and exit 1 (not a user error)."""
    written = exc.write_report(output)
    where = (f"the closest setting's report (NOT certified) is in {written}/; no table or "
             "manifest was written" if written is not None else "nothing was written")
    if as_json:
        print_json({"certified": False, "message": str(exc), "closest": exc.setting,
                    "short_of": exc.short_of, "confirmation": exc.confirmation,
                    "report": None if written is None else str(written)})
    elif exc.confirmation is not None:
        console.print(exc.confirmation["sentence"], highlight=False, soft_wrap=True)
    err_console.print(f"{exc}; {where}", highlight=False, soft_wrap=True)
    raise typer.Exit(1)


def _release_bucketed(input: Path, output: Path, roles: Roles, options: dict[str, Any], *,
                      force: bool, scheduler: str | None, local: bool, workers: int | None,
                      bucket_size: int, sample_records: int, as_json: bool) -> None:
    """``release --dask/--scheduler``: certify on a panel sample, release bucket by bucket."""
    from .._version import __version__
    from ..certification import NotCertified, report_dir
    from ..certification.parquet import certify_parquet
    from ..scale.bucketed import POOL_PER_SET

    if roles.keep or roles.quasi or force:
        raise BioanonError("--keep/--quasi/--force are not available on the dask path (the "
                           "join check reads the labels in memory); release those columns "
                           "with the in-memory path")
    if options["keep_sensitive"]:
        _unfit_warning()
    try:
        with progress_bar("certifying (panel sample), then releasing (dask)") as update:
            out = certify_parquet(input, output, roles, scheduler=scheduler, local=local,
                                  n_workers=workers, bucket_size=bucket_size,
                                  sample_records=sample_records, version=__version__,
                                  progress=update, **options)
    except NotCertified as exc:
        print_search(exc.rows, exc.skipped, exc.not_evaluated)
        _refuse(exc, as_json, output)
    print_search(out.rows, out.search.skipped, out.search.not_evaluated)
    notes = notes_console(as_json)
    print_summary(out.report, as_json)
    s = out.sample
    g = out.manifest.get("params", {}).get("g")
    fewest = out.bucketed.smallest_class_in_a_bucket
    if isinstance(g, int) and fewest < POOL_PER_SET * g:
        err_console.print(
            f"note: a bucket holds only {fewest} records of its smallest interest class, fewer "
            f"than {POOL_PER_SET} × g = {POOL_PER_SET * g}: sets drawn from so small a pool make "
            "the release depart from the whole-class one; raise --bucket-size",
            highlight=False, soft_wrap=True)
    notes.print(f"certified: {out.setting} (judged bucketed on a panel sample of "
                f"{s['n_records']:,} of {s['total_records']:,} records); wrote {output}/ "
                f"({out.bucketed.n_records:,} records in {out.bucketed.n_buckets} bucket "
                f"parts), {manifest_path(output).name} and {report_dir(output).name}/",
                highlight=False, soft_wrap=True)


def _release_streamed(input: Path, output: Path, roles: Roles, options: dict[str, Any],
                      epsilon: float, delta: float | None, public_data: Path | None,
                      privacy_unit: str | None, max_records: int | None, *,
                      sample_records: int, as_json: bool, force: bool,
                      scheduler: str | None = None, local: bool = True,
                      workers: int | None = None) -> None:
    """``release --dask --epsilon E --public-data FILE``: certify a streamable DP method on a
    panel sample, then release every partition in streaming passes on dask."""
    from .._version import __version__
    from ..certification import NotCertified, report_dir
    from ..certification.streamed import certify_streamed
    from ..table import FeatureTable

    if roles.keep or roles.quasi or force:
        raise BioanonError("--keep/--quasi/--force are not available on the dask path (the "
                           "join check reads the labels in memory); release those columns "
                           "with the in-memory path")
    public = None
    if public_data is not None:
        try:
            public = FeatureTable.read(public_data)  # non-numeric columns: labels, unused
        except BioanonError as exc:
            raise BioanonError(f"--public-data: {exc}") from None
    if options["keep_sensitive"]:
        _unfit_warning()
    try:
        with progress_bar("certifying (panel sample), then releasing (streamed)") as update, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # bounds are public here
            out = certify_streamed(input, output, roles, epsilon=epsilon, delta=delta,
                                   public=public,
                                   public_name=None if public_data is None else public_data.name,
                                   privacy_unit=privacy_unit,
                                   max_records_per_identity=max_records,
                                   sample_records=sample_records, version=__version__,
                                   scheduler=scheduler, local=local, n_workers=workers,
                                   progress=update, **options)
    except NotCertified as exc:
        print_search(exc.rows, exc.skipped, exc.not_evaluated)
        _refuse(exc, as_json, output)
    print_search(out.rows, out.search.skipped, out.search.not_evaluated)
    print_summary(out.report, as_json)
    s, r = out.sample, out.streamed
    notes_console(as_json).print(
        f"certified: {out.setting} (judged as streamed on a panel sample of "
        f"{s['n_records']:,} of {s['total_records']:,} records); wrote {output}/ "
        f"({r.n_records:,} records in {r.n_parts} parts, {r.passes} passes over the input), "
        f"{manifest_path(output).name} and {report_dir(output).name}/",
        highlight=False, soft_wrap=True)
    _print_budget(out.manifest.get("differential_privacy"), as_json)

