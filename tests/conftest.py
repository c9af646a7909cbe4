"""Shared fixtures: the real datasets (from $BIOANON_DATA) and small synthetic tables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

REPO = Path(__file__).resolve().parents[1]


def _data_home() -> Path:
    return Path(os.environ.get("BIOANON_DATA") or REPO.parent / "shared" / "datasets")


@pytest.fixture(scope="session")
def data_home() -> Path:
    """Folder holding the real datasets (fsdd/, sp_sw_har/, yale_faces/)."""
    home = _data_home()
    if not (home / "fsdd").is_dir():
        pytest.skip(f"real datasets not found under {home}; set BIOANON_DATA")
    return home


@pytest.fixture(scope="session")
def fsdd_table(data_home: Path) -> FeatureTable:
    """FSDD as 400 MFCC features (all 3,000 recordings; about 2 s to extract)."""
    from bioanon.datasets.fsdd import load_fsdd

    return load_fsdd(data_home)


@pytest.fixture()
def small_table() -> FeatureTable:
    """A small synthetic table: 8 identities × 30 records × 32 features."""
    return make_biometric(n_identities=8, records_per_identity=30, n_features=32,
                          random_state=1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow (the longest: the demo, the tours, the searches of a few hundred
    records run end to end) run first, otherwise in collection order: under pytest-xdist
    (``make test``) the longest start at once and the others fill the remaining workers,
    instead of one long test running alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session", autouse=True)
def _one_click_group_per_app() -> Iterator[None]:
    """``CliRunner().invoke(app, ...)`` builds the click group of ``app`` anew for each
    call (every command's options from their signatures: about 50 ms, and the suite invokes
    the command line thousands of times). The group of bioanon's app is built once per set
    of registered commands instead, as a ``bioanon`` process builds it once: its commands
    are made to be looked up again (``bioanon.cli.logs``' additions are idempotent) and
    every option's value and callback is read at invocation. Any other app (a test's own)
    is built anew, as before."""
    import typer.testing

    from bioanon.cli.app import app as bioanon_app

    real = typer.testing._get_command
    built: list[tuple[tuple[Any, ...], Any]] = []

    def cached(app: Any) -> Any:
        if app is not bioanon_app:
            return real(app)
        now = (app.registered_callback, *app.registered_commands, *app.registered_groups)
        for seen, group in built:  # the same objects, not equal ones
            if len(seen) == len(now) and all(a is b for a, b in zip(seen, now, strict=True)):
                return group
        group = real(app)
        built.append((now, group))
        return group

    patch = pytest.MonkeyPatch()
    patch.setattr(typer.testing, "_get_command", cached)
    yield
    patch.undo()


@pytest.fixture(scope="session", autouse=True)
def _param_names_once() -> Iterator[None]:
    """scikit-learn reads an estimator's parameter names from its constructor's signature
    (``BaseEstimator._get_param_names``: :func:`inspect.signature`) at every ``get_params``,
    ``set_params`` and ``clone``, and a random forest calls them for each of its trees: a
    few milliseconds a tree, about half of a small table's forest (a release test's
    profile: 5.9 s of its forests' 12.9 s). The names are a function of the
    class and its constructor alone, so they are read once per (class, constructor) here and
    handed out as a new list, as scikit-learn hands them out; a class whose signature
    scikit-learn refuses (varargs) is refused at every call, as before. Nothing else
    changes: every estimator's parameters, fits and predictions are scikit-learn's own."""
    from sklearn.base import BaseEstimator

    real = BaseEstimator.__dict__["_get_param_names"].__func__
    names: dict[tuple[Any, Any], list[str]] = {}

    def once(cls: Any) -> list[str]:
        key = (cls, cls.__init__)
        if key not in names:
            names[key] = real(cls)
        return list(names[key])

    patch = pytest.MonkeyPatch()
    patch.setattr(BaseEstimator, "_get_param_names", classmethod(once))
    yield
    patch.undo()
