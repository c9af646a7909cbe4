"""Where a bucketed release runs: a user's dask scheduler, a local cluster, or threads."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from ..errors import BioanonError


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, local: bool = False,
                n_workers: int | None = None, memory_limit: str = "2GiB") -> Iterator[Any]:
    """Yield a ``dask.distributed.Client`` (or None for the threaded scheduler).

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler, e.g. ``tcp://10.0.0.5:8786``.
    local : bool
        Start a ``LocalCluster`` (one single-threaded worker per core unless ``n_workers``;
        the cores are shared out among the workers' compiled kernels).
    n_workers : int, optional
    memory_limit : str
        Per-worker memory limit of the local cluster.
    """
    if scheduler is None and not local:
        yield None
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise BioanonError("the dask path needs the 'scale' extra; install it with "
                           "pip install 'bioanon[scale]'") from None
    if scheduler is not None:
        check_scheduler_address(scheduler)
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise BioanonError(f"cannot reach the dask scheduler at {scheduler} ({exc}); "
                               "check the address and that the scheduler runs") from None
        with client:
            yield client
        return
    workers = n_workers or os.cpu_count() or 1
    # silence_logs: a task that fails on bad input is re-raised here as one clear error; the
    # workers' own log of it (with a traceback) would only repeat it
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      memory_limit=memory_limit, dashboard_address=None,
                      silence_logs=logging.CRITICAL,
                      env=worker_threads_env(workers)) as cluster, Client(cluster) as client:
        yield client


def check_scheduler_address(scheduler: str) -> None:
    """Refuse an address that is not a dask scheduler's (before any work).

    Examples
    --------
    >>> check_scheduler_address("tcp://10.0.0.5:8786")
    """
    if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise BioanonError(f"scheduler address '{scheduler}' must look like tcp://HOST:PORT")


def worker_threads_env(n_workers: int) -> dict[str, str]:
    """Thread counts for the workers of a local cluster: the cores shared out among them.

    Each worker runs one task at a time, and its compiled kernel (numba) and BLAS would
    otherwise each start a thread per core: ``n_workers`` such workers oversubscribe the
    machine. A value the user set in the environment is kept.

    Examples
    --------
    >>> env = worker_threads_env(os.cpu_count() or 1)
    >>> int(env["NUMBA_NUM_THREADS"]) >= 1
    True
    """
    share = str(max(1, (os.cpu_count() or 1) // max(1, n_workers)))
    names = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return {k: os.environ.get(k, share) for k in names}
