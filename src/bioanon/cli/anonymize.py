"""The ``anonymize`` command: one method at one setting, released without a certificate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._version import __version__
from ..errors import BioanonError
from ..io import check_output_file, sha256_in_background
from ..layout import parse_layout, refuse_unread_layout, with_layout
from ..release import NO_ROLE, Roles, manifest_path, release, write_release
from ..release_unit import check_unit_paths
from ..table import format_of
from .common import (
    OUT_FLAGS,
    AddOpt,
    InputArg,
    InterestOpt,
    LabelOpt,
    MethodChoice,
    SensitiveOpt,
    app,
    console,
    err_console,
    method_options,
    parse_weighted,
    progress_bar,
    read_release_input,
    refuse_unused,
    refuse_weights,
    user_errors,
)
from .options import ForceOpt, IdentOpt, KeepAsFeatureOpt, KeepOpt, LayoutOpt, QuasiOpt


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
    keep_as_feature: KeepAsFeatureOpt = None,
    force: ForceOpt = False,
    layout: LayoutOpt = None,
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
        "layout": (not on_dask, "it declares the trajectories of the in-memory release"),
    })
    if layout is not None:
        parse_layout(layout)  # the grammar, before any work
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
                            identifying or [], label or [], keep_sensitive, scheduler,
                            dask, bucket_size, fit_sample, workers, keep_as_feature or [])
        return
    format_of(output)
    man_path = manifest_path(output)
    check_output_file(output, [input])
    check_output_file(man_path, [input])
    check_unit_paths(output)  # OUTPUT.report, OUTPUT.refused-report, the journal
    add = parse_weighted(additional, 1.0, "--additional")
    roles = Roles(sensitive=sensitive, interest=interest, additional=list(add),
                  identifying=identifying or [], quasi=quasi or [],
                  keep=keep or [], other=label or [])
    roles.of()  # one role per column, before any work
    anon = choice.build(interest, sensitive, list(add))
    refuse_unread_layout(anon, layout)  # a layout the method reads nothing of: refused
    method = choice.method
    if anon.fit_on_auxiliary and getattr(anon, "decoupler", None) is None:
        raise BioanonError(
            "releasing with the sanitizer needs --decoupler: its DP accounting assumes a "
            "decoupler trained on auxiliary data (bioanon train-decoupler AUX -o decoupler.pt)")
    with sha256_in_background(input) as input_sha256:  # hashed while read and released
        table = with_layout(read_release_input(input, list(roles.of()), keep_as_feature),
                            layout)
        choice.check_on(anon, table)  # a parameter the table leaves idle: refused
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
        from ..anonymize.relevance import relevance_sample_size  # scikit-learn: not at start

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
                        identifying: list[str], other: list[str], keep_sensitive: bool,
                        scheduler: str | None,
                        local: bool, bucket_size: int, fit_sample: int,
                        workers: int | None, keep_as_feature: list[str]) -> None:
    """The dask path of ``anonymize`` (policy and checks in :mod:`bioanon.scale.run`)."""
    from ..scale.bucketed import POOL_PER_SET
    from ..scale.run import DaskRun, anonymize_bucketed

    add = parse_weighted(additional, 1.0, "--additional")
    anon = choice.build(interest, sensitive, list(add))
    method, seed = choice.method, choice.seed
    if seed is not None:
        err_console.print("note: --seed fixes the randomness; the seed is a secret key, keep it "
                          "private (it is not written to the output)", highlight=False)
    with progress_bar("anonymizing (dask, bucket by bucket)") as update:
        update(0, 1, "starting")
        roles = Roles(sensitive=sensitive, interest=interest, additional=list(add),
                      identifying=identifying, other=other)
        roles.of()  # one role per column, before any work
        run = DaskRun(bucket_size, fit_sample, seed, scheduler, local, workers, __version__)
        result = anonymize_bucketed(input, output, anon, method, roles, run,
                                    keep_sensitive=keep_sensitive,
                                    keep_as_feature=keep_as_feature, progress=update)
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
