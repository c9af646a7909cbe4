"""Whole-batch image operations on flattened grey images: blur, pixelate, eye-band mask.

Images arrive as rows of an (n, h·w) array in row-major order; every function reshapes to
(n, h, w), works on the whole batch at once with NumPy/SciPy, and flattens back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage

from ..errors import BioanonError


def parse_shape(value: Any, n_features: int | None = None) -> tuple[int, int] | None:
    """``(h, w)`` from a pair, a list, or a string such as ``"48x40"``; None stays None.

    One side may be -1 (as in NumPy's reshape): it is inferred from ``n_features``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        parts = value.lower().replace("×", "x").replace(",", "x").split("x")
    else:
        parts = list(value)
    try:
        h, w = (int(p) for p in parts)
    except (TypeError, ValueError):
        raise BioanonError(f"image_shape {value!r} must be two integers, e.g. 48x40") from None
    if n_features is not None and (h == -1) != (w == -1):
        known = w if h == -1 else h
        if known < 1 or n_features % known:
            raise BioanonError(f"image_shape {value!r} does not divide {n_features} features; "
                               "pass the shape of the images")
        h, w = (n_features // known, w) if h == -1 else (h, n_features // known)
    if h < 1 or w < 1:
        raise BioanonError(f"image_shape {value!r} must be positive (one side may be -1), "
                           "e.g. 48x40")
    return h, w


def as_images(X: np.ndarray, shape: tuple[int, int] | None) -> np.ndarray:
    """Reshape (n, h·w) rows to (n, h, w), checking the size."""
    if shape is None:
        raise BioanonError("image methods need the image shape; pass image_shape=(h, w) "
                           "or a table whose meta has 'image_shape'", parameter="image_shape")
    h, w = shape
    if X.shape[1] != h * w:
        raise BioanonError(f"image_shape {h}x{w} = {h * w} pixels but X has {X.shape[1]} "
                           "features; pass the shape of the images the features came from")
    return X.reshape(X.shape[0], h, w)


def blur(X: np.ndarray, shape: tuple[int, int], sigma: float) -> np.ndarray:
    """Gaussian blur of standard deviation ``sigma`` pixels (edges reflected)."""
    imgs = as_images(np.asarray(X, dtype=np.float64), shape)
    out = ndimage.gaussian_filter(imgs, sigma=(0.0, float(sigma), float(sigma)), mode="reflect")
    return out.reshape(X.shape[0], -1)


def block_means(imgs: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of every ``block``×``block`` cell (partial cells at the edges included).

    Returns the cell means (n, ceil(h/b), ceil(w/b)) and the cell pixel counts.
    """
    n, h, w = imgs.shape
    rows, cols = np.arange(0, h, block), np.arange(0, w, block)
    sums = np.add.reduceat(np.add.reduceat(imgs, rows, axis=1), cols, axis=2)
    counts = np.outer(np.diff(np.append(rows, h)), np.diff(np.append(cols, w)))
    return sums / counts, counts


def expand_blocks(cells: np.ndarray, block: int, shape: tuple[int, int]) -> np.ndarray:
    """Paint each cell value over its ``block``×``block`` pixels and crop to ``shape``."""
    h, w = shape
    big = np.repeat(np.repeat(cells, block, axis=1), block, axis=2)
    return big[:, :h, :w]


def pixelate(X: np.ndarray, shape: tuple[int, int], block: int) -> np.ndarray:
    """Replace each ``block``×``block`` cell by its mean (Gross et al. 4.2)."""
    imgs = as_images(np.asarray(X, dtype=np.float64), shape)
    cells, _ = block_means(imgs, int(block))
    return expand_blocks(cells, int(block), shape).reshape(X.shape[0], -1)


def dp_pixelate(X: np.ndarray, shape: tuple[int, int], block: int, epsilon: float, m: int,
                value_range: float, rng: np.random.Generator) -> np.ndarray:
    """DP-Pix (Fan 2018): pixelate, then add Laplace noise of scale ``value_range·m/(b²·ε)``.

    Two images are neighbours when they differ in at most ``m`` pixels; a cell mean of b²
    pixels then moves by at most ``value_range·m/b²``, the sensitivity of the cell means.
    Pixels are clipped to [0, value_range] first so that the bound holds. Partial cells at the
    edges hold fewer pixels; their noise is scaled to their own sensitivity.
    """
    imgs = np.clip(as_images(np.asarray(X, dtype=np.float64), shape), 0.0, value_range)
    cells, counts = block_means(imgs, int(block))
    scale = value_range * np.minimum(m, counts) / (counts * float(epsilon))
    noisy = cells + rng.laplace(0.0, 1.0, size=cells.shape) * scale[None]
    return expand_blocks(noisy, int(block), shape).reshape(X.shape[0], -1)


def eye_band_mask(X: np.ndarray, shape: tuple[int, int], band: tuple[float, float],
                  fill: float | None) -> np.ndarray:
    """Cover the rows ``band`` (fractions of the height, top to bottom) with ``fill``.

    ``fill=None`` uses the mean pixel value of the batch (a black bar is ``fill=0``).
    """
    top, bottom = band
    if not 0.0 <= top < bottom <= 1.0:
        raise BioanonError(f"band {band} must satisfy 0 <= top < bottom <= 1 (fractions of "
                           "the image height), e.g. (0.25, 0.5)")
    imgs = as_images(np.asarray(X, dtype=np.float64), shape).copy()
    h = shape[0]
    r0, r1 = int(np.floor(top * h)), max(int(np.ceil(bottom * h)), int(np.floor(top * h)) + 1)
    value = float(imgs.mean()) if fill is None else float(fill)
    imgs[:, r0:r1, :] = value
    return imgs.reshape(X.shape[0], -1)
