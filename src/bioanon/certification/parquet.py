"""The Parquet/dask adapter (``bioanon release --dask``): certify on a panel sample, then
release the table bucket by bucket through the :mod:`bioanon.scale` engine.

A table too large for memory is certified in four steps, never held whole:

1. only the label columns the judge needs are read (the interest, the additional and
   sensitive columns, the group); the join check runs on them;
2. a stratified panel sample of identities and records
   (:func:`~bioanon.sampling.panel_sample`) is read, features and labels;
3. the search and its confirmation (:func:`~bioanon.certification.search.run_search`) run
   on the sample, every candidate judged **as the bucketed release applies it**
   (:class:`~bioanon.scale.BucketedMixing` with the release's ``bucket_size``: sets drawn
   within random buckets stratified by the interest), so the certificate describes what is
   written. Methods that cannot run bucket by bucket (a release that is not a mixing of the
   records given) are left out of the search, each with a one-line reason;
4. the certified setting releases every record through the bucketed dask path
   (:func:`~bioanon.scale.run.anonymize_bucketed`) with a fresh release seed; the manifest is
   certified and names the verdict, the sample's and the table's sizes and the bucket rule.

The release folder, ``OUTPUT.manifest.json`` and the report (``OUTPUT.report/``) appear as one
unit, the manifest last (:func:`bioanon.release_unit.write_unit`). When no setting is certified
(:class:`~bioanon.certification.NotCertified`) only the closest setting's report is written
(``NotCertified.write_report``; the command line does it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..release import manifest_path
from ..sampling import panel_sample
from ..scale.parquet_io import give_back_memory as _give_back_memory
from ..scale.parquet_io import parquet_columns, read_labels, read_rows
from ..table import FeatureTable
from .certificate import (
    NotCertified,
    certification_block,
    public_rows,
    release_seed,
    report_and_chart,
    write_report,
)
from .search import (
    build_candidate,
    candidates,
    check_min_utility,
    judge_options,
    run_search,
)

Progress = Callable[[int, int, str], None]


def bucketable_methods(table: FeatureTable, methods: Sequence[str] | None
                       ) -> tuple[list[str], list[dict[str, Any]]]:
    """The methods the bucketed path can search on ``table``, and those left out (reasons).

    A method is bucketable when its release mixes only the records it is given
    (:func:`~bioanon.scale.run.check_bucketable`); compositions ``A+B`` are not.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=10, n_features=32)
    >>> names, left = bucketable_methods(t, ["selective-mean", "noise"])
    >>> names, left[0]["method"]
    (['selective-mean'], 'noise')
    """
    from ..anonymize.registry import methods as registered
    from ..scale.run import BUCKETABLE

    known = registered()
    cands, skipped = candidates(table, methods)
    names = list(dict.fromkeys(c.method for c in cands))
    keep: list[str] = []
    for name in names:
        cls = known.get(name)
        if name in BUCKETABLE or (cls is not None and getattr(cls, "bucketable", False)):
            keep.append(name)
        else:
            skipped.append({"method": name, "setting": name,
                            "reason": "cannot run bucket by bucket on dask (its release is "
                                      "not a mixing of the records given); not searched"})
    if not keep:
        raise BioanonError(f"no method that can run bucket by bucket applies (searched: "
                           f"{names or methods}); name one with methods=, e.g. "
                           f"{', '.join(BUCKETABLE)}, or certify in memory instead of on dask",
                           parameter="methods")
    return keep, skipped


def _judged_on(confirmation: Any, sizes: dict[str, Any], rule: dict[str, Any]) -> Any:
    """The confirmation's report naming the panel sample's and the table's sizes and the
    bucket rule (in the dataset block, the verdict and its sentence), as the judge does when
    it samples a large table itself."""

    def name_sample(data: dict[str, Any]) -> None:
        data.setdefault("dataset", {})["panel_sample"] = sizes
        data.setdefault("params", {})["bucket_rule"] = rule
        verdict = data["verdict"]
        verdict["sample"], verdict["bucket_rule"] = sizes, rule
        verdict["sentence"] = (
            f"{verdict.get('sentence', '')} Judged on a stratified sample of "
            f"{sizes['n_records']} of {sizes['total_records']} records "
            f"({sizes['n_identities']} of {sizes['total_identities']} identities), as "
            f"released: sets drawn within random buckets of at least {rule['bucket_size']} "
            "records stratified by the interest.")

    return confirmation.amended(name_sample)


@dataclass
class CertifiedBucketedRelease:
    """A certified release written bucket by bucket (the table itself stays on disk).

    Attributes
    ----------
    output : Path
        The folder of Parquet parts (``OUTPUT.manifest.json`` beside it).
    manifest : dict
        As written (certified, the verdict, the sample's and table's sizes, the bucket rule).
    verdict : dict
        The confirmation's verdict (on the panel sample, bucketed rule).
    rows : list of dict
        The search's rows (on the panel sample).
    report : Report
    search : SearchResult
    sample : dict
        The panel sample's and the table's sizes (no indices).
    bucketed : BucketedResult
        The release's sizes (records, buckets, smallest class in a bucket).
    """

    output: Path
    manifest: dict[str, Any]
    verdict: dict[str, Any]
    rows: list[dict[str, Any]]
    report: Any
    search: Any
    sample: dict[str, Any]
    bucketed: Any = None
    skipped: list[dict[str, Any]] = field(default_factory=list)

    @property
    def setting(self) -> str:
        """The certified setting's label."""
        return str(self.manifest["certification"]["search"]["chosen"])


def certify_parquet(source: str | os.PathLike, output: str | os.PathLike, roles: Any, *,
                    methods: Sequence[str] | None = None, target: float | None = None,
                    random_state: int | None = None, budget_minutes: float | None = 10.0,
                    keep_sensitive: bool = False, bucket_size: int = 50_000,
                    fit_sample: int = 20_000, sample_records: int = 50_000,
                    sample_identities: int | None = 1_000, scheduler: str | None = None,
                    local: bool = True, n_workers: int | None = None, version: str = "",
                    progress: Progress | None = None, report_closest: bool = False,
                    exhaustive: bool = False, min_utility: float | None = None,
                    options: EvaluationOptions | None = None, **option_values: Any
                    ) -> CertifiedBucketedRelease:
    """Certify a Parquet dataset on a panel sample and release it bucket by bucket on dask.

    Parameters
    ----------
    source : path
        Parquet file or folder (label columns + numeric feature columns).
    output : path
        Folder of Parquet parts to create (no extension; must not exist);
        ``OUTPUT.manifest.json`` and ``OUTPUT.report/`` are written beside it.
    roles : bioanon.release.Roles
        Interest required; kept and quasi-identifying columns are not offered on this path.
    methods, target, random_state, budget_minutes, keep_sensitive, exhaustive, min_utility, options
        As for :func:`bioanon.certify`.
    **option_values
        As for :func:`bioanon.certify` (the evaluation's options include ``group``).
    bucket_size : int
        Records per bucket of the release, and of the rule the judge evaluates.
    fit_sample : int
        Records the released anonymizer is fitted on (stratified by the interest).
    sample_records, sample_identities : int
        Bounds of the panel sample the search and its confirmation run on.
    scheduler, local, n_workers
        Where the release runs (:func:`~bioanon.scale.cluster.dask_client`).
    version : str
        The bioanon version for the manifest.
    progress : callable (done, total, text), optional
    report_closest : bool
        When nothing is certified, judge the closest setting on a fresh split of the sample
        too, so that :meth:`NotCertified.write_report` can say what fell short.

    Returns
    -------
    CertifiedBucketedRelease

    Raises
    ------
    NotCertified
        When no setting meets the target on the sample (nothing is written).
    """
    from ..evaluation.seeds import derive_seed
    from ..scale.cluster import check_scheduler_reachable
    from ..scale.estimator import BucketedMixing
    from ..scale.run import anonymize_bucketed

    opts = judge_options(options, target, option_values)
    group = opts.group
    src, out = Path(source), Path(output)
    roles.of()
    check_min_utility(min_utility)
    if scheduler is not None:  # contacted now: the search comes first, the cluster after
        check_scheduler_reachable(scheduler)
    if roles.keep or roles.quasi:
        raise BioanonError("kept and quasi-identifying columns are not available on the dask "
                           "path (the join check reads them in memory); use the in-memory path")
    if not roles.interest:
        raise BioanonError("the dask path stratifies its buckets by the interest; pass "
                           "interest=COL", parameter="interest")
    add = list(roles.additional)
    judged = list(dict.fromkeys([roles.interest, *add, roles.sensitive,
                                 *([group] if group else [])]))
    features, label_cols = parquet_columns(src, out, [*judged, *roles.identifying], "bucketed")
    step = progress or (lambda done, total, text: None)

    # 1. the judged label columns only (no kept or quasi column: no join check to run)
    step(0, 1, "reading the label columns")
    labels = read_labels(src, judged)
    # 2. the panel sample (its seed derives one way from the user's; never written)
    sample_seed = None if random_state is None else derive_seed(int(random_state),
                                                                "release/panel sample")
    ps = panel_sample(labels, sensitive=group or roles.sensitive, stratify=roles.interest,
                      max_records=sample_records, max_identities=sample_identities,
                      random_state=sample_seed)
    del labels
    step(0, 1, f"reading a panel sample of {ps.n_records:,} of {ps.total_records:,} records")
    table = read_rows(src, ps.index, judged, features)
    sizes = ps.describe()
    # 3. the search, every candidate judged as the bucketed release applies it
    names_ok, left_out = bucketable_methods(table, methods)

    def bucketed(anonymizer: Any) -> Any:
        return BucketedMixing(anonymizer, roles.interest, bucket_size=bucket_size)

    result = run_search(table, roles, options=opts, methods=names_ok,
                        random_state=random_state, budget_minutes=budget_minutes,
                        progress=progress, judge_as=bucketed,
                        report_closest=report_closest, exhaustive=exhaustive,
                        min_utility=min_utility)
    result.skipped[:0] = [s for s in left_out if s not in result.skipped]
    del table
    _give_back_memory()  # the search's heap, before the cluster starts beside this process
    if not result.certified:
        raise NotCertified(result, roles.sensitive, roles.interest)
    # 4. the report, then the release (every record, bucket by bucket)
    c = result.candidate
    assert c is not None
    rule = {"bucket_size": int(bucket_size),
            "sets_drawn_within": "random buckets of at least bucket_size records, stratified "
                                 "by the interest",
            "judged_as_released": True,
            "judged_on": "the panel sample's splits, bucketed by the same rule (a split "
                         "smaller than bucket_size is one bucket)"}
    result.confirmation = _judged_on(result.confirmation, sizes, rule)
    report, png = report_and_chart(result, roles.sensitive, roles.interest)
    report = report.amended(lambda data: data.update(release={
        "certified": True, "written": True, "setting": c.label(), "table": out.name + "/",
        "manifest": out.name + ".manifest.json", "n_records": sizes.get("total_records")}))
    seed = release_seed(random_state)
    anon = build_candidate(c, roles.interest, roles.sensitive, add, None)
    certification = certification_block(
        result, judged_on={**sizes, "sample": "stratified panel sample of identities and "
                                              "records (by the interest within each)"},
        bucket_rule=rule)
    res = anonymize_bucketed(src, out, anon, c.method, interest=roles.interest,
                             additional=add, sensitive=roles.sensitive,
                             labels=list(roles.identifying), keep_sensitive=keep_sensitive,
                             bucket_size=bucket_size, fit_sample=fit_sample, seed=seed,
                             scheduler=scheduler, local=local, n_workers=n_workers,
                             version=version, progress=progress, certification=certification,
                             report=lambda folder: write_report(report, png, folder))
    manifest = json.loads(manifest_path(out).read_text())
    return CertifiedBucketedRelease(out, manifest, dict(result.confirmation["verdict"]),
                                    public_rows(result), report, result, sizes, res,
                                    list(result.skipped))


__all__ = ["CertifiedBucketedRelease", "bucketable_methods", "certify_parquet", "read_labels",
           "read_rows"]
