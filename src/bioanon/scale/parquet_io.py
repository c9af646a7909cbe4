"""Parquet input of the dask path: columns, label columns, a sample's rows, and partitions of
at most ``rows`` records that any process can read on its own.

A **partition** is ``rows`` consecutive records of one file of the dataset (the last one of a
file shorter), numbered over the files in the dataset's order: where it starts depends on the
file's records alone, never on its row groups, its batches or the process reading it. Its
records are read row group by row group in batches of :data:`BATCH_ROWS`, from the row group
that holds its first record on (pages read as they are used): whichever process reads a
partition, and from whichever row group it started, the same arrays come out (the features as
float32 rows, the labels as the same pieces of Arrow batches). That is what lets the streamed
release sum a statistic over partitions in one process or on dask workers to the same bits
(:mod:`bioanon.scale.stream`).

Examples
--------
>>> import tempfile, pathlib
>>> import pyarrow as pa, pyarrow.parquet as pq
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> pq.write_table(pa.table({"y": list(range(10)), "f0": [float(i) for i in range(10)]}),
...                d / "t.parquet", row_group_size=3)
>>> plan = plan_partitions(d / "t.parquet", 4)
>>> [(p.start, p.stop, p.row_group) for p in plan]
[(0, 4, 0), (4, 8, 1), (8, 10, 2)]
>>> [X[:, 0].tolist() for X, _ in scan_partitions(plan[1:], ["y"], ["f0"])]
[[4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError
from ..table import FeatureTable, all_finite, arrow_labels, column_values, fill_rows

#: records per Arrow batch when a partition is read (its memory on top of the partition's)
BATCH_ROWS = 1 << 16


# ---------------------------------------------------------------------- columns and samples
def parquet_columns(src: Path, out: Path, named: Sequence[str], kind: str
                    ) -> tuple[list[str], list[str]]:
    """The feature and label columns of the Parquet input ``src`` of a release into the new
    folder ``out``, refusing (one line each) an output that exists or has no parent folder, a
    named column the table lacks and a feature column that is not numeric. ``named``: the
    label columns given a role; ``kind``: the release's kind, for the messages."""
    from .run import check_folder_name, parquet_schema

    check_folder_name(out)  # NAME or NAME.parquet: a folder of Parquet parts either way
    if out.exists():
        raise BioanonError(f"output '{out}' already exists; choose a new folder (a {kind} "
                           "release never overwrites)")
    if not out.parent.exists():
        raise BioanonError(f"output folder '{out.parent}' does not exist; create it first")
    names, numeric, known = parquet_schema(src)
    named = list(dict.fromkeys(named))
    for c in named:
        if c not in names:
            raise BioanonError(f"column '{c}' is not in '{src.name}'; its columns start "
                               f"{names[:8]}")
    label_cols = list(dict.fromkeys([*named, *known]))
    is_label, is_numeric = set(label_cols), set(numeric)  # sets: a table may be wide
    features = [c for c in names if c not in is_label]
    odd = [c for c in features if c not in is_numeric]
    if odd:
        raise BioanonError(f"feature column(s) {odd[:5]} are not numeric; name them as label "
                           "columns (labels=COL) or convert them to numbers", parameter="labels")
    return features, label_cols


def read_labels(source: Path, columns: Sequence[str]) -> Any:
    """The label columns ``columns`` of a Parquet file or folder (nothing else is read)."""
    import pyarrow.dataset as ds

    return arrow_labels(ds.dataset(str(source), format="parquet").to_table(
        columns=list(columns)))


def read_rows(source: Path, index: np.ndarray, labels: Sequence[str],
              features: Sequence[str], batch_rows: int = 8192) -> FeatureTable:
    """The records at positions ``index`` (sorted) of a Parquet dataset, as a FeatureTable.

    One streaming pass, a batch at a time (no read-ahead): only the chosen rows are kept, so
    memory stays at the sample plus one batch, whatever the table's size.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    def batches() -> Any:  # the dataset's files in its order; pages read as they are used
        for path in ds.dataset(str(source), format="parquet").files:
            pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
            yield from pf.iter_batches(batch_size=batch_rows, columns=[*labels, *features],
                                       use_threads=False)

    X = np.empty((index.size, len(features)), dtype=np.float32)
    parts: list[Any] = []
    start = done = 0
    for batch in batches():
        stop = start + batch.num_rows
        hi = int(np.searchsorted(index, stop))
        rows = index[done:hi] - start
        if rows.size:
            picked = batch.take(pa.array(rows, type=pa.int64()))
            for j, f in enumerate(features):
                X[done:hi, j] = column_values(picked.column(f))
            parts.append(arrow_labels(picked.select(list(labels))))
        done, start = hi, stop
    if done != index.size:  # pragma: no cover - the file changed between the two reads
        raise BioanonError(f"'{source}' changed while it was read; run again")
    pa.default_memory_pool().release_unused()
    lab = pd.concat(parts, ignore_index=True)
    return FeatureTable(X, lab, list(features))


def give_back_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS (glibc; a no-op elsewhere)."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


# ---------------------------------------------------------------------- partitions
@dataclass(frozen=True)
class PartitionSpec:
    """Where partition ``index`` lies: records ``start:stop`` of the file ``path``, the first
    of them in row group ``row_group`` (which starts at the file's record ``group_start``)."""

    index: int
    path: str
    start: int
    stop: int
    row_group: int
    group_start: int

    @property
    def n_records(self) -> int:
        """Records of the partition."""
        return self.stop - self.start


def plan_partitions(source: Path, rows: int) -> list[PartitionSpec]:
    """The partitions of at most ``rows`` records of a Parquet file or folder, in order (from
    the files' footers alone: no record is read)."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if int(rows) < 1:
        raise BioanonError(f"partition_rows={rows} must be a positive integer; e.g. 100000",
                           parameter="partition_rows")
    plan: list[PartitionSpec] = []
    for path in ds.dataset(str(source), format="parquet").files:
        meta = pq.ParquetFile(path).metadata
        sizes = np.array([meta.row_group(g).num_rows for g in range(meta.num_row_groups)],
                         dtype=np.int64)
        firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if sizes.size else sizes
        for start in range(0, int(meta.num_rows), int(rows)):
            g = int(np.searchsorted(firsts, start, side="right")) - 1
            while sizes[g] == 0:  # pragma: no cover - an empty row group holds no start
                g += 1
            plan.append(PartitionSpec(len(plan), str(path), start,
                                      min(start + int(rows), int(meta.num_rows)), g,
                                      int(firsts[g])))
    return plan


def partition_count(source: Path, rows: int) -> int:
    """How many partitions of at most ``rows`` records the dataset holds."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    return sum(-(-pq.ParquetFile(f).metadata.num_rows // int(rows))
               for f in ds.dataset(str(source), format="parquet").files)


def scan_groups(plan: Sequence[PartitionSpec], by: str = "row_group"
                ) -> list[list[PartitionSpec]]:
    """The plan cut into runs that one sequential scan reads: ``by="row_group"``, the
    partitions starting in the same row group of the same file (the units a worker reads
    without decoding any record twice); ``by="file"``, every partition of a file."""
    runs: list[list[PartitionSpec]] = []
    for spec in plan:
        key = (spec.path, spec.row_group if by == "row_group" else 0)
        if runs and (runs[-1][0].path, runs[-1][0].row_group if by == "row_group" else 0
                     ) == key:
            runs[-1].append(spec)
        else:
            runs.append([spec])
    return runs


def _rows_of(M: np.ndarray) -> np.ndarray:
    m = np.ascontiguousarray(M, dtype=np.float32)
    return m.view(np.dtype((np.void, m.dtype.itemsize * m.shape[1]))).ravel()


def check_partition(X: np.ndarray, public: np.ndarray | None) -> None:
    """Refuse non-finite features, and public records that are records of this partition
    (exact float32 rows; the first feature prefilters, whole rows decide)."""
    if not all_finite(X):
        raise BioanonError("the features hold NaN or infinite values; clean or impute them "
                           "before releasing")
    if public is None or not X.size:
        return
    pub = np.asarray(public, dtype=np.float32)
    maybe = np.isin(X[:, 0], pub[:, 0])
    if maybe.any() and np.isin(_rows_of(X[maybe]), _rows_of(pub)).any():
        raise BioanonError("the public data share records with the input; public data must "
                           "hold people NOT in the release (bounds taken from released "
                           "records would leak)", parameter="public")


def scan_partitions(specs: Sequence[PartitionSpec], labels: Sequence[str],
                    features: Sequence[str], batch_rows: int = BATCH_ROWS
                    ) -> Iterator[tuple[np.ndarray, pd.DataFrame]]:
    """Read the consecutive partitions ``specs`` of one file in one scan: (features (m, d)
    float32, labels) each.

    The scan starts at the row group holding the first partition's first record and reads
    each row group in batches of ``batch_rows`` (never across a row group), so a partition is
    assembled from the same pieces whatever run it belongs to. Memory: the partition's arrays
    plus one batch.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not specs:
        return
    path = specs[0].path
    if any(s.path != path for s in specs) or any(
            b.start != a.stop for a, b in zip(specs, specs[1:], strict=False)):
        raise ValueError("scan_partitions reads consecutive partitions of one file")
    labels, features = list(labels), list(features)
    pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)

    def batches() -> Iterator[tuple[int, Any]]:  # (first record, batch), row group by group
        first = specs[0].group_start
        for g in range(specs[0].row_group, pf.metadata.num_row_groups):
            at = first
            for batch in pf.iter_batches(batch_size=int(batch_rows), row_groups=[g],
                                         columns=[*labels, *features], use_threads=False):
                yield at, batch
                at += batch.num_rows
            first += pf.metadata.row_group(g).num_rows

    stream = batches()
    held: tuple[int, Any] | None = None
    for spec in specs:
        m = spec.n_records
        X = np.empty((m, len(features)), dtype=np.float32)
        pieces: list[Any] = []
        filled = 0
        while filled < m:
            if held is None:
                held = next(stream, None)
                if held is None:  # pragma: no cover - the file changed since it was planned
                    raise BioanonError(f"'{path}' changed while it was read; run again")
            at, batch = held
            lo = spec.start + filled - at
            if lo >= batch.num_rows:  # before this partition (a row group's head)
                held = None
                continue
            take = min(batch.num_rows - lo, m - filled)
            piece = batch.slice(lo, take)
            fill_rows(X, filled, [column_values(piece.column(f)) for f in features])
            pieces.append(piece.select(labels))
            filled += take
            if lo + take >= batch.num_rows:
                held = None
        lab = (arrow_labels(pa.Table.from_batches(pieces)) if pieces else
               pd.DataFrame({c: [] for c in labels}))
        yield X, lab


__all__ = ["BATCH_ROWS", "PartitionSpec", "check_partition", "give_back_memory",
           "parquet_columns", "partition_count", "plan_partitions", "read_labels", "read_rows",
           "scan_groups", "scan_partitions"]
