"""Contributor disclosure: does the attacker name someone who was mixed into a record?

Mixing methods (selective mean, cluster mixing) put other people's records into each released
record. The evaluator knows who contributed to each record (the anonymizer hands it the mixing
matrix in process, see ``release_with_mixing``; it is never written). For every released
record it checks whether the attacker's guess of the identity is the identity of one of its
contributors, and compares that rate with the base rate: the chance that an identity drawn at
random is among the record's contributors (AnonFACES counts a cluster member as disclosed when
the mixed face still matches them).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..metrics.results import ContributorResult, Rate


def contributor_identities(M: sp.spmatrix, identities: np.ndarray) -> sp.csr_matrix:
    """Boolean (records × identities) matrix: identity j contributed to released record i."""
    M = sp.csr_matrix(M)
    _, codes = np.unique(np.asarray(identities).astype(str), return_inverse=True)
    n_ids = int(codes.max()) + 1
    P = sp.csr_matrix((np.ones(codes.size), (np.arange(codes.size), codes)),
                      shape=(codes.size, n_ids))
    C = (abs(M) @ P).tocsr()
    C.data = (C.data > 0).astype(np.float64)
    C.eliminate_zeros()
    return C


def contributor_disclosure(M: sp.spmatrix, identities: np.ndarray, predicted: np.ndarray,
                           attacker: str, rows: np.ndarray | None = None
                           ) -> ContributorResult:
    """Rate at which ``predicted[i]`` is a contributor's identity of released record ``i``.

    Parameters
    ----------
    M : sparse (n, n)
        Mixing matrix of the release: non-zero at (i, j) when record j went into record i.
    identities : array (n,)
        Identity of each record of the released split (input order).
    predicted : array (n,) or (len(rows),)
        The attacker's guess of each released record's identity (of the records ``rows``).
    attacker : str
        Name of the attacker, for the report.
    rows : array of int, optional
        The released records guessed, when the attacker was scored on a sample of them
        (:func:`~bioanon.attack.panel_sample.panel_probe_rows`; None: all).

    Examples
    --------
    >>> M = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]]))
    >>> ids = np.array(["a", "b", "c"])
    >>> r = contributor_disclosure(M, ids, np.array(["b", "c", "a"]), "copy")
    >>> r.rate.value, round(r.base_rate, 3), r.fires
    (1.0, 0.333, True)
    """
    ids = np.asarray(identities).astype(str)
    uniq = np.unique(ids)
    C = contributor_identities(M, ids)
    mine = ids
    if rows is not None:  # the released records the attacker guessed
        C, mine = C[np.asarray(rows)], ids[np.asarray(rows)]
    pred = np.asarray(predicted).astype(str)
    col = np.searchsorted(uniq, pred)
    known = (col < uniq.size) & (uniq[np.minimum(col, uniq.size - 1)] == pred)
    hit = np.zeros(mine.size, dtype=bool)
    at = np.flatnonzero(known)
    hit[at] = np.asarray(C[at, col[at]]).ravel() > 0
    n_contrib = np.diff(C.indptr)
    base = float(np.mean(n_contrib / uniq.size))
    rate = Rate.from_counts(int(hit.sum()), mine.size)
    own = bool(np.all(np.asarray(C[np.arange(mine.size), np.searchsorted(uniq, mine)]).ravel()
                      > 0))
    return ContributorResult(rate, base, attacker, bool(rate.ci[0] > base), own)
