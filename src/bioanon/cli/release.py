"""Commands that release and judge data: ``anonymize``, ``evaluate``, ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._version import __version__
from ..anonymize.relevance import relevance_sample_size
from ..errors import BioanonError
from ..evaluation.seeds import derive_seed
from ..io import (
    atomic_path,
    check_output_dir,
    check_output_file,
    sha256_in_background,
)
from ..release import (
    NO_ROLE,
    Roles,
    manifest_path,
    release,
    write_release,
)
from ..table import format_of
from .common import (
    OUT_FLAGS,
    AddOpt,
    InputArg,
    InterestOpt,
    JsonOpt,
    LabelOpt,
    MethodChoice,
    SensitiveOpt,
    app,
    console,
    err_console,
    method_options,
    notes_console,
    parse_weighted,
    print_summary,
    progress_bar,
    read_input,
    read_release_input,
    refuse_unused,
    refuse_weights,
    user_errors,
)

IdentOpt = Annotated[list[str] | None, typer.Option(
    "--identifying", help="Identifying column (id, name, file name): read, never released.")]
QuasiOpt = Annotated[list[str] | None, typer.Option(
    "--quasi", help="Quasi-identifying column to release; checked by the join check.")]
KeepOpt = Annotated[list[str] | None, typer.Option(
    "--keep", help="Label column to release as it is; checked by the join check.")]
ForceOpt = Annotated[bool, typer.Option(
    "--force/--no-force", help="Release even when kept columns single out identities (recorded).")]

#: the evaluation's --seed: what is written and what is not
EvalSeedOpt = Annotated[int | None, typer.Option(
    "--seed", help="Evaluation seed (default 0): fixes the split, the recognizers and the "
                   "training mixes, and is written to report.json and report.html. The "
                   "anonymizer inside the evaluation never uses it: it draws from a seed "
                   "derived from it by a one-way hash, which is not written anywhere. It is "
                   "not a release key: releases use anonymize --seed.")]
TargetOpt = Annotated[float, typer.Option(
    "--target-advantage", help="Recognition target of the verdict: the upper end of the 95% "
                               "interval of the worst attack's advantage over max(chance, "
                               "control) must be at most this.")]
TargetMembershipOpt = Annotated[float, typer.Option(
    "--target-membership", help="Membership target: the upper end of the 95% interval of the "
                                "strongest membership attacker's AUC (chosen on one half of "
                                "the candidates, scored on the other) must be at most this.")]
TargetInferenceOpt = Annotated[float, typer.Option(
    "--target-inference", help="Inference target: the upper end of the 95% interval of an "
                               "attacker's advantage in inferring members' released labels "
                               "over the same attack on non-members must be at most this.")]
AcceptRiskOpt = Annotated[list[str] | None, typer.Option(
    "--accept-risk", help="Accept a named risk explicitly (LEVEL-RISK, e.g. "
                          "identity-membership) with --reason; recorded in the report and the "
                          "manifest. Repeat both to accept several.")]
ReasonOpt = Annotated[list[str] | None, typer.Option(
    "--reason", help="Why the risk named by the matching --accept-risk is accepted.")]


def parse_accept(accept: list[str] | None, reason: list[str] | None) -> dict[str, str]:
    """Pair ``--accept-risk`` names with their ``--reason`` (one each, in order)."""
    from ..evaluation.risks import check_accepted

    names, why = list(accept or []), list(reason or [])
    if not names and not why:
        return {}
    if len(why) != len(names):
        raise BioanonError(f"{len(names)} --accept-risk but {len(why)} --reason; give one "
                           "--reason \"...\" after each --accept-risk")
    return check_accepted(dict(zip(names, why, strict=True)))


@app.command()
@user_errors
@method_options
def anonymize(
    input: InputArg,
    output: Annotated[Path, typer.Option(*OUT_FLAGS, help="Released table to write.")],
    sensitive: SensitiveOpt,
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    identifying: IdentOpt = None,
    quasi: QuasiOpt = None,
    keep: KeepOpt = None,
    force: ForceOpt = False,
    *,
    choice: MethodChoice,
    keep_sensitive: Annotated[bool, typer.Option(
        help="Keep the sensitive column in the output (for an auditor's attack; unfit for a "
             "real release).")] = False,
    keep_order: Annotated[bool, typer.Option(
        help="Keep the input's record order. By default the release is shuffled, since row "
             "position links a released record to its original.")] = False,
    dask: Annotated[bool, typer.Option(
        "--dask", help="Release bucket by bucket on a local dask cluster (Parquet in, a folder "
                       "of Parquet parts out; needs the 'scale' extra).")] = False,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", help="Release bucket by bucket on this dask scheduler, "
                            "tcp://HOST:PORT (workers must share the output's file system).")
    ] = None,
    bucket_size: Annotated[int, typer.Option(
        "--bucket-size", help="Records per bucket on the dask path (sets are drawn within a "
                              "bucket; each holds every interest class in proportion).")
    ] = 50_000,
    fit_sample: Annotated[int, typer.Option(
        "--fit-sample", help="Records of the stratified sample the dask path fits on.")
    ] = 20_000,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Workers of the local dask cluster (default: one per core).")] = None,
) -> None:
    """Anonymize a feature table and write the release plus a manifest (no secrets).

    Every label column needs a role (--interest, --additional, --sensitive, --identifying or
    --label, --quasi, --keep); the others are dropped. The output is NOT certified: judge it
    with `bioanon evaluate` before publishing.
    """
    on_dask = bool(dask or scheduler)
    refuse_unused({
        "bucket_size": (on_dask, "it sets the buckets of the dask path (add --dask to use "
                                 "it)"),
        "fit_sample": (on_dask, "it sets the fit sample of the dask path (add --dask to use "
                                "it)"),
        "workers": (dask and not scheduler, "it sizes the local dask cluster of --dask (a "
                    "--scheduler brings its own workers)"),
        "dask": (not scheduler, "--scheduler already runs the dask path on that cluster"),
    })
    refuse_weights(additional, "anonymize")
    if on_dask:
        if keep_order:
            raise BioanonError("--keep-order cannot be used with --dask/--scheduler: the "
                               "bucketed release is always shuffled; leave it out")
        if keep or quasi or force:
            raise BioanonError("--keep/--quasi/--force are not available on the dask path "
                               "(the join check reads the labels in memory); release those "
                               "columns with the in-memory path")
        _anonymize_bucketed(input, output, choice, interest, additional, sensitive,
                            [*(identifying or []), *(label or [])], keep_sensitive, scheduler,
                            dask, bucket_size, fit_sample, workers)
        return
    format_of(output)
    man_path = manifest_path(output)
    check_output_file(output, [input])
    check_output_file(man_path, [input])
    add = parse_weighted(additional, 1.0, "--additional")
    roles = Roles(sensitive=sensitive, interest=interest, additional=list(add),
                  identifying=[*(identifying or []), *(label or [])], quasi=quasi or [],
                  keep=keep or [])
    roles.of()  # one role per column, before any work
    anon = choice.build(interest, sensitive, list(add))
    method = choice.method
    if anon.fit_on_auxiliary and getattr(anon, "decoupler", None) is None:
        raise BioanonError(
            "releasing with the sanitizer needs --decoupler: its DP accounting assumes a "
            "decoupler trained on auxiliary data (bioanon train-decoupler AUX -o decoupler.pt)")
    with sha256_in_background(input) as input_sha256:  # hashed while read and released
        table = read_release_input(input, list(roles.of()))
        anon.check_changes(table)  # a setting that leaves the records as they are: refused
        if choice.seed is not None:
            err_console.print("note: --seed fixes the randomness; the seed is a secret key, keep "
                              "it private (it is not written to the output)", highlight=False)
        with progress_bar("anonymizing") as update:
            result = release(table, anon, roles, keep_sensitive=keep_sensitive,
                             keep_order=keep_order, force=force, method=method,
                             input_name=input.name, progress=update)
        result.manifest["input"]["sha256"] = input_sha256()
    if result.check is not None and not result.check.passed:
        err_console.print(f"warning: --force: the released columns {result.check.columns} name "
                          f"the '{sensitive}' of {result.check.rate:.1%} of records by a join "
                          f"(limit {result.check.limit:.1%})", highlight=False)
    unnamed = [c for c in result.dropped if result.manifest_roles().get(c) == NO_ROLE]
    if unnamed:
        err_console.print(f"dropped label columns without a role: {unnamed} (name one with "
                          "--keep to release it)", highlight=False, soft_wrap=True)
    if hasattr(anon, "mask_"):  # feature relevance was fitted (on a bounded sample)
        result.manifest["relevance_fit"] = {
            "records": relevance_sample_size(table.n_records,
                                             getattr(anon, "relevance_records", None)),
            "of": table.n_records,
            "sample": "stratified by the attribute scored"}
    write_release(result.table, result.manifest, output)
    console.print(f"wrote {output} ({result.table.n_records} records) and {man_path.name}; "
                  "not certified: judge it with bioanon evaluate before publishing",
                  highlight=False)


def _anonymize_bucketed(input: Path, output: Path, choice: MethodChoice, interest: str | None,
                        additional: list[str] | None, sensitive: str,
                        identifying: list[str], keep_sensitive: bool, scheduler: str | None,
                        local: bool, bucket_size: int, fit_sample: int,
                        workers: int | None) -> None:
    """The dask path of ``anonymize`` (policy and checks in :mod:`bioanon.scale.run`)."""
    from ..scale.bucketed import POOL_PER_SET
    from ..scale.run import anonymize_bucketed

    add = parse_weighted(additional, 1.0, "--additional")
    anon = choice.build(interest, sensitive, list(add))
    method, seed = choice.method, choice.seed
    if seed is not None:
        err_console.print("note: --seed fixes the randomness; the seed is a secret key, keep it "
                          "private (it is not written to the output)", highlight=False)
    with progress_bar("anonymizing (dask, bucket by bucket)") as update:
        update(0, 1, "starting")
        result = anonymize_bucketed(input, output, anon, method, interest=interest,
                                    additional=list(add), sensitive=sensitive,
                                    labels=identifying, keep_sensitive=keep_sensitive,
                                    bucket_size=bucket_size, fit_sample=fit_sample, seed=seed,
                                    scheduler=scheduler, local=local, n_workers=workers,
                                    version=__version__, progress=update)
        update(1, 1, "done")
    console.print(f"wrote {output}/ ({result.n_records} records in {result.n_buckets} "
                  f"bucket parts) and {output.name}.manifest.json")
    g = getattr(anon, "g", None)
    if isinstance(g, int) and result.smallest_class_in_a_bucket < POOL_PER_SET * g:
        err_console.print(
            f"note: a bucket holds only {result.smallest_class_in_a_bucket} records of its "
            f"smallest interest class, fewer than {POOL_PER_SET} × g = {POOL_PER_SET * g}: sets "
            "drawn from so small a pool make the release depart from the whole-class one "
            "(more private, less useful for that class); raise --bucket-size",
            highlight=False, soft_wrap=True)


@app.command()
@user_errors
@method_options(seed_option=EvalSeedOpt)
def evaluate(
    input: InputArg,
    sensitive: SensitiveOpt,
    out: Annotated[Path, typer.Option(*OUT_FLAGS, help="Folder for report.json and .html.")],
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    target_advantage: TargetOpt = 0.05,
    target_membership: TargetMembershipOpt = 0.6,
    target_inference: TargetInferenceOpt = 0.05,
    accept_risk: AcceptRiskOpt = None,
    reason: ReasonOpt = None,
    preview: Annotated[bool, typer.Option(
        "--preview/--no-preview",
        help="Add a contact sheet of held-out originals and their released versions to "
             "report.html (pixel tables; uncaptioned). The report then shows real faces: keep "
             "it private.")] = False,
    *,
    choice: MethodChoice,
    models: Annotated[str, typer.Option(
        help="Attack recognizers, comma-separated, or 'all' (forest, linear_svm, rbf_svm, "
             "knn, mlp, logreg, pca_svm, hgb; on face pixels with the face extra, also the "
             "pre-trained dlib_embedding).")] = "forest,linear_svm,knn",
    attackers: Annotated[str, typer.Option(
        help="Attacker modes, comma-separated, or 'all': naive, parrot, parrot25, parrot50, "
             "parrot75, reverse, linkage.")] = "all",
    selection: Annotated[str, typer.Option(
        help="Identity-selection strategies: random, classification, metadata, distinctive, "
             "center; 'auto' (those that apply) or 'none'.")] = "auto",
    identities: Annotated[str | None, typer.Option(
        help="Identity counts of the selection curves, e.g. 3,6,12 (default: 50%, 25%, ... "
             "down to 3).")] = None,
    n_random: Annotated[int, typer.Option(help="Repeats of the random selection.")] = 10,
    metadata: Annotated[str | None, typer.Option(
        help="Per-identity attribute columns for the metadata strategy, comma-separated "
             "(default: every label column with one value per identity).")] = None,
    group: Annotated[str | None, typer.Option(
        help="Column of groups kept whole on one side of the split: the identity (for a "
             "sensitive attribute such as gender) or a session id.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Parallel fits (-1: all cores).")] = -1,
    test_size: Annotated[float, typer.Option(
        help="Share of each identity's records held out (closed set).")] = 0.25,
    as_json: JsonOpt = False,
) -> None:
    """Measure utility and privacy of a method against the attack panel on a held-out split."""
    from ..attack import parse_models, parse_modes
    from ..attack.selection import parse_strategies
    from ..evaluation import evaluate as run_evaluation

    check_output_dir(out, [input], ["report.json", "report.html"])
    add = parse_weighted(additional, 1.0, "--additional")
    accepted = parse_accept(accept_risk, reason)
    eval_seed = 0 if choice.seed is None else choice.seed
    # the anonymizer draws from a seed derived one way from the evaluation seed (not written)
    anon = choice.build(interest, sensitive, list(add),
                        seed=derive_seed(eval_seed, "anonymizer"))
    model_list = parse_models(models) if models.strip() != "all" else "all"
    modes = parse_modes(attackers)
    strategies, _ = parse_strategies(selection)
    refuse_unused({
        "n_random": ("random" in strategies, "it repeats the random identity selection, which "
                                             "--selection leaves out"),
        "metadata": ("metadata" in strategies, "it feeds the metadata selection, which "
                                               "--selection leaves out"),
        "identities": (bool(strategies), "it sets the identity counts of the selection curves "
                                         "and --selection is none"),
    })
    if interest is None:
        raise BioanonError("evaluate needs --interest (the attribute whose utility is measured)")
    meta_cols = [c.strip() for c in metadata.split(",") if c.strip()] if metadata else None
    table = read_input(input, [interest, *add, sensitive, group, *(meta_cols or []),
                               *(label or [])])
    with progress_bar("evaluating") as update:
        report = run_evaluation(table, interest, sensitive, additional=add, anonymizer=anon,
                                models=model_list, test_size=test_size,
                                random_state=eval_seed, progress=update, attackers=modes,
                                selection=selection,
                                identities=identities, n_random=n_random, metadata=meta_cols,
                                group=group, n_jobs=jobs, target_advantage=target_advantage,
                                preview=preview, target_membership=target_membership,
                                target_inference=target_inference, accept_risks=accepted)
    paths = report.write(out)
    print_summary(report, as_json)
    notes = notes_console(as_json)
    notes.print(f"wrote {paths['json']} and {paths['html']}")
    if report.figures:
        notes.print(f"note: {paths['html']} contains a contact sheet of original records "
                    "(--preview); keep it private", highlight=False, markup=False)
    elif preview:
        notes.print("note: no contact sheet: the features are not pixels", highlight=False)


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
