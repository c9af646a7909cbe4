"""Pixel write-back and contact sheets (``bioanon preview``)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.errors import BioanonError
from bioanon.report.preview import (
    contact_sheet,
    contact_sheet_html,
    image_shape,
    pick_columns,
    preview_html,
    to_images,
    write_images,
)
from bioanon.table import FeatureTable

runner = CliRunner()


def pixel_table(n=6, h=12, w=10, seed=0) -> FeatureTable:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, h * w)).astype(np.float32)
    labels = pd.DataFrame({"person": [f"p{i % 3}" for i in range(n)],
                           "mood": [f"m{i % 2}" for i in range(n)]})
    return FeatureTable(X, labels, meta={"image_shape": [h, w]})


def test_images_round_trip_and_clip(tmp_path):
    t = pixel_table()
    imgs = to_images(t.X, (12, 10))
    assert imgs.shape == (6, 12, 10) and imgs.dtype == np.uint8
    assert np.abs(imgs / 255.0 - t.X.reshape(6, 12, 10)).max() <= 0.5 / 255 + 1e-6
    assert to_images(np.array([[-3.0, 0.5, 7.0, 1.0]]), (2, 2)).ravel().tolist() == \
        [0, 128, 255, 255]
    paths = write_images(t.X, (12, 10), tmp_path / "out", names=[f"r{i}" for i in range(6)])
    back = np.asarray(Image.open(paths[2]))
    assert back.shape == (12, 10) and np.array_equal(back, imgs[2])


def test_contact_sheet_layout():
    t = pixel_table(n=5, h=20, w=20)
    released = np.zeros_like(t.X)
    png = contact_sheet(t.X, released, (20, 20), captions=list("abcde"))
    sheet = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    h, w = sheet.shape
    assert w > 2 * h  # five columns, two rows
    # released cells are black: the lower half is much darker than the upper half
    assert sheet[h // 2:].mean() < sheet[: h // 2].mean() - 20
    snippet = contact_sheet_html(png)
    assert snippet.startswith("<figure") and "data:image/png;base64," in snippet
    with pytest.raises(BioanonError, match="same records"):
        contact_sheet(t.X, released[:3], (20, 20))


def test_image_shape_and_column_choice():
    assert image_shape({"image_shape": [12, 10]}, 120) == (12, 10)
    assert image_shape({}, 64) == (8, 8)
    with pytest.raises(BioanonError, match="not pixels"):
        image_shape({}, 50)
    labels = pd.DataFrame({"c": list("aaabbbccc")})
    cols = pick_columns(labels, 4, by="c", random_state=1)
    assert len(set(cols)) == 4 and set(labels["c"][cols[:3]]) == {"a", "b", "c"}


def test_preview_cli(tmp_path):
    t = pixel_table(n=6)
    t.write(tmp_path / "orig.parquet")
    t.with_features(1.0 - t.X).write(tmp_path / "rel.parquet")
    res = runner.invoke(app, ["preview", str(tmp_path / "orig.parquet"),
                              str(tmp_path / "rel.parquet"), "-o", str(tmp_path / "s.png"),
                              "--n", "4", "--by", "person", "--images", str(tmp_path / "img"),
                              "--html", str(tmp_path / "s.html")])
    assert res.exit_code == 0, res.output
    assert Image.open(tmp_path / "s.png").format == "PNG"
    assert len(list((tmp_path / "img").glob("*.png"))) == 6
    assert "<img" in (tmp_path / "s.html").read_text()
    shuffled = t.subset(np.array([1, 0, 2, 3, 4, 5]))
    shuffled.write(tmp_path / "shuf.parquet")
    res = runner.invoke(app, ["preview", str(tmp_path / "orig.parquet"),
                              str(tmp_path / "shuf.parquet"), "-o", str(tmp_path / "x.png")])
    assert res.exit_code == 2 and "--keep-order" in res.output
    assert not (tmp_path / "x.png").exists()


def test_preview_images_never_replace_a_users_image(tmp_path):
    t = pixel_table(n=6)
    t.write(tmp_path / "orig.parquet")
    t.with_features(1.0 - t.X).write(tmp_path / "rel.parquet")
    argv = ["preview", str(tmp_path / "orig.parquet"), str(tmp_path / "rel.parquet"), "-o",
            str(tmp_path / "s.png"), "--images", str(tmp_path / "img")]
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "record00003.png").write_bytes(b"the user's own picture")
    res = runner.invoke(app, argv)
    assert res.exit_code == 2 and not (tmp_path / "s.png").exists(), res.output
    assert "record00003.png' is a file bioanon did not write" in " ".join(res.output.split())
    assert (tmp_path / "img" / "record00003.png").read_bytes() == b"the user's own picture"
    (tmp_path / "img" / "record00003.png").unlink()
    assert runner.invoke(app, argv).exit_code == 0
    assert runner.invoke(app, argv).exit_code == 0  # its own images: written again


def test_preview_html_only_for_pixels():
    t = pixel_table(n=4)
    snippet = preview_html(t, t.X[::-1], n=3, by="person")
    assert snippet is not None and snippet.count("<img") == 1
    plain = FeatureTable(t.X, t.labels)
    assert preview_html(plain, plain.X) is None


@pytest.mark.parametrize("text", ["3x", "x4", "3x4x5", "axb", "64"])
def test_hxw_option_refuses_malformed_shapes(text):
    from bioanon.cli.options import parse_hxw

    with pytest.raises(BioanonError, match=f"--shape '{text}' must look like HxW"):
        parse_hxw(text, "--shape")


def test_hxw_option_reads_both_flags_alike():
    from bioanon.cli.options import parse_hxw

    assert parse_hxw("64X48", "--image-shape") == parse_hxw("64x48", "--shape") == (64, 48)
    assert parse_hxw(None, "--shape") is None


def test_preview_of_grey_levels_0_to_255_is_not_drawn_white(tmp_path):
    """Pixels stored as 8-bit grey levels (0-255, another tool's pixel table, without
    ``value_range``) were clipped to [0, 1]: every image white wherever a pixel passed 1, the
    sheet and the released images blank, exit 0. They are drawn on their own scale."""
    rng = np.random.default_rng(0)
    levels = rng.integers(0, 256, (6, 16)).astype(np.float64)
    who = pd.DataFrame({"who": list("ab" * 3)})
    for name in ("a.parquet", "b.parquet"):
        FeatureTable(levels, who, meta={"image_shape": [4, 4]}).write(tmp_path / name)
    res = runner.invoke(app, ["preview", str(tmp_path / "a.parquet"),
                              str(tmp_path / "b.parquet"), "-o", str(tmp_path / "s.png"),
                              "--images", str(tmp_path / "imgs")])
    assert res.exit_code == 0, res.output
    drawn = np.asarray(Image.open(tmp_path / "imgs" / "record00000.png")).astype(int)
    assert np.abs(drawn - levels[0].reshape(4, 4)).max() <= 1
