"""The random-set selective weighted-mean anonymizer (Algorithm 1 of the model-agnostic paper).

Each record ``d`` is replaced by a mean over a random set ``G`` of ``g`` records (itself
included, ``round(t·g)`` of them sharing its interest value). On the selected features ``I``
(those most relevant to the interest and additional attributes, minus those most relevant to
the sensitive attribute) the record's own value keeps a weight ``w``::

    d' = ((w−1)·d + Σ_G g) / (w−1+g) ⊙ 1_I  +  (Σ_G g) / g ⊙ (1 − 1_I)

For all records at once this is one sparse mixing matrix ``M`` (g non-zeros of 1/g per row)::

    X' = M X + λ (X − M X) ⊙ mask,   λ = (w−1)/(w−1+g)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..errors import BioanonError
from ..privacy import resolve_seed
from ..table import FeatureTable
from .base import Anonymizer, Release, label_values
from .mix_kernel import KERNEL_LOCK, MIN_ROWS, sets_kernel
from .params import Param
from .random_sets import assemble_sets
from .registration import register
from .relevance import (
    MAX_RECORDS,
    relevance_records_param,
    relevance_scores,
    retention_ignored,
    retention_unchanged,
    select_features,
)
from .row_blocks import mixing_matrix, row_block, run_row_blocks


def apply_mixing(X: np.ndarray, M: sp.csr_matrix, mask: np.ndarray, lam: float,
                 n_threads: int | None = None, block: int = 1 << 15) -> np.ndarray:
    """Return ``M X + lam (X − M X) ⊙ mask`` without a loop over records.

    The product runs over blocks of rows in a thread pool (SciPy's sparse kernels release the
    GIL), and each block's selective weighting is applied while the block is in cache.
    """
    n = M.shape[0]
    out = np.empty((n, X.shape[1]), dtype=np.float32)
    cols = np.flatnonzero(mask) if lam else np.zeros(0, dtype=np.int64)
    lam32 = np.float32(lam)

    def run(start: int) -> None:
        stop = min(n, start + block)
        part = out[start:stop]
        part[...] = row_block(M, start, stop) @ X
        if cols.size:
            part[:, cols] += lam32 * (X[start:stop][:, cols] - part[:, cols])

    run_row_blocks(run, n, block, n_threads)
    return out


def apply_sets(X: np.ndarray, sets: np.ndarray, mask: np.ndarray, lam: float,
               order: np.ndarray | None = None) -> np.ndarray:
    """:func:`apply_mixing` for the uniform mixing of donor ``sets`` (``M = mixing_matrix``).

    With numba installed and at least :data:`~.mix_kernel.MIN_ROWS` rows, a compiled kernel
    reads the sets directly (no sparse matrix is built); otherwise SciPy's product runs.
    With ``order`` (a permutation of the rows), row ``j`` of the result is the release of
    record ``order[j]``: equal to ``apply_sets(X, sets, mask, lam)[order]``, computed in the
    same pass by the kernel.

    Examples
    --------
    >>> X = np.arange(12, dtype=np.float32).reshape(4, 3)
    >>> sets = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    >>> mask = np.zeros(3, dtype=bool)
    >>> order = np.array([2, 0, 3, 1])
    >>> bool((apply_sets(X, sets, mask, 0.0, order) == apply_sets(X, sets, mask, 0.0)[order]
    ...       ).all())
    True
    """
    n = sets.shape[0]
    kernel = sets_kernel() if n >= MIN_ROWS else None
    if kernel is None:
        out = apply_mixing(X, mixing_matrix(sets), mask, lam)
        return out if order is None else out[order]
    out = np.empty((n, X.shape[1]), dtype=np.float32)
    cols = np.flatnonzero(mask) if lam else np.zeros(0, dtype=np.int64)
    rows = (np.arange(n, dtype=np.int64) if order is None
            else np.asarray(order, dtype=np.int64))
    if rows.shape != (n,):
        raise ValueError(f"order has shape {rows.shape}; pass a permutation of {n} rows")
    with KERNEL_LOCK:  # the kernel uses every core; numba's default pool is not reentrant
        kernel(sets, np.ascontiguousarray(X, dtype=np.float32), cols.astype(np.int64),
               np.float32(lam), out, rows)
    return out




@register("selective-mean", required=("interest",))
class SelectiveMeanAnonymizer(Anonymizer):
    """Random-set selective weighted-mean anonymizer.

    Parameters
    ----------
    interest : str
        Label column of the attribute of interest p (its recognisability must survive).
    additional : sequence of str or mapping {column: r_q}, optional
        Additional attributes q_i to keep; a mapping gives each its own retention ratio.
    sensitive : str, optional
        Label column of the sensitive attribute; needed only when ``r_s > 0``.
    g : int, default 32
        Size of each random set, the record included.
    t : float, default 0.8
        Purity: fraction of the set sharing the record's interest value, in [1/g, 1].
    w : float, default 10
        Weight of the record's own value on the selected features (``w >= 1``; 1 = plain mean).
    r_p : float, default 0.01
        Fraction of features most relevant to the interest attribute to keep weighted.
    r_q : float or mapping, default 0
        Same for each additional attribute (overridden by a mapping in ``additional``).
    r_s : float, default 0
        Fraction of features most relevant to the sensitive attribute to exclude from the
        selection (section 5.2.7).
    relevance : {"forest", "mutual_info"} or estimator, default "forest"
        How relevance scores are computed.
    allow_replacement : bool, default False
        Draw donors with replacement when an interest class is too small for g and t.
    include_self : bool, default True
        True follows Algorithm 1: the record is a member of its own set. False (a bioanon
        option, not in the paper) puts one more same-class donor in its place, so off the
        selected features the release carries nothing of the record; this defeats attackers
        that learn the record's residual 1/g share (e.g. a linear reverse attacker).
    random_state : int or None, default None
        ``None`` draws a fresh seed from the operating system for every transform. The seed is
        a secret key (with it the mixing can be rebuilt): it is never written to any output.

    Attributes
    ----------
    mask_ : bool array (d,)
        Selected features I.
    relevance_interest_, relevance_additional_, relevance_sensitive_ : arrays
        Relevance scores R_p, {R_q}, R_s (R_s is None when not needed).

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> anon = SelectiveMeanAnonymizer("expression", g=8, t=0.75, r_p=0.1, random_state=0)
    >>> released = anon.fit_transform(t.X, t.labels)
    >>> released.shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="attribute whose utility is kept"),
        "additional": Param("object", role="additional",
                            help="additional attributes to keep (columns or {column: r_q})"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="sensitive attribute (needed when r_s > 0)"),
        "g": Param("int", low=2, help="random set size, the record included; g=1 releases "
                   "the input"),
        "t": Param("float", low=0, high=1, low_open=True,
                   help="purity: share of the set with the record's interest value"),
        "w": Param("float", low=1, help="weight of the record on selected features"),
        "r_p": Param("float", low=0, high=1, help="share of interest-relevant features kept"),
        "r_q": Param("weights", low=0, high=1, help="share kept per additional attribute"),
        "r_s": Param("float", low=0, high=1,
                     help="share of sensitive-relevant features excluded"),
        "relevance": Param("str", options=("forest", "mutual_info"),
                           help="relevance scores (an estimator in the library)"),
        "relevance_records": relevance_records_param(),
        "allow_replacement": Param("bool", help="donors with replacement in small classes"),
        "include_self": Param("bool", help="the record is a member of its own set"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    bucketable = True  # mixes only the records it is given: runs on the dask path
    #: the paper's voice setting without the record in its own set (include_self=False
    #: defeats the linear reverse attacker), with and without weighted features
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"g": 64, "t": 0.8, "w": 10, "r_p": 0.0, "include_self": False},
        {"g": 64, "t": 0.8, "w": 10, "r_p": 0.01, "include_self": False},
        {"g": 32, "t": 0.8, "w": 10, "r_p": 0.01, "include_self": False},
    )
    protects = "the sensitive attribute off the selected features: each record is mixed " \
               "with g-1 donors sharing its interest value"
    does_not_protect = "the selected features (weighted toward the record) and any " \
                       "attribute correlated with the interest; no formal guarantee"

    def __init__(self, interest: str = "interest",
                 additional: Sequence[str] | Mapping[str, float] | None = None,
                 sensitive: str | None = None, g: int = 32, t: float = 0.8, w: float = 10.0,
                 r_p: float = 0.01, r_q: float | Mapping[str, float] = 0.0, r_s: float = 0.0,
                 relevance: Any = "forest", relevance_records: int | None = MAX_RECORDS,
                 allow_replacement: bool = False,
                 include_self: bool = True, random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.sensitive = sensitive
        self.g = g
        self.t = t
        self.w = w
        self.r_p = r_p
        self.r_q = r_q
        self.r_s = r_s
        self.relevance = relevance
        self.relevance_records = relevance_records
        self.allow_replacement = allow_replacement
        self.include_self = include_self
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def _retention_q(self) -> dict[str, float]:
        if isinstance(self.additional, Mapping):
            return {str(k): float(v) for k, v in self.additional.items()}
        cols = [] if self.additional is None else [str(c) for c in self.additional]
        if isinstance(self.r_q, Mapping):
            return {c: float(self.r_q.get(c, 0.0)) for c in cols}
        return {c: float(self.r_q) for c in cols}

    def _ignored(self) -> dict[str, str]:
        """Parameters this setting ignores (see :func:`.relevance.retention_ignored`)."""
        out = retention_ignored(float(self.r_p), self._retention_q(), float(self.r_s),
                                self.r_q)
        return out

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """A record weight that drowns the donors on every feature (scale-free)."""
        return retention_unchanged(float(self.r_p), self._retention_q(), float(self.r_s),
                                   float(self.w), int(self.g))

    def _check_relations(self) -> None:
        if not (1.0 / self.g - 1e-9 <= self.t <= 1.0):
            raise BioanonError(f"t={self.t} is out of range; use a number in [1/g, 1] = "
                               f"[{1 / self.g:.3g}, 1] (purity)")
        if self.r_s > 0 and not self.sensitive:
            raise BioanonError("r_s > 0 needs the sensitive column; pass sensitive=...")
        if isinstance(self.additional, Mapping):
            for c, v in self.additional.items():
                self.params["r_q"].check(f"r_q[{c}]", v)

    # ------------------------------------------------------------------ the family's hooks
    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Learn relevance scores R_p, {R_q}, R_s and the feature selection mask.

        ``labels``: the interest, additional and (if ``r_s > 0``) sensitive columns.
        """
        n, d = X.shape
        seed = resolve_seed(self.random_state)
        seeds = np.random.SeedSequence(seed).generate_state(3)
        r_q = self._retention_q()
        y_p = label_values(labels, self.interest, n)
        if np.unique(y_p).size < 2:
            raise BioanonError(
                f"interest column '{self.interest}' has one class; it needs at least two"
            )
        def scores(y: np.ndarray, seed: int) -> np.ndarray:
            return relevance_scores(X, y, self.relevance, seed, self.relevance_records)

        self.relevance_interest_ = scores(y_p, int(seeds[0])) if self.r_p > 0 else np.zeros(d)
        self.relevance_additional_ = {c: scores(label_values(labels, c, n), int(seeds[1]))
                                      for c, r in r_q.items() if r > 0}
        for c in r_q:  # validate every named column, even those with r_q = 0
            label_values(labels, c, n)
        self.relevance_sensitive_ = (
            scores(label_values(labels, str(self.sensitive), n), int(seeds[2]))
            if self.r_s > 0 else None)
        self.mask_ = select_features(self.relevance_interest_, self.r_p,
                                     self.relevance_additional_, r_q,
                                     self.relevance_sensitive_, self.r_s)

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None, order: np.ndarray | None = None) -> Release:
        """Donors come from the records being released (labels: the interest column); the
        secret mixing matrix is built only if the evaluator asks for it. With ``order``, row
        ``j`` is the release of record ``order[j]`` (see :meth:`release_in_order`)."""
        sets = self.donor_sets(labels, X.shape[0], seed)
        lam = (self.w - 1.0) / (self.w - 1.0 + self.g)
        return Release(apply_sets(X, sets, self.mask_, lam, order),
                       mixing=partial(mixing_matrix, sets))

    def release_in_order(self, X: Any, y: Any, order: np.ndarray) -> np.ndarray:
        """The release of ``X`` with its rows in ``order``: ``release(X, y)[order]`` (the same
        values, bit for bit), computed in one pass.

        :func:`bioanon.release.release` calls it with a fresh random permutation, so that the
        shuffled release needs no second pass over the records.

        Examples
        --------
        >>> from bioanon.datasets import make_biometric
        >>> t = make_biometric(n_identities=4, records_per_identity=10, n_features=32)
        >>> anon = SelectiveMeanAnonymizer("expression", g=4, t=0.5, random_state=0).fit(t)
        >>> order = np.random.default_rng(0).permutation(t.n_records)
        >>> bool((anon.release_in_order(t, None, order) == anon.release(t).X[order]).all())
        True
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_features_in_")
        arr, labels, table = self._input(X, y, reset=False)
        order = np.asarray(order)
        if order.shape != (arr.shape[0],):
            raise BioanonError(f"order has shape {order.shape} for {arr.shape[0]} records; "
                               "pass a permutation of the records")
        out = self._release(arr, labels, resolve_seed(getattr(self, "random_state", None)),
                            table, order)
        return np.asarray(out.X, dtype=np.float32)

    def donor_sets(self, labels: Any, n: int, seed: int | None = None) -> np.ndarray:
        """The secret random sets (n × g record positions) for records with these labels."""
        y = label_values(labels, self.interest, n)
        classes, codes = np.unique(y, return_inverse=True)
        seed = resolve_seed(self.random_state) if seed is None else seed
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        return assemble_sets(codes, int(self.g), float(self.t), rng, classes,
                             self.allow_replacement, bool(self.include_self))

    def mixing_matrix(self, labels: Any, n: int, seed: int | None = None) -> sp.csr_matrix:
        """Build the secret mixing matrix M for ``n`` records with these interest labels."""
        return mixing_matrix(self.donor_sets(labels, n, seed))
