"""``dp-basis`` over record blocks one at a time: statistics summed across partitions, samples
drawn per partition (tables larger than memory, e.g. Parquet partitions on dask).

Every statistic of :class:`~bioanon.anonymize.dp_basis.DPBasisAnonymizer` is a sum over
records, so a pass over the partitions accumulates it with one partition in memory: a pass
for the class counts (labels only), one for the noisy class sums (``means="full"``), one for
the second moments in the basis (a DP PCA adds one for its second moment); the noise is drawn
once, on the sums; then each partition's records are sampled from the model, in its order.
The guarantee is the estimator's: strict bounds are required (``bounds`` or ``public_data``),
the unit is the record (bounding a person's records across partitions needs a pass keyed by
person, not offered here), and the classes are declared (``classes``: public, like the labels
a release keeps).

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
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..privacy import resolve_seed
from .basis_model import sample_model
from .dp_basis import DPBasisAnonymizer, box_scaler


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


def stream_release(est: DPBasisAnonymizer, parts: Callable[[], Iterable[tuple[Any, Any]]],
                   n_features: int, classes: Sequence[Any]) -> Iterator[np.ndarray]:
    """Release the records of ``parts()`` (a fresh iterable of (features (m, d), labels: a
    DataFrame with the interest column, or the interest values) on each call) with ``est``'s
    mechanism, one partition at a time; yields each partition's release (float32) in order.

    ``est`` gets the public accounting (``epsilon_``, ``delta_``, ``rho_split_``; δ = 1/n²
    with n counted in the first pass unless declared).
    """
    est.check_params()
    if est.bounds is None and est.public_data is None:
        raise BioanonError("a streamed release needs public bounds: pass bounds=(lo, hi) or "
                           "public_data (bounds from the data would need a pass and leak)")
    if est.privacy_unit != "record" or est.additional:
        raise BioanonError("a streamed dp-basis release covers privacy_unit='record' and one "
                           "interest column; release in memory for the identity unit or "
                           "additional attributes")
    cls = np.unique(np.asarray(list(classes)))
    interest = est.interest

    def coded() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for X, labels in parts():
            arr = np.asarray(X, dtype=np.float32)
            if arr.ndim != 2 or arr.shape[1] != n_features:
                raise BioanonError(f"a partition has shape {arr.shape}; every partition "
                                   f"needs {n_features} feature columns")
            yield arr, _codes(labels, interest, cls)

    n = sum(c.size for _, c in coded())
    est.n_features_in_ = n_features
    est.set_budget(n, n_features, cls.size)
    lo, hi, mid = est._scaling(np.zeros((0, n_features), dtype=np.float32))
    scale = box_scaler(lo, hi, mid)

    noise_seq, draw_seq, _, basis_seq = np.random.SeedSequence(
        resolve_seed(est.random_state)).spawn(4)
    model, P = est.model_from(coded, cls.size,
                              n_features, scale, np.random.default_rng(noise_seq),
                              np.random.default_rng(basis_seq))
    half = ((hi - lo) / 2.0).astype(np.float32)
    mid32 = mid.astype(np.float32)
    for (_, codes), seq in zip(coded(), spawned(draw_seq), strict=False):
        yield sample_model(model, codes, P, np.random.default_rng(seq), scale=half,
                           shift=mid32)


def spawned(seq: np.random.SeedSequence) -> Iterator[np.random.SeedSequence]:
    """An endless stream of child seeds, one per partition."""
    while True:
        yield from seq.spawn(64)


__all__ = ["spawned", "stream_release"]
