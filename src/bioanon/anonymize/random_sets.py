"""Assembly of the random sets G of Algorithm 1 (set size g, purity t), for all records at once.

Each record's set holds the record itself, ``round(t·g) − 1`` donors sharing its interest value
and ``g − round(t·g)`` donors with other interest values, all drawn without replacement. The
work is vectorised per interest class (a Python loop over classes, never over records).

The sets are a secret: with them the transform can be partly undone. They never leave memory.
"""

from __future__ import annotations

import numpy as np

from ..errors import BioanonError

# rows × pool cells per chunk for the dense (random keys) sampler
_DENSE_CELLS = 1 << 22


def n_same(g: int, t: float) -> int:
    """Members of a set of size ``g`` (the record included) sharing the record's interest value."""
    return max(1, min(g, int(round(t * g))))


def sample_distinct(n_rows: int, pool: int, k: int, rng: np.random.Generator,
                    self_pos: np.ndarray | None = None) -> np.ndarray:
    """Draw ``k`` distinct positions in ``[0, pool)`` for each of ``n_rows`` rows.

    Parameters
    ----------
    n_rows, pool, k : int
        Rows to draw for, pool size, draws per row (``k`` must not exceed the pool).
    rng : numpy Generator
    self_pos : array (n_rows,), optional
        A position per row that must not be drawn (the record itself).

    Returns
    -------
    int64 array (n_rows, k); each row is a uniformly random k-subset.
    """
    effective = pool - (1 if self_pos is not None else 0)
    if k > effective:
        raise ValueError(f"cannot draw {k} distinct values from a pool of {effective}")
    if k == 0 or n_rows == 0:
        return np.zeros((n_rows, k), dtype=np.int64)
    if k * 4 > effective or effective <= 64:
        out = _dense(n_rows, effective, k, rng)
    else:
        out = _sparse(n_rows, effective, k, rng)
    if self_pos is not None:  # skip over the record's own position
        out += out >= np.asarray(self_pos)[:, None]
    return out


def _dense(n_rows: int, pool: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Random keys: the k smallest of ``pool`` uniform keys per row (exact, O(rows·pool))."""
    out = np.empty((n_rows, k), dtype=np.int64)
    step = max(1, _DENSE_CELLS // pool)
    for start in range(0, n_rows, step):
        keys = rng.random((min(step, n_rows - start), pool), dtype=np.float32)
        out[start:start + step] = np.argpartition(keys, k - 1, axis=1)[:, :k]
    return out


def _sparse(n_rows: int, pool: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Draw with replacement, then redraw duplicates until every row is distinct.

    The procedure is symmetric in the pool's labels, so each k-subset is equally likely.
    """
    out = rng.integers(0, pool, size=(n_rows, k))
    rows = np.arange(n_rows)
    while rows.size:
        sub = np.sort(out[rows], axis=1)
        dup = np.zeros_like(sub, dtype=bool)
        dup[:, 1:] = sub[:, 1:] == sub[:, :-1]
        bad = dup.any(axis=1)
        sub[dup] = rng.integers(0, pool, size=int(dup.sum()))
        out[rows] = sub
        rows = rows[bad]
    return out


def assemble_sets(codes: np.ndarray, g: int, t: float, rng: np.random.Generator,
                  class_names: np.ndarray | None = None,
                  allow_replacement: bool = False, include_self: bool = True) -> np.ndarray:
    """Build every record's random set.

    Parameters
    ----------
    codes : int array (n,)
        Interest class code of each record.
    g : int
        Set size (the record included).
    t : float
        Purity in [1/g, 1].
    rng : numpy Generator
    class_names : array, optional
        Names of the classes, for error messages.
    allow_replacement : bool
        Draw donors with replacement when a class is too small, instead of raising.
    include_self : bool
        True (Algorithm 1): column 0 is the record itself. False: column 0 is one more
        same-class donor, so the set holds nothing of the record.

    Returns
    -------
    int64 array (n, g): column 0 is the record itself (or a donor), the rest are its donors.
    """
    n = codes.shape[0]
    if g < 1:
        raise BioanonError(f"set size g={g} must be at least 1")
    if not (1.0 / g - 1e-9 <= t <= 1.0):
        raise BioanonError(f"purity t={t} must lie in [1/g, 1] = [{1 / g:.3g}, 1]")
    k_same = n_same(g, t) - 1
    k_other = g - 1 - k_same
    first = 1 if include_self else 0  # column of the first same-class donor
    k_draw = k_same + 1 - first  # same-class donors to draw
    sets = np.empty((n, g), dtype=np.int64)
    sets[:, 0] = np.arange(n)
    classes = np.unique(codes)
    for c in classes:
        members = np.flatnonzero(codes == c)
        n_c = members.size
        name = class_names[c] if class_names is not None else c
        # donors sharing the interest value, never the record itself
        if k_draw:
            if n_c - 1 >= k_draw:
                pos = sample_distinct(n_c, n_c, k_draw, rng, self_pos=np.arange(n_c))
            elif allow_replacement:
                pos = _with_replacement(n_c, k_draw, rng)
            else:
                raise BioanonError(
                    f"interest class '{name}' has {n_c} records but g={g}, t={t} needs "
                    f"{k_draw + 1} per class (the record and {k_draw} donors); lower g or t, "
                    "or allow sampling with replacement (--allow-replacement)"
                )
            sets[members, first:1 + k_same] = members[pos]
        if k_other:
            others = np.flatnonzero(codes != c)
            if others.size >= k_other:
                pos = sample_distinct(n_c, others.size, k_other, rng)
            elif allow_replacement and others.size:
                pos = rng.integers(0, others.size, size=(n_c, k_other))
            else:
                raise BioanonError(
                    f"only {others.size} records lie outside interest class '{name}' but g={g}, "
                    f"t={t} needs {k_other} donors from other classes; lower g, raise t, or "
                    "allow sampling with replacement (--allow-replacement)"
                )
            sets[members, 1 + k_same:] = others[pos]
    return sets


def _with_replacement(n_c: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Same-class donors with replacement, excluding the record unless it is alone."""
    if n_c == 1:
        return np.zeros((1, k), dtype=np.int64)
    pos = rng.integers(0, n_c - 1, size=(n_c, k))
    return pos + (pos >= np.arange(n_c)[:, None])
