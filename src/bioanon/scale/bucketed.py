"""Bucketed, out-of-core release of a Parquet dataset with a mixing anonymizer, on dask.

Steps (every one a dask task; the same graph runs on the threaded scheduler or a
``dask.distributed`` cluster):

1. read the interest column lazily (``dask.dataframe``), assign every record to a random bucket
   of about ``bucket_size`` records stratified by the interest (:mod:`.buckets`);
2. one pass over the input partitions: each partition's rows are written to a spill folder
   sorted by bucket, and the rows of a bounded stratified sample are returned for the fit;
3. the anonymizer is fitted once on that sample (relevance etc.; recorded in the manifest);
4. each bucket is gathered from the spill, released by the in-memory anonymizer (its random
   sets are drawn within the bucket), shuffled, and written as one Parquet part file;
5. the part files are written into a temporary folder renamed onto the output as a whole, and
   the manifest is then written atomically beside it.

A *mixing anonymizer* is any fitted estimator whose ``transform(X, labels)`` releases the
records it is given by mixing them only among themselves, with a ``random_state`` parameter
(the selective mean, the variance-preserving mix). Bucket assignments, seeds and the spill are
secrets: the spill folder is deleted, and nothing but sizes reaches the manifest.

Sets are drawn within a bucket instead of the whole class: a record's donors are the
``round(t·g) − 1`` same-class and ``g − round(t·g)`` other-class records of its bucket. With
``bucket_size`` ≫ g every class holds many more records than a set needs, and donors are still
uniform among the records of the bucket, which is itself a uniform random stratified subset.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..io import make_temp_dir
from ..release_unit import write_unit
from ..sampling import stratified_positions
from ..table import FeatureTable, all_finite, fill_rows, write_parquet
from .buckets import assign_buckets, n_buckets_for

#: rows gathered and written at a time when a partition is spilled
_SPILL_ROWS = 8192
#: below this many records of a class in a bucket per member of a set (g), a bucketed release
#: measurably departs from the whole-class one (``benchmarks/bucketed_vs_memory.py``: more
#: private or less useful at 1.5 to 4 donors' worth, within the intervals from 4.5 up); the
#: command line says so
POOL_PER_SET = 4


class MixingAnonymizer(Protocol):
    """What the bucketed release needs of an anonymizer."""

    random_state: Any

    def fit(self, X: Any, labels: Any = None) -> Any: ...

    def transform(self, X: Any, labels: Any = None) -> Any: ...


@dataclass
class BucketedResult:
    """Sizes of a bucketed release (public: no seeds, no assignments)."""

    output: Path
    n_records: int
    n_buckets: int
    bucket_sizes: tuple[int, int]
    class_counts: dict[str, int]
    fit_sample: int
    feature_columns: list[str] = field(default_factory=list)
    label_columns: list[str] = field(default_factory=list)
    #: the fewest records of one interest class in one bucket (the pool its sets are drawn
    #: from; see :data:`POOL_PER_SET`)
    smallest_class_in_a_bucket: int = 0


# ---------------------------------------------------------------------- the pieces (tasks)
def _split_columns(columns: Sequence[str], label_columns: Sequence[str]) -> list[str]:
    labels = set(label_columns)
    return [c for c in columns if c not in labels]


def _spill_partition(frame: pd.DataFrame, buckets: np.ndarray, sample_rows: np.ndarray,
                     features: list[str], labels: list[str], n_buckets: int,
                     path: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Write one partition's rows sorted by bucket; return the per-bucket counts and sample.

    The rows are gathered in bucket order a block at a time into one small buffer and written
    as they are (no copy of the whole partition: fresh memory is dear).
    """
    import pyarrow as pa

    order = np.argsort(buckets, kind="stable")
    cols = [frame[f].to_numpy() for f in features]
    m, d = len(frame), len(features)
    block = np.empty((min(m, _SPILL_ROWS), d), dtype=np.float32)
    with open(path + ".npy", "wb") as fh:
        np.lib.format.write_array_header_1_0(
            fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
                 "fortran_order": False, "shape": (m, d)})
        for a in range(0, m, _SPILL_ROWS):
            rows = order[a:a + _SPILL_ROWS]
            part = block[:rows.size]
            fill_rows(part, 0, [c[rows] for c in cols])
            if not all_finite(part):
                raise BioanonError("the features hold NaN or infinite values; clean or impute "
                                   "them before releasing")
            part.tofile(fh)

    lab = pa.Table.from_pandas(frame[labels].iloc[order], preserve_index=False)
    with pa.OSFile(path + ".labels.arrow", "wb") as sink, \
            pa.ipc.new_file(sink, lab.schema) as writer:  # uncompressed: sliced in place later
        writer.write_table(lab)
    counts = np.bincount(buckets, minlength=n_buckets)
    sample = frame.iloc[sample_rows][[*labels, *features]].reset_index(drop=True)
    return counts, sample


def _gather_bucket(spill: str, n_parts: int, offsets: np.ndarray, counts: np.ndarray,
                   b: int, labels: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Read bucket ``b``'s rows from every partition's spill (memory-mapped, then closed)."""
    import pyarrow as pa

    xs, ls = [], []
    for p in range(n_parts):
        a, m = int(offsets[p, b]), int(counts[p, b])
        if not m:
            continue
        base = os.path.join(spill, f"p{p:06d}")
        mm = np.load(base + ".npy", mmap_mode="r")
        xs.append(np.array(mm[a:a + m]))
        del mm  # unmap: the file's pages leave this process's resident set
        with pa.memory_map(base + ".labels.arrow") as src:
            ls.append(pa.ipc.open_file(src).read_all().slice(a, m).to_pandas())
    X = np.concatenate(xs) if xs else np.empty((0, 0), np.float32)
    return X, pd.concat(ls, ignore_index=True)[labels]


def _release_bucket(anonymizer: MixingAnonymizer, spill: str, n_parts: int,
                    offsets: np.ndarray, counts: np.ndarray, b: int, seed: int,
                    labels: list[str], released: list[str], features: list[str],
                    interest: str, out_dir: str) -> dict[str, Any]:
    """Release one bucket with a copy of the fitted anonymizer and write its part file."""
    X, lab = _gather_bucket(spill, n_parts, offsets, counts, b, labels)
    ss = np.random.SeedSequence(seed)
    s_mix, s_perm = (int(s.generate_state(1)[0]) for s in ss.spawn(2))
    est = copy.copy(anonymizer)  # fitted attributes shared, its own random state
    est.random_state = s_mix
    out = np.asarray(est.transform(X, lab), dtype=np.float32)
    perm = np.random.default_rng(s_perm).permutation(out.shape[0])
    part = FeatureTable(out[perm], lab[released].iloc[perm], features)
    write_parquet(part, os.path.join(out_dir, f"part-{b:06d}.parquet"))
    classes, n_c = np.unique(lab[interest].astype(str).to_numpy(), return_counts=True)
    return {"n": int(out.shape[0]), "classes": dict(zip(classes.tolist(), n_c.tolist(),
                                                         strict=True))}


# ---------------------------------------------------------------------- the release
@dataclass(frozen=True)
class BucketIO:
    """Where a bucketed release spills and how it partitions its input.

    Attributes
    ----------
    spill_dir : path, optional
        Folder for the temporary bucket spill (deleted afterwards); on a cluster it must be
        shared by every worker. Default: a temporary folder beside the output.
    blocksize : int, optional
        Bytes per input partition (default: one partition per Parquet row group).
    """

    spill_dir: str | os.PathLike | None = None
    blocksize: int | None = None


def bucketed_release(source: str | os.PathLike, output: str | os.PathLike,
                     anonymizer: MixingAnonymizer, *, interest: str,
                     label_columns: Sequence[str], released_columns: Sequence[str],
                     manifest: dict[str, Any], bucket_size: int = 50_000,
                     fit_sample: int = 20_000, random_state: int | None = None,
                     client: Any = None, num_workers: int | None = None,
                     io: BucketIO | None = None,
                     progress: Callable[[int, int, str], None] | None = None,
                     report: Callable[[Path], Any] | None = None) -> BucketedResult:
    """Release a Parquet dataset bucket by bucket and write a partitioned Parquet release.

    Parameters
    ----------
    source : path
        Parquet file or folder of Parquet files (label columns + numeric feature columns).
    output : path
        Folder to create (must not exist). The folder, ``<output>.manifest.json`` (naming the
        SHA-256 of the folder's parts) and, with ``report``, ``<output>.report/`` appear as
        one unit (:func:`bioanon.release_unit.write_unit`): the manifest last.
    anonymizer : MixingAnonymizer
        Unfitted; fitted here on a stratified sample of at most ``fit_sample`` records.
    interest : str
        Label column the buckets are stratified by (each bucket holds every class in
        proportion).
    label_columns : sequence of str
        Every non-feature column of the input; the rest are features.
    released_columns : sequence of str
        The label columns to write (the release policy's choice; see :mod:`.policy`).
    manifest : dict
        Fields of the manifest (roles, parameters, provenance); sizes are added here.
    bucket_size : int
        Minimum records per bucket (buckets hold ``bucket_size`` to ``2·bucket_size − 1``).
    fit_sample : int
        Records of the stratified sample the anonymizer is fitted on.
    random_state : int or None
        Fixes the bucket assignment, the sample and every bucket's release (a secret).
    client : dask.distributed.Client, optional
        Run on this cluster; otherwise the threaded scheduler with ``num_workers`` threads.
    io : BucketIO, optional
        Where the spill goes and how the input is partitioned (:class:`BucketIO`).
    progress : callable ``(done, total, text)``, optional
        Called as partitions are spilled and buckets released (on a cluster, per task; on
        threads, per wave of tasks).
    report : callable, optional
        Writes the release's report into the folder it is given (``<output>.report/``).

    Returns
    -------
    BucketedResult
    """
    out, src = Path(output), Path(source)
    labels = list(dict.fromkeys(label_columns))
    released = list(dict.fromkeys(released_columns))
    _check_paths(out, src, labels, interest)
    io = io or BucketIO()
    read = _Input.open(src, labels, released, io.blocksize)
    step = progress or (lambda done, total, text: None)
    runner = _Runner(client, num_workers, step)
    plan = _plan_buckets(read, interest, runner, bucket_size, fit_sample, random_state)

    spill = tempfile.mkdtemp(prefix=f".{out.name}.spill-",
                             dir=str(io.spill_dir) if io.spill_dir else str(out.parent))
    # the spill stays private (0700: clear records, removed at the end); the release folder
    # gets the umask's mode, like any folder the user creates
    tmp_out = str(make_temp_dir(out.parent, f".{out.name}.tmp-"))
    try:
        counts, fit_frame = _spill(read, plan, labels, spill, runner)
        n_fit = _fit_on_sample(anonymizer, fit_frame, read.features, labels, step)
        del fit_frame
        parts = _release_buckets(anonymizer, plan, spill, counts, labels, released,
                                 read.features, interest, tmp_out, runner)
        result = _result(out, parts, plan.n_buckets, n_fit, read.features, released)
        doc = _bucketed_manifest(manifest, result, anonymizer, plan.n, bucket_size)

        def move_parts(staged: Path) -> None:  # the released parts into the unit's stage
            staged.rmdir()
            os.replace(tmp_out, staged)

        # 5. the folder, its manifest (last) and the report appear as one unit
        write_unit(out, table=move_parts, manifest=doc, report=report, table_is_dir=True)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
        shutil.rmtree(tmp_out, ignore_errors=True)
    return result


# ---------------------------------------------------------------------- its steps
def _check_paths(out: Path, src: Path, labels: list[str], interest: str) -> None:
    """Refuse an existing output, a missing folder or input, an interest that is no label."""
    if out.exists():
        raise BioanonError(f"output '{out}' already exists; choose a new folder (a bucketed "
                           "release never overwrites)")
    if not out.parent.exists():
        raise BioanonError(f"output folder '{out.parent}' does not exist; create it first")
    if not src.exists():
        raise BioanonError(f"input '{src}' does not exist; check the path")
    if interest not in labels:
        raise BioanonError(f"interest column '{interest}' is not among the label columns "
                           f"{labels}; name it with interest={interest}", parameter="interest")


@dataclass
class _Input:
    """The lazily read input: its partitions, the read options and the feature columns."""

    src: Path
    ddf: Any
    read_kwargs: dict[str, Any]
    features: list[str]

    @classmethod
    def open(cls, src: Path, labels: list[str], released: list[str],
             blocksize: int | None) -> _Input:
        """Open ``src`` lazily; refuse missing columns and a table without features."""
        import dask.dataframe as dd

        kwargs: dict[str, Any] = ({"blocksize": blocksize} if blocksize else
                                  {"split_row_groups": True})
        ddf = dd.read_parquet(str(src), **kwargs)
        columns = [str(c) for c in ddf.columns]
        missing = [c for c in [*labels, *released] if c not in columns]
        if missing:
            raise BioanonError(f"column(s) {missing} are not in '{src.name}'; its columns "
                               f"start {columns[:8]}")
        features = _split_columns(columns, labels)
        if not features:
            raise BioanonError("the input has no feature columns; every column is a label")
        return cls(src, ddf, kwargs, features)


@dataclass
class _Runner:
    """Runs dask tasks on the cluster (``client``) or on threads, reporting progress."""

    client: Any
    num_workers: int | None
    step: Callable[[int, int, str], None]

    def compute(self, *tasks: Any, text: str = "") -> list[Any]:
        """Run the tasks; report each one done (a cluster) or each wave of them (threads)."""
        total = len(tasks)
        if self.client is not None:
            from distributed import as_completed, wait

            futures = self.client.compute(list(tasks))
            place = {id(f): i for i, f in enumerate(futures)}
            results: list[Any] = [None] * total
            try:
                for done, future in enumerate(as_completed(futures), 1):
                    results[place[id(future)]] = future.result()
                    self.step(done, total, text)
            except BaseException:
                # the other tasks still run on the workers and write into the spill and the
                # parts folder: let them settle before those folders are removed
                wait(futures)
                raise
            return results
        import dask

        wave = max(1, 2 * (self.num_workers or os.cpu_count() or 1))
        out: list[Any] = []
        for a in range(0, total, wave):
            out += dask.compute(*tasks[a:a + wave], scheduler="threads",
                                num_workers=self.num_workers)
            self.step(len(out), total, text)
        return out


@dataclass
class _BucketPlan:
    """Every record's bucket, the fit sample's positions and the release's seed sequence
    (secrets: none of them reaches an output)."""

    parts: list[Any]  # the input partitions (delayed)
    starts: np.ndarray  # first record of each partition
    n: int
    n_buckets: int
    buckets: np.ndarray
    sample: np.ndarray
    release_seeds: np.random.SeedSequence


def _plan_buckets(read: _Input, interest: str, runner: _Runner, bucket_size: int,
                  fit_sample: int, random_state: int | None) -> _BucketPlan:
    """1. buckets, stratified by the interest (only that column is read)."""
    import dask.dataframe as dd

    # a read of its own: a column taken from ``ddf`` may be fused into fewer partitions
    parts_in = read.ddf.to_delayed()
    ints = runner.compute(*dd.read_parquet(str(read.src), columns=[interest],
                                           **read.read_kwargs).to_delayed(),
                          text="reading the interest column")
    if len(ints) != len(parts_in):  # pragma: no cover - a dask planning change
        raise RuntimeError("the interest column and the table were split differently")
    ints = [i[interest] for i in ints]
    sizes = np.array([len(s) for s in ints], dtype=np.int64)
    y = pd.concat(ints, ignore_index=True).to_numpy()
    del ints
    n = int(sizes.sum())
    codes = pd.factorize(y)[0]
    ss = np.random.SeedSequence(random_state)
    s_bucket, s_sample, s_release = ss.spawn(3)
    n_buckets = n_buckets_for(n, bucket_size)
    buckets = assign_buckets(codes, n_buckets, np.random.default_rng(s_bucket))
    sample = stratified_positions(codes, int(fit_sample), np.random.default_rng(s_sample))
    return _BucketPlan(parts_in, np.r_[0, np.cumsum(sizes)], n, n_buckets, buckets, sample,
                       s_release)


def _spill(read: _Input, plan: _BucketPlan, labels: list[str], spill: str,
           runner: _Runner) -> tuple[np.ndarray, pd.DataFrame]:
    """2. one pass: spill by bucket + the fit sample. Returns the (partitions, buckets)
    record counts and the fit sample's rows."""
    import dask

    spill_part = dask.delayed(_spill_partition, pure=False)
    starts, sample = plan.starts, plan.sample
    tasks = []
    for p, part in enumerate(plan.parts):
        a, b = starts[p], starts[p + 1]
        rows = sample[(sample >= a) & (sample < b)] - a
        tasks.append(spill_part(part, plan.buckets[a:b], rows, read.features, labels,
                                plan.n_buckets, os.path.join(spill, f"p{p:06d}")))
    results = runner.compute(*tasks, text="spilling partitions by bucket")
    counts = np.stack([r[0] for r in results])  # (partitions, buckets)
    return counts, pd.concat([r[1] for r in results], ignore_index=True)


def _fit_on_sample(anonymizer: MixingAnonymizer, fit_frame: pd.DataFrame,
                   features: list[str], labels: list[str],
                   step: Callable[[int, int, str], None]) -> int:
    """3. fit once, on the sample; returns its size."""
    step(0, 1, f"fitting on a sample of {len(fit_frame):,} records")
    X_fit = fit_frame[features].to_numpy(dtype=np.float32)
    if hasattr(anonymizer, "check_changes"):  # a setting that would change nothing
        anonymizer.check_changes(X_fit)
    anonymizer.fit(X_fit, fit_frame[labels].reset_index(drop=True))
    return len(fit_frame)


def _release_buckets(anonymizer: MixingAnonymizer, plan: _BucketPlan, spill: str,
                     counts: np.ndarray, labels: list[str], released: list[str],
                     features: list[str], interest: str, tmp_out: str,
                     runner: _Runner) -> list[dict[str, Any]]:
    """4. release every bucket into ``tmp_out``; each part's size and class counts."""
    import dask

    offsets = np.cumsum(counts, axis=1) - counts
    seeds = [int(s.generate_state(1)[0]) for s in plan.release_seeds.spawn(plan.n_buckets)]
    release = dask.delayed(_release_bucket, pure=False)
    return runner.compute(*[release(anonymizer, spill, counts.shape[0], offsets, counts, b,
                                    seeds[b], labels, released, features, interest, tmp_out)
                            for b in range(plan.n_buckets)], text="releasing buckets")


def _result(out: Path, parts: list[dict[str, Any]], n_buckets: int, n_fit: int,
            features: list[str], released: list[str]) -> BucketedResult:
    """The release's sizes from its parts."""
    class_counts: dict[str, int] = {}
    for part in parts:
        for c, m in part["classes"].items():
            class_counts[c] = class_counts.get(c, 0) + m
    per_bucket = [p["n"] for p in parts]
    smallest = min(min(p["classes"].values()) for p in parts)
    return BucketedResult(out, int(sum(per_bucket)), n_buckets,
                          (min(per_bucket), max(per_bucket)), class_counts, n_fit,
                          features, released, smallest)


def _bucketed_manifest(manifest: dict[str, Any], result: BucketedResult,
                       anonymizer: MixingAnonymizer, n: int, bucket_size: int
                       ) -> dict[str, Any]:
    """The given manifest with the sizes of the input, the output and the buckets."""
    features, n_fit = result.feature_columns, result.fit_sample
    doc = {**manifest,
           "input": {**manifest.get("input", {}), "n_records": n,
                     "n_features": len(features)},
           "features": {"n": len(features), "role": "features (anonymized)"},
           "output": {**manifest.get("output", {}), "name": result.output.name,
                      "format": "parquet (partitioned, one part per bucket)",
                      "label_columns": result.label_columns,
                      "n_records": result.n_records,
                      "n_features": len(features), "shuffled": True},
           "scale": {"bucket_size": int(bucket_size), "n_buckets": result.n_buckets,
                     "bucket_records": list(result.bucket_sizes),
                     "smallest_class_in_a_bucket": result.smallest_class_in_a_bucket,
                     "sets_drawn_within": "bucket (stratified by the interest)",
                     "fit_sample_records": n_fit, "fit_sample": "stratified by the interest"}}
    if hasattr(anonymizer, "mask_"):  # relevance fitted on (a sample of) the fit sample
        from ..anonymize.relevance import relevance_sample_size

        doc["relevance_fit"] = {"records": relevance_sample_size(
                                    n_fit, getattr(anonymizer, "relevance_records", None)),
                                "of": n,
                                "sample": "stratified by the interest, then by the attribute "
                                          "scored"}
    return doc
