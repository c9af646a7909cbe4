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

The folder of parts, ``OUTPUT.manifest.json`` and ``OUTPUT.report/`` appear as one unit, the
manifest last (:func:`bioanon.release_unit.write_unit`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone

from ..errors import BioanonError
from ..table import FeatureTable
from .parquet import DASK_SETTINGS, ParquetSample, _give_back_memory

Progress = Callable[[int, int, str], None]

#: records per partition of the streamed release (and per block of its judged rule)
PARTITION_ROWS = 100_000


class StreamedRelease(TransformerMixin, BaseEstimator):
    """A streamable DP method applied as the streamed release applies it.

    The records given are cut into blocks of ``partition_rows`` in order; the statistics are
    summed over the blocks, the noise drawn once, and each block's records sampled from the
    noisy model (:func:`~bioanon.anonymize.basis_stream.stream_release`). The judge of the dask
    path evaluates this estimator, so the certificate describes the mechanism that is run.

    Parameters
    ----------
    anonymizer : DPBasisAnonymizer
        With public bounds (``bounds`` or ``public_data``), the record unit, one interest.
    classes : tuple, optional
        The interest's declared classes (the whole table's); None: those of the records given.
    partition_rows : int
        Records per block.
    random_state : int or None
        Secret key of the noise and the samples (never published).

    Examples
    --------
    >>> from bioanon.anonymize.dp_basis import DPBasisAnonymizer
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> inner = DPBasisAnonymizer("expression", epsilon=4.0, bounds=(-10.0, 10.0), rank=2)
    >>> StreamedRelease(inner, partition_rows=50, random_state=0).fit_transform(t).X.shape
    (120, 32)
    """

    def __init__(self, anonymizer: Any, classes: tuple[Any, ...] | None = None,
                 partition_rows: int = PARTITION_ROWS, random_state: int | None = None) -> None:
        self.anonymizer = anonymizer
        self.classes = classes
        self.partition_rows = partition_rows
        self.random_state = random_state

    def public_params(self) -> dict[str, Any]:
        """The inner method's public parameters and the block rule (no random state)."""
        inner = self.anonymizer
        params = inner.public_params() if hasattr(inner, "public_params") else {}
        return {**params, "streamed": True, "partition_rows": int(self.partition_rows)}

    def fit(self, X: Any, labels: Any = None) -> StreamedRelease:
        """Check the parameters (the statistics are those of the records released)."""
        from ..anonymize.base import split_input

        arr, _ = split_input(X, labels)
        clone(self.anonymizer).check_params()
        if int(self.partition_rows) < 1:
            raise BioanonError(f"partition_rows={self.partition_rows} must be a positive "
                               "integer; e.g. 100000", parameter="partition_rows")
        self.n_features_in_ = int(np.asarray(arr).shape[1])
        return self

    def transform(self, X: Any, labels: Any = None) -> Any:
        """Release ``X`` as the stream does; rows stay in input order."""
        from ..anonymize.base import split_input
        from ..anonymize.basis_stream import stream_release

        table = X if isinstance(X, FeatureTable) else None
        arr, lab = split_input(X, labels)
        arr = np.asarray(arr, dtype=np.float32)
        est = clone(self.anonymizer).set_params(random_state=self.random_state)
        interest = est.interest
        y = lab[interest].to_numpy() if isinstance(lab, pd.DataFrame) else np.asarray(lab)
        classes = list(np.unique(y)) if self.classes is None else list(self.classes)
        step = int(self.partition_rows)
        cuts = list(range(0, arr.shape[0], step)) or [0]
        blocks = [(arr[a:a + step], y[a:a + step]) for a in cuts]
        out = np.concatenate(list(stream_release(est, lambda: iter(blocks), arr.shape[1],
                                                 classes)))
        self.anonymizer_ = est  # its public accounting (epsilon_, delta_)
        return table.with_features(out) if table is not None else out

    def fit_transform(self, X: Any, labels: Any = None, **fit_params: Any) -> Any:
        """Release ``X`` as the stream does (the statistics are its own records')."""
        return self.fit(X, labels).transform(X, labels)


# ---------------------------------------------------------------------- the partitions
def partition_count(source: Path, rows: int) -> int:
    """How many partitions of at most ``rows`` records :class:`Partitions` reads."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    return sum(-(-pq.ParquetFile(f).metadata.num_rows // rows)
               for f in ds.dataset(str(source), format="parquet").files)


def _rows_of(M: np.ndarray) -> np.ndarray:
    m = np.ascontiguousarray(M, dtype=np.float32)
    return m.view(np.dtype((np.void, m.dtype.itemsize * m.shape[1]))).ravel()


class Partitions:
    """The source's partitions, a fresh pass per call: (features (m, d) float32, labels).

    Each file of the Parquet dataset is read in its order, ``rows`` records at a time (pages
    read as they are used: memory is one partition whatever the row groups). The first pass
    refuses non-finite features and records that appear (exactly, as float32) among the
    ``public`` records. ``last_labels`` holds the labels of the partition read last.
    """

    def __init__(self, source: Path, labels: Sequence[str], features: Sequence[str],
                 rows: int = PARTITION_ROWS, public: np.ndarray | None = None,
                 progress: Progress | None = None) -> None:
        self.source, self.labels, self.features = Path(source), list(labels), list(features)
        self.rows = int(rows)
        self.passes = 0
        self.total = partition_count(self.source, self.rows)
        self.last_labels: pd.DataFrame | None = None
        self._public = None if public is None else np.asarray(public, dtype=np.float32)
        self._progress = progress or (lambda done, total, text: None)

    def __call__(self) -> Iterator[tuple[np.ndarray, pd.DataFrame]]:
        return self._read(check=self.passes == 0)

    def _read(self, check: bool) -> Iterator[tuple[np.ndarray, pd.DataFrame]]:
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        from ..table import all_finite, fill_rows

        self.passes += 1
        k = 0
        for path in ds.dataset(str(self.source), format="parquet").files:
            pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
            for batch in pf.iter_batches(batch_size=self.rows,
                                         columns=[*self.labels, *self.features],
                                         use_threads=False):
                X = np.empty((batch.num_rows, len(self.features)), dtype=np.float32)
                fill_rows(X, 0, [batch.column(f).to_numpy(zero_copy_only=False)
                                 for f in self.features])
                if check:
                    if not all_finite(X):
                        raise BioanonError("the features hold NaN or infinite values; clean "
                                           "or impute them before releasing")
                    self._check_public(X)
                lab = batch.select(self.labels).to_pandas()
                self.last_labels = lab
                k += 1
                self._progress(k, self.total, f"pass {self.passes}: partition {k} of "
                                              f"{self.total}")
                yield X, lab

    def _check_public(self, X: np.ndarray) -> None:
        """Refuse public records that are records of this partition (exact float32 rows;
        the first feature prefilters, whole rows decide)."""
        pub = self._public
        if pub is None or not X.size:
            return
        maybe = np.isin(X[:, 0], pub[:, 0])
        if maybe.any() and np.isin(_rows_of(X[maybe]), _rows_of(pub)).any():
            raise BioanonError("the public data share records with the input; public data "
                               "must hold people NOT in the release (bounds taken from "
                               "released records would leak)", parameter="public")


# ---------------------------------------------------------------------- the release
@dataclass
class StreamedResult:
    """Sizes of a streamed release (public: no seeds)."""

    output: Path
    n_records: int
    n_parts: int
    passes: int
    class_counts: dict[str, int] = field(default_factory=dict)
    #: the folder's SHA-256, as :func:`bioanon.io.file_sha256` computes it
    sha256: str = ""


def stream_to_parts(est: Any, parts: Partitions, classes: Sequence[Any], folder: Path,
                    released: Sequence[str], interest: str, seed: int | None) -> StreamedResult:
    """Release every partition of ``parts`` with ``est`` (:func:`stream_release`) into
    ``folder`` as ``part-NNNNNN.parquet`` in the partitions' order, rows shuffled within each.

    ``est.random_state`` is set from ``seed`` (None: fresh OS entropy) and never written.
    Returns the sizes and the folder's SHA-256 (each part hashed as it is written).
    """
    from ..anonymize.basis_stream import spawned, stream_release
    from ..io import file_sha256
    from ..table import write_parquet

    mech, shuffle = np.random.SeedSequence(seed).spawn(2)
    est.set_params(random_state=int(mech.generate_state(1)[0]))
    features = list(parts.features)
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    n = i = 0
    for out, seq in zip(stream_release(est, parts, len(features), classes),
                        spawned(shuffle), strict=False):
        lab = parts.last_labels  # the partition just sampled (the pass runs in lock step)
        assert lab is not None and len(lab) == out.shape[0]
        perm = np.random.default_rng(seq).permutation(out.shape[0])
        part = FeatureTable(out[perm], lab[list(released)].iloc[perm].reset_index(drop=True),
                            features)
        name = f"part-{i:06d}.parquet"
        write_parquet(part, folder / name)
        digest.update(name.encode() + file_sha256(folder / name).encode())
        values, m = np.unique(lab[interest].astype(str).to_numpy(), return_counts=True)
        for c, k in zip(values.tolist(), m.tolist(), strict=True):
            counts[c] = counts.get(c, 0) + int(k)
        n += out.shape[0]
        i += 1
    return StreamedResult(folder, n, i, parts.passes, counts, digest.hexdigest())


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
                     partition_rows: int = PARTITION_ROWS, version: str = "",
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

    return front_door(Streamed(Path(source), Path(output), sample_records, sample_identities,
                               partition_rows, version), roles, options)


class Streamed(ParquetSample):
    """The streamed source of :func:`~bioanon.certification.run.certify_source`: a panel
    sample, every candidate judged as the stream applies it (:class:`StreamedRelease`), the
    DP methods that declare ``streamable``, the budget's refusals (public bounds, the record
    unit, one interest), and the release in streaming passes (:func:`stream_to_parts`)."""

    function = "certify_streamed"
    accepts = DASK_SETTINGS | {"epsilon", "delta", "public", "public_name", "privacy_unit",
                               "max_records_per_identity"}
    kind = "streamed"

    def __init__(self, source: Path, output: Path, sample_records: int,
                 sample_identities: int | None, partition_rows: int, version: str) -> None:
        super().__init__(source, output, sample_records, sample_identities)
        self.partition_rows, self.version = partition_rows, version
        self.public_X: np.ndarray | None = None

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

    def check_features(self, settings: Any) -> None:
        """The public table's feature columns are the input's (before any pass)."""
        _check_public_columns(settings.public, self.features)

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
        statement = budget.statement(_one_record(self.features), roles.sensitive)
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
        parts = Partitions(self.src, list(dict.fromkeys([*released, roles.interest])),
                           self.features, int(self.partition_rows), self.public_X,
                           settings.progress)
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
        write_unit(self.out, table=write_table, manifest=manifest, report=report,
                   table_is_dir=True)
        return dict(json.loads(manifest_path(self.out).read_text()))


def _one_record(features: Sequence[str]) -> FeatureTable:
    """A one-record stand-in carrying the feature columns (the budget's statement reads the
    table's size from ``total_records``)."""
    return FeatureTable(np.zeros((1, len(features)), dtype=np.float32),
                        pd.DataFrame(index=[0]), list(features))


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


__all__ = ["PARTITION_ROWS", "Partitions", "Streamed",
           "StreamedRelease", "StreamedResult", "certify_streamed", "partition_count",
           "stream_to_parts"]
