"""``dp-basis`` over record blocks one at a time: statistics summed across partitions, samples
drawn per partition (tables larger than memory, e.g. Parquet partitions on dask).

Every statistic of :class:`~bioanon.anonymize.dp_basis.DPBasisAnonymizer` is a sum over
records, so a pass over the partitions accumulates it with one partition in memory: a pass
for the record count, one for the noisy class sums (``means="full"``), one for the second
moments in the basis (a DP PCA adds one for its second moment); the noise is drawn once, on
the sums; then each partition's records are sampled from the model, in its order.
The guarantee is the estimator's: strict bounds are required (``bounds`` or ``public_data``),
the unit is the record (bounding a person's records across partitions needs a pass keyed by
person, not offered here), and the classes are declared (``classes``: public, like the labels
a release keeps).

**Where the partitions live.** The passes only ask their source for ``map(fn)``: the results
of ``fn(i, X, labels)`` on every partition ``i``, in the partitions' order. Each statistic is
then each partition's own sum (float64), folded on the caller in the partitions' order
(``((s₀ + s₁) + s₂) + …``), whichever process computed each term: a list in memory
(:func:`as_source`), Parquet partitions read in this process, or dask workers reading them
(:mod:`bioanon.scale.stream`) give the same statistics to the last bit, the same noisy model
and the same records for a seed.

Examples
--------
>>> from bioanon.anonymize.dp_basis import DPBasisAnonymizer
>>> rng = np.random.default_rng(0)
>>> blocks = [(rng.normal(size=(50, 8)).astype(np.float32), rng.integers(0, 3, 50))
...           for _ in range(4)]
>>> est = DPBasisAnonymizer("y", epsilon=4.0, bounds=(-4.0, 4.0), rank=2, random_state=0)
>>> out = list(stream_release(est, lambda: iter(blocks), 8, classes=[0, 1, 2]))
>>> [o.shape for o in out], round(est.epsilon_, 6) <= 4.0
([(50, 8), (50, 8), (50, 8), (50, 8)], True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from ..errors import BioanonError
from ..privacy import resolve_seed
from .basis_model import sample_model
from .dp_basis import DPBasisAnonymizer
from .dp_box import box_scaler

T = TypeVar("T")


class BlockSource(Protocol):
    """Partitions that map a function over themselves: ``map(fn)`` yields ``fn(i, X,
    labels)`` for every partition ``i`` (features (m, d), labels: a DataFrame holding the
    interest column, or the interest's values), in the partitions' order, one pass each."""

    def map(self, fn: Callable[[int, Any, Any], T]) -> Iterator[T]: ...


class _ListSource:
    """:class:`BlockSource` over ``parts()`` (a fresh iterable of (X, labels) per call)."""

    def __init__(self, parts: Callable[[], Iterable[tuple[Any, Any]]]) -> None:
        self.parts = parts

    def map(self, fn: Callable[[int, Any, Any], T]) -> Iterator[T]:
        return (fn(i, X, lab) for i, (X, lab) in enumerate(self.parts()))


def as_source(parts: Any) -> BlockSource:
    """``parts`` as a :class:`BlockSource`: itself when it maps, else a callable giving a fresh
    iterable of (X, labels) blocks per call (a list in memory)."""
    return parts if hasattr(parts, "map") else _ListSource(parts)


def child_seed(seq: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """The ``i``-th child of ``seq`` (what the ``i``-th ``seq.spawn`` gives on a fresh
    ``seq``), computed on its own: partition ``i``'s seed wherever it is sampled.

    >>> spawned_3 = np.random.SeedSequence(5).spawn(4)[3]
    >>> bool(child_seed(np.random.SeedSequence(5), 3).generate_state(1)[0]
    ...      == spawned_3.generate_state(1)[0])
    True
    """
    return np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, int(i)),
                                  pool_size=seq.pool_size)


def spawned(seq: np.random.SeedSequence) -> Iterator[np.random.SeedSequence]:
    """An endless stream of child seeds, one per partition (the ``i``-th is
    :func:`child_seed` ``(seq, i)``)."""
    i = 0
    while True:
        yield child_seed(seq, i)
        i += 1


def _codes(labels: Any, interest: str, classes: np.ndarray) -> np.ndarray:
    import pandas as pd

    values = (labels[interest].to_numpy() if isinstance(labels, pd.DataFrame)
              else np.asarray(labels))
    idx = np.searchsorted(classes, values)
    idx = np.clip(idx, 0, classes.size - 1)
    if values.size and not np.all(classes[idx] == values):
        raise BioanonError(f"a partition holds a value of '{interest}' that is not among the "
                           "declared classes; declare every class (classes=...)")
    return idx.astype(np.int64)


@dataclass(frozen=True)
class _Coded:
    """``fn(X, codes)`` on a partition (float32 features of the declared width, the
    interest's class codes): what the estimator's statistics are computed on."""

    fn: Callable[[np.ndarray, np.ndarray], Any]
    interest: str
    classes: np.ndarray
    n_features: int

    def __call__(self, i: int, X: Any, labels: Any) -> Any:
        arr = np.asarray(X, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != self.n_features:
            raise BioanonError(f"a partition has shape {arr.shape}; every partition needs "
                               f"{self.n_features} feature columns")
        return self.fn(arr, _codes(labels, self.interest, self.classes))


class CodedBlocks:
    """The source's partitions as the estimator reads them: ``map(fn)`` yields ``fn(X,
    codes)`` per partition in order (computed where the source computes), and a call gives
    the (X, codes) blocks themselves (read in this process)."""

    def __init__(self, source: BlockSource, interest: str, classes: np.ndarray,
                 n_features: int) -> None:
        self.source, self.interest, self.classes = source, interest, classes
        self.n_features = n_features

    def map(self, fn: Callable[[np.ndarray, np.ndarray], T]) -> Iterator[T]:
        return self.source.map(_Coded(fn, self.interest, self.classes, self.n_features))

    def __call__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return self.map(lambda X, codes: (X, codes))


def _size(X: np.ndarray, codes: np.ndarray) -> int:
    return int(codes.size)


@dataclass(frozen=True, repr=False)
class StreamModel:
    """The noisy model of a streamed release and the seed of its samples: partition ``i``'s
    records are :meth:`sample` ``(i, labels)`` wherever it is sampled. Secret (the noise is
    in it): never written, and its repr shows nothing."""

    model: dict[str, np.ndarray]
    P: np.ndarray
    half: np.ndarray
    mid: np.ndarray
    classes: np.ndarray
    interest: str
    draws: np.random.SeedSequence = field(compare=False)

    #: a pass that samples reads the partitions' labels only
    reads_features = False

    def __repr__(self) -> str:
        return "StreamModel(<secret>)"

    def sample(self, i: int, labels: Any) -> np.ndarray:
        """Fresh records (float32) for partition ``i``'s labels, in their order."""
        codes = _codes(labels, self.interest, self.classes)
        return sample_model(self.model, codes, self.P,
                            np.random.default_rng(child_seed(self.draws, i)), scale=self.half,
                            shift=self.mid)

    def __call__(self, i: int, X: Any, labels: Any) -> np.ndarray:
        """:meth:`sample` as a pass maps it (the features are not read)."""
        return self.sample(i, labels)


def check_streamable(est: DPBasisAnonymizer) -> None:
    """Refuse a setting the stream cannot release (no public bounds, the identity unit,
    additional attributes)."""
    est.check_params()
    if est.bounds is None and est.public_data is None:
        raise BioanonError("a streamed release needs public bounds: pass bounds=(lo, hi) or "
                           "public_data (bounds from the data would need a pass and leak)")
    if est.privacy_unit != "record" or est.additional:
        raise BioanonError("a streamed dp-basis release covers privacy_unit='record' and one "
                           "interest column; release in memory for the identity unit or "
                           "additional attributes")


def fit_stream(est: DPBasisAnonymizer, source: BlockSource, n_features: int,
               classes: Sequence[Any]) -> StreamModel:
    """Fit ``est``'s noisy model on every partition of ``source``: a pass counting the
    records, then the estimator's passes (:meth:`~DPBasisAnonymizer.model_from`), each a sum
    of per-partition terms folded in order; the noise drawn once on the sums.

    ``est`` gets the public accounting (``epsilon_``, ``delta_``, ``rho_split_``; δ = 1/n²
    with n counted in the first pass unless declared).
    """
    check_streamable(est)
    cls = np.unique(np.asarray(list(classes)))
    coded = CodedBlocks(source, est.interest, cls, n_features)
    n = sum(coded.map(_size))
    est.n_features_in_ = n_features
    est.set_budget(n, n_features, cls.size)
    lo, hi, mid = est._scaling(np.zeros((0, n_features), dtype=np.float32))
    scale = box_scaler(lo, hi, mid)
    noise_seq, draw_seq, _, basis_seq = np.random.SeedSequence(
        resolve_seed(est.random_state)).spawn(4)
    model, P = est.model_from(coded, cls.size, n_features, scale,
                              np.random.default_rng(noise_seq),
                              np.random.default_rng(basis_seq))
    return StreamModel(model, P, ((hi - lo) / 2.0).astype(np.float32), mid.astype(np.float32),
                       cls, est.interest, draw_seq)


def stream_release(est: DPBasisAnonymizer, parts: Any, n_features: int,
                   classes: Sequence[Any]) -> Iterator[np.ndarray]:
    """Release the records of ``parts`` (a :class:`BlockSource`, or a callable giving a fresh
    iterable of (features (m, d), labels: a DataFrame with the interest column, or the
    interest values) per call) with ``est``'s mechanism, one partition at a time; yields each
    partition's release (float32) in order (:func:`fit_stream`, then one sampling pass).
    """
    source = as_source(parts)
    fitted = fit_stream(est, source, n_features, classes)
    yield from source.map(fitted)


__all__ = ["BlockSource", "CodedBlocks", "StreamModel", "as_source", "check_streamable",
           "child_seed", "fit_stream", "spawned", "stream_release"]
