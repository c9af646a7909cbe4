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
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import BioanonError
from ..privacy import PrivacyLeakWarning, check_epsilon, laplace
from ..table import FeatureTable
from . import image_ops
from .base import FLOAT32_EPS, Anonymizer, below_resolution
from .dp_box import declared_box
from .params import Param, epsilon_param
from .registration import register

_SEED = Param("int", low=0, none=True, help="secret seed; None draws fresh OS entropy")
_SHAPE = Param("shape", none=True, help="image height x width, one side may be -1 (default: "
               "the table's meta)")


class _RecordwiseBase(Anonymizer):
    """Per-record baselines: ``_release`` applies :meth:`_apply` to the whole batch."""

    def _release(self, X: np.ndarray, y: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray:
        return self._apply(np.asarray(X, dtype=np.float64), np.random.default_rng(seed))

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError


# ---------------------------------------------------------------------- noise
@register("noise", required=("sigma",))
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

    params: ClassVar[dict[str, Param]] = {
        "sigma": Param("float", low=0, low_open=True,
                       help="noise scale; 0 would release the input unchanged"),
        "scale": Param("str", options=("absolute", "std"), help="std: sigma x feature std"),
        "random_state": _SEED,
    }
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"sigma": 1.0, "scale": "std"}, {"sigma": 3.0, "scale": "std"})
    protects = "nothing formally: an informed (parrot) attacker trained on noisy data " \
               "often still recognises people"
    does_not_protect = "identity against attackers who average or train on noisy records"

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """Noise below float32's resolution of every feature leaves the records as they are."""
        if self.scale == "std":  # sigma × std <= sigma × rms: below every feature's resolution
            if float(self.sigma) < FLOAT32_EPS:
                return (f"sigma={self.sigma:g} times a feature's std is below float32's "
                        "resolution of its values; raise it (e.g. sigma=1)")
            return None
        smallest = None if X is None else below_resolution(float(self.sigma), X)
        if smallest is None:
            return None
        return (f"sigma={self.sigma:g} is below the resolution of every feature (the smallest "
                f"is {smallest:.3g}); raise it or choose another method")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = float(self.sigma) * (X.std(axis=0) if self.scale == "std" else 1.0)
        return X + rng.standard_normal(X.shape) * s


@register("laplace", required=("epsilon",))
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

    params: ClassVar[dict[str, Param]] = {
        "epsilon": epsilon_param("privacy budget"),
        "bounds": Param("floats", none=True, help="clipping bounds lo,hi fixed in advance"),
        "clip_quantile": Param("float", low=0, high=0.5, high_open=True,
                               help="data-derived bounds when none are given"),
        "budget": Param("str", options=("record", "feature"),
                        help="epsilon per record or per feature"),
        "random_state": _SEED,
    }
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"epsilon": 10.0}, {"epsilon": 100.0})
    protects = "each whole record by epsilon-local DP (budget=record) when bounds are fixed " \
               "in advance"
    does_not_protect = "records when bounds come from the data (PrivacyLeakWarning); with " \
                       "budget=feature the record is only d*epsilon-DP"

    def _ignored(self) -> dict[str, str]:
        if self.bounds is not None:
            return {"clip_quantile": "bounds are given, so no bounds come from quantiles"}
        return {}

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """Noise below float32's resolution of every feature, with bounds that clip at most
        5% of the values (the rest leave as they are)."""
        if X is None:
            return None
        if self.bounds is None:
            lo = np.quantile(X, self.clip_quantile, axis=0)
            hi = np.quantile(X, 1.0 - self.clip_quantile, axis=0)
        else:
            lo, hi = declared_box(self.bounds, X.shape[1])
        clipped = float(np.mean((X < lo) | (X > hi)))
        if clipped > 0.05:
            return None  # clipping changes values: a release of its own kind
        width = hi - lo
        scale = (width.sum() if self.budget == "record" else width) / float(self.epsilon)
        smallest = below_resolution(np.sqrt(2.0) * scale, X)
        if smallest is None:
            return None
        return (f"epsilon={self.epsilon:g} gives Laplace noise below the resolution of every "
                f"feature (the smallest is {smallest:.3g}); only the {clipped:.1%} of values "
                "beyond the clipping bounds would change; lower epsilon")

    def _check_relations(self) -> None:
        if self.bounds is not None and len(self.bounds) != 2:
            raise BioanonError(f"bounds={self.bounds!r} must be (lo, hi); e.g. bounds=0,1")

    def privacy_statement(self) -> dict[str, Any]:
        """What the guarantee covers (safe to publish)."""
        eps = check_epsilon(self.epsilon)
        return {"mechanism": "clip to [lo, hi] per feature, Laplace noise of scale "
                             "sum(hi - lo) / epsilon (budget=record) or (hi - lo) / epsilon",
                "epsilon": eps if self.budget == "record" else None,
                "epsilon_per_feature": eps if self.budget == "feature" else None,
                "neighbouring": "any two values of one record (local DP)",
                "assumes": "bounds fixed in advance" if self.bounds is not None else
                           "NOT MET: bounds are quantiles of the released data",
                "protects": self.protects}

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters plus the privacy statement."""
        return {**super().public_params(), "privacy": self.privacy_statement()}

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.bounds is None:
            warnings.warn("Laplace clipping bounds come from the data: the epsilon guarantee "
                          "holds only for bounds fixed in advance; pass bounds=(lo, hi)",
                          PrivacyLeakWarning, stacklevel=4)
            lo = np.quantile(X, self.clip_quantile, axis=0)
            hi = np.quantile(X, 1.0 - self.clip_quantile, axis=0)
        else:
            lo, hi = declared_box(self.bounds, X.shape[1])
        width = hi - lo
        scale = (width.sum() if self.budget == "record" else width) / float(self.epsilon)
        return laplace(np.clip(X, lo, hi), scale, rng)


# ---------------------------------------------------------------------- images
class _ImageBase(_RecordwiseBase):
    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
        shape = image_ops.parse_shape(self.image_shape, X.shape[1])
        if shape is None and table is not None:
            shape = image_ops.parse_shape(table.meta.get("image_shape"), X.shape[1])
        image_ops.as_images(X[:1], shape)  # checks the shape against the features
        assert shape is not None  # as_images refused None
        self.image_shape_: tuple[int, int] = shape


@register("blur", required=("sigma",))
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

    batch_dependent = False
    params: ClassVar[dict[str, Param]] = {
        "sigma": Param("float", low=0, low_open=True, help="blur radius in pixels"),
        "image_shape": _SHAPE}
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"sigma": 3.0}, {"sigma": 6.0})
    protects = "nothing formally: fine detail of each image"
    does_not_protect = "identity against attackers trained on blurred images (parrot)"

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """A kernel whose next pixel weighs less than float32's precision copies the image."""
        neighbour = float(np.exp(-0.5 / float(self.sigma) ** 2))
        if neighbour >= FLOAT32_EPS:
            return None
        return (f"sigma={self.sigma:g} pixels gives a neighbouring pixel the weight "
                f"{neighbour:.2g} of the pixel itself, so the blur copies the image; use "
                "sigma >= 0.5")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return image_ops.blur(X, self.image_shape_, float(self.sigma))


@register("pixelate", required=("block",))
class PixelateAnonymizer(_ImageBase):
    """Pixelation: each ``block``×``block`` cell replaced by its mean (Gross et al. 4.2)."""

    def __init__(self, block: int = 4, image_shape: Any = None) -> None:
        self.block = block
        self.image_shape = image_shape

    batch_dependent = False
    params: ClassVar[dict[str, Param]] = {
        "block": Param("int", low=2, help="cell size in pixels; 1 would release the input"),
        "image_shape": _SHAPE}
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"block": 8}, {"block": 16})
    protects = "nothing formally: detail finer than the block"
    does_not_protect = "identity against attackers trained on pixelated images (parrot)"

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return image_ops.pixelate(X, self.image_shape_, int(self.block))


@register("mask")
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

    params: ClassVar[dict[str, Param]] = {
        "band": Param("floats", help="rows to cover, top,bottom as fractions of the height"),
        "fill": Param("float", none=True, help="band value; none: the batch mean pixel"),
        "image_shape": _SHAPE}
    protects = "nothing formally: the covered band (the eyes)"
    does_not_protect = "identity from the rest of the face"

    def _check_relations(self) -> None:
        band = tuple(self.band)
        if len(band) != 2 or not 0.0 <= float(band[0]) < float(band[1]) <= 1.0:
            raise BioanonError(f"band={self.band!r} must be (top, bottom) with 0 <= top < "
                               "bottom <= 1 (an empty band releases the input); e.g. 0.25,0.5")

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        top, bottom = (float(v) for v in self.band)
        return image_ops.eye_band_mask(X, self.image_shape_, (top, bottom), self.fill)


@register("dp-pix", required=("block", "epsilon"))
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

    params: ClassVar[dict[str, Param]] = {
        "block": Param("int", low=1, help="cell size in pixels"),
        "epsilon": epsilon_param("privacy budget"),
        "m": Param("int", low=1, help="pixels in which neighbouring images differ"),
        "value_range": Param("float", low=0, low_open=True, none=True,
                             help="pixel range (none: the table's meta, else 255)"),
        "image_shape": _SHAPE, "random_state": _SEED}
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"block": 8, "epsilon": 1.0},)
    protects = "each image by epsilon-DP for m-pixel neighbourhoods (local DP)"
    does_not_protect = "images that differ in more than m pixels (e.g. another photo of the " \
                       "same person): identity is not covered by epsilon"

    def privacy_statement(self) -> dict[str, Any]:
        """What the guarantee covers (safe to publish)."""
        return {"mechanism": "DP-Pix: pixelate, Laplace noise of scale "
                             "value_range * m / (block^2 * epsilon) per cell",
                "epsilon": check_epsilon(self.epsilon),
                "neighbouring": f"two images differing in at most m={self.m} pixels",
                "protects": self.protects}

    def public_params(self) -> dict[str, Any]:
        """Publishable parameters plus the privacy statement."""
        return {**super().public_params(), "privacy": self.privacy_statement()}

    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
        super()._fit(X, y, table)
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
        found = [_STEP.match(f) for f in feature_names]
        matches = [m for m in found if m is not None]
        if len(matches) == len(found):
            names = list(dict.fromkeys(m["channel"] for m in matches))
            steps = len(feature_names) // len(names)
            expected = [f"{c}_t{m['step']}" for m in matches[::len(names)] for c in names]
            if len(names) * steps == len(feature_names) and expected == list(feature_names):
                return names
    raise BioanonError("sensor methods need the channel layout; pass n_channels=6 (the "
                       "number of channels) for time-major features",
                       parameter="params.n_channels")


@register("keep", required=("channels",))
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

    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
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
        if mask.all():
            raise BioanonError(f"channels={list(self.channels)} keeps every channel, so the "
                               "release would equal the input; keep fewer channels")
        self.keep_mask_ = np.tile(mask, X.shape[1] // len(names))

    batch_dependent = False
    params: ClassVar[dict[str, Param]] = {
        "channels": Param("items", help="channels to keep, positions or names"),
        "n_channels": Param("int", low=1, none=True, help="channels per time step"),
        "fill": Param("float", options=("mean",), help="value of the dropped channels")}
    protects = "nothing formally: the dropped channels"
    does_not_protect = "identity carried by the kept channels"

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = X.copy()
        drop = ~self.keep_mask_
        out[:, drop] = X[:, drop].mean(axis=0) if self.fill == "mean" else float(self.fill)
        return out


@register("motion-extract")
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

    batch_dependent = False
    params: ClassVar[dict[str, Param]] = {
        "n_channels": Param("int", low=1, none=True, help="channels per time step")}
    protects = "nothing formally: the static posture (per-channel level)"
    does_not_protect = "identity carried by the motion itself (gait)"

    def __init__(self, n_channels: int | None = None) -> None:
        self.n_channels = n_channels

    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
        self.n_channels_ = len(channel_layout(None if table is None else table.feature_names,
                                              X.shape[1], self.n_channels))

    def _apply(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        series = X.reshape(X.shape[0], -1, self.n_channels_)
        out = np.zeros_like(series)
        out[:, 1:, :] = np.diff(series, axis=1)
        return out.reshape(X.shape[0], -1)
