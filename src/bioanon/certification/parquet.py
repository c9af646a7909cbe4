"""The bucketed source on dask (``bioanon release --dask``): certify on a panel sample, then
release the table bucket by bucket through the :mod:`bioanon.scale` engine.

:func:`certify_parquet` runs the one skeleton (:func:`~bioanon.certification.run.certify_source`)
with the :class:`Bucketed` source; a table too large for memory is never held whole:

1. the checks, as on every path: the output, the columns named, the first records of the
   feature columns (metadata-looking columns of a file that does not record its labels,
   ``keep_as_feature``), the label columns the judge needs (the interest, the additional and
   sensitive columns, the group) and a stratified panel sample of identities and records
   (:func:`~bioanon.sampling.panel_sample`) drawn from them;
2. the plan, on the panel sample's labels (a level the sample cannot show stops the run);
3. the sample's rows are read (one pass) and the search and its confirmation run on them,
   every candidate judged **as the bucketed release applies it**
   (:class:`~bioanon.scale.BucketedMixing` with the release's ``bucket_size``: sets drawn
   within random buckets stratified by the interest), so the certificate describes what is
   written. Methods whose class does not declare ``bucketable`` are left out of the search,
   each with a one-line reason;
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
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..release import manifest_path
from ..sampling import panel_sample
from ..scale.parquet_io import give_back_memory as _give_back_memory
from ..scale.parquet_io import parquet_columns, read_labels, read_rows
from ..table import FeatureTable
from .certificate import (
    CertifiedRelease,
    certification_block,
    public_rows,
    release_seed,
    report_and_chart,
    write_report,
)
from .run import Shape, front_door
from .search import SearchResult, build_candidate, candidates
from .settings import ReleaseSettings

Progress = Callable[[int, int, str], None]


def bucketable_methods(table: FeatureTable, methods: Sequence[str] | None
                       ) -> tuple[list[str], list[dict[str, Any]]]:
    """The methods the bucketed path can search on ``table``, and those left out (reasons).

    A method is bucketable when its class declares ``bucketable`` (its release mixes only
    the records it is given); compositions ``A+B`` are not.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=4, records_per_identity=10, n_features=32)
    >>> names, left = bucketable_methods(t, ["selective-mean", "noise"])
    >>> names, left[0]["method"]
    (['selective-mean'], 'noise')
    """
    from ..anonymize.registry import methods_that

    bucketable = methods_that("bucketable")
    cands, skipped = candidates(table, methods)
    names = list(dict.fromkeys(c.method for c in cands))
    keep: list[str] = []
    for name in names:
        if name in bucketable:
            keep.append(name)
        else:
            skipped.append({"method": name, "setting": name,
                            "reason": "cannot run bucket by bucket on dask (its release is "
                                      "not a mixing of the records given); not searched"})
    if not keep:
        raise BioanonError(f"no method that can run bucket by bucket applies (searched: "
                           f"{names or methods}); name one with methods=, e.g. "
                           f"{', '.join(bucketable)}, or certify in memory instead of on dask",
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


def certify_parquet(source: str | os.PathLike, output: str | os.PathLike, roles: Any, *,
                    bucket_size: int = 50_000, fit_sample: int = 20_000,
                    sample_records: int = 50_000, sample_identities: int | None = 1_000,
                    scheduler: str | None = None, local: bool = True,
                    n_workers: int | None = None, version: str = "",
                    **options: Any) -> CertifiedRelease:
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
    **options
        As for :func:`bioanon.certify` (the evaluation's options include ``group``), but
        for those of the in-memory path only (``force``, ``decoupler``, the provenance and
        a declared budget: :func:`~bioanon.certification.streamed.certify_streamed` streams
        a DP method).

    Returns
    -------
    CertifiedRelease
        With ``output``, ``sample`` (the panel sample's and the table's sizes) and
        ``written`` (the :class:`~bioanon.scale.bucketed.BucketedResult`).

    Raises
    ------
    NotCertified
        When no setting meets the target on the sample (nothing is written).
    """
    from ..scale.run import DaskRun

    run = DaskRun(bucket_size, fit_sample, None, scheduler, local, n_workers, version)
    return front_door(Bucketed(Path(source), Path(output), sample_records, sample_identities,
                               run), roles, options)


class ParquetSample:
    """What the dask paths share: the Parquet input read in bounded steps.

    :meth:`shape` checks the output and the columns, reads the first records (the column
    checks), the judged label columns and draws the stratified panel sample
    (:func:`~bioanon.sampling.panel_sample`); :meth:`table` then reads the sample's rows in
    one pass. The panel sample's seed derives one way from the user's (never written).
    """

    kind = "dask"

    def __init__(self, source: Path, output: Path, sample_records: int,
                 sample_identities: int | None) -> None:
        self.src, self.out = source, output
        self.sample_records, self.sample_identities = sample_records, sample_identities
        self.features: list[str] = []
        self.label_cols: list[str] = []
        self.judged: list[str] = []
        self.interest = ""
        self.index: np.ndarray | None = None
        self.sizes: dict[str, Any] = {}
        self.n_total = 0
        self.classes: tuple[Any, ...] = ()

    def refuse(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> None:
        """The dask paths' refusals: no kept or quasi-identifying columns, an interest."""
        if roles.keep or roles.quasi:
            raise BioanonError("kept and quasi-identifying columns are not available on the "
                               "dask path (the join check reads them in memory); use the "
                               "in-memory path")
        if not roles.interest:
            raise BioanonError(f"the {self.kind} path stratifies its sample by the interest; "
                               "pass interest=COL", parameter="interest")

    def shape(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> Shape:
        """Check the output and columns, read the first records, the judged labels, and draw
        the panel sample (no pass over the features yet)."""
        from ..evaluation.seeds import derive_seed
        from ..release_unit import check_unit_paths
        from ..scale.run import declares_labels, parquet_source_name, read_head
        from .judge_seed import labels_seed

        group, self.interest = judge.group, str(roles.interest)
        self.judged = list(dict.fromkeys([roles.interest, *roles.additional, roles.sensitive,
                                          *([group] if group else [])]))
        self.features, self.label_cols = parquet_columns(
            self.src, self.out, [*self.judged, *roles.never_released], self.kind)
        check_unit_paths(self.out)  # OUTPUT.report, OUTPUT.refused-report, the journal
        self.check_features(settings)
        step = settings.progress or (lambda done, total, text: None)
        step(0, 1, "reading the label columns")
        labels = read_labels(self.src, self.judged)
        self.n_total = len(labels)
        self.classes = tuple(np.unique(labels[roles.interest].to_numpy()).tolist())
        seed = settings.random_state
        ps = panel_sample(labels, sensitive=group or roles.sensitive, stratify=roles.interest,
                          max_records=self.sample_records,
                          max_identities=self.sample_identities,
                          random_state=derive_seed(
                              labels_seed(labels, roles) if seed is None else int(seed),
                              "release/panel sample"))
        self.index, self.sizes = ps.index, ps.describe()
        sample = labels.iloc[ps.index].reset_index(drop=True)
        stand_in = FeatureTable(np.zeros((len(sample), 1), dtype=np.float32), sample, ["_"])
        return Shape(stand_in, read_head(self.src, self.features), self.features,
                     declares_labels(self.src), parquet_source_name(self.src))

    def check_features(self, settings: ReleaseSettings) -> None:
        """What the path checks of the feature columns before any record is read."""

    def table(self, shape: Shape, roles: Any, budget: Any) -> FeatureTable:
        """The panel sample's records, features and labels (one pass over the input)."""
        assert self.index is not None
        return read_rows(self.src, self.index, self.judged, self.features)

    def judged_on(self) -> dict[str, Any]:
        """The certification block's ``judged_on``: the sample's and the table's sizes."""
        return {**self.sizes, "sample": "stratified panel sample of identities and records "
                                        "(by the interest within each)"}


class Bucketed(ParquetSample):
    """The bucketed source of :func:`~bioanon.certification.run.certify_source`: a panel
    sample, every candidate judged as the bucketed release applies it
    (:class:`~bioanon.scale.BucketedMixing`), the methods that declare ``bucketable``, and
    the release bucket by bucket through :func:`~bioanon.scale.run.anonymize_bucketed`."""

    function = "certify_parquet"
    kind = "bucketed"

    def __init__(self, source: Path, output: Path, sample_records: int,
                 sample_identities: int | None, run: Any) -> None:
        super().__init__(source, output, sample_records, sample_identities)
        self.run = run

    def refuse(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> None:
        """The cluster is contacted first (the search comes before it), then the dask
        paths' refusals."""
        from ..scale.cluster import check_scheduler_reachable, check_workers

        if self.run.scheduler is not None:
            check_scheduler_reachable(self.run.scheduler)
        elif self.run.local:
            check_workers(self.run.n_workers)
        super().refuse(roles, settings, judge)

    def prepare(self, shape: Shape, roles: Any, settings: ReleaseSettings) -> None:
        return None

    def methods(self, shape: Shape, settings: ReleaseSettings, budget: Any
                ) -> tuple[list[str] | None, list[dict[str, Any]]]:
        """The bucketable methods (those left out named, with the reason)."""
        names, left_out = bucketable_methods(shape.labels, settings.methods)
        return names, left_out

    def judge_as(self, anonymizer: Any) -> Any:
        from ..scale.estimator import BucketedMixing

        return BucketedMixing(anonymizer, self.interest, bucket_size=self.run.bucket_size)

    def release(self, result: SearchResult, roles: Any, settings: ReleaseSettings,
                budget: Any) -> CertifiedRelease:
        """Every record released bucket by bucket, with the certificate and its report."""
        from dataclasses import replace

        from ..scale.run import anonymize_bucketed

        _give_back_memory()  # the search's heap, before the cluster starts beside it
        c = result.candidate
        assert c is not None
        rule = {"bucket_size": int(self.run.bucket_size),
                "sets_drawn_within": "random buckets of at least bucket_size records, "
                                     "stratified by the interest",
                "judged_as_released": True,
                "judged_on": "the panel sample's splits, bucketed by the same rule (a split "
                             "smaller than bucket_size is one bucket)"}
        result.confirmation = _judged_on(result.confirmation, self.sizes, rule)
        report, png = report_and_chart(result, roles.sensitive, roles.interest)
        report = report.amended(lambda data: data.update(release={
            "certified": True, "written": True, "setting": c.label(),
            "table": self.out.name + "/", "manifest": self.out.name + ".manifest.json",
            "n_records": self.sizes.get("total_records")}))
        anon = build_candidate(c, roles.interest, roles.sensitive, list(roles.additional),
                               None)
        block = certification_block(result, judged_on=self.judged_on(), bucket_rule=rule)
        run = replace(self.run, seed=release_seed(settings.random_state))
        res = anonymize_bucketed(self.src, self.out, anon, c.method, roles, run,
                                 keep_sensitive=settings.keep_sensitive,
                                 progress=settings.progress, certification=block,
                                 report=lambda folder: write_report(report, png, folder))
        manifest = json.loads(manifest_path(self.out).read_text())
        return CertifiedRelease(manifest, dict(result.confirmation["verdict"]),
                                public_rows(result), report, result, search_png=png,
                                output=self.out, sample=self.sizes, written=res)


__all__ = ["Bucketed", "ParquetSample", "bucketable_methods", "certify_parquet",
           "read_labels", "read_rows"]
