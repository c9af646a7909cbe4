"""Parallel fits for the attack panel, the utility views and the selection curves.

Scikit-learn's fitting code (liblinear, libsvm, trees, BLAS) releases the GIL, so the panel
runs its fits in threads by default: no worker start-up, no copies of the data. Each fit is
single-threaded inside (BLAS limited to one thread, and OpenMP limited to one thread in the
worker thread itself), so ``n_jobs`` fits share the cores without oversubscription. Set
``BIOANON_BACKEND=loky`` to use processes instead.

Why OpenMP is limited inside each worker: OpenMP's thread count is a per-thread setting, so
a limit set in the main thread does not reach the joblib worker threads. Without it, every
OpenMP model fitted in a worker (histogram gradient boosting, the k-NN distance reductions)
starts one OpenMP team per core, and on a busy machine its spin-waiting teams slow each
other down by orders of magnitude (an hgb fit of a few seconds took minutes at load 10).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import Any

from threadpoolctl import threadpool_limits


def is_parallel(n_jobs: int | None, n_tasks: int) -> bool:
    """Whether ``n_tasks`` tasks with ``n_jobs`` would run concurrently."""
    return n_tasks > 1 and n_jobs not in (1, None, 0)


def one_openmp_thread(func: Callable[..., Any], *args: Any) -> Any:
    """``func(*args)`` with OpenMP limited to one thread in the calling thread."""
    with threadpool_limits(limits=1, user_api="openmp"):
        return func(*args)


def parallel_map(func: Callable[..., Any], tasks: Iterable[tuple[Any, ...]],
                 n_jobs: int | None, n_tasks: int, unordered: bool = False) -> Iterator[Any]:
    """Yield ``func(*task)`` for every task, in parallel when ``n_jobs`` allows it.

    With ``unordered=True`` results come as they finish (wrap tasks to carry an index).
    Each task runs with OpenMP held to one thread in its own thread when tasks run in
    parallel threads, or when ``n_jobs == 1``.
    """
    if not is_parallel(n_jobs, n_tasks):
        # one job asked for: one thread (OpenMP too); otherwise a lone task keeps its threads
        for task in tasks:
            yield one_openmp_thread(func, *task) if n_jobs == 1 else func(*task)
        return
    from joblib import Parallel, delayed  # not at import: commands that fit nothing skip it

    backend = os.environ.get("BIOANON_BACKEND", "threading")
    threads = backend == "threading"
    limit = threadpool_limits(1) if threads else nullcontext()
    with limit:
        par = Parallel(n_jobs=n_jobs, backend=backend,
                       return_as="generator_unordered" if unordered else "generator")
        if threads:  # the OpenMP limit must be set in each worker thread (see above)
            yield from par(delayed(one_openmp_thread)(func, *task) for task in tasks)
        else:
            yield from par(delayed(func)(*task) for task in tasks)
