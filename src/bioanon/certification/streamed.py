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
   is read, features and labels;
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
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

Progress = Callable[[int, int, str], None]

#: the DP methods whose statistics the stream sums over partitions
STREAMED_METHODS = ("dp-basis",)


# ---------------------------------------------------------------------- certify
@dataclass
class CertifiedStreamedRelease:
    """A certified DP release written partition by partition (the table stays on disk).

    Attributes
    ----------
    output : Path
        The folder of Parquet parts (``OUTPUT.manifest.json`` beside it).
    manifest : dict
        As written (certified, ε, δ, unit, basis, the sample's and table's sizes, the rule).
    verdict : dict
        The confirmation's verdict (on the panel sample, streamed rule).
    rows : list of dict
        The search's rows (on the panel sample).
    report : Report
    search : SearchResult
    sample : dict
        The panel sample's and the table's sizes (no indices).
    streamed : StreamedResult
    skipped : list of dict
    """

    output: Path
    manifest: dict[str, Any]
    verdict: dict[str, Any]
    rows: list[dict[str, Any]]
    report: Any
    search: Any
    sample: dict[str, Any]
    streamed: StreamedResult
    skipped: list[dict[str, Any]] = field(default_factory=list)

    @property
    def setting(self) -> str:
        """The certified setting's label."""
        return str(self.manifest["certification"]["search"]["chosen"])


def _checked_methods(methods: Sequence[str] | None) -> tuple[list[str], list[dict[str, Any]]]:
    """The streamable DP methods to search, and the DP methods left out (with reasons)."""
    from .dp_budget import DP_METHODS

    why = ("its statistics are not streamed over partitions on the dask path (only "
           f"{', '.join(STREAMED_METHODS)}); release it in memory")
    if methods is None:
        return list(STREAMED_METHODS), [{"method": m, "setting": m, "reason": why}
                                        for m in DP_METHODS if m not in STREAMED_METHODS]
    named = list(dict.fromkeys(methods))
    bad = [m for m in named if m not in STREAMED_METHODS]
    if bad:
        raise BioanonError(f"method(s) {bad} cannot be released by the streamed DP path of "
                           f"a Parquet release with epsilon=; name {', '.join(STREAMED_METHODS)} "
                           "(methods=dp-basis) or release in memory",
                           parameter=("methods", "epsilon"))
    return named, []


def certify_streamed(source: str | os.PathLike, output: str | os.PathLike, roles: Any, *,
                     epsilon: float, delta: float | None = None, public: Any = None,
                     public_name: str | None = None, privacy_unit: str | None = None,
                     max_records_per_identity: int | None = None,
                     methods: Sequence[str] | None = None, target: float | None = None,
                     random_state: int | None = None, budget_minutes: float | None = 10.0,
                     keep_sensitive: bool = False, sample_records: int = 50_000,
                     sample_identities: int | None = 1_000,
                     partition_rows: int = PARTITION_ROWS, scheduler: str | None = None,
                     local: bool = True, n_workers: int | None = None, version: str = "",
                     progress: Progress | None = None, report_closest: bool = False,
                     exhaustive: bool = False, min_utility: float | None = None,
                     options: EvaluationOptions | None = None,
                     **option_values: Any) -> CertifiedStreamedRelease:
    """Certify a streamable DP method on a panel sample of a Parquet dataset and release the
    dataset in streaming passes (see the module).

    Parameters
    ----------
    source, output, roles
        As for :func:`~bioanon.certification.parquet.certify_parquet` (no additional
        attributes: the streamed model has one interest).
    epsilon, delta
        The declared budget (δ default 1/n², n the table's records).
    public : FeatureTable or array (m, d)
        Records of people **not** in the release (required: the box, centre and clip radii
        come from them, so the guarantee is strict).
    public_name : str, optional
        The public table's file name, for the manifest.
    privacy_unit, max_records_per_identity
        Only the record unit streams; the identity unit is refused.
    methods : sequence of str, optional
        DP methods to search (default: the streamable ones, :data:`STREAMED_METHODS`).
    partition_rows : int
        Records per partition of the release and per block of the judged rule.
    scheduler, local, n_workers
        Where the release's passes run (:func:`~bioanon.scale.stream.open_partitions`): the
        dask scheduler at ``scheduler``, else a ``LocalCluster`` of ``n_workers``
        single-threaded workers (default one per core), else (``local=False``) this process.
        The same statistics and records for a seed wherever they run.
    target, random_state, budget_minutes, keep_sensitive, exhaustive, min_utility, options,
    sample_records, sample_identities, version, progress, report_closest, **option_values
        As for :func:`~bioanon.certification.parquet.certify_parquet`.

    Returns
    -------
    CertifiedStreamedRelease

    Raises
    ------
    NotCertified
        When no setting meets every target on the sample (nothing is written).
    """
    from ..evaluation.seeds import derive_seed
    from ..release import build_manifest, resolve_roles
    from ..release_unit import write_unit
    from ..sampling import panel_sample
    from ..scale.cluster import check_scheduler_reachable, require_dask
    from ..scale.parquet_io import give_back_memory, parquet_columns, read_labels, read_rows
    from ..scale.run import input_digest
    from .certificate import (
        NotCertified,
        certification_block,
        public_rows,
        release_seed,
        report_and_chart,
        write_report,
    )
    from .dp_budget import DPBudget
    from .search import build_candidate, check_min_utility, judge_options, run_search

    opts = judge_options(options, target, option_values)
    group = opts.group
    src, out = Path(source), Path(output)
    roles.of()
    check_min_utility(min_utility)
    if scheduler is not None or local:  # before the search: the cluster comes after it
        require_dask()
    if scheduler is not None:
        check_scheduler_reachable(scheduler)
    if public is None:
        raise BioanonError("the streamed DP release of the dask path needs public bounds: "
                           "give public= a table of people NOT in the release with the same "
                           "feature columns (bounds taken from the table would need a pass "
                           "over it and leak)", parameter=("public", "epsilon"))
    if (privacy_unit or "record") != "record" or max_records_per_identity is not None:
        raise BioanonError("the streamed DP release covers privacy_unit=record only (bounding "
                           "a person's records across partitions needs a pass keyed by "
                           "person); drop privacy_unit=identity or release in memory",
                           parameter=("privacy_unit", "max_records_per_identity"))
    if roles.keep or roles.quasi:
        raise BioanonError("kept and quasi-identifying columns are not available on the dask "
                           "path (the join check reads them in memory); use the in-memory path")
    if not roles.interest:
        raise BioanonError("the streamed release models the classes of the interest; pass "
                           "interest=COL", parameter="interest")
    if roles.additional:
        raise BioanonError("the streamed DP release models one interest column; drop the "
                           "additional attributes or release in memory",
                           parameter="additional")
    if isinstance(partition_rows, bool) or int(partition_rows) < 1:
        raise BioanonError(f"partition_rows={partition_rows} must be a positive integer; "
                           "e.g. 100000", parameter="partition_rows")
    names_ok, left_out = _checked_methods(methods)
    judged = list(dict.fromkeys([roles.interest, roles.sensitive,
                                 *([group] if group else [])]))
    features, label_cols = parquet_columns(src, out, [*judged, *roles.identifying], "streamed")
    _check_public_columns(public, features)  # before any pass over the table
    step = progress or (lambda done, total, text: None)

    # 1. the judged label columns: n and the interest's classes (public in the DP model)
    step(0, 1, "reading the label columns")
    labels = read_labels(src, judged)
    n_total = len(labels)
    classes = tuple(np.unique(labels[roles.interest].to_numpy()).tolist())
    # epsilon and delta (< 1/n) checked before the sample's pass: a one-record stand-in
    # carries the feature count, the table's n comes from the labels
    DPBudget(epsilon=epsilon, delta=delta, total_records=n_total).check(
        FeatureTable(np.zeros((1, len(features)), dtype=np.float32), labels.iloc[:1],
                     features), None)
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
    budget = DPBudget(epsilon=epsilon, delta=delta, privacy_unit="record", public=public,
                      public_name=None if public_name is None else Path(public_name).name,
                      total_records=n_total)
    budget.check(table, roles.sensitive)  # columns, overlap with the sample, delta < 1/n
    public_X = budget.public_X(table)
    statement = budget.statement(table, roles.sensitive)
    guarantee = budget.guarantee(table, roles.sensitive)

    # 3. the search, every candidate judged as the stream applies it
    def streamed(anonymizer: Any) -> Any:
        return StreamedRelease(anonymizer, classes, int(partition_rows))

    result = run_search(table, roles, options=replace(opts, guarantee=guarantee),
                        methods=names_ok, random_state=random_state,
                        budget_minutes=budget_minutes, progress=progress, judge_as=streamed,
                        report_closest=report_closest, exhaustive=exhaustive, budget=budget,
                        min_utility=min_utility)
    result.skipped[:0] = [s for s in left_out if s not in result.skipped]
    del table
    give_back_memory()
    if not result.certified:
        raise NotCertified(result, roles.sensitive, roles.interest)

    # 4. the report, then the release (every record, partition by partition)
    c = result.candidate
    assert c is not None
    ids_s, ids_t = max(sizes["n_identities"], 1), max(sizes["total_identities"], 1)
    rule = {
        "mechanism": f"{c.method} streamed: its statistics summed over partitions of at "
                     f"most {int(partition_rows)} records, the noise drawn once on the "
                     "sums, fresh records sampled per partition",
        "partition_rows": int(partition_rows),
        "fitted_on": f"every record of the table ({n_total} records): class counts, noisy "
                     "class sums, the basis, noisy second moments in the basis and the "
                     "residual energy (one streaming pass each)",
        "judged_as_released": True,
        "judged_on": "the panel sample's splits, each released by the same streamed "
                     "mechanism at the same epsilon and delta (its statistics are the "
                     "split's own records')",
        "covers": "the (epsilon, delta) guarantee covers the released table whatever the "
                  "data, for one record (strict: box, centre and clip radii from the public "
                  "data); the empirical figures judge the same mechanism at the sample's size",
        "does_not_cover": "the model fitted on the whole table is not the one judged: the "
                          "noise on the sums is the same, but a record's share of the "
                          f"statistics is 1/{n_total} in the table against at least "
                          f"1/{sizes['n_records']} in the sample, a person's about 1/{ids_t} "
                          f"against 1/{ids_s} (the sample is judged where each weighs more); "
                          "the record-unit guarantee does not bound a person's many records: "
                          "the identity level is shown on the sample only",
    }
    result.confirmation = result.confirmation.amended(
        lambda data: _name_sample(data, sizes, rule))
    report, png = report_and_chart(result, roles.sensitive, roles.interest)
    report = report.amended(lambda data: data.update(
        differential_privacy=statement,
        release={"certified": True, "written": True, "setting": c.label(),
                 "table": out.name + "/", "manifest": out.name + ".manifest.json",
                 "n_records": n_total}))
    seed = release_seed(random_state)
    est = build_candidate(c, roles.interest, roles.sensitive, [], None)
    plan = resolve_roles(label_cols, roles, keep_sensitive=keep_sensitive)
    released = list(plan.released)
    manifest: dict[str, Any] = {}

    def write_table(staged: Path) -> str:
        res = stream_to_parts(est, parts, classes, staged, released, roles.interest, seed)
        params = est.public_params()
        for key in c.hidden:
            params[key] = "public (from the public table; values not written)"
        doc = build_manifest(method=c.method, params=params, plan=plan, n_records=res.n_records,
                             n_features=len(features), shuffled=True, check=None,
                             input_name=src.name, input_sha256=input_digest(src),
                             certified=True)
        doc.pop("bioanon_version")
        doc["output"].update(format="parquet (partitioned, one part per input partition, in "
                                    "the input's order)", n_features=len(features),
                             shuffled="within each partition")
        manifest.update({"bioanon_version": version, **doc, **certification_block(
            result, judged_on={**sizes, "sample": "stratified panel sample of identities "
                                                  "and records (by the interest within "
                                                  "each)"}, stream_rule=rule),
            "differential_privacy": statement,
            "stream": {"partitions": res.n_parts, "partition_rows": int(partition_rows),
                       "passes": res.passes, "class_counts": res.class_counts,
                       "order": "the input's partitions in order; rows shuffled within "
                                "each partition"}})
        return res.sha256

    # the manifest is filled by the table's writer: write_unit stages the table first
    with open_partitions(src, list(dict.fromkeys([*released, roles.interest])), features,
                         int(partition_rows), public_X, progress, scheduler=scheduler,
                         local=local, n_workers=n_workers) as parts:
        write_unit(out, table=write_table, manifest=manifest,
                   report=lambda folder: write_report(report, png, folder), table_is_dir=True)
    import json

    from ..release import manifest_path

    doc = json.loads(manifest_path(out).read_text())
    res = StreamedResult(out, int(doc["output"]["n_records"]), int(doc["stream"]["partitions"]),
                         int(doc["stream"]["passes"]), dict(doc["stream"]["class_counts"]))
    return CertifiedStreamedRelease(out, doc, dict(result.confirmation["verdict"]),
                                    public_rows(result), report, result, sizes, res,
                                    list(result.skipped))


def _check_public_columns(public: Any, features: Sequence[str]) -> None:
    """Refuse public data whose feature columns are not the input's (one line, before any
    pass; the values are checked on the sample and on every partition later)."""
    if isinstance(public, FeatureTable) and public.feature_names:
        theirs = list(public.feature_names)
        missing = [c for c in features if c not in theirs]
        extra = [c for c in theirs if c not in features]
        if missing or extra:
            what = (f"lacks {len(missing)} feature column(s) of the input, e.g. {missing[:5]}"
                    if missing else f"has {len(extra)} feature column(s) the input lacks, "
                                    f"e.g. {extra[:5]}")
            raise BioanonError(f"public= {what}; give a table of people not in the release "
                               "with the same feature columns", parameter="public")
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


__all__ = ["PARTITION_ROWS", "STREAMED_METHODS", "CertifiedStreamedRelease", "Partitions",
           "StreamedRelease", "StreamedResult", "certify_streamed", "partition_count",
           "stream_to_parts"]
