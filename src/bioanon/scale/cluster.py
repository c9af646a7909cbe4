"""Where a bucketed release runs: a user's dask scheduler, a local cluster, or threads."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from ..errors import BioanonError, install_hint

#: seconds to wait for a scheduler before saying it cannot be reached (fail fast)
CONNECT_TIMEOUT_S = 5


#: the memory limit of each worker of a local cluster
WORKER_MEMORY = "2GiB"
_WORKER_BYTES = 2 * 2**30
#: local workers per core at most (each runs one task at a time; a few more than the cores
#: overlap reading with computing, thousands fork-storm the machine)
WORKERS_PER_CORE = 2


def _memory_bytes() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:  # pragma: no cover - distributed depends on psutil
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def max_workers() -> int:
    """The most workers a local cluster may start here: :data:`WORKERS_PER_CORE` per core,
    and no more than the memory holds at :data:`WORKER_MEMORY` each (at least one).

    Examples
    --------
    >>> 1 <= max_workers() <= WORKERS_PER_CORE * (os.cpu_count() or 1)
    True
    """
    cores = os.cpu_count() or 1
    return max(1, min(WORKERS_PER_CORE * cores, _memory_bytes() // _WORKER_BYTES))


def check_workers(n_workers: int | None) -> None:
    """Refuse, before any work, more local workers than this machine can run
    (:func:`max_workers`), naming the allowed maximum.

    Examples
    --------
    >>> check_workers(None); check_workers(1)
    >>> try:
    ...     check_workers(10**6)
    ... except BioanonError as exc:
    ...     print(str(exc).split(" is ")[0])
    n_workers=1000000
    """
    if n_workers is None:
        return
    if isinstance(n_workers, bool) or int(n_workers) < 1:
        raise BioanonError(f"n_workers={n_workers} is out of range; use a positive number of "
                           "worker processes, e.g. n_workers=2", parameter="n_workers")
    most = max_workers()
    if int(n_workers) > most:
        cores, memory = os.cpu_count() or 1, _memory_bytes() / 2**30
        raise BioanonError(
            f"n_workers={n_workers} is more than this machine can run: at most {most} "
            f"({WORKERS_PER_CORE} per core on {cores} cores, {WORKER_MEMORY} each within "
            f"{memory:.0f} GiB of memory); use n_workers={most} or fewer",
            parameter="n_workers")


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse, within ``timeout`` seconds, a scheduler address that does not parse or where
    no dask scheduler can be reached (before dask's own connection retries, and before any
    work): ``tcp://``/``tls://`` where nothing listens, an
    ``inproc://`` address with no scheduler in this process, ``ucx://`` without UCX.

    Examples
    --------
    >>> try:
    ...     check_reachable("tcp://127.0.0.1:notaport")
    ... except BioanonError as exc:
    ...     print(str(exc).split(" must")[0])
    scheduler address 'tcp://127.0.0.1:notaport'
    >>> try:
    ...     check_reachable("inproc://nowhere")
    ... except BioanonError as exc:
    ...     print(str(exc).split(" (")[0])
    cannot reach the dask scheduler at inproc://nowhere
    """
    import socket
    from urllib.parse import urlsplit

    check_scheduler_address(address)
    scheme, _, rest = address.partition("://")
    fix = "check the address and that the scheduler runs"
    if scheme == "inproc":
        from distributed.comm.inproc import global_manager

        try:  # an address of another process or host is refused by dask with ValueError
            listener = global_manager.get_listener_for(address)
        except ValueError:
            listener = None
        if listener is None:
            raise BioanonError(f"cannot reach the dask scheduler at {address} (no scheduler "
                               "runs at this in-process address); an inproc:// scheduler "
                               "lives in the same Python process: give a tcp://HOST:PORT "
                               "address, or leave the scheduler out for a local cluster",
                               parameter="scheduler")
        return
    if scheme == "ucx":
        try:
            import ucp  # noqa: F401
        except ImportError:
            raise BioanonError(f"cannot reach the dask scheduler at {address} (ucx:// needs "
                               "ucx-py, not installed); give a tcp://HOST:PORT address"
                               ) from None
        return
    try:
        parts = urlsplit(f"//{rest}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise BioanonError(f"scheduler address '{address}' must look like tcp://HOST:PORT (a "
                           "port from 1 to 65535)")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise BioanonError(f"cannot reach the dask scheduler at {address} ({why} within "
                           f"{timeout:g} s); {fix}") from None


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, local: bool = False,
                n_workers: int | None = None, memory_limit: str = WORKER_MEMORY
                ) -> Iterator[Any]:
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
        raise BioanonError(f"the dask path needs the 'scale' extra; {install_hint('scale')}"
                           ) from None
    if scheduler is not None:
        check_reachable(scheduler)
        try:
            client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
        except Exception as exc:  # refused, timed out, or something else answers there
            # (a proxy or another service: its reply can even decode as a huge message)
            why = ((str(exc).splitlines() or [type(exc).__name__])[0]
                   if isinstance(exc, OSError) else "what answers there is not a dask scheduler")
            raise BioanonError(f"cannot reach the dask scheduler at {scheduler} ({why}); check "
                               "the address and that a dask scheduler runs there") from None
        with client:
            yield client
        return
    check_workers(n_workers)
    workers = n_workers or os.cpu_count() or 1
    # silence_logs: a task that fails on bad input is re-raised here as one clear error; the
    # workers' own log of it (with a traceback) would only repeat it
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      memory_limit=memory_limit, dashboard_address=None,
                      silence_logs=logging.CRITICAL,
                      env=worker_threads_env(workers)) as cluster, Client(cluster) as client:
        yield client


def dask_failure(exc: BaseException, scheduler: str | None = None) -> BaseException:
    """The one-line user error for a failure of the dask run that is not a bug of bioanon: a
    worker that died (memory), a lost scheduler, an input part that cannot be decoded. Any
    other exception is returned as it is (to be re-raised).

    Examples
    --------
    >>> str(dask_failure(ConnectionResetError("reset"), "tcp://h:8786")).split(";")[0]
    'lost the connection to the dask scheduler at tcp://h:8786 (reset)'
    """
    if isinstance(exc, BioanonError):
        return exc
    name = type(exc).__name__
    first = (str(exc).splitlines() or [name])[0]
    if name == "KilledWorker":
        return BioanonError("a dask worker died while releasing (out of memory?); lower "
                            "bucket_size= or give the workers more memory",
                            parameter="bucket_size")
    if name in ("CommClosedError", "StreamClosedError") or isinstance(
            exc, ConnectionError | TimeoutError):
        where = f" at {scheduler}" if scheduler else ""
        return BioanonError(f"lost the connection to the dask scheduler{where} ({first}); "
                            "check that it still runs and try again")
    if type(exc).__module__.startswith("pyarrow"):
        return BioanonError(f"cannot read the input as Parquet ({first}); rewrite the damaged "
                            "part")
    return exc


def require_dask() -> None:
    """Refuse, in one line and before any work, a dask path without dask installed."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise BioanonError("the dask path needs the 'scale' extra; install it with "
                           "pip install 'bioanon[scale]'") from None


def check_scheduler_address(scheduler: str) -> None:
    """Refuse an address that is not a dask scheduler's (before any work).

    Examples
    --------
    >>> check_scheduler_address("tcp://10.0.0.5:8786")
    """
    if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise BioanonError(f"scheduler address '{scheduler}' must look like tcp://HOST:PORT")


def check_scheduler_reachable(scheduler: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse, before any work, a scheduler that cannot be reached (:func:`check_reachable`):
    a run that uses the scheduler only after a long search (``release``: after the search
    and the confirmation) would otherwise report a wrong address late or never."""
    check_reachable(scheduler, timeout)


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
