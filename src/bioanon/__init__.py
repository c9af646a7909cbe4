"""bioanon: release biometric datasets with the sensitive attribute hidden and utility kept.

The library is the product; the ``bioanon`` command line sits on top of it. The front door is
the certified path, one call (what ``bioanon release`` runs):

>>> from bioanon import CertifiedRelease, NotCertified, certify

``certify(table, roles)`` searches, confirms and releases, or raises ``NotCertified``. The
low-level estimators and the judge are for those who know they are not certified:

>>> from bioanon import FeatureTable, SelectiveMeanAnonymizer, evaluate

Every name but the version and the error is imported on first use, only to keep ``import
bioanon`` (and so ``bioanon --help``) light: the table brings pandas, the methods
scikit-learn and SciPy, the evaluation stack scikit-learn's models and the report's
matplotlib; no module of the package imports the package root, so this is no import circle
(``tests/test_import_graph.py`` checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import progress as _progress  # noqa: F401  (the bioanon logger, silent)
from ._version import __version__
from .errors import BioanonError

if TYPE_CHECKING:
    from .anonymize import SelectiveMeanAnonymizer
    from .auditing import audit
    from .certification import CertifiedRelease, NotCertified, certify
    from .release import Roles
    from .report.build import evaluate
    from .table import FeatureTable

from ._lazy import lazy_getattr

#: lazily imported names and the module holding each
_LAZY = {"evaluate": "report.build", "audit": "auditing", "certify": "certification",
         "CertifiedRelease": "certification",
         "NotCertified": "certification", "Roles": "release",
         "FeatureTable": "table", "SelectiveMeanAnonymizer": "anonymize"}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["BioanonError", "audit", "CertifiedRelease", "FeatureTable", "NotCertified", "Roles",
           "SelectiveMeanAnonymizer", "__version__", "certify", "evaluate"]
