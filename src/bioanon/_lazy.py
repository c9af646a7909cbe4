"""Names a package exports but imports only when first used (PEP 562).

A package lists each lazily imported name with the submodule holding it; ``lazy_getattr``
gives the module-level ``__getattr__`` that imports that submodule on first access. Start-up
stays cheap (``bioanon --help`` imports no SciPy, scikit-learn or dask) while
``from bioanon.attack import run_panel`` works as usual.

Examples
--------
>>> getter = lazy_getattr("json", {"dumps": ""})
>>> getter("dumps")([1])
'[1]'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``where[name]`` is the submodule (relative, without
    its leading dot; ``""`` for the package itself) that defines ``name``."""

    def __getattr__(name: str) -> Any:
        if name in where:
            module = where[name]
            target = importlib.import_module(f".{module}", package) if module else \
                importlib.import_module(package)
            return getattr(target, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
