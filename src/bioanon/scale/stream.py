"""The streamed DP release's engine: a DP synthesizer's statistics as reductions over the
Parquet partitions, in this process or on dask workers, to the same bits.

Every statistic of the streamed model is a sum over records
(:mod:`bioanon.anonymize.basis_stream`): a pass over the partitions computes one term per
partition (its float64 sums), and the caller folds the terms in the partitions' order. Two
sources run the passes:

- :class:`Partitions`: the partitions read one after another in this process (one scan of
  each file; one partition in memory at a time);
- :class:`DaskPartitions`: each pass is a ``client.map`` over runs of partitions (those that
  start in the same row group: :func:`~bioanon.scale.parquet_io.scan_groups`), each task
  reading its partitions from the Parquet file and returning their terms; the client folds
  them in order, draws the noise once, then the sampling pass runs on the workers, each task
  writing its partitions' parts. A worker holds one partition and the d × d sums at a time.

A partition is read into the same arrays by either (:mod:`bioanon.scale.parquet_io`), each
term is computed by the same code on the same arrays, and the fold is the same: the
statistics, the noisy model and every byte of the parts are the same for a seed, whichever
source and however many workers. Seeds and noise reach the workers inside the tasks (never a
file; their reprs show nothing); a local cluster's workers never spill to disk.

Examples
--------
>>> import tempfile, pathlib
>>> from bioanon.anonymize.dp_basis import DPBasisAnonymizer
>>> from bioanon.datasets import make_biometric
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> t = make_biometric(n_identities=4, records_per_identity=30, n_features=32, random_state=0)
>>> _ = t.write(d / "t.parquet")
>>> parts = Partitions(d / "t.parquet", ["expression"], t.feature_names, rows=50)
>>> est = DPBasisAnonymizer("expression", epsilon=2.0, bounds=(-9.0, 9.0), rank=2)
>>> classes = sorted(t.labels["expression"].unique())
>>> (d / "out").mkdir()
>>> res = stream_to_parts(est, parts, classes, d / "out", ["expression"], "expression", 7)
>>> res.n_records, res.n_parts, res.passes
(120, 3, 5)
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone

from ..errors import BioanonError
from ..table import FeatureTable
from .parquet_io import (
    PartitionSpec,
    check_partition,
    plan_partitions,
    scan_groups,
    scan_partitions,
)

Progress = Callable[[int, int, str], None]
T = TypeVar("T")

#: records per partition of the streamed release (and per block of its judged rule)
PARTITION_ROWS = 100_000


# ---------------------------------------------------------------------- the judged rule
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


# ---------------------------------------------------------------------- the sources
def reads_features(fn: Any) -> bool:
    """Whether a pass's ``fn`` reads the features (False: its ``reads_features`` says it
    needs only the labels, and the pass reads only those: ``X`` has no column)."""
    return bool(getattr(fn, "reads_features", True))


def _run_scan(specs: Sequence[PartitionSpec], fn: Callable[[int, Any, Any], T],
              labels: Sequence[str], features: Sequence[str],
              public: np.ndarray | None, check: bool) -> list[T]:
    """``fn(i, X, labels)`` on each of the consecutive partitions ``specs`` (one scan; the
    first pass checks every partition): a dask task."""
    out = []
    read = features if check or reads_features(fn) else []
    for spec, (X, lab) in zip(specs, scan_partitions(specs, labels, read), strict=True):
        if check:
            check_partition(X, public)
        out.append(fn(spec.index, X, lab))
    return out


class Partitions:
    """The source's partitions of at most ``rows`` records, read in this process.

    ``map(fn)`` is one pass: ``fn(i, X, labels)`` on each partition in order (features (m, d)
    float32, the ``labels`` columns), one partition in memory at a time (each file read in one
    scan); a call is a pass giving the (X, labels) themselves. The first pass refuses
    non-finite features and records that appear (exactly, as float32) among the ``public``
    records. ``passes`` counts the passes.
    """

    def __init__(self, source: Path, labels: Sequence[str], features: Sequence[str],
                 rows: int = PARTITION_ROWS, public: np.ndarray | None = None,
                 progress: Progress | None = None) -> None:
        # absolute: a worker of a remote scheduler reads the same path on the shared file
        # system whatever its working folder
        self.source = Path(source).absolute()
        self.labels, self.features = list(labels), list(features)
        self.rows = int(rows)
        self.passes = 0
        self.plan = plan_partitions(self.source, self.rows)
        self.total = len(self.plan)
        self._public = None if public is None else np.asarray(public, dtype=np.float32)
        self._progress = progress or (lambda done, total, text: None)

    def __call__(self) -> Iterator[tuple[np.ndarray, pd.DataFrame]]:
        return self.map(lambda i, X, lab: (X, lab))

    def _step(self, k: int) -> None:
        self._progress(k, self.total, f"pass {self.passes}: partition {k} of {self.total}")

    def map(self, fn: Callable[[int, Any, Any], T]) -> Iterator[T]:
        """``fn(i, X, labels)`` for every partition, in order (one pass; after the first,
        only the labels are read when ``fn.reads_features`` is False)."""
        self.passes += 1
        check = self.passes == 1
        for run in scan_groups(self.plan, by="file"):
            read = self.features if check or reads_features(fn) else []
            for spec, (X, lab) in zip(run, scan_partitions(run, self.labels, read),
                                      strict=True):
                if check:
                    check_partition(X, self._public)
                yield fn(spec.index, X, lab)
                self._step(spec.index + 1)


class DaskPartitions(Partitions):
    """:class:`Partitions` whose passes run on dask workers (``client``): each pass is one
    task per run of partitions starting in the same row group; the results come back in the
    partitions' order. The public records (for the first pass's check) are sent to every
    worker once."""

    def __init__(self, source: Path, labels: Sequence[str], features: Sequence[str],
                 client: Any, rows: int = PARTITION_ROWS, public: np.ndarray | None = None,
                 progress: Progress | None = None) -> None:
        super().__init__(source, labels, features, rows, public, progress)
        self.client = client
        self.runs = scan_groups(self.plan, by="row_group")
        self._token = uuid.uuid4().hex[:12]

    def map(self, fn: Callable[[int, Any, Any], T]) -> Iterator[T]:
        """``fn(i, X, labels)`` for every partition on the workers, in order (one pass)."""
        self.passes += 1
        check = self.passes == 1
        client = self.client
        public = (client.scatter(self._public, broadcast=True, hash=False)
                  if check and self._public is not None else None)
        keys = [f"bioanon-stream-{self._token}-pass{self.passes}-{j}"
                for j in range(len(self.runs))]
        futures = client.map(_run_scan, self.runs, key=keys, pure=False, fn=fn,
                             labels=self.labels, features=self.features, public=public,
                             check=check)
        k = 0
        try:
            for fut in futures:
                results = fut.result()
                fut.release()
                for r in results:
                    yield r
                    k += 1
                    self._step(k)
        finally:
            client.cancel([f for f in futures if f.status == "pending"])
            if public is not None:
                public.release()


@contextlib.contextmanager
def open_partitions(source: Path, labels: Sequence[str], features: Sequence[str],
                    rows: int = PARTITION_ROWS, public: np.ndarray | None = None,
                    progress: Progress | None = None, *, scheduler: str | None = None,
                    local: bool = False, n_workers: int | None = None,
                    memory_limit: str = "2GiB") -> Iterator[Partitions]:
    """The partitions of ``source`` where the passes run: on the dask scheduler at
    ``scheduler``, on a ``LocalCluster`` (``local``: ``n_workers`` single-threaded workers,
    default one per core, ``memory_limit`` each, never spilling to disk), or in this process
    (neither). A failure of the cluster (a worker that died, a lost scheduler, a part that
    cannot be decoded) is re-raised as one line.
    """
    if scheduler is None and not local:
        yield Partitions(source, labels, features, rows, public, progress)
        return
    from .cluster import dask_client, dask_failure, require_dask

    require_dask()
    import dask

    # the workers hold partial sums of clear records: never on disk. glibc's own malloc
    # thresholds, as in this process: the nanny's MALLOC_TRIM_THRESHOLD_ pins the mmap
    # threshold at 128 KiB, so every block a pass allocates would be mapped and faulted in
    # afresh (measured: 1.5 to 2 times the system time per partition)
    # The rest: what a local cluster spends beside the passes (its statistical profiler
    # sampling every 10 ms, event-loop ticks every 20 ms, memory polls every 100 ms) cost 11%
    # of a core idle, 2% with these settings — on a machine as busy as its cores, that is
    # time taken from the passes
    quiet = {"distributed.worker.memory.spill": False,
             "distributed.worker.memory.target": False,
             "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
             "distributed.worker.profile.enabled": False,
             "distributed.admin.tick.interval": "1s",
             "distributed.worker.memory.monitor-interval": "1s",
             "distributed.admin.system-monitor.interval": "2s"}
    try:
        with dask.config.set(quiet), dask_client(scheduler, local, n_workers,
                                                 memory_limit=memory_limit) as client:
            yield DaskPartitions(source, labels, features, client, rows, public, progress)
    except Exception as exc:  # a dead worker, a lost scheduler, an undecodable part
        if type(exc).__name__ == "KilledWorker":
            mib = int(rows) * max(len(features), 1) * 4 / 2**20
            raise BioanonError(f"a dask worker died while releasing (out of memory?): each "
                               f"holds one partition of {int(rows):,} records ({mib:,.0f} MiB "
                               "of features) and its sums at a time; give the workers more "
                               "memory") from None
        mapped = dask_failure(exc, scheduler)
        if mapped is exc:
            raise
        raise mapped from None


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


@dataclass(frozen=True, repr=False)
class _PartWriter:
    """Sample partition ``i`` from the fitted model, shuffle its rows and write it as
    ``part-{i:06d}.parquet`` into ``folder``: (name, SHA-256, class counts, records)."""

    fitted: Any
    shuffle: np.random.SeedSequence
    folder: str
    released: list[str]
    interest: str
    features: list[str]
    #: the release is drawn from the model: the pass reads the partitions' labels only
    reads_features = False

    def __repr__(self) -> str:
        return "_PartWriter(<secret>)"

    def __call__(self, i: int, X: Any, lab: pd.DataFrame
                 ) -> tuple[str, str, dict[str, int], int]:
        from ..anonymize.basis_stream import child_seed
        from ..io import file_sha256
        from ..table import write_parquet

        del X  # the release is drawn from the model; the partition gives its labels
        out = self.fitted.sample(i, lab)
        perm = np.random.default_rng(child_seed(self.shuffle, i)).permutation(out.shape[0])
        out = out[perm]  # the unshuffled copy is freed here
        part = FeatureTable(out, lab[self.released].iloc[perm].reset_index(drop=True),
                            self.features)
        name = f"part-{i:06d}.parquet"
        path = Path(self.folder) / name
        write_parquet(part, path)
        values, m = np.unique(lab[self.interest].astype(str).to_numpy(), return_counts=True)
        counts = {str(c): int(k) for c, k in zip(values.tolist(), m.tolist(), strict=True)}
        return name, file_sha256(path), counts, int(out.shape[0])


def stream_to_parts(est: Any, parts: Partitions, classes: Sequence[Any], folder: Path,
                    released: Sequence[str], interest: str, seed: int | None) -> StreamedResult:
    """Fit ``est``'s noisy model on every partition of ``parts``
    (:func:`~bioanon.anonymize.basis_stream.fit_stream`), then release each partition into
    ``folder`` as ``part-NNNNNN.parquet`` in the partitions' order, rows shuffled within each
    (where ``parts`` runs its passes: this process or the dask workers).

    ``est.random_state`` is set from ``seed`` (None: fresh OS entropy) and never written.
    Returns the sizes and the folder's SHA-256 (each part hashed as it is written).
    """
    from ..anonymize.basis_stream import fit_stream

    mech, shuffle = np.random.SeedSequence(seed).spawn(2)
    est.set_params(random_state=int(mech.generate_state(1)[0]))
    features = list(parts.features)
    fitted = fit_stream(est, parts, len(features), classes)
    writer = _PartWriter(fitted, shuffle, str(Path(folder).absolute()), list(released),
                         interest, features)
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    n = i = 0
    for name, sha, part_counts, m in parts.map(writer):
        digest.update(name.encode() + sha.encode())
        for c, k in part_counts.items():
            counts[c] = counts.get(c, 0) + k
        n += m
        i += 1
    return StreamedResult(Path(folder), n, i, parts.passes, counts, digest.hexdigest())


__all__ = ["PARTITION_ROWS", "DaskPartitions", "Partitions", "StreamedRelease",
           "StreamedResult", "open_partitions", "stream_to_parts"]
