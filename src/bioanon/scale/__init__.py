"""Out-of-core and distributed releases on dask (the optional ``scale`` extra).

- :func:`bucketed_release` (:mod:`.bucketed`): a Parquet dataset released bucket by bucket
  with a mixing anonymizer, written as a partitioned, shuffled Parquet release + manifest;
- :func:`assign_buckets` (:mod:`.buckets`): random buckets stratified by a label;
- :func:`panel_sample` (:mod:`.sample`): a bounded stratified sample of identities and records
  for the evaluation panel (NumPy only: usable without dask);
- :func:`dask_client` (:mod:`.cluster`): a user's scheduler, a ``LocalCluster``, or threads;
- :func:`release_plan` (:mod:`.policy`): the release policy's wiring (columns, roles);
- :class:`BucketedMixing` (:mod:`.estimator`): the bucketed rule on an in-memory table.

dask is imported only when a release runs.
"""

from __future__ import annotations

from .._lazy import lazy_getattr
from ..sampling import PanelSample, panel_sample, stratified_positions
from .buckets import assign_buckets, n_buckets_for
from .estimator import BucketedMixing
from .policy import release_plan

__all__ = ["BucketedMixing", "assign_buckets", "bucketed_release", "dask_client", "n_buckets_for",
           "PanelSample", "panel_sample", "release_plan", "stratified_positions"]


# lazy: dask loads only when the bucketed path is used
__getattr__ = lazy_getattr(__name__, {"bucketed_release": "bucketed", "dask_client": "cluster"})
