"""Disclosure measures of a release: information loss, k-anonymity, rank-1, homogeneity.

- :func:`information_loss`: AnonFACES Def. 3.2, the mean Euclidean distance from each
  original record to its released version.
- :func:`anonymity_sets` / :func:`k_anonymity` / :func:`is_k_anonymous`: how many records
  share each released vector (k-anonymity means every released vector is shared by at least
  k records, so a record-level re-identification succeeds at most 1/k of the time).
- :func:`rank1` and :func:`rank1_panel`: rank-1 recognition (AnonFACES Def. 5.1) for the
  naive (clear gallery, released probes), reverse (released gallery, clear probes) and parrot
  (released gallery, released probes) attackers, with a nearest-neighbour recognizer in an
  optional PCA (eigenface) space.
- :func:`homogeneity`: the share of clusters whose members all share an attribute value
  (entropy 0), per attribute and for attribute sets (AnonFACES 4.4). Clusters are read off
  the release itself (records sharing a released vector), so no secret is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError


def information_loss(X: np.ndarray, X_released: np.ndarray) -> float:
    """Mean Euclidean distance between each record and its released version.

    Examples
    --------
    >>> information_loss(np.zeros((2, 2)), np.array([[3.0, 4.0], [0.0, 0.0]]))
    2.5
    """
    X = np.asarray(X, dtype=np.float64)
    R = np.asarray(X_released, dtype=np.float64)
    if X.shape != R.shape:
        raise BioanonError(f"original {X.shape} and released {R.shape} shapes differ; pass "
                           "the release in the original record order")
    return float(np.linalg.norm(X - R, axis=1).mean())


def anonymity_sets(X_released: np.ndarray, decimals: int | None = None) -> np.ndarray:
    """Group id of each record: records with identical released vectors share an id.

    ``decimals`` rounds first (for releases written through a lossy format).
    """
    R = np.asarray(X_released)
    if decimals is not None:
        R = np.round(R.astype(np.float64), decimals)
    _, inverse = np.unique(R, axis=0, return_inverse=True)
    return np.asarray(inverse).ravel()


def k_anonymity(X_released: np.ndarray, decimals: int | None = None) -> int:
    """The k of a release: the size of its smallest set of identical released vectors.

    Examples
    --------
    >>> k_anonymity(np.array([[1.0], [1.0], [2.0], [2.0], [2.0]]))
    2
    """
    return int(np.bincount(anonymity_sets(X_released, decimals)).min())


def is_k_anonymous(X_released: np.ndarray, k: int, decimals: int | None = None) -> bool:
    """True when every released vector is shared by at least ``k`` records."""
    return k_anonymity(X_released, decimals) >= int(k)


def _embed(fit_on: np.ndarray | None, n_components: int | float | None, whiten: bool,
           random_state: int) -> Any:
    if n_components is None or fit_on is None:
        return None
    from sklearn.decomposition import PCA

    n_comp = n_components
    if isinstance(n_components, int):
        n_comp = int(min(n_components, fit_on.shape[0], fit_on.shape[1]))
    return PCA(n_components=n_comp, whiten=whiten, random_state=random_state).fit(fit_on)


def rank1(gallery: np.ndarray, gallery_ids: np.ndarray, probe: np.ndarray,
          probe_ids: np.ndarray, pca: Any = None) -> float:
    """Rank-1 rate: share of probes whose nearest gallery record has the probe's identity.

    ``pca`` is an optional fitted projection (anything with ``transform``); distances are
    Euclidean in that space (Mahalanobis-like when it whitens).

    Examples
    --------
    >>> g = np.array([[0.0], [10.0]]); p = np.array([[1.0], [9.0], [6.0]])
    >>> rank1(g, np.array(["a", "b"]), p, np.array(["a", "b", "a"]))
    0.6666666666666666
    """
    G = np.asarray(gallery, dtype=np.float64)
    P = np.asarray(probe, dtype=np.float64)
    if pca is not None:
        G, P = pca.transform(G), pca.transform(P)
    gsq = np.einsum("ij,ij->i", G, G)
    nearest = np.empty(P.shape[0], dtype=np.int64)
    for s in range(0, P.shape[0], 1024):  # blocks of probes bound the memory
        D = gsq[None, :] - 2.0 * P[s:s + 1024] @ G.T
        nearest[s:s + 1024] = np.argmin(D, axis=1)
    return float(np.mean(np.asarray(gallery_ids)[nearest] == np.asarray(probe_ids)))


def rank1_panel(gallery_clear: np.ndarray, gallery_released: np.ndarray,
                gallery_ids: np.ndarray, probe_clear: np.ndarray, probe_released: np.ndarray,
                probe_ids: np.ndarray, n_components: int | float | None = None,
                pca_fit: np.ndarray | None = None,
                parrot_pca_fit: np.ndarray | None = None, whiten: bool = False,
                random_state: int = 0) -> dict[str, float]:
    """Rank-1 rates of the clear baseline and the naive, reverse and parrot attackers.

    - ``clear``: clear gallery, clear probes (how recognizable the data is at all);
    - ``naive``: clear gallery, released probes;
    - ``reverse``: released gallery, clear probes;
    - ``parrot``: released gallery (the attacker anonymizes his gallery with the same method
      and parameters), released probes.

    With ``n_components``, a PCA recognizer (eigenfaces) is fitted on ``pca_fit`` (default:
    the clear gallery); for the parrot attacker it is fitted on ``parrot_pca_fit`` (default:
    the released gallery), as an attacker who trains on anonymized data would.
    """
    clear_pca = _embed(gallery_clear if pca_fit is None else pca_fit, n_components, whiten,
                       random_state)
    parrot_pca = _embed(gallery_released if parrot_pca_fit is None else parrot_pca_fit,
                        n_components, whiten, random_state)
    return {
        "clear": rank1(gallery_clear, gallery_ids, probe_clear, probe_ids, clear_pca),
        "naive": rank1(gallery_clear, gallery_ids, probe_released, probe_ids, clear_pca),
        "reverse": rank1(gallery_released, gallery_ids, probe_clear, probe_ids, clear_pca),
        "parrot": rank1(gallery_released, gallery_ids, probe_released, probe_ids, parrot_pca),
    }


def record_linkage_rate(X: np.ndarray, X_released: np.ndarray) -> float:
    """Share of released records whose nearest original record is their own original.

    On a k-anonymous release this is at most 1/k: all members of a set share one released
    vector, so its nearest original can be right for one of them only.
    """
    X = np.asarray(X, dtype=np.float64)
    R = np.asarray(X_released, dtype=np.float64)
    xsq = np.einsum("ij,ij->i", X, X)
    hits = 0
    for s in range(0, R.shape[0], 1024):
        D = xsq[None, :] - 2.0 * R[s:s + 1024] @ X.T
        hits += int(np.sum(np.argmin(D, axis=1) == np.arange(s, s + D.shape[0])))
    return hits / R.shape[0]


def _entropy_zero(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per group: True when all its members share one value."""
    _, v = np.unique(values, return_inverse=True)
    n_groups = int(groups.max()) + 1
    first = np.full(n_groups, -1)
    first[groups[::-1]] = v[::-1]  # any member's value
    differs = np.bincount(groups, weights=(v != first[groups]), minlength=n_groups)
    return differs == 0


def homogeneity(groups: np.ndarray, labels: pd.DataFrame | Mapping[str, Any],
                attributes: Sequence[str] | None = None,
                attribute_sets: Sequence[Sequence[str]] = ()) -> dict[str, float]:
    """Share of clusters homogeneous (entropy 0) in each attribute and each attribute set.

    Parameters
    ----------
    groups : int array (n,)
        Cluster of each record; :func:`anonymity_sets` of the release gives it.
    labels : DataFrame or mapping of columns
    attributes : columns to check (default: every column of ``labels``)
    attribute_sets : sets of columns that must all be homogeneous at once

    Examples
    --------
    >>> lab = pd.DataFrame({"g": ["m", "m", "f", "m"], "a": [1, 1, 2, 2]})
    >>> homogeneity(np.array([0, 0, 1, 1]), lab, attribute_sets=[("g", "a")])
    {'g': 0.5, 'a': 1.0, 'g+a': 0.5}
    """
    groups = np.asarray(groups)
    df = labels if isinstance(labels, pd.DataFrame) else pd.DataFrame(dict(labels))
    if len(df) != groups.size:
        raise BioanonError(f"{len(df)} label rows for {groups.size} records; pass one per "
                           "record in the release order")
    cols = list(df.columns) if attributes is None else list(attributes)
    missing = [c for c in {*cols, *(c for s in attribute_sets for c in s)} if c not in df]
    if missing:
        from ..errors import missing_column

        raise missing_column(missing[0], df.columns)
    _, groups = np.unique(groups, return_inverse=True)
    per = {c: _entropy_zero(groups, df[c].astype(str).to_numpy()) for c in cols}
    out = {c: float(h.mean()) for c, h in per.items()}
    for s in attribute_sets:
        both = np.ones(int(groups.max()) + 1, dtype=bool)
        for c in s:
            both &= per[c] if c in per else _entropy_zero(groups, df[c].astype(str).to_numpy())
        out["+".join(s)] = float(both.mean())
    return out
