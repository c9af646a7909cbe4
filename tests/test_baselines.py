"""Ad-hoc baselines: image ops against direct computations, noise scales, sensor methods,
and the method registry / CLI for the new methods."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from typer.testing import CliRunner

from bioanon.anonymize import (
    BlurAnonymizer,
    DPPixAnonymizer,
    EyeBandMaskAnonymizer,
    GaussianNoiseAnonymizer,
    KeepChannelsAnonymizer,
    LaplaceAnonymizer,
    MotionExtractAnonymizer,
    PixelateAnonymizer,
)
from bioanon.anonymize.registry import build_method, methods
from bioanon.cli import app
from bioanon.cli.common import cli_message
from bioanon.errors import BioanonError
from bioanon.metrics import is_k_anonymous
from bioanon.table import FeatureTable


def images(n: int = 3, h: int = 6, w: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 255, size=(n, h * w))


def test_pixelate_block_means_including_partial_edges() -> None:
    X = images()
    out = PixelateAnonymizer(block=4, image_shape=(6, 5)).fit_transform(X).reshape(3, 6, 5)
    imgs = X.reshape(3, 6, 5)
    for r0 in (0, 4):
        for c0 in (0, 4):
            cell = imgs[:, r0:r0 + 4, c0:c0 + 4]
            np.testing.assert_allclose(out[:, r0:r0 + 4, c0:c0 + 4],
                                       np.broadcast_to(cell.mean(axis=(1, 2))[:, None, None],
                                                       cell.shape), rtol=1e-5)
    with pytest.raises(BioanonError, match="release the input"):  # block=1 would be a no-op
        PixelateAnonymizer(block=1, image_shape=(6, 5)).fit_transform(X)


def test_blur_smooths_and_keeps_mean_for_constant_images() -> None:
    X = images()
    out = BlurAnonymizer(sigma=1.5, image_shape="6x5").fit_transform(X)
    assert out.std(axis=1).mean() < X.std(axis=1).mean()
    const = np.full((2, 30), 7.0)
    np.testing.assert_allclose(BlurAnonymizer(sigma=2, image_shape=(6, 5)).fit_transform(const),
                               const, rtol=1e-5)


def test_image_shape_from_table_meta_and_errors() -> None:
    t = FeatureTable(images(), pd.DataFrame({"id": [0, 1, 2]}), meta={"image_shape": [6, 5]})
    out = PixelateAnonymizer(block=2).fit_transform(t)
    assert isinstance(out, FeatureTable) and out.X.shape == (3, 30)
    with pytest.raises(BioanonError, match=r"image_shape=\(h, w\)") as info:
        PixelateAnonymizer(block=2).fit(images())
    assert "--param image_shape=HxW" in cli_message(info.value)  # the command line's words
    with pytest.raises(BioanonError, match="30 features"):
        PixelateAnonymizer(block=2, image_shape=(5, 5)).fit(images())
    with pytest.raises(BioanonError, match="block=0 is out of range"):
        PixelateAnonymizer(block=0, image_shape=(6, 5)).fit(images())


def test_eye_band_mask_covers_only_the_band() -> None:
    X = images()
    out = EyeBandMaskAnonymizer(band=(0.5, 0.84), fill=0.0, image_shape=(6, 5)).fit_transform(X)
    imgs, res = X.reshape(3, 6, 5), out.reshape(3, 6, 5)
    assert (res[:, 3:6] == 0).all()
    np.testing.assert_allclose(res[:, :3], imgs[:, :3], rtol=1e-5)
    with pytest.raises(BioanonError, match="top < bottom"):
        EyeBandMaskAnonymizer(band=(0.6, 0.2), image_shape=(6, 5)).fit_transform(X)


def test_dp_pix_noise_scale_follows_sensitivity() -> None:
    X = np.full((4000, 16), 100.0)  # 4x4 images, one 4x4 cell each
    anon = DPPixAnonymizer(block=4, epsilon=2.0, m=4, value_range=255.0, image_shape=(4, 4),
                           random_state=0)
    out = anon.fit_transform(X)
    cells = out[:, 0]
    assert np.allclose(out, cells[:, None])  # one value per cell
    b = 255.0 * 4 / (16 * 2.0)  # Laplace scale: range·m/(b²·ε)
    assert abs(np.mean(np.abs(cells - 100.0)) - b) < 0.1 * b  # E|Laplace(b)| = b


def test_gaussian_noise_scales() -> None:
    X = np.zeros((5000, 3))
    X[:, 1] = np.random.default_rng(0).normal(scale=10, size=5000)
    out = GaussianNoiseAnonymizer(sigma=0.5, scale="std", random_state=1).fit_transform(X)
    added = out - X
    assert abs(added[:, 1].std() - 5.0) < 0.3
    assert np.allclose(added[:, 0], 0)  # a constant feature has no spread to scale
    a = GaussianNoiseAnonymizer(sigma=1.0, random_state=None).fit_transform(X)
    b = GaussianNoiseAnonymizer(sigma=1.0, random_state=None).fit_transform(X)
    assert not np.allclose(a, b)  # fresh entropy each time


def test_laplace_record_budget_uses_l1_sensitivity() -> None:
    X = np.random.default_rng(0).uniform(0, 1, size=(20000, 4))
    rec = LaplaceAnonymizer(epsilon=2.0, bounds=(0, 1), random_state=0).fit_transform(X)
    feat = LaplaceAnonymizer(epsilon=2.0, bounds=(0, 1), budget="feature",
                             random_state=0).fit_transform(X)
    # record budget: scale = 4·1/2 = 2; feature budget: scale 1/2
    assert abs(np.mean(np.abs(rec - X)) - 2.0) < 0.1
    assert abs(np.mean(np.abs(feat - X)) - 0.5) < 0.05
    with pytest.raises(BioanonError, match="epsilon"):
        LaplaceAnonymizer(epsilon=0).fit(X)


def test_keep_channels_by_name_and_index() -> None:
    names = [f"{c}_t{t}" for t in range(3) for c in ("ax", "ay", "gx")]
    t = FeatureTable(np.arange(18.0).reshape(2, 9), pd.DataFrame({"s": [0, 1]}), names)
    out = KeepChannelsAnonymizer(channels=["gx"]).fit_transform(t).X
    kept = [i for i, n in enumerate(names) if n.startswith("gx")]
    assert np.array_equal(out[:, kept], t.X[:, kept])
    assert (np.delete(out, kept, axis=1) == 0).all()
    by_index = KeepChannelsAnonymizer(channels=[2], n_channels=3).fit_transform(t.X)
    assert np.array_equal(by_index, out)
    with pytest.raises(BioanonError, match="n_channels"):
        KeepChannelsAnonymizer(channels=[0]).fit(np.zeros((2, 9)))
    with pytest.raises(BioanonError, match="not found"):
        KeepChannelsAnonymizer(channels=["mag"]).fit(t)


def test_motion_extraction_removes_static_level() -> None:
    rng = np.random.default_rng(0)
    series = rng.normal(size=(4, 10, 3))
    X = series.reshape(4, -1)
    out = MotionExtractAnonymizer(n_channels=3).fit_transform(X)
    shifted = MotionExtractAnonymizer(n_channels=3).fit_transform(X + np.tile([5.0, -2, 1], 10))
    np.testing.assert_allclose(out, shifted, atol=1e-4)  # a constant offset disappears
    np.testing.assert_allclose(out.reshape(4, 10, 3)[:, 1:], np.diff(series, axis=1), atol=1e-5)


def test_clone_and_public_params_without_secrets() -> None:
    for est in (DPPixAnonymizer(block=2, image_shape=(4, 4), random_state=5),
                EyeBandMaskAnonymizer(image_shape=(4, 4)),
                GaussianNoiseAnonymizer(sigma=1, random_state=3)):
        c = clone(est)
        params = c.public_params()
        assert "random_state" not in params
        json.dumps(params)


@pytest.mark.parametrize("method,params", [
    ("ksame", {"k": "3"}), ("ksame-select", {"k": "3", "interest": "expression"}),
    ("cluster-mix", {"k": "3", "clusterer": "kmember", "delta": "0.05"}),
    ("noise", {"sigma": "0.5"}), ("laplace", {"epsilon": "5.0", "bounds": "-10,10"}),
    ("blur", {"sigma": "1.0", "image_shape": "8x4"}),
    ("pixelate", {"block": "2", "image_shape": "8x4"}),
    ("mask", {"image_shape": "8x4", "band": "0.25,0.5"}),
    ("dp-pix", {"block": "2", "epsilon": "1.0", "image_shape": "8x4", "m": "2"}),
    ("keep", {"channels": "0,1", "n_channels": "4"}),
    ("motion-extract", {"n_channels": "4"}),
])
def test_registry_builds_every_method(small_table: FeatureTable, method: str,
                                      params: dict) -> None:
    assert method in methods()
    anon = build_method(method, params, sensitive="identity", random_state=0)
    out = np.asarray(anon.fit_transform(small_table.X, small_table.labels))
    assert out.shape == small_table.X.shape
    assert np.isfinite(out).all()
    if method.startswith("ksame") or method == "cluster-mix":
        assert is_k_anonymous(out, 3)


def test_registry_errors() -> None:
    with pytest.raises(BioanonError, match="needs k"):
        build_method("ksame")
    with pytest.raises(BioanonError, match="needs interest .*add interest=COL") as info:
        build_method("ksame-select", {"k": "3"})
    assert cli_message(info.value).endswith("add --interest COL")
    with pytest.raises(BioanonError, match="channels"):
        build_method("keep")
    with pytest.raises(BioanonError, match="no parameter 'sigm'.*did you mean 'sigma'"):
        build_method("blur", {"sigma": "1", "sigm": "2"})


@pytest.mark.parametrize("method,params,message", [
    ("noise", {"sigma": "0"}, "sigma=0.0 is out of range; use a number > 0"),
    ("laplace", {"epsilon": "inf"},
     "epsilon=inf is out of range; use a number in \\[1e-06, 1000000\\]"),
    ("selective-mean", {"w": "nan"}, "w=nan is out of range; use a number >= 1"),
    ("selective-mean", {"g": "1"}, "g=1 is out of range; use an integer >= 2"),
    ("pixelate", {"block": "1"}, "block=1 is out of range; use an integer >= 2"),
    ("ksame", {"k": "1"}, "k=1 is out of range; use an integer >= 2"),
    ("mask", {"band": "0.5,0.5"}, "band=.* must be \\(top, bottom\\)"),
    ("selective-mean", {"g": "abc"}, "g='abc' is not valid; use an integer >= 2"),
])
def test_no_op_and_non_finite_settings_are_refused_before_any_work(
        method: str, params: dict, message: str) -> None:
    with pytest.raises(BioanonError, match=message) as err:
        build_method(method, params, interest="expression", sensitive="identity")
    assert "\n" not in str(err.value) and "NaN records" not in str(err.value)


def test_cli_anonymize_ksame_without_interest(tmp_path, small_table: FeatureTable) -> None:
    src = tmp_path / "in.parquet"
    small_table.drop_labels(["expression", "environment"]).write(src)
    out = tmp_path / "out.parquet"
    res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(out), "--sensitive",
                                   "identity", "--method", "ksame", "--k", "4"])
    assert res.exit_code == 0, res.output
    released = FeatureTable.read(out)
    assert "identity" not in released.labels.columns
    assert is_k_anonymous(released.X, 4, decimals=5)
    manifest = json.loads((tmp_path / "out.parquet.manifest.json").read_text())
    assert manifest["params"]["k"] == 4
    assert "cluster" not in json.dumps(manifest).replace("clusterer", "")
    bad = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(tmp_path / "b.parquet"),
                                   "--sensitive", "identity", "--method", "ksame", "--k", "1"])
    assert bad.exit_code == 2 and "k=1 is out of range; use an integer >= 2" in bad.output


def test_cli_anonymize_reads_image_shape_from_table_meta(tmp_path) -> None:
    rng = np.random.default_rng(0)
    t = FeatureTable(rng.uniform(0, 255, size=(10, 24)),
                     pd.DataFrame({"subject": np.repeat(["a", "b"], 5)}),
                     meta={"image_shape": [6, 4]})
    src = tmp_path / "faces.parquet"
    t.write(src)
    out = tmp_path / "pix.parquet"
    res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(out), "--sensitive",
                                   "subject", "--method", "pixelate", "--block", "2",
                                   "--keep-order", "--keep-sensitive"])
    assert res.exit_code == 0, res.output
    released = FeatureTable.read(out)
    assert "subject" in released.labels.columns  # --keep-sensitive kept it
    want = PixelateAnonymizer(block=2, image_shape=(6, 4)).fit_transform(t.X)
    np.testing.assert_allclose(released.X, want, rtol=1e-5)


def test_dp_pix_takes_the_value_range_from_the_table_meta():
    import pandas as pd

    from bioanon.table import FeatureTable

    X = np.full((400, 16), 0.5)
    table = FeatureTable(X, pd.DataFrame({"who": np.arange(400) % 2}),
                         meta={"image_shape": [4, 4], "value_range": 1.0})
    unit = DPPixAnonymizer(block=4, epsilon=1.0, m=1, random_state=0).fit_transform(table)
    default = DPPixAnonymizer(block=4, epsilon=1.0, m=1, image_shape=(4, 4),
                              random_state=0).fit_transform(X)
    # noise scale value_range·m/(b²ε): 1/16 for [0, 1] pixels, 255/16 by default
    assert np.std(unit.X) == pytest.approx(np.sqrt(2) / 16, rel=0.15)
    assert np.std(default) > 100 * np.std(unit.X)
