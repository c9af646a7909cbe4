"""Every example in the package's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import bioanon

MODULES = sorted(m.name for m in pkgutil.walk_packages(bioanon.__path__, "bioanon.")
                 if not m.name.endswith("__main__"))  # importing it runs the command line


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # a module of an extra that is not installed
        pytest.skip(f"{name} needs an extra: {exc}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
