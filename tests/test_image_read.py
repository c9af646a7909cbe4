"""Reading a photo: a file too large for Pillow to trust is one clear refusal."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from PIL import Image

from bioanon.errors import BioanonError
from bioanon.features.image import read_gray


@pytest.mark.parametrize("side", [12, 20])  # Pillow warns above the limit, fails above twice
def test_an_image_past_pillows_limit_is_refused_in_one_line(tmp_path, monkeypatch, side):
    path = tmp_path / "big.png"
    Image.fromarray(np.zeros((side, side), np.uint8)).save(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Pillow's own warning text never reaches the user
        with pytest.raises(BioanonError, match=r"cannot read image .*big.png': it has more "
                                               r"than 100 pixels.*downscale it"):
            read_gray(path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)
    assert read_gray(path).shape == (side, side)


@pytest.mark.parametrize("mode", ["I;16", "F", "array"])
def test_a_16_bit_or_float_photo_keeps_its_grey_levels(tmp_path, mode):
    """Pillow's conversion to 8-bit grey clips every value past 255: a 16-bit photo (0 to
    65535) was read white nearly everywhere, and its features written without a word. It is
    scaled to 0-255, as its 8-bit copy reads (a NumPy array of uint16 too)."""
    grey = np.tile(np.arange(0, 256, 16, dtype=np.uint8), (16, 1))
    if mode == "array":
        assert np.array_equal(read_gray(grey.astype(np.uint16) * 257), grey)
        return
    path = tmp_path / ("p.png" if mode == "I;16" else "p.tiff")
    wide = (Image.fromarray(grey.astype(np.uint16) * 257) if mode == "I;16"
            else Image.fromarray(grey).convert("F"))
    wide.save(path)
    assert Image.open(path).mode.startswith(mode)
    assert np.array_equal(read_gray(path), grey)


def test_a_photo_stored_sideways_with_an_exif_orientation_is_read_upright(tmp_path):
    """A phone stores a portrait photo as landscape pixels with an EXIF orientation tag
    (6: turn 90° clockwise to view). It was read as stored, lying on its side, where the
    frontal face detector finds no face; it is read upright, as every viewer shows it."""
    stored = np.tile(np.arange(64, dtype=np.uint8) * 4, (40, 1))  # 40 rows × 64 columns
    im = Image.fromarray(stored)
    exif = im.getexif()
    exif[0x0112] = 6
    path = tmp_path / "portrait.jpg"
    im.save(path, exif=exif, quality=100)
    upright = read_gray(path)
    assert upright.shape == (64, 40)
    assert np.abs(upright.astype(int) - np.rot90(stored, -1).astype(int)).max() <= 8
