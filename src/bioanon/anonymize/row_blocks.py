"""The mixing products the mixing methods share, by row blocks: the sparse mixing matrix of
donor sets, a CSR row block, a thread pool over blocks, and the variance-preserving mix
``c[s] (M X) + b[s] X + C[s]`` (vp-mix, and dp-mix with its noise).

A leaf the method modules share (no method module imports another). SciPy's sparse product
releases the GIL, so blocks run in a thread pool; no Python loop touches single records.

Examples
--------
>>> M = mixing_matrix(np.array([[1, 2], [0, 2], [0, 1]]))
>>> (M @ np.eye(3)).round(2).tolist()
[[0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]]
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp


def mixing_matrix(sets: np.ndarray) -> sp.csr_matrix:
    """Sparse n×n matrix with 1/g at (i, j) for every member j of record i's set.

    Column indices are sorted within each row (canonical CSR): the product then reads the rows
    of X in increasing address order, which is markedly faster on large data.
    """
    n, g = sets.shape
    index_dtype = np.int32 if n < 2**31 - 1 else np.int64
    data = np.full(n * g, 1.0 / g, dtype=np.float32)
    indptr = np.arange(0, n * g + 1, g, dtype=index_dtype)
    indices = np.sort(sets.astype(index_dtype, copy=False), axis=1).ravel()
    M = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    M.has_sorted_indices = True
    return M


def row_block(M: sp.csr_matrix, start: int, stop: int) -> sp.csr_matrix:
    """Rows ``start:stop`` of M as a CSR view (no copy of the index arrays)."""
    a, b = M.indptr[start], M.indptr[stop]
    return sp.csr_matrix((M.data[a:b], M.indices[a:b], M.indptr[start:stop + 1] - a),
                         shape=(stop - start, M.shape[1]))


def run_row_blocks(run: Any, n: int, block: int, n_threads: int | None = None) -> None:
    """Call ``run(start)`` for every row block ``[start, start + block)`` of ``n`` rows, in a
    thread pool when there is more than one block (the NumPy/SciPy kernels release the GIL)."""
    starts = range(0, n, block)
    threads = n_threads or min(8, os.cpu_count() or 1)
    if threads > 1 and n > block:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, starts))
    else:
        for start in starts:
            run(start)


def apply_vp_mix(X: np.ndarray, M: sp.csr_matrix, strat: np.ndarray, c: np.ndarray,
                 b: np.ndarray, C: np.ndarray, mask: np.ndarray | None = None,
                 lam: float = 0.0, n_threads: int | None = None,
                 block: int = 1 << 15, noise_sd: np.ndarray | None = None,
                 noise_seed: np.random.SeedSequence | None = None) -> np.ndarray:
    """Return ``c[s] (M X) + b[s] X + C[s]`` (then ``λ`` retention on ``mask``), by row blocks.

    With ``noise_sd`` (strata × features), independent Gaussian noise of that standard
    deviation is added (each block from its own child of ``noise_seed``).

    SciPy's sparse product releases the GIL, so blocks run in a thread pool; no Python loop
    touches single records.
    """
    n = M.shape[0]
    out = np.empty((n, X.shape[1]), dtype=np.float32)
    c32, b32, C32 = (np.asarray(v, dtype=np.float32) for v in (c, b, C))
    cols = np.flatnonzero(mask) if (mask is not None and lam) else np.zeros(0, dtype=np.int64)
    lam32 = np.float32(lam)
    starts = range(0, n, block)
    seeds = (noise_seed or np.random.SeedSequence()).spawn(len(starts)) \
        if noise_sd is not None else []
    sd32 = None if noise_sd is None else np.asarray(noise_sd, dtype=np.float32)

    def run(start: int) -> None:
        stop = min(n, start + block)
        s = strat[start:stop]
        part = out[start:stop]
        part[...] = row_block(M, start, stop) @ X
        part *= c32[s, None]
        part += b32[s, None] * X[start:stop]
        part += C32[s]
        if sd32 is not None:
            rng = np.random.default_rng(seeds[start // block])
            part += rng.standard_normal(part.shape, dtype=np.float32) * sd32[s]
        if cols.size:
            part[:, cols] += lam32 * (X[start:stop][:, cols] - part[:, cols])

    run_row_blocks(run, n, block, n_threads)
    return out


__all__ = ["apply_vp_mix", "mixing_matrix", "row_block", "run_row_blocks"]
