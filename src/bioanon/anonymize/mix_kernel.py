"""A compiled gather kernel for ``M X + lam (X − M X) ⊙ mask`` (optional: needs numba).

The mixing matrix ``M`` is CSR with a handful of non-zeros per row (g of them). The kernel
reads each row's donors straight from ``X`` and accumulates in float32 into the output row,
then applies the selective weighting while the row is in cache: one pass, no temporary
``M X`` and no float64 copy. Rows run in parallel (``numba.prange``).

numba is optional: :func:`gather_kernel` returns None when it is missing, or when the
environment variable ``BIOANON_KERNEL=numpy`` asks for the SciPy path, and callers then fall
back to SciPy's sparse product. Both paths agree to float32 rounding.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

#: held around each call: numba's default thread pool must not be entered by two threads
KERNEL_LOCK = threading.Lock()

#: below this many rows the SciPy path is used (no compile on small data)
MIN_ROWS = 20_000


@cache
def gather_kernel() -> Callable[..., Any] | None:
    """The compiled kernel ``kernel(data, indices, indptr, X, cols, lam, out)``, or None."""
    if os.environ.get("BIOANON_KERNEL", "").lower() == "numpy":
        return None
    try:
        import numba as nb
    except ImportError:  # optional dependency
        return None
    import numpy as np

    @nb.njit(parallel=True, fastmath=True, boundscheck=False, cache=True, nogil=True)
    def _kernel(data, indices, indptr, X, cols, lam, out):  # pragma: no cover - compiled
        n = out.shape[0]
        d = X.shape[1]
        for i in nb.prange(n):
            o = out[i]
            for k in range(d):
                o[k] = np.float32(0.0)
            for p in range(indptr[i], indptr[i + 1]):
                wgt = data[p]
                xr = X[indices[p]]
                for k in range(d):
                    o[k] += wgt * xr[k]
            for c in cols:
                o[c] += lam * (X[i, c] - o[c])

    return _kernel
