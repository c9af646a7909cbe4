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
