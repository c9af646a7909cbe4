"""Certification: what ``bioanon release`` is for, in one package.

One module per job:

- :mod:`.search`: the search over methods and settings on a tuning split and its confirmation
  on a fresh split and seed (one engine; :func:`bioanon.tuning.grid_search.sweep` confirms
  with it too);
- :mod:`.certificate`: the result types (:class:`CertifiedRelease`, :class:`NotCertified`),
  the manifest's certification block, the release seed and the certified report, written once
  for both adapters;
- :mod:`.chart`: the search chart (CAS against each risk);
- :mod:`.dp_budget`: a declared differential-privacy budget (ε, δ, privacy unit, strict or
  not); "budget" alone is the search's time budget;
- :mod:`.memory`: the in-memory adapter, :func:`certify` (``bioanon.certify``);
- :mod:`.parquet`: the Parquet/dask adapter, :func:`certify_parquet`, which drives the
  :mod:`bioanon.scale` execution engine;
- :mod:`.streamed`: the streamed DP release of the dask path,
  :func:`~bioanon.certification.streamed.certify_streamed` (a declared budget with public
  bounds: the DP model's statistics summed over the Parquet partitions, samples per partition).

The package is ``certification``, not ``certify``: the package root exports the function
``bioanon.certify``, which a subpackage of that name would shadow. For the same reason this
package exports no function named like one of its modules (``search`` is
:func:`bioanon.certification.search.search`).
"""

from __future__ import annotations

from .certificate import REPORT_FILES, CertifiedRelease, NotCertified, report_dir
from .memory import certify
from .search import SearchResult

__all__ = ["REPORT_FILES", "CertifiedRelease", "NotCertified", "SearchResult", "certify",
           "report_dir"]
