"""Ad-hoc baselines: noise, Laplace with clipping, blur, pixelation, eye-band mask, DP-Pix,
keep-channels and motion extraction.

Each transforms every record on its own (nothing is learned from other records, except the
data-derived clipping bounds of :class:`LaplaceAnonymizer` when none are given), with one
whole-array operation per batch. They exist to be compared with the formal methods: the
evaluation must show what an informed (parrot) attacker still recognizes.

Image methods take ``image_shape=(h, w)``; when ``X`` is a FeatureTable whose meta holds
``"image_shape"``, that is used. Sensor methods read a time-major layout (``t0: c0 c1 ..,
t1: ...``), as the SP-SW-HAR raw windows (feature names ``<channel>_t<step>``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import BioanonError
from ..table import FeatureTable
from . import image_ops
from .base import AnonymizerMixin, split_input
from .selective_mean import secure_seed


class _RecordwiseBase(AnonymizerMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform of the per-record baselines."""

    def _check_params(self) -> None:  # overridden
        pass

    def _prepare(self, X: np.ndarray, table: FeatureTable | None) -> None:  # overridden
        pass

    def fit(self, X: Any, labels: Any = None) -> _RecordwiseBase:
        """Check the parameters and the input shape (labels are not used)."""
        self._check_params()
        table = X if isinstance(X, FeatureTable) else None
        X, _ = split_input(X, labels)
        self.n_features_in_ = X.shape[1]
        self._prepare(X, table)
        return self

    def transform(self, X: Any, labels: Any = None) -> Any:
        """Apply the baseline to every record; a FeatureTable in gives a FeatureTable out."""
        check_is_fitted(self, "n_features_in_")
        table = X if isinstance(X, FeatureTable) else None
        X, _ = split_input(X, labels)
        if X.shape[1] != self.n_features_in_:
            raise BioanonError(f"X has {X.shape[1]} features but the anonymizer was fitted on "
                               f"{self.n_features_in_}; transform data with the same features")
        seed = self.random_state if getattr(self, "random_state", None) is not None \
            else secure_seed()
        out = self._apply(np.asarray(X, dtype=np.float64), np.random.default_rng(seed))
        out = np.asarray(out, dtype=np.float32)
        if table is not None:
            return table.with_features(out)
        return out

    def fit_transform(self, X: Any, labels: Any = None, **fit_params: Any) -> Any:
        """Fit and transform the same records."""
        return self.fit(X, labels).transform(X, labels)

    def public_params(self) -> dict[str, Any]:
        """Parameters safe to publish (tuples as lists)."""
        params = {k: list(v) if isinstance(v, tuple) else v
                  for k, v in self.get_params(deep=False).items() if k != "random_state"}
        return {k: (v if v is None or isinstance(v, str | int | float | bool | list | dict)
                    else type(v).__name__) for k, v in params.items()}

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError


def _positive(name: str, value: Any, integer: bool = False) -> None:
    ok = value is not None and not isinstance(value, bool)
    if ok:
        try:
            ok = float(value) > 0 and (not integer or int(value) == value)
        except (TypeError, ValueError):
            ok = False
    if not ok:
        kind = "a positive integer" if integer else "a positive number"
        raise BioanonError(f"{name}={value!r} must be {kind}")


# ---------------------------------------------------------------------- noise
class GaussianNoiseAnonymizer(_RecordwiseBase):
    """Add Gaussian noise: ``x + sigma·N(0, 1)`` (paper 002's Noise(x)).

    Parameters
    ----------
    sigma : float, default 1
    scale : {"absolute", "std"}, default "absolute"
        ``"std"`` multiplies sigma by each feature's standard deviation in the released batch.
    random_state : int or None

    Examples
    --------
    >>> X = np.zeros((1000, 2))
    >>> out = GaussianNoiseAnonymizer(sigma=2.0, random_state=0).fit_transform(X)
    >>> bool(1.8 < out.std() < 2.2)
    True
    """

    def __init__(self, sigma: float = 1.0, scale: str = "absolute",
                 random_state: int | None = None) -> None:
        self.sigma = sigma
        self.scale = scale
        self.random_state = random_state

    def _check_params(self) -> None:
        if self.sigma is None or float(self.sigma) < 0:
            raise BioanonError(f"sigma={self.sigma!r} must be a non-negative number")
        if self.scale not in ("absolute", "std"):
            raise BioanonError(f"scale='{self.scale}' must be 'absolute' or 'std'")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = float(self.sigma) * (X.std(axis=0) if self.scale == "std" else 1.0)
        return X + rng.standard_normal(X.shape) * s


class LaplaceAnonymizer(_RecordwiseBase):
    """Laplace mechanism per record with clipping (local differential privacy).

    Each feature is clipped to ``[lo_j, hi_j]``; with ``budget="record"`` the whole record is
    ε-DP: its L1 sensitivity is ``Σ_j (hi_j − lo_j)``, and every feature gets Laplace noise of
    scale ``Σ_j (hi_j − lo_j)/ε``. ``budget="feature"`` spends ε on each feature (scale
    ``(hi_j − lo_j)/ε``), which is only ``d·ε``-DP for the record.

    Parameters
    ----------
    epsilon : float, default 1
    bounds : (lo, hi) scalars or arrays, optional
        Clipping bounds. Without them they are the ``clip_quantile`` and ``1 − clip_quantile``
        quantiles of the batch, which depend on the data: the guarantee then holds only for
        bounds fixed in advance (pass them when it matters).
    clip_quantile : float, default 0.01
    budget : {"record", "feature"}, default "record"
    random_state : int or None
    """

    def __init__(self, epsilon: float = 1.0, bounds: Any = None, clip_quantile: float = 0.01,
                 budget: str = "record", random_state: int | None = None) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.clip_quantile = clip_quantile
        self.budget = budget
        self.random_state = random_state

    def _check_params(self) -> None:
        _positive("epsilon", self.epsilon)
        if not 0.0 <= self.clip_quantile < 0.5:
            raise BioanonError(f"clip_quantile={self.clip_quantile} must lie in [0, 0.5)")
        if self.budget not in ("record", "feature"):
            raise BioanonError(f"budget='{self.budget}' must be 'record' or 'feature'")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.bounds is None:
            lo = np.quantile(X, self.clip_quantile, axis=0)
            hi = np.quantile(X, 1.0 - self.clip_quantile, axis=0)
        else:
            lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (X.shape[1],))
                      for b in self.bounds)
            if np.any(hi < lo):
                raise BioanonError("bounds (lo, hi) need lo <= hi for every feature")
        width = hi - lo
        scale = (width.sum() if self.budget == "record" else width) / float(self.epsilon)
        return np.clip(X, lo, hi) + rng.laplace(0.0, 1.0, X.shape) * scale


# ---------------------------------------------------------------------- images
class _ImageBase(_RecordwiseBase):
    def _prepare(self, X: np.ndarray, table: FeatureTable | None) -> None:
        shape = image_ops.parse_shape(self.image_shape)
        if shape is None and table is not None:
            shape = image_ops.parse_shape(table.meta.get("image_shape"))
        image_ops.as_images(X[:1], shape)  # checks the shape against the features
        self.image_shape_ = shape


class BlurAnonymizer(_ImageBase):
    """Gaussian blur of ``sigma`` pixels (Gross et al. 4.2).

    Examples
    --------
    >>> X = np.eye(1, 25) * 25
    >>> out = BlurAnonymizer(sigma=1.0, image_shape=(5, 5)).fit_transform(X)
    >>> bool(out.max() < 25)
    True
    """

    def __init__(self, sigma: float = 2.0, image_shape: Any = None) -> None:
        self.sigma = sigma
        self.image_shape = image_shape

    random_state = None

    def _check_params(self) -> None:
        _positive("sigma", self.sigma)

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return image_ops.blur(X, self.image_shape_, float(self.sigma))


class PixelateAnonymizer(_ImageBase):
    """Pixelation: each ``block``×``block`` cell replaced by its mean (Gross et al. 4.2)."""

    def __init__(self, block: int = 4, image_shape: Any = None) -> None:
        self.block = block
        self.image_shape = image_shape

    random_state = None

    def _check_params(self) -> None:
        _positive("block", self.block, integer=True)

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return image_ops.pixelate(X, self.image_shape_, int(self.block))


class EyeBandMaskAnonymizer(_ImageBase):
    """Cover a horizontal band (the eyes) with a constant.

    Parameters
    ----------
    band : (top, bottom), default (0.25, 0.5)
        Rows to cover as fractions of the image height.
    fill : float or None, default None
        Value of the band; None uses the batch's mean pixel value.
    image_shape : (h, w)
    """

    def __init__(self, band: Sequence[float] = (0.25, 0.5), fill: float | None = None,
                 image_shape: Any = None) -> None:
        self.band = band
        self.fill = fill
        self.image_shape = image_shape

    random_state = None

    def _check_params(self) -> None:
        if len(tuple(self.band)) != 2:
            raise BioanonError(f"band={self.band!r} must be (top, bottom), e.g. (0.25, 0.5)")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        top, bottom = (float(v) for v in self.band)
        return image_ops.eye_band_mask(X, self.image_shape_, (top, bottom), self.fill)


class DPPixAnonymizer(_ImageBase):
    """DP-Pix (Fan 2018): pixelate with cells of ``block``², then Laplace noise on each cell.

    The noise scale is ``value_range·m/(block²·ε)``: images that differ in at most ``m``
    pixels are neighbours (m-neighbourhood), pixels are clipped to ``[0, value_range]``.
    ``value_range=None`` takes the table's public ``meta["value_range"]`` (1 for the pixels
    of ``extract face``), else 255.

    Parameters
    ----------
    block : int, default 4
    epsilon : float, default 1
    m : int, default 16
    value_range : float or None, default None
    image_shape : (h, w)
    random_state : int or None
    """

    def __init__(self, block: int = 4, epsilon: float = 1.0, m: int = 16,
                 value_range: float | None = None, image_shape: Any = None,
                 random_state: int | None = None) -> None:
        self.block = block
        self.epsilon = epsilon
        self.m = m
        self.value_range = value_range
        self.image_shape = image_shape
        self.random_state = random_state

    def _check_params(self) -> None:
        _positive("block", self.block, integer=True)
        _positive("epsilon", self.epsilon)
        _positive("m", self.m, integer=True)
        if self.value_range is not None:
            _positive("value_range", self.value_range)

    def _prepare(self, X: np.ndarray, table: FeatureTable | None) -> None:
        super()._prepare(X, table)
        meta_range = None if table is None else table.meta.get("value_range")
        self.value_range_ = float(self.value_range if self.value_range is not None
                                  else meta_range if meta_range is not None else 255.0)

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return image_ops.dp_pixelate(X, self.image_shape_, int(self.block),
                                     float(self.epsilon), int(self.m), self.value_range_, rng)


# ---------------------------------------------------------------------- sensor series
_STEP = re.compile(r"^(?P<channel>.+)_t(?P<step>\d+)$")


def channel_layout(feature_names: Sequence[str] | None, n_features: int,
                   n_channels: int | None) -> list[str]:
    """Channel names of a time-major layout, from ``<channel>_t<step>`` names or a count."""
    if n_channels is not None:
        n_channels = int(n_channels)
        if n_channels < 1 or n_features % n_channels:
            raise BioanonError(f"{n_features} features do not split into n_channels="
                               f"{n_channels} channels; pass the number of channels per step")
        return [str(c) for c in range(n_channels)]
    if feature_names is not None:
        matches = [_STEP.match(f) for f in feature_names]
        if all(matches):
            names = list(dict.fromkeys(m["channel"] for m in matches))
            steps = len(feature_names) // len(names)
            expected = [f"{c}_t{m['step']}" for m in matches[::len(names)] for c in names]
            if len(names) * steps == len(feature_names) and expected == list(feature_names):
                return names
    raise BioanonError("sensor methods need the channel layout; pass n_channels "
                       "(CLI: --param n_channels=6) for time-major features")


class KeepChannelsAnonymizer(_RecordwiseBase):
    """Keep only some channels of a time-major sensor window; the others are set to ``fill``
    (paper 002's Keep(legs) / Keep(head), which set the other points to zero).

    Parameters
    ----------
    channels : sequence of int or str
        Channels to keep: positions in each time step, or names (from ``<channel>_t<step>``
        feature names of a FeatureTable).
    n_channels : int, optional
        Channels per time step (needed when names do not tell).
    fill : float or "mean", default 0
        Value of the dropped channels ("mean": each dropped feature's batch mean).

    Examples
    --------
    >>> X = np.arange(6.0).reshape(1, 6)  # 3 steps × 2 channels
    >>> KeepChannelsAnonymizer([1], n_channels=2).fit_transform(X).tolist()
    [[0.0, 1.0, 0.0, 3.0, 0.0, 5.0]]
    """

    def __init__(self, channels: Sequence[Any] = (0,), n_channels: int | None = None,
                 fill: float | str = 0.0) -> None:
        self.channels = channels
        self.n_channels = n_channels
        self.fill = fill

    random_state = None

    def _prepare(self, X: np.ndarray, table: FeatureTable | None) -> None:
        names = channel_layout(None if table is None else table.feature_names, X.shape[1],
                               self.n_channels)
        keep = []
        for ch in self.channels:
            key = str(ch)
            if key in names:
                keep.append(names.index(key))
            elif isinstance(ch, int | np.integer) and 0 <= int(ch) < len(names):
                keep.append(int(ch))
            else:
                raise BioanonError(f"channel {ch!r} not found; channels are {names}")
        mask = np.zeros(len(names), dtype=bool)
        mask[keep] = True
        self.keep_mask_ = np.tile(mask, X.shape[1] // len(names))

    def _check_params(self) -> None:
        if not isinstance(self.fill, int | float) and self.fill != "mean":
            raise BioanonError(f"fill={self.fill!r} must be a number or 'mean'")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = X.copy()
        drop = ~self.keep_mask_
        out[:, drop] = X[:, drop].mean(axis=0) if self.fill == "mean" else float(self.fill)
        return out


class MotionExtractAnonymizer(_RecordwiseBase):
    """Motion extraction (paper 002): first differences along time, per channel.

    Step t becomes ``x_t − x_{t−1}``; the first step becomes 0, so the shape is kept and the
    static posture (the per-channel level) is removed.

    Examples
    --------
    >>> X = np.array([[1.0, 10.0, 3.0, 11.0, 6.0, 13.0]])  # 3 steps × 2 channels
    >>> MotionExtractAnonymizer(n_channels=2).fit_transform(X).tolist()
    [[0.0, 0.0, 2.0, 1.0, 3.0, 2.0]]
    """

    def __init__(self, n_channels: int | None = None) -> None:
        self.n_channels = n_channels

    random_state = None

    def _prepare(self, X: np.ndarray, table: FeatureTable | None) -> None:
        self.n_channels_ = len(channel_layout(None if table is None else table.feature_names,
                                              X.shape[1], self.n_channels))

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        series = X.reshape(X.shape[0], -1, self.n_channels_)
        out = np.zeros_like(series)
        out[:, 1:, :] = np.diff(series, axis=1)
        return out.reshape(X.shape[0], -1)
