"""The streamed DP release of the dask path (``bioanon release --dask --epsilon E --public-data
FILE``): certify a membership-hiding method on a panel sample, then release a table larger
than memory in streaming passes over its Parquet partitions.

A DP synthesizer's statistics are sums over records (:mod:`bioanon.anonymize.basis_stream`),
so the whole table is never held: one partition (``partition_rows`` records) and the d × d
statistics are in memory at a time.

1. only the judged label columns are read (the interest, the sensitive column, the group);
   their record count n and the interest's classes are public in the DP model (the labels,
   the record count and the class sizes are released);
2. a stratified panel sample of identities and records (:func:`~bioanon.sampling.panel_sample`)
   is drawn; the checks of every path and the plan run on its labels (the one skeleton,
   :func:`~bioanon.certification.run.certify_source`, with the :class:`Streamed` source),
   then its features and labels are read;
3. the search and its confirmation (:func:`~bioanon.certification.search.run_search`) run on
   the sample under the declared budget (ε exactly, δ = 1/n² with n the **table's** records
   unless declared; box, centre and clip radii from the public records), every candidate
   judged **as the stream applies it** (:class:`StreamedRelease`: the statistics of the
   split's records summed over blocks of ``partition_rows``, the noise drawn once, fresh
   records sampled per block);
4. the certified setting releases the table: its statistics are fitted on **every record**
   (one streaming pass per statistic: class counts, noisy class sums, the basis's own
   statistic when it spends budget, the noisy second moments in the basis and the residual
   energy), then each partition's records are sampled from the noisy model in the input's
   order of partitions, shuffled within the partition, and written as one Parquet part.
   The first pass also refuses non-finite features and public records that are records of
   the table (exactly, every partition).

What the certificate describes: the (ε, δ) guarantee covers the released table whatever the
data, at its unit (one record). The empirical figures (utility, recognition, membership and
inference at each level) judge the same mechanism at the same ε and δ applied to the sample's
splits: a model fitted on the sample is not what is released, and at the table's size each
record (and each person) weighs a smaller share of the statistics than in the sample. They
do not measure the released model itself, and the record-unit guarantee does not bound a
person's many records (the identity level is shown on the sample only). Nothing secret is
written: no seed, no noise, no basis, no bounds (the public table is named, its values are not).

The passes run on dask (a ``LocalCluster`` by default, or the scheduler named): each pass is
a reduction over the partitions on the workers, the noise drawn once here, and the workers
sample and write the parts (:mod:`bioanon.scale.stream`, the engine; it gives the same
statistics and records for a seed in this process, ``local=False``).

The folder of parts, ``OUTPUT.manifest.json`` and ``OUTPUT.report/`` appear as one unit, the
manifest last (:func:`bioanon.release_unit.write_unit`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..scale.parquet_io import partition_count
from ..scale.stream import (
    PARTITION_ROWS,
    Partitions,
    StreamedRelease,
    StreamedResult,
    open_partitions,
    stream_to_parts,
)
from ..table import FeatureTable
from .parquet import ParquetSample, _give_back_memory

__all__ = ["PARTITION_ROWS", "Partitions", "StreamedRelease", "StreamedResult", "Streamed",
           "certify_streamed", "partition_count", "stream_to_parts"]

Progress = Callable[[int, int, str], None]


# ---------------------------------------------------------------------- certify
def _checked_methods(methods: Sequence[str] | None) -> tuple[list[str], list[dict[str, Any]]]:
    """The streamable DP methods to search (their class declares ``streamable`` and ``dp``),
    and the DP methods left out (with reasons)."""
    from ..anonymize.registry import methods_that

    dp = methods_that("dp")
    streamable = [m for m in methods_that("streamable") if m in dp]
    why = ("its statistics are not streamed over partitions on the dask path (only "
           f"{', '.join(streamable)}); release it in memory")
    if methods is None:
        return streamable, [{"method": m, "setting": m, "reason": why}
                            for m in dp if m not in streamable]
    named = list(dict.fromkeys(methods))
    bad = [m for m in named if m not in streamable]
    if bad:
        raise BioanonError(f"method(s) {bad} cannot be released by the streamed DP path of "
                           f"a Parquet release with epsilon=; name {', '.join(streamable)} "
                           f"(methods={','.join(streamable)}) or release in memory",
                           parameter=("methods", "epsilon"))
    return named, []


def certify_streamed(source: str | os.PathLike, output: str | os.PathLike, roles: Any, *,
                     sample_records: int = 50_000, sample_identities: int | None = 1_000,
                     partition_rows: int = PARTITION_ROWS, scheduler: str | None = None,
                     local: bool = True, n_workers: int | None = None, version: str = "",
                     **options: Any) -> Any:
    """Certify a streamable DP method on a panel sample of a Parquet dataset and release the
    dataset in streaming passes (see the module).

    Parameters
    ----------
    source, output, roles
        As for :func:`~bioanon.certification.parquet.certify_parquet` (no additional
        attributes: the streamed model has one interest).
    sample_records, sample_identities, version
        As for :func:`~bioanon.certification.parquet.certify_parquet`.
    partition_rows : int
        Records per partition of the release and per block of the judged rule.
    scheduler, local, n_workers
        Where the release's passes run (:func:`~bioanon.scale.stream.open_partitions`): the
        dask scheduler at ``scheduler``, else a ``LocalCluster`` of ``n_workers``
        single-threaded workers (default one per core), else (``local=False``) this process.
        The same statistics and records for a seed wherever they run.
    **options
        As for :func:`~bioanon.certification.parquet.certify_parquet`, and the declared
        budget: ``epsilon`` (required), ``delta`` (default 1/n², n the table's records),
        ``public`` (required: a FeatureTable or array (m, d) of people **not** in the
        release; the box, centre and clip radii come from them, so the guarantee is
        strict), ``public_name`` (for the manifest), ``privacy_unit`` (only the record unit
        streams). ``methods`` default to the DP methods whose class declares
        ``streamable``.

    Returns
    -------
    CertifiedRelease
        With ``output``, ``sample`` and ``written`` (the :class:`StreamedResult`).

    Raises
    ------
    NotCertified
        When no setting meets every target on the sample (nothing is written).
    """
    from .run import front_door

    source_ = Streamed(Path(source), Path(output), sample_records, sample_identities,
                       partition_rows, version)
    source_.where = (scheduler, bool(local), n_workers)
    return front_door(source_, roles, options)


class Streamed(ParquetSample):
    """The streamed source of :func:`~bioanon.certification.run.certify_source`: a panel
    sample, every candidate judged as the stream applies it (:class:`StreamedRelease`), the
    DP methods that declare ``streamable``, the budget's refusals (public bounds, the record
    unit, one interest), and the release in streaming passes (:func:`stream_to_parts`)."""

    function = "certify_streamed"
    kind = "streamed"

    def __init__(self, source: Path, output: Path, sample_records: int,
                 sample_identities: int | None, partition_rows: int, version: str) -> None:
        super().__init__(source, output, sample_records, sample_identities)
        self.partition_rows, self.version = partition_rows, version
        self.public_X: np.ndarray | None = None
        #: where the release's passes run: (scheduler, local cluster, workers)
        self.where: tuple[str | None, bool, int | None] = (None, False, None)

    def refuse(self, roles: Any, settings: Any, judge: Any) -> None:
        """The budget's and the stream's refusals, from the arguments alone."""
        if settings.epsilon is None:
            raise BioanonError("the streamed DP release needs a declared budget; give "
                               "epsilon=E", parameter="epsilon")
        if settings.public is None:
            raise BioanonError("the streamed DP release of the dask path needs public bounds: "
                               "give public= a table of people NOT in the release with the "
                               "same feature columns (bounds taken from the table would need "
                               "a pass over it and leak)", parameter=("public", "epsilon"))
        if (settings.privacy_unit or "record") != "record" or \
                settings.max_records_per_identity is not None:
            raise BioanonError("the streamed DP release covers privacy_unit=record only "
                               "(bounding a person's records across partitions needs a pass "
                               "keyed by person); drop privacy_unit=identity or release in "
                               "memory", parameter=("privacy_unit", "max_records_per_identity"))
        super().refuse(roles, settings, judge)
        if roles.additional:
            raise BioanonError("the streamed DP release models one interest column; drop the "
                               "additional attributes or release in memory",
                               parameter="additional")
        rows = self.partition_rows
        if isinstance(rows, bool) or int(rows) < 1:
            raise BioanonError(f"partition_rows={rows} must be a positive integer; "
                               "e.g. 100000", parameter="partition_rows")
        _checked_methods(settings.methods)  # a method that cannot stream: said now
        scheduler, local, n_workers = self.where
        if scheduler is not None or local:  # before the search: the cluster comes after it
            from ..scale.cluster import check_scheduler_reachable, check_workers, require_dask

            require_dask()
            if scheduler is not None:
                check_scheduler_reachable(scheduler)
            else:
                check_workers(n_workers)

    def check_features(self, settings: Any) -> None:
        """The public table's feature columns are the input's (before any pass)."""
        _check_public_columns(settings.public, self.features, self.label_cols)

    def prepare(self, shape: Any, roles: Any, settings: Any) -> Any:
        """The budget at the table's size (δ < 1/n with n the table's records), checked on
        a one-record stand-in before the sample's pass; the public records' overlap with
        the sample is checked when its rows are read."""
        from .dp_budget import DPBudget

        name = settings.public_name
        budget = DPBudget(epsilon=settings.epsilon, delta=settings.delta,
                          privacy_unit="record", public=settings.public,
                          public_name=None if name is None else Path(name).name,
                          total_records=self.n_total)
        stand_in = FeatureTable(np.zeros((1, len(self.features)), dtype=np.float32),
                                shape.labels.labels.iloc[:1], self.features)
        replace(budget, public=None).check(stand_in, None)  # before the sample's pass
        return budget

    def methods(self, shape: Any, settings: Any, budget: Any
                ) -> tuple[list[str] | None, list[dict[str, Any]]]:
        return _checked_methods(settings.methods)

    def table(self, shape: Any, roles: Any, budget: Any) -> FeatureTable:
        """The sample's rows; the public records checked against them."""
        table = super().table(shape, roles, budget)
        budget.check(table, roles.sensitive)  # columns, overlap with the sample
        self.public_X = budget.public_X(table)
        return table

    def judge_as(self, anonymizer: Any) -> Any:
        return StreamedRelease(anonymizer, self.classes, int(self.partition_rows))

    def release(self, result: Any, roles: Any, settings: Any, budget: Any) -> Any:
        """Every record released partition by partition, with the certificate."""
        from .certificate import (
            CertifiedRelease,
            public_rows,
            release_seed,
            report_and_chart,
            write_report,
        )
        _give_back_memory()
        c = result.candidate
        assert c is not None
        rule = self._rule(c)
        result.confirmation = result.confirmation.amended(
            lambda data: _name_sample(data, self.sizes, rule))
        report, png = report_and_chart(result, roles.sensitive, roles.interest)
        statement = budget.statement(_one_record(self.features), roles.sensitive, c.method)
        report = report.amended(lambda data: data.update(
            differential_privacy=statement,
            release={"certified": True, "written": True, "setting": c.label(),
                     "table": self.out.name + "/",
                     "manifest": self.out.name + ".manifest.json", "n_records": self.n_total}))
        doc = self._write(result, roles, settings, statement, rule,
                          lambda folder: write_report(report, png, folder),
                          release_seed(settings.random_state))
        res = StreamedResult(self.out, int(doc["output"]["n_records"]),
                             int(doc["stream"]["partitions"]), int(doc["stream"]["passes"]),
                             dict(doc["stream"]["class_counts"]))
        return CertifiedRelease(doc, dict(result.confirmation["verdict"]), public_rows(result),
                                report, result, search_png=png, output=self.out,
                                sample=self.sizes, written=res)

    def _rule(self, c: Any) -> dict[str, Any]:
        """The manifest's stream rule: what the certificate covers and what it does not."""
        sizes, n_total, rows = self.sizes, self.n_total, int(self.partition_rows)
        ids_s, ids_t = max(sizes["n_identities"], 1), max(sizes["total_identities"], 1)
        return {
            "mechanism": f"{c.method} streamed: its statistics summed over partitions of at "
                         f"most {rows} records, the noise drawn once on the sums, fresh "
                         "records sampled per partition",
            "partition_rows": rows,
            "fitted_on": f"every record of the table ({n_total} records): class counts, "
                         "noisy class sums, the basis, noisy second moments in the basis and "
                         "the residual energy (one streaming pass each)",
            "judged_as_released": True,
            "judged_on": "the panel sample's splits, each released by the same streamed "
                         "mechanism at the same epsilon and delta (its statistics are the "
                         "split's own records')",
            "covers": "the (epsilon, delta) guarantee covers the released table whatever the "
                      "data, for one record (strict: box, centre and clip radii from the "
                      "public data); the empirical figures judge the same mechanism at the "
                      "sample's size",
            "does_not_cover": "the model fitted on the whole table is not the one judged: "
                              "the noise on the sums is the same, but a record's share of the "
                              f"statistics is 1/{n_total} in the table against at least "
                              f"1/{sizes['n_records']} in the sample, a person's about "
                              f"1/{ids_t} against 1/{ids_s} (the sample is judged where each "
                              "weighs more); the record-unit guarantee does not bound a "
                              "person's many records: the identity level is shown on the "
                              "sample only",
        }

    def _write(self, result: Any, roles: Any, settings: Any, statement: dict[str, Any],
               rule: dict[str, Any], report: Any, seed: int | None) -> dict[str, Any]:
        """Stream every partition into the release unit; returns the manifest written."""
        import json

        from ..release import build_manifest, manifest_path, resolve_roles
        from ..release_unit import write_unit
        from ..scale.run import input_digest
        from .certificate import certification_block
        from .search import build_candidate

        c = result.candidate
        est = build_candidate(c, roles.interest, roles.sensitive, [], None)
        plan = resolve_roles(self.label_cols, roles, keep_sensitive=settings.keep_sensitive)
        released = list(plan.released)
        manifest: dict[str, Any] = {}

        def write_table(staged: Path) -> str:
            res = stream_to_parts(est, parts, self.classes, staged, released, roles.interest,
                                  seed)
            params = est.public_params()
            for key in c.hidden:
                params[key] = "public (from the public table; values not written)"
            doc = build_manifest(method=c.method, params=params, plan=plan,
                                 n_records=res.n_records, n_features=len(self.features),
                                 shuffled=True, check=None, input_name=self.src.name,
                                 input_sha256=input_digest(self.src), certified=True)
            doc.pop("bioanon_version")
            doc["output"].update(format="parquet (partitioned, one part per input partition, "
                                        "in the input's order)",
                                 n_features=len(self.features),
                                 shuffled="within each partition")
            manifest.update({"bioanon_version": self.version, **doc, **certification_block(
                result, judged_on=self.judged_on(), stream_rule=rule),
                "differential_privacy": statement,
                "stream": {"partitions": res.n_parts,
                           "partition_rows": int(self.partition_rows),
                           "passes": res.passes, "class_counts": res.class_counts,
                           "order": "the input's partitions in order; rows shuffled within "
                                    "each partition"}})
            return res.sha256

        # the manifest is filled by the table's writer: write_unit stages the table first
        scheduler, local, n_workers = self.where
        with open_partitions(self.src, list(dict.fromkeys([*released, roles.interest])),
                             self.features, int(self.partition_rows), self.public_X,
                             settings.progress, scheduler=scheduler, local=local,
                             n_workers=n_workers) as parts:
            write_unit(self.out, table=write_table, manifest=manifest, report=report,
                       table_is_dir=True)
        return dict(json.loads(manifest_path(self.out).read_text()))


def _one_record(features: Sequence[str]) -> FeatureTable:
    """A one-record stand-in carrying the feature columns (the budget's statement reads the
    table's size from ``total_records``)."""
    return FeatureTable(np.zeros((1, len(features)), dtype=np.float32),
                        pd.DataFrame(index=[0]), list(features))


def _check_public_columns(public: Any, features: Sequence[str],
                          labels: Sequence[str] = ()) -> None:
    """Refuse public data whose feature columns are not the input's (one line, before any
    pass; the values are checked on the sample and on every partition later). A label
    column of the input that the public table holds as a number is a label there too."""
    if isinstance(public, FeatureTable) and public.feature_names:
        from .dp_budget import public_columns_problem

        problem = public_columns_problem(public, features, labels)
        if problem:
            raise BioanonError(f"public= {problem}", parameter="public")
        return
    shape = np.shape(public)
    if len(shape) != 2 or shape[1] != len(features):
        raise BioanonError(f"public= has shape {shape}; give records (m, {len(features)}) of "
                           "people not in the release with the input's feature columns",
                           parameter="public")


def _name_sample(data: dict[str, Any], sizes: dict[str, Any], rule: dict[str, Any]) -> None:
    """The confirmation's report naming the panel sample's and the table's sizes and the
    streamed rule (dataset block, verdict and its sentence)."""
    data.setdefault("dataset", {})["panel_sample"] = sizes
    data.setdefault("params", {})["stream_rule"] = rule
    verdict = data["verdict"]
    verdict["sample"], verdict["stream_rule"] = sizes, rule
    verdict["sentence"] = (
        f"{verdict.get('sentence', '')} Judged on a stratified sample of "
        f"{sizes['n_records']} of {sizes['total_records']} records "
        f"({sizes['n_identities']} of {sizes['total_identities']} identities), as released: "
        "the DP mechanism streamed over partitions at the same epsilon and delta; the "
        "released model is fitted on every record of the table.")


__all__ = ["PARTITION_ROWS", "Partitions", "Streamed",
           "StreamedRelease", "StreamedResult", "certify_streamed", "partition_count",
           "stream_to_parts"]
