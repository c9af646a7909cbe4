"""Assembly of the random sets G of Algorithm 1 (set size g, purity t), for all records at once.

Each record's set holds the record itself, ``round(t·g) − 1`` donors sharing its interest value
and ``g − round(t·g)`` donors with other interest values, all drawn without replacement
(Floyd's algorithm on uniforms drawn in record order). The NumPy filler is vectorised per
interest class (a Python loop over classes, never over records); on large tables a compiled
filler (numba, optional) reads the same uniforms in parallel and gives the same sets.

The sets are a secret: with them the transform can be partly undone. They never leave memory.
"""

from __future__ import annotations

import numpy as np

from ..errors import BioanonError


def n_same(g: int, t: float) -> int:
    """Members of a set of size ``g`` (the record included) sharing the record's interest value."""
    return max(1, min(g, int(round(t * g))))


#: rows of uniforms drawn per step of the compiled filler (the stream of uniforms is the same
#: whatever the step: one float64 per draw, in record order)
_UNIFORM_ROWS = 1 << 16
#: below this many records the NumPy filler runs (no compile); both give the same sets
MIN_COMPILED_ROWS = 20_000


def assemble_sets(codes: np.ndarray, g: int, t: float, rng: np.random.Generator,
                  class_names: np.ndarray | None = None,
                  allow_replacement: bool = False, include_self: bool = True) -> np.ndarray:
    """Build every record's random set.

    Each record draws ``g − 1`` uniforms (``g`` without ``include_self``) from ``rng``, in
    record order, and turns them into distinct donors with Floyd's algorithm: a uniformly random
    subset of its class (itself excluded) and one of the other classes. The compiled filler
    (numba, on large tables) and the NumPy one read the same uniforms and give the same sets.

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
        Names of the classes (indexed by code), for error messages.
    allow_replacement : bool
        Draw donors with replacement when a class is too small, instead of raising.
    include_self : bool
        True (Algorithm 1): column 0 is the record itself. False: column 0 is one more
        same-class donor, so the set holds nothing of the record.

    Returns
    -------
    int array (n, g) (int32 below 2**31 records): column 0 is the record itself (or a donor),
    the next ``round(t·g) − 1`` its same-class donors, the rest donors of other classes.

    Examples
    --------
    >>> sets = assemble_sets(np.array([0, 0, 0, 1, 1, 1]), 3, 0.67, np.random.default_rng(0))
    >>> sets.shape, sets[:, 0].tolist()
    ((6, 3), [0, 1, 2, 3, 4, 5])
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
    values, dense = np.unique(codes, return_inverse=True)
    counts = np.bincount(dense)
    for c, n_c in enumerate(counts.tolist()):
        code = values[c]
        name = class_names[code] if class_names is not None else code
        if k_draw and n_c - 1 < k_draw and not allow_replacement:
            raise BioanonError(
                f"interest class '{name}' has {n_c} records but g={g}, t={t} needs "
                f"{k_draw + 1} per class (the record and {k_draw} donors); lower g or t, "
                "or allow sampling with replacement (allow_replacement=True)",
                parameter="allow_replacement")
        if k_other and n - n_c < k_other and not (allow_replacement and n - n_c):
            raise BioanonError(
                f"only {n - n_c} records lie outside interest class '{name}' but g={g}, "
                f"t={t} needs {k_other} donors from other classes; lower g, raise t, or "
                "allow sampling with replacement (allow_replacement=True)",
                parameter="allow_replacement")
    layout = _ClassLayout.of(dense, counts)
    sets = np.empty((n, g), dtype=np.int32 if n < 2**31 else np.int64)
    from .mix_kernel import KERNEL_LOCK, set_filler

    fill = set_filler() if n >= MIN_COMPILED_ROWS else None
    if fill is None:
        _fill_numpy(rng.random((n, g - first)), layout, k_draw, k_other, first,
                    allow_replacement, sets)
        return sets
    buffer = np.empty((min(n, _UNIFORM_ROWS), g - first))  # reused: fresh pages are dear
    for a in range(0, n, _UNIFORM_ROWS):
        U = buffer[:min(n, a + _UNIFORM_ROWS) - a]
        rng.random(out=U)
        with KERNEL_LOCK:  # numba's thread pool may not be entered by two threads at once
            fill(a, U, layout.codes, layout.order, layout.starts, layout.pos, k_draw, k_other,
                 first, allow_replacement, sets)
    return sets


class _ClassLayout:
    """Records sorted by class: ``order`` (positions), ``starts`` (class boundaries in that
    order), ``pos`` (each record's place in it) and the dense class ``codes``."""

    def __init__(self, codes: np.ndarray, order: np.ndarray, starts: np.ndarray,
                 pos: np.ndarray) -> None:
        self.codes, self.order, self.starts, self.pos = codes, order, starts, pos

    @classmethod
    def of(cls, dense: np.ndarray, counts: np.ndarray) -> _ClassLayout:
        n = dense.shape[0]
        index = np.int32 if n < 2**31 else np.int64  # half the bytes: stays in cache
        order = np.argsort(dense, kind="stable").astype(index)
        pos = np.empty(n, dtype=index)
        pos[order] = np.arange(n, dtype=index)
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(dense.astype(np.int64), order, starts, pos)


def floyd(U: np.ndarray, pool: int) -> np.ndarray:
    """Floyd's algorithm, one row per row of ``U``: ``U.shape[1]`` distinct positions in
    ``[0, pool)``, a uniformly random subset, from as many uniforms in [0, 1).

    Draw ``m`` picks ``⌊u·(j+1)⌋`` with ``j = pool − k + m`` and takes ``j`` instead when the
    pick is taken already.

    Examples
    --------
    >>> out = floyd(np.random.default_rng(0).random((1000, 5)), 8)
    >>> bool((np.sort(out, axis=1)[:, 1:] > np.sort(out, axis=1)[:, :-1]).all())
    True
    """
    m, k = U.shape
    out = np.empty((m, k), dtype=np.int64)
    for s in range(k):
        j = pool - k + s
        pick = (U[:, s] * (j + 1)).astype(np.int64)
        if s:
            pick[(out[:, :s] == pick[:, None]).any(axis=1)] = j
        out[:, s] = pick
    return out


def _draw(U: np.ndarray, pool: int, replace: bool) -> np.ndarray:
    """Distinct positions (Floyd) when the pool allows, else independent ones."""
    if pool >= U.shape[1]:
        return floyd(U, pool)
    if not replace:  # pragma: no cover - refused by the class-size checks
        raise BioanonError(f"cannot draw {U.shape[1]} distinct donors from {pool}")
    return (U * pool).astype(np.int64)


def _fill_numpy(U: np.ndarray, lay: _ClassLayout, k_draw: int, k_other: int, first: int,
                replace: bool, sets: np.ndarray) -> None:
    """The NumPy filler: per class, all of its records at once."""
    n = lay.codes.shape[0]
    if first:
        sets[:, 0] = np.arange(n)
    for c in range(lay.starts.size - 1):
        s0, s1 = int(lay.starts[c]), int(lay.starts[c + 1])
        rows = lay.order[s0:s1]
        n_c = s1 - s0
        if k_draw:
            if n_c == 1:  # alone in its class (with replacement): itself
                sets[rows, first:first + k_draw] = rows[:, None]
            else:
                v = _draw(U[rows, :k_draw], n_c - 1, replace)
                v += v >= (lay.pos[rows] - s0)[:, None]  # skip the record itself
                sets[rows, first:first + k_draw] = lay.order[s0 + v]
        if k_other:
            v = _draw(U[rows, k_draw:k_draw + k_other], n - n_c, replace)
            v += n_c * (v >= s0)  # skip the class's own block
            sets[rows, first + k_draw:] = lay.order[v]


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
    int64 array (n_rows, k); each row is a uniformly random k-subset (Floyd's algorithm).
    """
    effective = pool - (1 if self_pos is not None else 0)
    if k > effective:
        raise ValueError(f"cannot draw {k} distinct values from a pool of {effective}")
    out = floyd(rng.random((n_rows, k)), effective)
    if self_pos is not None:  # skip over the record's own position
        out += out >= np.asarray(self_pos)[:, None]
    return out


def _with_replacement(n_c: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Same-class donors with replacement, excluding the record unless it is alone."""
    if n_c == 1:
        return np.zeros((1, k), dtype=np.int64)
    pos = rng.integers(0, n_c - 1, size=(n_c, k))
    return pos + (pos >= np.arange(n_c)[:, None])
