"""bioanon: release biometric datasets with the sensitive attribute hidden and utility kept.

The library is the product; the ``bioanon`` command line sits on top of it.

>>> from bioanon import FeatureTable, SelectiveMeanAnonymizer, evaluate

``evaluate`` is imported on first use (the evaluation stack imports the anonymizers, the
attacks and the report; importing it here would make the package import itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import progress as _progress  # noqa: F401  (the bioanon logger, silent)
from ._version import __version__
from .anonymize import SelectiveMeanAnonymizer
from .errors import BioanonError
from .table import FeatureTable

if TYPE_CHECKING:
    from .evaluation import evaluate


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'bioanon' has no attribute {name!r}")


__all__ = ["BioanonError", "FeatureTable", "SelectiveMeanAnonymizer", "__version__", "evaluate"]
