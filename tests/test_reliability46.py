"""Issue 46 (reliability, round six): crashes and storms become one line before any work,
and what a newcomer meets says one thing in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import Roles

ROLES = Roles(sensitive="identity", interest="expression", identifying=["gender",
                                                                         "environment"])


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("rel46") / "t.parquet"
    make_biometric(n_identities=4, records_per_identity=12, n_features=32,
                   random_state=0).write(p)
    return p


def test_too_many_local_workers_are_refused_by_the_library_before_the_search(
        parquet: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from bioanon.certification.parquet import certify_parquet
    from bioanon.scale.cluster import max_workers

    with pytest.raises(BioanonError, match=rf"n_workers=4096 .* at most {max_workers()}"):
        certify_parquet(parquet, tmp_path / "rel", ROLES, local=True, n_workers=4096)
    assert list(tmp_path.iterdir()) == []


def test_an_inproc_address_with_no_scheduler_is_named_at_once() -> None:
    pytest.importorskip("distributed")
    from bioanon.scale.cluster import check_reachable

    for address in ("inproc://nowhere", "inproc://192.0.2.2/1/1"):
        with pytest.raises(BioanonError, match=f"dask scheduler at {address} "):
            check_reachable(address)
