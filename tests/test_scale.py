"""The dask bucketed release (bioanon.scale) on small data, and the panel sample."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import NO_ROLE
from bioanon.scale import assign_buckets, panel_sample, release_plan

pytest.importorskip("dask")

LABELS = ["identity", "gender", "expression", "environment"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,600 records × 32 features in a Parquet file of 6 row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = make_biometric(n_identities=16, records_per_identity=100, n_features=32, random_state=0)
    path = tmp_path_factory.mktemp("scale") / "in.parquet"
    pq.write_table(pa.Table.from_pandas(t.to_frame(), preserve_index=False), path,
                   row_group_size=300)
    return path


@pytest.fixture(scope="module")
def client():
    """One LocalCluster (2 single-threaded worker processes) shared by the module's tests."""
    from bioanon.scale.cluster import dask_client

    with dask_client(local=True, n_workers=2) as c:
        yield c


def _release(source: Path, out: Path, client=None, seed: int = 7, bucket_size: int = 400):
    from bioanon.scale.bucketed import bucketed_release

    released, manifest = release_plan(LABELS, "expression", ["gender"], "identity")
    anon = SelectiveMeanAnonymizer("expression", g=8, t=0.75, r_p=0.1,
                                   relevance="mutual_info")
    return bucketed_release(source, out, anon, interest="expression", label_columns=LABELS,
                            released_columns=released, manifest=manifest,
                            bucket_size=bucket_size, fit_sample=600, random_state=seed,
                            client=client, num_workers=2)


def _read(out: Path) -> pd.DataFrame:
    parts = sorted(out.glob("part-*.parquet"))
    return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)


def test_assign_buckets_stratified() -> None:
    codes = np.repeat(np.arange(3), [500, 300, 201])
    b = assign_buckets(codes, 4, np.random.default_rng(0))
    sizes = np.bincount(b)
    assert sizes.max() - sizes.min() <= 1
    for c, total in enumerate([500, 300, 201]):
        per = np.bincount(b[codes == c], minlength=4)
        assert per.max() - per.min() <= 1 and per.sum() == total


def test_bucketed_release_keeps_counts_roles_manifest(source: Path, tmp_path: Path) -> None:
    orig = pd.read_parquet(source)
    res = _release(source, tmp_path / "out")
    df = _read(tmp_path / "out")
    assert len(df) == len(orig) == res.n_records
    assert res.n_buckets == 4 and res.bucket_sizes == (400, 400)
    # class counts of every released label column kept; unnamed labels dropped
    assert list(df.columns[:2]) == ["gender", "expression"]  # input order
    assert "identity" not in df and "environment" not in df
    for col in ("expression", "gender"):
        assert (df[col].value_counts().sort_index()
                == orig[col].value_counts().sort_index()).all()
    # features changed, finite, float32; the order is shuffled
    feats = [c for c in orig.columns if c not in LABELS]
    assert list(df.columns[2:]) == feats and (df[feats].dtypes == np.float32).all()
    assert not np.allclose(df[feats].to_numpy(), orig[feats].to_numpy())
    manifest = json.loads((tmp_path / "out.manifest.json").read_text())
    # the manifest's one ``columns`` shape (as in memory): label columns, role, released
    roles = {c["name"]: c["role"] for c in manifest["columns"]}
    assert roles["expression"] == "interest" and roles["gender"] == "additional"
    assert roles["identity"] == "sensitive" and roles["environment"] == NO_ROLE
    assert {c["name"] for c in manifest["columns"] if c["released"]} == {"expression", "gender"}
    assert set(manifest["dropped"]) == {"identity", "environment"}
    assert manifest["features"]["n"] == len(feats) == manifest["output"]["n_features"]
    assert manifest["input"]["n_records"] == len(orig)
    assert manifest["scale"]["n_buckets"] == 4
    assert manifest["scale"]["fit_sample_records"] == 600
    assert manifest["output"]["n_records"] == len(orig)
    text = (tmp_path / "out.manifest.json").read_text()
    assert "random_state" not in text and "seed" not in text
    # nothing left behind: no spill, no temporary folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "out.manifest.json"]
    from bioanon.release_unit import verify_release

    assert verify_release(tmp_path / "out")  # the manifest names the parts' SHA-256
    # the release folder and its parts get the umask's modes (not mkdtemp's 0700)
    from bioanon.io import dir_mode, file_mode

    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == dir_mode()
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").iterdir()} == {
        file_mode()}


def test_bucketed_release_sets_stay_in_bucket(source: Path, tmp_path: Path) -> None:
    """Each release row is a mix of its bucket's records: per-bucket means are kept."""
    res = _release(source, tmp_path / "out", bucket_size=1600)
    assert res.n_buckets == 1
    orig = pd.read_parquet(source)
    feats = [c for c in orig.columns if c not in LABELS]
    # one bucket: every record is one set member g times over in expectation, so the column
    # means move far less than a record's spread
    diff = np.abs(_read(tmp_path / "out")[feats].mean() - orig[feats].mean())
    assert (diff < 0.2 * orig[feats].std()).all()


def test_local_cluster_equals_threads(source: Path, tmp_path: Path, client) -> None:
    _release(source, tmp_path / "threads")
    _release(source, tmp_path / "cluster", client=client)
    a, b = _read(tmp_path / "threads"), _read(tmp_path / "cluster")
    pd.testing.assert_frame_equal(a, b)
    c = (_release(source, tmp_path / "other", seed=8), _read(tmp_path / "other"))[1]
    assert not np.allclose(a.iloc[:, 2:].to_numpy(), c.iloc[:, 2:].to_numpy())


def test_bucketed_release_refuses_existing_output(source: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(BioanonError, match="already exists"):
        _release(source, tmp_path / "out")


def test_cli_dask_path(source: Path, tmp_path: Path, client) -> None:
    from typer.testing import CliRunner

    from bioanon.cli import app

    out = tmp_path / "rel"
    args = ["anonymize", str(source), "-o", str(out), "--interest", "expression",
            "--sensitive", "identity", "--label", "gender", "--label", "environment",
            "--g", "8", "--t", "0.75", "--rp", "0.1", "--relevance", "mutual_info",
            "--bucket-size", "800", "--fit-sample", "500", "--seed", "1",
            "--scheduler", client.scheduler.address]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    df = _read(out)
    assert len(df) == 1600 and list(df.columns[:1]) == ["expression"]
    manifest = json.loads((tmp_path / "rel.manifest.json").read_text())
    assert manifest["method"] == "selective-mean" and manifest["scale"]["n_buckets"] == 2
    # bad input: one line, exit 2, nothing written
    r = CliRunner().invoke(app, [*args[:3], str(tmp_path / "x.csv"), *args[4:]])
    assert r.exit_code == 2 and "folder of Parquet parts" in r.output
    assert not (tmp_path / "x.csv").exists()
    noise = [*args[:3], str(tmp_path / "y"), *args[4:12], *args[20:], "--method", "noise",
             "--sigma", "1"]
    r = CliRunner().invoke(app, noise)
    assert r.exit_code == 2 and "cannot run bucket by bucket" in r.output


def test_panel_sample_bounds_and_strata() -> None:
    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(300), rng.integers(5, 60, 300))
    p = np.where(rng.random(ids.size) < 0.25, "a", "b")
    labels = pd.DataFrame({"id": ids, "p": p})
    s = panel_sample(labels, "id", "p", max_records=3000, max_identities=100, random_state=1)
    assert s.sampled and s.n_identities == 100 and s.n_records <= 3000
    assert s.total_records == ids.size and s.total_identities == 300
    chosen = labels.iloc[s.index]
    assert chosen["id"].nunique() == 100 and np.unique(s.index).size == s.index.size
    # each identity keeps its interest mix (within one record)
    full = labels[labels["id"].isin(chosen["id"].unique())].groupby("id")["p"]
    got = chosen.groupby("id")["p"]
    share_full = full.apply(lambda v: (v == "a").mean())
    counts = got.size()
    share_got = got.apply(lambda v: (v == "a").mean())
    assert (np.abs(share_got - share_full) <= 1.0 / counts + 1e-9).all()
    assert s.describe() == {"sampled": True, "n_records": s.n_records, "n_identities": 100,
                            "total_records": ids.size, "total_identities": 300}
    # a small table is kept whole
    whole = panel_sample(labels, "id", "p", max_records=10**6, max_identities=None)
    assert not whole.sampled and whole.n_records == ids.size
    with pytest.raises(BioanonError, match="max_records"):
        panel_sample(labels, "id", max_records=1)


def test_bucketed_mixing_in_memory() -> None:
    """The in-memory bucketed rule: every donor comes from the record's own bucket."""
    from bioanon.scale import BucketedMixing, n_buckets_for

    t = make_biometric(n_identities=10, records_per_identity=60, n_features=32, random_state=1)
    y = t.labels["expression"].to_numpy()
    n = y.size
    # the buckets the estimator will draw (same seed derivation), written into feature 0
    buckets = assign_buckets(y, n_buckets_for(n, 200),
                             np.random.default_rng(np.random.SeedSequence(3).spawn(2)[0]))
    X = t.X.copy()
    X[:, 0] = buckets
    inner = SelectiveMeanAnonymizer("expression", g=4, t=0.5, r_p=0.0, include_self=False,
                                    relevance="mutual_info")
    a = BucketedMixing(inner, "expression", bucket_size=200, random_state=3).fit_transform(
        X, t.labels)
    # a released record is the mean of 4 donors: feature 0 equals its bucket iff every donor
    # shares its bucket
    np.testing.assert_allclose(a[:, 0], buckets, atol=1e-6)
    assert not np.allclose(a[:, 1:], X[:, 1:])
    b = BucketedMixing(inner, "expression", bucket_size=200, random_state=3).fit_transform(
        X, t.labels)
    np.testing.assert_array_equal(a, b)
    whole = inner.fit(X, t.labels).transform(X, t.labels)  # whole-class sets cross buckets
    assert not np.allclose(whole[:, 0], buckets, atol=1e-6)


def test_the_variance_preserving_mix_runs_bucket_by_bucket(source: Path, tmp_path: Path) -> None:
    """vp-mix declares itself bucketable: each bucket keeps its class means."""
    from bioanon.anonymize.vp_mix import VarianceMixAnonymizer
    from bioanon.scale.bucketed import bucketed_release

    released, manifest = release_plan(LABELS, "expression", ["gender"], "identity")
    res = bucketed_release(source, tmp_path / "vp", VarianceMixAnonymizer("expression", g=4),
                           interest="expression", label_columns=LABELS,
                           released_columns=released, manifest=manifest, bucket_size=400,
                           fit_sample=600, random_state=3, client=None, num_workers=1)
    orig = pd.read_parquet(source)
    df = _read(tmp_path / "vp")
    assert len(df) == len(orig) == res.n_records and "identity" not in df
    feats = [c for c in orig.columns if c not in LABELS]
    # class means are kept (each bucket keeps its own; the buckets are stratified)
    m_orig = orig.groupby("expression")[feats].mean().to_numpy()
    m_rel = df.groupby("expression")[feats].mean().to_numpy()
    assert np.abs(m_orig - m_rel).max() < 0.35 * orig[feats].to_numpy().std()
    assert not np.allclose(np.sort(df[feats].to_numpy(), 0), np.sort(orig[feats].to_numpy(), 0))


@pytest.mark.parametrize("on_cluster", [False, True])
def test_bucketed_release_reports_progress(source: Path, tmp_path: Path, on_cluster: bool,
                                          request: pytest.FixtureRequest) -> None:
    """Every stage reports; the bucket stage counts up to the number of buckets."""
    from bioanon.scale.bucketed import bucketed_release

    client = request.getfixturevalue("client") if on_cluster else None
    calls: list[tuple[int, int, str]] = []
    released, manifest = release_plan(LABELS, "expression", [], "identity")
    res = bucketed_release(source, tmp_path / "out",
                           SelectiveMeanAnonymizer("expression", g=8, t=0.75, r_p=0.0),
                           interest="expression", label_columns=LABELS,
                           released_columns=released, manifest=manifest, bucket_size=400,
                           fit_sample=600, random_state=1, client=client, num_workers=1,
                           progress=lambda done, total, text: calls.append((done, total, text)))
    stages = list(dict.fromkeys(text for _, _, text in calls))
    assert stages == ["reading the interest column", "spilling partitions by bucket",
                      "fitting on a sample of 600 records", "releasing buckets"]
    buckets = [(d, t) for d, t, text in calls if text == "releasing buckets"]
    assert buckets[-1] == (res.n_buckets, res.n_buckets) == (4, 4)
    assert [d for d, _ in buckets] == sorted(d for d, _ in buckets)


def test_local_cluster_shares_the_cores_among_worker_kernels(monkeypatch) -> None:
    from bioanon.scale.cluster import worker_threads_env

    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert worker_threads_env(2)["NUMBA_NUM_THREADS"] == "4"
    assert worker_threads_env(16)["OMP_NUM_THREADS"] == "1"  # never zero
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")  # the user's setting wins
    assert worker_threads_env(2)["NUMBA_NUM_THREADS"] == "3"


def test_cli_says_when_buckets_hold_too_few_records_per_class(source: Path,
                                                              tmp_path: Path) -> None:
    """About 400 records of each expression dealt into 16 buckets: about 25 per class and
    bucket, under 4 × g = 32; the release is written, the manifest gives the pool and a note
    says so."""
    from typer.testing import CliRunner

    from bioanon.cli import app

    def run(size: str, name: str):
        return CliRunner().invoke(app, [
            "anonymize", str(source), "-o", str(tmp_path / name), "--interest", "expression",
            "--sensitive", "identity", "--label", "gender", "--label", "environment",
            "--g", "8", "--t", "0.75", "--rp", "0", "--bucket-size", size, "--seed", "1",
            "--dask", "--workers", "1"])

    small = run("100", "small")
    assert small.exit_code == 0, small.output
    manifest = json.loads((tmp_path / "small.manifest.json").read_text())
    roles = {c["name"]: c["role"] for c in manifest["columns"]}
    assert roles["gender"] == roles["environment"] == "other label"  # as given, not released
    assert not {"gender", "environment"} & set(manifest["output"]["label_columns"])
    scale = manifest["scale"]
    fewest = scale["smallest_class_in_a_bucket"]
    assert scale["n_buckets"] == 16 and 15 < fewest < 32
    assert (f"note: a bucket holds only {fewest} records of its smallest interest class, "
            "fewer than 4 × g = 32") in small.output
    large = run("800", "large")
    assert large.exit_code == 0 and "note: a bucket holds" not in large.output


def test_nan_on_the_dask_path_is_one_line_without_worker_tracebacks(tmp_path: Path) -> None:
    """A worker's failure on bad input reaches the user as one error line (the workers' own
    logs of it are silenced), exit 2, and nothing is written."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(600, 6)).astype("float32"),
                      columns=[f"f{j}" for j in range(6)])
    df.iloc[450, 2] = np.nan
    df["p"], df["id"] = rng.integers(0, 3, 600), np.arange(600) % 10
    df.to_parquet(tmp_path / "nan.parquet")
    out = tmp_path / "rel"
    proc = subprocess.run(
        [sys.executable, "-c", "from bioanon.cli import app; app()", "anonymize",
         str(tmp_path / "nan.parquet"), "-o", str(out), "--interest", "p", "--sensitive", "id",
         "--g", "4", "--dask", "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: the features hold NaN or infinite values; clean or impute them "
                      "before releasing"]
    assert "Traceback" not in proc.stderr and "distributed.worker" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nan.parquet"]
