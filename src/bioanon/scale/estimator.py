"""The bucketed rule in memory: a mixing anonymizer applied within stratified random buckets.

:class:`BucketedMixing` releases exactly as the dask path does (random buckets of at least
``bucket_size`` records stratified by the interest, each released by a copy of the fitted
anonymizer with its own random state), but on an in-memory table. It lets the evaluation panel
judge the bucketed release against the whole-class one on data that fits in memory.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..anonymize.base import label_values, split_input
from ..table import FeatureTable
from .buckets import assign_buckets, n_buckets_for


class BucketedMixing(TransformerMixin, BaseEstimator):
    """Apply a mixing anonymizer within random buckets stratified by the interest.

    Parameters
    ----------
    anonymizer : estimator
        A mixing anonymizer (its ``transform`` mixes only the records it is given).
    interest : str
        Column the buckets are stratified by.
    bucket_size : int, default 50_000
        Minimum records per bucket.
    random_state : int or None
        Fixes the buckets and every bucket's release (a secret).

    Examples
    --------
    >>> from bioanon.anonymize import SelectiveMeanAnonymizer
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=40, n_features=32)
    >>> inner = SelectiveMeanAnonymizer("expression", g=8, t=0.75, r_p=0.1)
    >>> out = BucketedMixing(inner, "expression", bucket_size=120,
    ...                      random_state=0).fit_transform(t.X, t.labels)
    >>> out.shape
    (240, 32)
    """

    def __init__(self, anonymizer: Any, interest: str, bucket_size: int = 50_000,
                 random_state: int | None = None) -> None:
        self.anonymizer = anonymizer
        self.interest = interest
        self.bucket_size = bucket_size
        self.random_state = random_state

    def public_params(self) -> dict[str, Any]:
        """Parameters safe to publish: the inner method's, the bucket rule (no random state).

        Examples
        --------
        >>> from bioanon.anonymize import SelectiveMeanAnonymizer
        >>> BucketedMixing(SelectiveMeanAnonymizer("expression", g=8), "expression",
        ...                bucket_size=100).public_params()["bucket_size"]
        100
        """
        inner = self.anonymizer
        params = (inner.public_params() if hasattr(inner, "public_params") else
                  {k: v for k, v in inner.get_params(deep=False).items()
                   if k != "random_state"})
        return {"anonymizer": type(inner).__name__, **params, "bucket_size": self.bucket_size,
                "buckets_stratified_by": self.interest}

    def fit(self, X: Any, labels: Any = None) -> BucketedMixing:
        """Fit the inner anonymizer (e.g. its relevance scores) once, on all of ``X``."""
        X, labels = split_input(X, labels)
        self.anonymizer_ = clone(self.anonymizer).fit(X, labels)
        self.n_features_in_ = X.shape[1]
        return self

    def _plan(self, labels: Any, n: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """The interest labels, the (secret) bucket of each record and each bucket's seed,
        drawn from ``random_state`` in one order (the same for a release and the judge)."""
        y = label_values(labels, self.interest, n)
        s_bucket, s_release = np.random.SeedSequence(self.random_state).spawn(2)
        k = n_buckets_for(n, self.bucket_size)
        buckets = assign_buckets(y, k, np.random.default_rng(s_bucket))
        return y, buckets, [int(s.generate_state(1)[0]) for s in s_release.spawn(k)]

    def transform(self, X: Any, labels: Any = None) -> Any:
        """Release ``X`` bucket by bucket; rows stay in input order."""
        check_is_fitted(self, "anonymizer_")
        table = X if isinstance(X, FeatureTable) else None
        X, labels = split_input(X, labels)
        n = X.shape[0]
        y, buckets, seeds = self._plan(labels, n)
        k = len(seeds)
        out = np.empty(X.shape, dtype=np.float32)
        lab = labels if hasattr(labels, "iloc") else None
        for b in range(k):  # one step per bucket
            rows = np.flatnonzero(buckets == b)
            est = copy.copy(self.anonymizer_)
            est.random_state = seeds[b]
            part = lab.iloc[rows].reset_index(drop=True) if lab is not None else y[rows]
            out[rows] = est.transform(X[rows], part)
        return table.with_features(out) if table is not None else out

    def release_with_mixing(self, X: Any, labels: Any = None) -> tuple[np.ndarray, Any]:
        """Fit, release ``X`` bucket by bucket, and return the secret mixing matrix too.

        For the evaluator only (contributor disclosure), in process: the matrix is block
        diagonal over the buckets (``M[i, j] > 0`` when record j is in released record i), or
        None when the inner method gives none. Each bucket's copy is fitted on its bucket here
        (with one bucket, the split the judge releases, this is :meth:`fit_transform`).
        """
        import scipy.sparse as sp

        self.fit(X, labels)
        X, labels = split_input(X, labels)
        n = X.shape[0]
        y, buckets, seeds = self._plan(labels, n)
        k = len(seeds)
        out = np.empty(X.shape, dtype=np.float32)
        lab = labels if hasattr(labels, "iloc") else None
        blocks: list[Any] = []
        for b in range(k):  # one step per bucket
            rows = np.flatnonzero(buckets == b)
            est = clone(self.anonymizer).set_params(random_state=seeds[b])
            part = lab.iloc[rows].reset_index(drop=True) if lab is not None else y[rows]
            if not hasattr(est, "release_with_mixing"):
                out[rows] = np.asarray(est.fit_transform(X[rows], part), dtype=np.float32)
                blocks.append(None)
                continue
            out[rows], M = est.release_with_mixing(X[rows], part)
            M = M() if callable(M) else M
            blocks.append(None if M is None else (rows, sp.coo_matrix(M)))
        if any(b is None for b in blocks):
            return out, None
        r = np.concatenate([rows[m.row] for rows, m in blocks])
        c = np.concatenate([rows[m.col] for rows, m in blocks])
        v = np.concatenate([m.data for _, m in blocks])
        return out, sp.csr_matrix((v, (r, c)), shape=(n, n))

    def fit_transform(self, X: Any, labels: Any = None, **fit_params: Any) -> Any:
        """Fit the inner anonymizer and release ``X`` bucket by bucket."""
        return self.fit(X, labels).transform(X, labels)
