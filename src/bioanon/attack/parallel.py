"""Parallel fits for the attack panel, the utility views and the selection curves.

Scikit-learn's fitting code (liblinear, libsvm, trees, BLAS) releases the GIL, so the panel
runs its fits in threads by default: no worker start-up, no copies of the data. Each fit is
single-threaded inside (BLAS limited to one thread), so ``n_jobs`` fits share the cores
without oversubscription. Set ``BIOANON_BACKEND=loky`` to use processes instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import Any

from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits


def is_parallel(n_jobs: int | None, n_tasks: int) -> bool:
    """Whether ``n_tasks`` tasks with ``n_jobs`` would run concurrently."""
    return n_tasks > 1 and n_jobs not in (1, None, 0)


def parallel_map(func: Callable[..., Any], tasks: Iterable[tuple[Any, ...]],
                 n_jobs: int | None, n_tasks: int, unordered: bool = False) -> Iterator[Any]:
    """Yield ``func(*task)`` for every task, in parallel when ``n_jobs`` allows it.

    With ``unordered=True`` results come as they finish (wrap tasks to carry an index).
    """
    if not is_parallel(n_jobs, n_tasks):
        for task in tasks:
            yield func(*task)
        return
    backend = os.environ.get("BIOANON_BACKEND", "threading")
    limit = threadpool_limits(1) if backend == "threading" else nullcontext()
    with limit:
        par = Parallel(n_jobs=n_jobs, backend=backend,
                       return_as="generator_unordered" if unordered else "generator")
        yield from par(delayed(func)(*task) for task in tasks)
