"""Shared fixtures: the real datasets (from $BIOANON_DATA) and small synthetic tables."""

from __future__ import annotations

import os
from pathlib import Path

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
    """Tests marked slow run first (otherwise in collection order): under pytest-xdist
    (``make test``) the longest start at once and the others fill the remaining workers,
    instead of one long test running alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
