"""One part of an evaluation run beside another: utility in a thread while the risks run.

An evaluation's utility (the CAS, its views, the consumer's panel) and its cheap risks
(membership, inference: the attackers without the panel) read the same splits and write
nothing the other reads: each draws its randomness from its own seeded stream, and neither
touches the other's caches. With more than one job they run at once, utility in a thread
beside the caller's risks, so that a confirmation or a ``bioanon evaluate`` takes the longer
of the two instead of their sum; every figure is the sequential run's, to the bit (a test
compares them). With one job (a search's stage-1 worker, ``n_jobs=1``) nothing changes.

The thread holds OpenMP to one thread (a per-thread setting: the parallel fits' rule,
:mod:`bioanon.attack.parallel`; BLAS keeps the process's setting) and is a daemon: an
interrupted command does not wait for it. Its error, if any, is raised by
:meth:`Beside.wait` in the caller's thread.

Examples
--------
>>> out = []
>>> b = Beside(lambda: out.append(1), parallel=True)
>>> b.wait(); out
[1]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..attack.parallel import one_openmp_thread


class Beside:
    """Run ``func()`` in a daemon thread when ``parallel``, else at once in this thread;
    :meth:`wait` returns when it has finished and raises its error."""

    def __init__(self, func: Callable[[], Any], parallel: bool) -> None:
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if not parallel:
            func()
            return

        def run() -> None:
            try:
                one_openmp_thread(func)
            except BaseException as exc:  # re-raised in the caller's thread by wait()
                self._error = exc

        self._thread = threading.Thread(target=run, name="bioanon-beside", daemon=True)
        self._thread.start()

    def running(self) -> bool:
        """Whether the function still runs in its thread."""
        return self._thread is not None and self._thread.is_alive()

    def wait(self, raise_error: bool = True) -> None:
        """Wait for the function; raise its error in this thread (``raise_error`` False:
        drop it, when the caller has an error of its own to raise)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        error, self._error = self._error, None
        if error is not None and raise_error:
            raise error


__all__ = ["Beside"]
