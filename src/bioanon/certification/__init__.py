"""Certification: what ``bioanon release`` is for, in one package.

One module per job:

- :mod:`.run`: the one skeleton, check → plan → search → confirm → release
  (:func:`~bioanon.certification.run.certify_source`), with a small *source* per path
  carrying only what differs;
- :mod:`.settings`: the release's options, declared and checked once;
- :mod:`.search`: the search over methods and settings on a tuning split and its confirmation
  on a fresh split and seed, its steps named functions (one engine;
  :func:`bioanon.tuning.grid_search.sweep` confirms with it too);
- :mod:`.certificate`: the result types (:class:`CertifiedRelease`, one for every path,
  :class:`NotCertified`), the manifest's certification block, the release seed and the
  certified report;
- :mod:`.chart`: the search chart (CAS against each risk);
- :mod:`.dp_budget`: a declared differential-privacy budget (ε, δ, privacy unit, strict or
  not); "budget" alone is the search's time budget;
- :mod:`.memory`: the in-memory source and front door, :func:`certify` (``bioanon.certify``);
- :mod:`.parquet`: the bucketed source on dask,
  :func:`~bioanon.certification.parquet.certify_parquet`, which drives the
  :mod:`bioanon.scale` execution engine;
- :mod:`.streamed`: the streamed DP source of the dask path,
  :func:`~bioanon.certification.streamed.certify_streamed` (a declared budget with public
  bounds: the DP model's statistics summed over the Parquet partitions, samples per partition).

The package is ``certification``, not ``certify``: the package root exports the function
``bioanon.certify``, which a subpackage of that name would shadow. For the same reason this
package exports no function named like one of its modules (``search`` is
:func:`bioanon.certification.search.search`).

Every name is imported on first use (the command line's checks of its outputs do not bring
the search's stack).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .certificate import REPORT_FILES, CertifiedRelease, NotCertified, report_dir
    from .memory import certify
    from .search import SearchResult

from .._lazy import lazy_getattr

#: each public name and the module (under this package) that defines it
_LAZY = {
    "CertifiedRelease": "certificate",
    "NotCertified": "certificate",
    "REPORT_FILES": "certificate",
    "SearchResult": "search",
    "certify": "memory",
    "report_dir": "certificate",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["REPORT_FILES", "CertifiedRelease", "NotCertified", "SearchResult", "certify",
           "report_dir"]
