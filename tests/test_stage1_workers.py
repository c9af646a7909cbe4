"""A stage-1 worker keeps its caches for the whole search: loky does not replace it as a
leak when its memory grows (:func:`bioanon.certification.search.staged.keep_this_worker`)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from bioanon.certification.search import staged

pytest.importorskip("psutil")  # loky checks a worker's memory only where psutil is installed

_HELD: list[np.ndarray] = []


def _pid(keep: bool) -> int:
    if keep:
        staged.keep_this_worker()
    return os.getpid()


def _grow(keep: bool, megabytes: int) -> int:
    if keep:
        staged.keep_this_worker()
    _HELD.append(np.ones(megabytes * 131_072))  # held, as a worker's caches are
    time.sleep(1.2)  # past loky's one second between two checks
    return os.getpid()


@pytest.mark.parametrize("keep", [False, True])
def test_a_worker_whose_caches_grow_is_kept_only_when_it_asks(keep: bool) -> None:
    from joblib.externals.loky import get_reusable_executor

    ex = get_reusable_executor(max_workers=1, reuse=False)
    try:
        first = ex.submit(_pid, keep).result()  # loky measures the worker after its first task
        assert ex.submit(_grow, keep, 400).result() == first
        time.sleep(0.5)
        after = ex.submit(_pid, keep).result()
    finally:
        ex.shutdown(wait=True)
    # without the call loky replaces the worker (and its caches) as a leak; with it, kept
    assert (after == first) is keep
