"""Tracing: which people contributed to a mixed or synthetic release?

A mixing release is not a function of the record it replaces, so recognising a released
record's person sits at chance; what leaks is *who contributed*. Each donor sits at weight
about 1/sqrt(g) in about g released records (Dwork et al. 2015, "Robust traceability from
trace amounts"), so an attacker holding a clear sample of a person centres every released
record on its released class mean, centres the person's clear records the same way (their
class-centred deviation) and scores the released records against it: a contributor's
deviation correlates with the released records it entered, a non-contributor's does not.
The score aggregates the ``top`` best-matching released records (about g for a method whose
g the attacker knows; 1 for a copy).

Whole-array: one matrix product per block of candidates.
"""

from __future__ import annotations

import numpy as np

#: above this many (candidate, released record) pairs the cosine attackers (tracing, the
#: nearest released record, its label) compute their similarities in float32: a cosine of
#: unit rows keeps about 7 significant digits there, far below the spread that separates
#: members from non-members, and the products run 2–4 × faster (float64 blocks of a few
#: thousand rows leave the cache); smaller games keep float64 to the bit
COSINE_FLOAT32_PAIRS = 1_000_000


def cosine_precision(A: np.ndarray, B: np.ndarray, pairs: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``A`` and ``B`` (unit rows) in float32 when their pairs (``pairs``, or rows × rows)
    exceed :data:`COSINE_FLOAT32_PAIRS`, as they are otherwise.

    >>> a, b = cosine_precision(np.ones((2000, 2)), np.ones((1000, 2)))
    >>> a.dtype.name, cosine_precision(np.ones((2, 2)), np.ones((3, 2)))[1].dtype.name
    ('float32', 'float64')
    """
    n = A.shape[0] * B.shape[0] if pairs is None else pairs
    if n > COSINE_FLOAT32_PAIRS:
        return A.astype(np.float32, copy=False), B.astype(np.float32, copy=False)
    return A, B


def _unit(X: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n == 0, 1.0, n)


def class_means(X: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The classes of ``labels`` and the mean of ``X`` in each (rows in class order)."""
    classes, codes = np.unique(np.asarray(labels).astype(str), return_inverse=True)
    counts = np.bincount(codes, minlength=classes.size).astype(np.float64)
    sums = np.zeros((classes.size, X.shape[1]))
    np.add.at(sums, codes, X)
    return classes, sums / counts[:, None]


def centred_release(released_X: np.ndarray, released_labels: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Released records centred on their class means and scaled by the pooled within-class
    spread; returns ``(unit rows, classes, class means, scale)``."""
    R = np.asarray(released_X, dtype=np.float64)
    classes, means = class_means(R, released_labels)
    codes = np.searchsorted(classes, np.asarray(released_labels).astype(str))
    dev = R - means[codes]
    scale = dev.std(axis=0)
    scale = np.where(scale == 0, 1.0, scale)
    return _unit(dev / scale), classes, means, scale


def _top_mean(sim: np.ndarray, top: int) -> np.ndarray:
    top = max(1, min(int(top), sim.shape[1]))
    if top == 1:
        return sim.max(axis=1)
    part = np.partition(sim, sim.shape[1] - top, axis=1)[:, -top:]
    return part.mean(axis=1)


def tracing_scores(candidates_clear: np.ndarray, released_X: np.ndarray,
                   released_labels: np.ndarray, candidate_labels: np.ndarray | None = None, *,
                   top: int = 1, groups: np.ndarray | None = None,
                   block: int = 1024) -> np.ndarray:
    """Tracing score of each candidate (higher: more likely a contributor).

    Parameters
    ----------
    candidates_clear : (n, d) array
        Clear records the attacker holds.
    released_X, released_labels : the release and its class column (the interest)
    candidate_labels : (n,) array, optional
        The class of each clear record (the attacker holds the person's clear records with
        their labels); unknown or absent: centred on the release's overall mean.
    top : int
        Number of best-matching released records averaged (about g; 1 for a copy).
    groups : (n,) array, optional
        One score per group (the identity): its records' deviations are averaged into one
        signature first (sorted order of the groups' string values).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 16)); y = np.repeat(["a", "b"], 20)
    >>> s = tracing_scores(X, X[:20], y[:20], y, top=1)      # the first 20 are released
    >>> bool(s[:20].min() > s[20:].max())
    True
    """
    Ru, classes, means, scale = centred_release(released_X, released_labels)
    C = np.asarray(candidates_clear, dtype=np.float64)
    centre = np.tile(np.asarray(released_X, np.float64).mean(axis=0), (C.shape[0], 1))
    if candidate_labels is not None:
        lab = np.asarray(candidate_labels).astype(str)
        pos = np.clip(np.searchsorted(classes, lab), 0, classes.size - 1)
        known = classes[pos] == lab
        centre[known] = means[pos[known]]
    dev = (C - centre) / scale
    if groups is not None:
        _, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
        sums = np.zeros((codes.max() + 1, dev.shape[1]))
        np.add.at(sums, codes, dev)
        dev = sums / np.bincount(codes)[:, None]
    Cu, Ru = cosine_precision(_unit(dev), Ru)
    out = np.empty(Cu.shape[0])
    for s in range(0, Cu.shape[0], block):  # blocks bound the memory
        out[s:s + block] = _top_mean(Cu[s:s + block] @ Ru.T, top)
    return out


def traced_labels(candidates_clear: np.ndarray, released_X: np.ndarray,
                  released_labels: np.ndarray, *, top: int = 1,
                  groups: np.ndarray | None = None, block: int = 1024) -> np.ndarray:
    """Infer each candidate's class through the records it contributed to.

    For every class hypothesis c the candidate is centred on c's released mean and scored
    against the released records of class c (mean of the ``top`` best matches); the guess is
    the class that traces best. ``groups``: one guess per group (sorted order).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 16)); y = np.repeat(["a", "b"], 20)
    >>> bool((traced_labels(X, X, y) == y).all())
    True
    """
    Ru, classes, means, scale = centred_release(released_X, released_labels)
    rel_codes = np.searchsorted(classes, np.asarray(released_labels).astype(str))
    C = np.asarray(candidates_clear, dtype=np.float64)
    codes = None
    if groups is not None:
        _, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    n_out = C.shape[0] if codes is None else int(codes.max()) + 1
    best = np.full((n_out, classes.size), -np.inf)
    for k in range(classes.size):
        dev = (C - means[k]) / scale
        if codes is not None:
            sums = np.zeros((n_out, dev.shape[1]))
            np.add.at(sums, codes, dev)
            dev = sums / np.bincount(codes)[:, None]
        Cu, Rk = cosine_precision(_unit(dev), Ru[rel_codes == k], n_out * Ru.shape[0])
        if Rk.shape[0] == 0:
            continue
        for s in range(0, n_out, block):
            best[s:s + block, k] = _top_mean(Cu[s:s + block] @ Rk.T, top)
    return classes[best.argmax(axis=1)]
