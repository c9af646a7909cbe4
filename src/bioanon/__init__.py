"""bioanon: release biometric datasets with the sensitive attribute hidden and utility kept.

The library is the product; the ``bioanon`` command line sits on top of it.

>>> from bioanon import FeatureTable, SelectiveMeanAnonymizer, evaluate
"""

__version__ = "0.1.0"

from . import progress as _progress  # noqa: E402,F401  (the bioanon logger, silent)
from .anonymize import SelectiveMeanAnonymizer  # noqa: E402
from .errors import BioanonError  # noqa: E402
from .evaluation import evaluate  # noqa: E402
from .table import FeatureTable  # noqa: E402

__all__ = ["BioanonError", "FeatureTable", "SelectiveMeanAnonymizer", "__version__", "evaluate"]
