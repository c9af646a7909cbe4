"""The streamed DP release's engine (bioanon.scale.stream, bioanon.scale.parquet_io): its
partitions read the same from any row group, and its passes as dask reductions on a 2-worker
LocalCluster give the in-process passes' statistics to the last bit and the same parts byte
for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bioanon.anonymize.basis_model import BasisStats
from bioanon.anonymize.basis_stream import fit_stream
from bioanon.anonymize.dp_basis import DPBasisAnonymizer
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.scale.parquet_io import plan_partitions, scan_groups, scan_partitions
from bioanon.scale.stream import DaskPartitions, Partitions, stream_to_parts
from bioanon.table import FeatureTable

pytest.importorskip("distributed")

LABELS = ["expression", "gender"]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, list[str]]:
    """A folder of 2 Parquet files (700 and 560 records × 32, row groups of 300 and 170),
    and public records of other people (not in the folder)."""
    t = make_biometric(n_identities=14, records_per_identity=100, n_features=32,
                       random_state=3)
    frame = t.to_frame()
    folder = tmp_path_factory.mktemp("stream") / "in.parquet"
    folder.mkdir()
    for i, (rows, group) in enumerate([(np.arange(0, 700), 300),
                                       (np.arange(700, 1260), 170)]):
        pq.write_table(pa.Table.from_pandas(frame.iloc[rows], preserve_index=False),
                       folder / f"part-{i}.parquet", row_group_size=group)
    return folder, t.X[1260:], list(t.feature_names or [])


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """One LocalCluster (2 single-threaded worker processes) for the module's tests."""
    from bioanon.scale.cluster import dask_client

    with dask_client(local=True, n_workers=2) as c:
        yield c


class Recorded:
    """A source that keeps every term its passes return (what the client folds)."""

    def __init__(self, inner: Partitions) -> None:
        self.inner, self.terms = inner, []  # type: list[Any]

    def map(self, fn: Any) -> Iterator[Any]:
        for term in self.inner.map(fn):
            self.terms.append(term)
            yield term


def _bits(x: Any) -> list[bytes]:
    """A term or a model as bytes (arrays with their dtype and shape)."""
    if isinstance(x, BasisStats):
        return [b for f in ("counts", "sums", "moments", "rsums", "rsq")
                for b in _bits(getattr(x, f))]
    if isinstance(x, dict):
        return [b for k in sorted(x) for b in [k.encode(), *_bits(x[k])]]
    if isinstance(x, np.ndarray):
        return [str(x.dtype).encode(), str(x.shape).encode(), x.tobytes()]
    return [repr(x).encode()]


def test_a_partition_reads_the_same_from_any_row_group(
        data: tuple[Path, np.ndarray, list[str]]) -> None:
    folder, _, features = data
    plan = plan_partitions(folder, 250)
    assert [p.n_records for p in plan] == [250, 250, 200, 250, 250, 60]
    assert [p.row_group for p in plan] == [0, 0, 1, 0, 1, 2]  # 170-record groups in file 2
    whole = [x for run in scan_groups(plan, by="file")
             for x in scan_partitions(run, LABELS, features, batch_rows=64)]
    runs = scan_groups(plan)
    assert [[p.index for p in r] for r in runs] == [[0, 1], [2], [3], [4], [5]]
    alone = [x for run in runs for x in scan_partitions(run, LABELS, features, batch_rows=64)]
    frame = pd.concat([pd.read_parquet(f) for f in sorted(folder.iterdir())],
                      ignore_index=True)
    assert np.array_equal(np.concatenate([X for X, _ in whole]),
                          frame[features].to_numpy(np.float32))
    for (xa, la), (xb, lb) in zip(whole, alone, strict=True):
        assert xa.tobytes() == xb.tobytes()
        pd.testing.assert_frame_equal(la, lb)


@pytest.mark.parametrize("params", [
    {},  # dp-lda from the noisy full-d class sums (a counts pass), class covariances
    {"basis": "dp-pca", "covariance": "pooled", "residual": "diag"},  # the d × d moment pass
    {"basis": "public", "rank": 6, "residual": "class-diag"},
])
def test_dask_passes_give_the_in_process_statistics_to_the_last_bit(
        data: tuple[Path, np.ndarray, list[str]], client: Any, params: dict[str, Any]) -> None:
    folder, public, features = data
    classes = sorted(pd.read_parquet(folder, columns=["expression"])["expression"].unique())
    models, terms = [], []
    for parts in (Partitions(folder, LABELS, features, 250, public),
                  DaskPartitions(folder, LABELS, features, client, 250, public)):
        est = DPBasisAnonymizer("expression", epsilon=3.0, public_data=public,
                                random_state=11, **params)
        rec = Recorded(parts)
        fitted = fit_stream(est, rec, len(features), classes)
        models.append(_bits(fitted.model) + _bits(fitted.P) + _bits(fitted.mid))
        terms.append([b for t in rec.terms for b in _bits(t)])
        assert parts.passes == (3 if params.get("basis") == "public" else 4)
    assert len(terms[0]) > 30 and terms[0] == terms[1]  # every partition's sums, every pass
    assert models[0] == models[1]  # the noisy model: the same sums, the same noise


def test_dask_release_writes_the_same_parts_byte_for_byte(
        data: tuple[Path, np.ndarray, list[str]], client: Any, tmp_path: Path) -> None:
    folder, public, features = data
    classes = sorted(pd.read_parquet(folder, columns=["expression"])["expression"].unique())
    results = []
    for name, parts in [("a", Partitions(folder, LABELS, features, 250, public)),
                        ("b", DaskPartitions(folder, LABELS, features, client, 250, public))]:
        (tmp_path / name).mkdir()
        est = DPBasisAnonymizer("expression", epsilon=3.0, public_data=public)
        results.append(stream_to_parts(est, parts, classes, tmp_path / name, ["expression"],
                                       "expression", seed=5))
    a, b = results
    assert (a.n_records, a.n_parts, a.passes) == (b.n_records, b.n_parts, b.passes) == (
        1260, 6, 5)
    assert a.sha256 == b.sha256 and a.class_counts == b.class_counts
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir()) and len(names) == 6
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes()
    # the dask source's passes ran on the workers (2 processes, not this one)
    pids = set(DaskPartitions(folder, LABELS, features, client, 250).map(
        lambda i, X, lab: os.getpid()))
    assert len(pids) == 2 and os.getpid() not in pids
    # another seed, another release
    (tmp_path / "c").mkdir()
    est = DPBasisAnonymizer("expression", epsilon=3.0, public_data=public)
    c = stream_to_parts(est, DaskPartitions(folder, LABELS, features, client, 250, public),
                        classes, tmp_path / "c", ["expression"], "expression", seed=6)
    assert c.sha256 != a.sha256


def test_a_worker_refuses_bad_partitions_in_one_line(
        data: tuple[Path, np.ndarray, list[str]], client: Any, tmp_path: Path) -> None:
    folder, _, features = data
    frame = pd.read_parquet(folder / "part-1.parquet")
    leaked = frame[features].to_numpy(np.float32)[[400]]  # a record of the last partitions
    parts = DaskPartitions(folder, LABELS, features, client, 250, public=leaked)
    with pytest.raises(BioanonError, match="share records with the input") as err:
        list(parts.map(lambda i, X, lab: X.shape[0]))
    assert err.value.parameter == "public"
    bad = tmp_path / "nan.parquet"
    frame.loc[333, features[4]] = np.nan
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), bad)
    with pytest.raises(BioanonError, match="NaN or infinite"):
        list(DaskPartitions(bad, LABELS, features, client, 250).map(lambda i, X, lab: 0))


def test_the_stream_model_and_the_writer_show_no_secret(
        data: tuple[Path, np.ndarray, list[str]]) -> None:
    folder, public, features = data
    est = DPBasisAnonymizer("expression", epsilon=3.0, public_data=public, random_state=424242)
    classes = sorted(pd.read_parquet(folder, columns=["expression"])["expression"].unique())
    fitted = fit_stream(est, Partitions(folder, LABELS, features, 250, public), 32, classes)
    assert repr(fitted) == "StreamModel(<secret>)"
    assert "424242" not in repr(fitted) and "entropy" not in repr(fitted)


def test_without_dask_the_streamed_release_says_so_in_one_line_before_any_work(
        data: tuple[Path, np.ndarray, list[str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from bioanon.cli import app

    folder, public, features = data
    pub = tmp_path / "pub.parquet"
    FeatureTable(public, pd.DataFrame({"expression": np.zeros(len(public), int)}),
                 features).write(pub)
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    res = CliRunner().invoke(app, [
        "release", str(folder), "-o", str(tmp_path / "rel"), "--interest", "expression",
        "--sensitive", "identity", "--dask", "--epsilon", "1", "--public-data", str(pub)])
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and "'scale' extra" in lines[0] and "stage 1" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pub.parquet"]



def test_the_column_check_reads_only_the_head_of_the_input(tmp_path):
    """read_head reads the first records and stops: its Arrow memory stays at about one row
    group, not the table (a 10M × 256 input once cost the search 15 GiB, read whole by a
    dataset scanner's read-ahead). Measured in a fresh process: Arrow's pool peak."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40_000, 64)).astype(np.float32)  # 10 MB, 40 row groups
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({f"f{j}": X[:, j] for j in range(64)}), path,
                   row_group_size=1_000)
    code = ("import sys, json, numpy as np, pyarrow as pa; from pathlib import Path; "
            "from bioanon.scale.run import read_head; "
            "h = read_head(Path(sys.argv[1]), [f'f{j}' for j in range(64)], rows=500); "
            "print(json.dumps([pa.default_memory_pool().max_memory(), h.shape, "
            "float(h.sum())]))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    peak, shape, total = json.loads(out.stdout)
    assert shape == [500, 64] and np.isclose(total, float(X[:500].sum(dtype=np.float64)),
                                             rtol=1e-4)
    assert peak < X.nbytes / 8, f"read_head held {peak} bytes of a {X.nbytes}-byte table"
