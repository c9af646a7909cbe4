"""Commands that release and judge data: ``anonymize``, ``evaluate``, ``demo``."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from .. import __version__
from ..errors import BioanonError
from ..io import check_not_input, file_sha256, write_text_atomic
from ..methods import build_method
from ..relevance import relevance_sample_size
from ..table import format_of
from .common import (
    AddOpt,
    BlockOpt,
    DecouplerOpt,
    EpsOpt,
    GOpt,
    InterestOpt,
    KOpt,
    LabelOpt,
    MethodOpt,
    ParamOpt,
    RelOpt,
    ReplOpt,
    RpOpt,
    RqOpt,
    RsOpt,
    SamplerOpt,
    SeedOpt,
    SensitiveOpt,
    SigmaOpt,
    TOpt,
    WOpt,
    app,
    console,
    err_console,
    method_options,
    parse_weighted,
    print_summary,
    progress_bar,
    read_input,
    user_errors,
)

#: provenance of the input that may travel with a release (nothing that could undo it)
PUBLIC_META = ("image_shape", "value_range", "features", "window", "hop", "device")


@app.command()
@user_errors
def anonymize(
    input: Annotated[Path, typer.Argument(help="Feature table: .parquet, .csv or .npz.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Released table to write.")],
    sensitive: SensitiveOpt,
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    method: MethodOpt = "selective-mean",
    g: GOpt = 32, t: TOpt = 0.8, w: WOpt = 10.0, rp: RpOpt = 0.01, rq: RqOpt = None,
    rs: RsOpt = 0.0, relevance: RelOpt = "forest", seed: SeedOpt = None,
    allow_replacement: ReplOpt = False, k: KOpt = None, sigma: SigmaOpt = None,
    block: BlockOpt = None, epsilon: EpsOpt = None, decoupler: DecouplerOpt = None,
    sampler: SamplerOpt = None, param: ParamOpt = None,
    keep_sensitive: Annotated[bool, typer.Option(
        help="Keep the sensitive column in the output (for the owner's own checks).")] = False,
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
    """Anonymize a feature table and write the release plus a manifest (no secrets)."""
    if dask or scheduler:
        if keep_order:
            raise BioanonError("--keep-order cannot be used with --dask/--scheduler: the "
                               "bucketed release is always shuffled; leave it out")
        _anonymize_bucketed(input, output, method, interest, additional, sensitive, label,
                            keep_sensitive, seed, scheduler, dask, bucket_size, fit_sample,
                            workers, method_options(method, interest,
                                                    parse_weighted(additional, 1.0,
                                                                   "--additional"),
                                                    sensitive, seed, g, t, w, rp, rq, rs,
                                                    relevance, allow_replacement, k, sigma,
                                                    block, epsilon, decoupler, sampler, param))
        return
    format_of(output)
    manifest_path = output.with_name(output.name + ".manifest.json")
    check_not_input(output, [input])
    check_not_input(manifest_path, [input])
    add = parse_weighted(additional, 1.0, "--additional")
    opts = method_options(method, interest, add, sensitive, seed, g, t, w, rp, rq, rs,
                          relevance, allow_replacement, k, sigma, block, epsilon, decoupler,
                          sampler, param)
    if method == "sanitizer" and decoupler is None:
        raise BioanonError(
            "releasing with the sanitizer needs --decoupler: its DP accounting assumes a "
            "decoupler trained on auxiliary data (bioanon train-decoupler AUX -o decoupler.pt)")
    anon = build_method(opts)
    table = read_input(input, [interest, *add, sensitive, *(label or [])])
    table.label(sensitive)
    if seed is not None:
        err_console.print("note: --seed fixes the randomness; the seed is a secret key, keep it "
                          "private (it is not written to the output)", highlight=False)
    with progress_bar("anonymizing") as update:
        update(0, 2, "fitting")
        anon.fit(table, table.labels)  # a table: methods may read its meta (image_shape)
        update(1, 2, "transforming")
        released = table.with_features(anon.transform(table.X, table.labels))
        update(2, 2, "done")
    drop = [c for c in (label or []) if c in released.labels.columns]
    if not keep_sensitive:
        drop.append(sensitive)
    released = released.drop_labels(list(dict.fromkeys(drop)))
    if not keep_order:
        rng = np.random.default_rng()  # fresh OS entropy; the permutation is never stored
        released = released.subset(rng.permutation(released.n_records))
    released.meta = {"method": method, "bioanon_version": __version__,
                     **{k: table.meta[k] for k in PUBLIC_META if k in table.meta}}
    released.write(output)
    manifest = {
        "bioanon_version": __version__,
        "method": method,
        "params": anon.public_params(),
        "input": {"name": input.name, "sha256": file_sha256(input),
                  "n_records": table.n_records, "n_features": table.n_features},
        "output": {"name": output.name, "label_columns": list(map(str, released.labels)),
                   "n_records": released.n_records, "shuffled": not keep_order},
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    if hasattr(anon, "mask_"):  # feature relevance was fitted (on a bounded sample)
        manifest["relevance_fit"] = {
            "records": relevance_sample_size(table.n_records), "of": table.n_records,
            "sample": "stratified by the attribute scored"}
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, default=str))
    console.print(f"wrote {output} ({released.n_records} records) and {manifest_path.name}")


def _anonymize_bucketed(input: Path, output: Path, method: str, interest: str | None,
                        additional: list[str] | None, sensitive: str, label: list[str] | None,
                        keep_sensitive: bool, seed: int | None, scheduler: str | None,
                        local: bool, bucket_size: int, fit_sample: int, workers: int | None,
                        opts: object) -> None:
    """The dask path of ``anonymize`` (policy and checks in :mod:`bioanon.scale.run`)."""
    from ..scale.run import anonymize_bucketed

    add = parse_weighted(additional, 1.0, "--additional")
    anon = build_method(opts)  # type: ignore[arg-type]
    if seed is not None:
        err_console.print("note: --seed fixes the randomness; the seed is a secret key, keep it "
                          "private (it is not written to the output)", highlight=False)
    with progress_bar("anonymizing (dask, bucket by bucket)") as update:
        update(0, 1, "releasing")
        result = anonymize_bucketed(input, output, anon, method, interest=interest,
                                    additional=list(add), sensitive=sensitive,
                                    labels=label or [], keep_sensitive=keep_sensitive,
                                    bucket_size=bucket_size, fit_sample=fit_sample, seed=seed,
                                    scheduler=scheduler, local=local, n_workers=workers,
                                    version=__version__)
        update(1, 1, "done")
    console.print(f"wrote {output}/ ({result.n_records} records in {result.n_buckets} "
                  f"bucket parts) and {output.name}.manifest.json")


@app.command()
@user_errors
def evaluate(
    input: Annotated[Path, typer.Argument(help="Feature table: .parquet, .csv or .npz.")],
    sensitive: SensitiveOpt,
    out: Annotated[Path, typer.Option("--out", help="Folder for report.json and .html.")],
    interest: InterestOpt = None,
    additional: AddOpt = None,
    label: LabelOpt = None,
    method: MethodOpt = "selective-mean",
    g: GOpt = 32, t: TOpt = 0.8, w: WOpt = 10.0, rp: RpOpt = 0.01, rq: RqOpt = None,
    rs: RsOpt = 0.0, relevance: RelOpt = "forest", seed: SeedOpt = None,
    allow_replacement: ReplOpt = False, k: KOpt = None, sigma: SigmaOpt = None,
    block: BlockOpt = None, epsilon: EpsOpt = None, decoupler: DecouplerOpt = None,
    sampler: SamplerOpt = None, param: ParamOpt = None,
    models: Annotated[str, typer.Option(
        help="Attack recognizers, comma-separated, or 'all' (forest, linear_svm, rbf_svm, "
             "knn, mlp, logreg, pca_svm).")] = "forest,linear_svm,knn",
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
) -> None:
    """Measure utility and privacy of a method against the attack panel on a held-out split."""
    from ..attack import parse_models, parse_modes
    from ..attack.selection import parse_strategies
    from ..evaluation import evaluate as run_evaluation

    check_not_input(out / "report.json", [input])
    check_not_input(out / "report.html", [input])
    add = parse_weighted(additional, 1.0, "--additional")
    eval_seed = 0 if seed is None else seed
    opts = method_options(method, interest, add, sensitive, eval_seed, g, t, w, rp, rq, rs,
                          relevance, allow_replacement, k, sigma, block, epsilon, decoupler,
                          sampler, param)
    anon = build_method(opts)
    model_list = parse_models(models)
    modes = parse_modes(attackers)
    parse_strategies(selection)
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
                                group=group, n_jobs=jobs)
    paths = report.write(out)
    print_summary(report)
    console.print(f"wrote {paths['json']} and {paths['html']}")


@app.command()
@user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", help="Folder for the report.")] =
    Path("demo-report"),
    seed: Annotated[int, typer.Option(help="Seed of the synthetic data and evaluation.")] = 0,
) -> None:
    """Run the main job on the built-in SYNTHETIC dataset and write a report."""
    from ..anonymize import SelectiveMeanAnonymizer
    from ..datasets import make_biometric
    from ..evaluation import evaluate as run_evaluation

    table = make_biometric(random_state=seed)
    console.print(f"synthetic dataset (no real people): {table.n_records} records × "
                  f"{table.n_features} features; keep 'expression' (+ 'environment'), "
                  "hide 'identity'")
    anon = SelectiveMeanAnonymizer(interest="expression", additional={"environment": 0.05},
                                   g=32, t=0.8, w=10, r_p=0.05, random_state=seed)
    with progress_bar("evaluating") as update:
        report = run_evaluation(table, "expression", "identity",
                                additional={"environment": 0.5}, anonymizer=anon,
                                random_state=seed, progress=update, selection="auto")
    paths = report.write(out)
    print_summary(report)
    console.print(f"wrote {paths['json']} and {paths['html']}")
