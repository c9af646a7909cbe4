"""Compiled kernels of the mixing methods (optional: need numba).

:func:`sets_kernel` computes ``M X + lam (X − M X) ⊙ mask`` for the uniform mixing matrix of
donor sets (``M`` never built); :func:`set_filler` turns uniforms into random sets exactly as
:func:`bioanon.anonymize.random_sets.assemble_sets`'s NumPy filler does.

The mixing kernel reads each record's donors straight from ``X`` (a row of ``g`` indices,
no sparse matrix), sums them in float32 in a row buffer, then applies the selective weighting
while the row is in cache: one pass, no temporary ``M X`` and no float64 copy. Rows run in
parallel blocks (``numba.prange``), and the donor rows of the records a few steps ahead are
prefetched (compiled cache hints that change no value).

numba is optional: both functions return None when it is missing, or when the environment
variable ``BIOANON_KERNEL=numpy`` asks for the NumPy/SciPy paths, which callers then take.
The set fillers give identical sets; the mixing agrees with SciPy's product to float32
rounding.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

#: held around each call of a parallel kernel: numba's thread pool (the workqueue layer, when
#: neither OpenMP nor TBB is there) must not be entered by two threads at once
KERNEL_LOCK = threading.Lock()

#: below this many rows the SciPy path is used (no compile on small data)
MIN_ROWS = 20_000
#: rows per parallel block of the compiled loops (a block's buffer is allocated once)
_ROWS = 1024


def _numba() -> Any:
    """numba, or None when it is missing or ``BIOANON_KERNEL=numpy`` asks for NumPy/SciPy."""
    if os.environ.get("BIOANON_KERNEL", "").lower() == "numpy":
        return None
    try:
        import numba
    except ImportError:  # optional dependency
        return None
    return numba


@cache
def set_filler() -> Callable[..., Any] | None:
    """The compiled random-set filler, or None (no numba, or ``BIOANON_KERNEL=numpy``).

    ``fill(a, U, codes, order, starts, pos, k_draw, k_other, first, replace, sets)`` fills rows
    ``a : a + len(U)`` of ``sets`` from the uniforms ``U`` (one row per record): Floyd's
    algorithm on the record's class without itself, then on the other classes. Duplicates are
    checked on positions in a small per-block buffer. No fastmath: the picks must equal the
    NumPy filler's to the last bit.
    """
    nb = _numba()
    if nb is None:
        return None
    import numpy as np

    @nb.njit(parallel=True, boundscheck=False, cache=True, nogil=True)
    def _fill(a, U, codes, order, starts, pos, k_draw, k_other, first, replace,
              sets):  # pragma: no cover - compiled
        n = codes.shape[0]
        m = U.shape[0]
        n_blocks = (m + _ROWS - 1) // _ROWS
        for blk in nb.prange(n_blocks):
            v = np.empty(max(k_draw, k_other, 1), dtype=np.int64)
            for r in range(blk * _ROWS, min(m, (blk + 1) * _ROWS)):
                i = a + r
                c = codes[i]
                s0 = starts[c]
                n_c = starts[c + 1] - s0
                if first == 1:
                    sets[i, 0] = i
                # same-class donors: positions in [0, n_c - 1), the record itself skipped
                pool = n_c - 1
                me = pos[i] - s0
                if k_draw > 0:
                    if pool >= k_draw:  # Floyd (written out twice: a closure is not cached)
                        for s in range(k_draw):
                            j = pool - k_draw + s
                            pick = np.int64(U[r, s] * (j + 1))
                            taken = False
                            for q in range(s):  # no early exit: the reduction vectorises
                                taken |= v[q] == pick
                            v[s] = j if taken else pick
                    else:
                        for s in range(k_draw):
                            v[s] = np.int64(U[r, s] * pool)
                    for s in range(k_draw):
                        sets[i, first + s] = (i if pool == 0 else
                                              order[s0 + v[s] + (v[s] >= me)])
                # donors of the other classes: positions in [0, n - n_c), own block skipped
                pool = n - n_c
                if k_other > 0:
                    if pool >= k_other:
                        for s in range(k_other):
                            j = pool - k_other + s
                            pick = np.int64(U[r, k_draw + s] * (j + 1))
                            taken = False
                            for q in range(s):
                                taken |= v[q] == pick
                            v[s] = j if taken else pick
                    else:
                        for s in range(k_other):
                            v[s] = np.int64(U[r, k_draw + s] * pool)
                    for s in range(k_other):
                        sets[i, first + k_draw + s] = order[v[s] + n_c * (v[s] >= s0)]

    return _fill


#: records ahead whose donor rows the mixing kernel asks the memory to fetch, and lines
#: (64 bytes) of each such row asked for (the hardware's streamer fetches the rest)
PREFETCH_AHEAD, PREFETCH_LINES = 2, 4
#: records ahead whose set (and own row) is fetched first, so that the donors' addresses are
#: in cache when their prefetch is issued
PREFETCH_SETS_AHEAD = 6


def _prefetch_intrinsic(nb: Any) -> Any:
    """``prefetch(a, k)``: a compiled hint to bring the cache line of ``a[k]`` (1-D array)
    into cache; it never faults and changes no value."""
    from llvmlite import ir
    from numba.core import cgutils

    @nb.extending.intrinsic
    def prefetch(typingctx, arr, idx):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary,
                                           [args[1]], wraparound=False)
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
            # read, keep in all cache levels, data cache
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return nb.types.void(arr, idx), codegen

    return prefetch


@cache
def sets_kernel() -> Callable[..., Any] | None:
    """The compiled mixing over donor sets, or None (no numba, or ``BIOANON_KERNEL=numpy``).

    ``mix(sets, X, cols, lam, out, rows)``: output row ``j`` is the release of record
    ``i = rows[j]``: the mean of ``X`` over row ``i`` of ``sets`` (accumulated in float32 in a
    row buffer, donors in set order), then ``lam (X[i] − ·)`` on ``cols``. ``rows = arange(n)``
    gives input order; a permutation gives the shuffled release in the same pass (no second
    pass over ``out``).

    The donors are random rows of ``X``: the kernel waits on memory, not on arithmetic. While
    it sums record ``j`` it asks for the first lines of the donor rows of record
    ``j +`` :data:`PREFETCH_AHEAD`, and for the set of record ``j +``
    :data:`PREFETCH_SETS_AHEAD`, so that several rows are on their way at once (about a
    fifth less time on 1M × 256 at g=32). Prefetches are hints: the sums, and so every
    released value, are those of the loop without them.
    """
    if _numba() is None:
        return None
    return mixing_kernel(PREFETCH_AHEAD, PREFETCH_LINES, PREFETCH_SETS_AHEAD)


@cache
def mixing_kernel(ahead: int, lines: int, sets_ahead: int) -> Callable[..., Any] | None:
    """:func:`sets_kernel` with its prefetch distances given (0: that hint is not issued;
    ``mixing_kernel(0, 0, 0)`` is the loop without any), or None (no numba, or
    ``BIOANON_KERNEL=numpy`` when first asked)."""
    nb = _numba()
    if nb is None:
        return None
    import numpy as np

    prefetch = _prefetch_intrinsic(nb)

    @nb.njit(parallel=True, fastmath=True, boundscheck=False, cache=True, nogil=True)
    def _mix(sets, X, cols, lam, out, rows):  # pragma: no cover - compiled
        n, g = sets.shape
        d = X.shape[1]
        inv = np.float32(1.0) / np.float32(g)
        n_blocks = (n + _ROWS - 1) // _ROWS
        step = max(1, 64 // X.itemsize)  # elements per cache line
        reach = min(lines * step, d)
        for blk in nb.prange(n_blocks):
            acc = np.empty(d, dtype=np.float32)
            end = min(n, (blk + 1) * _ROWS)
            for j in range(blk * _ROWS, end):
                if sets_ahead > 0 and j + sets_ahead < end:
                    prefetch(sets[rows[j + sets_ahead]], 0)
                    prefetch(X[rows[j + sets_ahead]], 0)
                if ahead > 0 and j + ahead < end:
                    later = sets[rows[j + ahead]]
                    for p in range(g):
                        xr = X[later[p]]
                        for k in range(0, reach, step):
                            prefetch(xr, k)
                i = rows[j]
                for k in range(d):
                    acc[k] = np.float32(0.0)
                for p in range(g):
                    xr = X[sets[i, p]]
                    for k in range(d):
                        acc[k] += xr[k]
                o = out[j]
                for k in range(d):
                    o[k] = inv * acc[k]
                for c in cols:
                    o[c] += lam * (X[i, c] - o[c])

    return _mix


@cache
def permute_kernel() -> Callable[..., Any] | None:
    """The compiled in-place row permutation, or None (no numba, or ``BIOANON_KERNEL=numpy``).

    ``permute(X, perm)`` makes row ``j`` of ``X`` the old row ``perm[j]``, following the
    permutation's cycles with one row of scratch: every row moves once, and no second copy
    of ``X`` is made.
    """
    nb = _numba()
    if nb is None:
        return None
    import numpy as np

    @nb.njit(boundscheck=False, cache=True, nogil=True)
    def _permute(X, perm):  # pragma: no cover - compiled
        n = X.shape[0]
        done = np.zeros(n, dtype=np.bool_)
        scratch = np.empty(X.shape[1], dtype=X.dtype)
        for i in range(n):
            if done[i]:
                continue
            scratch[:] = X[i]
            j = i
            while True:
                done[j] = True
                k = perm[j]
                if k == i:
                    X[j] = scratch
                    break
                X[j] = X[k]
                j = k

    return _permute
