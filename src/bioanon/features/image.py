"""Face features from photos: grayscale, dlib detection and alignment, then one representation.

The representations are the four of the paper (section 5.1.2):

- ``pixels``: the aligned, eye-levelled ``size × size`` grayscale crop, values in [0, 1];
  ``meta["image_shape"] = [size, size]`` lets pixel-space methods and previews reshape it;
- ``eigen``: the crop projected onto its first principal components (eigenfaces, fitted);
- ``landmarks``: the face graph, every pairwise distance between dlib's 68 landmarks, divided
  by the distance between the eye centres (2,278 features, scale-free);
- ``embedding``: dlib's 128-d ResNet face descriptor.

Detection uses dlib's HOG detector and the 68-point shape predictor; the model files come from
the ``face_recognition_models`` package, located by path without importing it (it imports
``pkg_resources``, which recent setuptools lacks). Both come with the ``face`` extra
(``pip install 'bioanon[face]'``). When no face is found the centre of the photo stands in for
the face box (``fallback=True``) and the record is reported in ``meta["fallback"]``; unreadable
files are left out and reported in ``meta["skipped"]``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA

from ..errors import BioanonError, install_hint
from ..table import FeatureTable
from . import nonfinite_reason

FACE_FEATURES = ("pixels", "eigen", "landmarks", "embedding")
FACE_EXTRA = install_hint("face")
N_LANDMARKS = 68
LEFT_EYE, RIGHT_EYE = slice(36, 42), slice(42, 48)
Progress = Callable[[int, int, str], None]
Record = str | os.PathLike | np.ndarray


# ---------------------------------------------------------------------- models and images
def face_model_paths() -> dict[str, Path]:
    """Paths of the dlib model files shipped by ``face_recognition_models`` (not imported)."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise BioanonError(f"face features need the dlib model files; {FACE_EXTRA}")
    folder = Path(next(iter(spec.submodule_search_locations))) / "models"
    paths = {"shape68": folder / "shape_predictor_68_face_landmarks.dat",
             "resnet": folder / "dlib_face_recognition_resnet_model_v1.dat"}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise BioanonError(f"dlib model file '{missing[0]}' is missing; reinstall it: "
                           "pip install --force-reinstall face_recognition_models")
    return paths


@functools.lru_cache(maxsize=1)
def _dlib() -> Any:
    try:
        import dlib
    except ImportError:
        raise BioanonError(f"face features need dlib; {FACE_EXTRA}") from None
    return dlib


@functools.lru_cache(maxsize=1)
def _detector_and_predictor() -> tuple[Any, Any]:
    dlib = _dlib()
    return dlib.get_frontal_face_detector(), dlib.shape_predictor(
        str(face_model_paths()["shape68"]))


@functools.lru_cache(maxsize=1)
def _face_encoder() -> Any:
    return _dlib().face_recognition_model_v1(str(face_model_paths()["resnet"]))


def as_uint8(img: np.ndarray, full: float | None = None) -> np.ndarray:
    """Grey levels of any range as 0-255: ``full`` (the format's white, 65535 for a 16-bit
    photo) as 255; without it, values up to 1 (floats) times 255, up to 255 as they are, up
    to 65535 divided by 257, beyond that scaled by the brightest; negative values as 0.
    Clipping at 255 left a 16-bit photo white where it was brighter than 255 of 65535
    (nearly everywhere), without a word.

    >>> as_uint8(np.array([[0, 257, 65535]], np.uint16)).tolist()
    [[0, 1, 255]]
    >>> as_uint8(np.array([[0.0, 0.5, 1.0]])).tolist()
    [[0, 128, 255]]
    """
    if img.dtype == np.uint8:
        return img
    x = np.asarray(img, dtype=np.float64)
    top = float(x.max()) if x.size else 0.0
    scale = (255.0 / full if full else 255.0 if top <= 1.0 else 1.0 if top <= 255.0
             else 1.0 / 257.0 if top <= 65535.0 else 255.0 / top)
    return np.clip(np.rint(x * scale), 0, 255).astype(np.uint8)


def read_gray(record: Record) -> np.ndarray:
    """A photo as a 2-D uint8 grayscale array; unreadable files raise a one-line error."""
    if isinstance(record, np.ndarray):
        img = record
        if img.ndim == 3:
            img = img[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
        if img.ndim != 2:
            raise BioanonError(f"image array has shape {record.shape}; pass (h, w) or (h, w, 3)")
        return np.ascontiguousarray(as_uint8(img))
    import warnings

    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # Pillow's warning of a huge image: refused here
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(record) as opened:
                # a phone's photo stored sideways with an EXIF orientation tag: upright, as
                # any viewer shows it (the frontal face detector found no face lying down)
                im = ImageOps.exif_transpose(opened)
                if im.mode.startswith(("I", "F")):  # 16-bit, 32-bit or float grey: Pillow's
                    return as_uint8(np.asarray(im),  # "L" clips every value past 255
                                    65535.0 if im.mode.startswith("I;16") else None)
                return np.asarray(im.convert("L"), dtype=np.uint8).copy()
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise BioanonError(
            f"cannot read image '{record}': it has more than {Image.MAX_IMAGE_PIXELS:,} "
            "pixels, the most Pillow opens from a file it cannot trust (a decompression "
            "bomb); downscale it (a face needs far fewer pixels)") from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise BioanonError(f"cannot read image '{record}': {exc}".splitlines()[0]) from None


#: the shortest side of a photo that may hold a face (the smallest aligned crop's)
MIN_PHOTO_SIDE = 16


def refuse_tiny(img: np.ndarray) -> np.ndarray:
    """``img``, refused when a side is under :data:`MIN_PHOTO_SIDE` pixels: a 1×1 photo (a
    thumbnail, a tracking pixel) was centre-cropped and enlarged into a crop of one grey, its
    features written as a face's without a word.

    >>> refuse_tiny(np.zeros((1, 1), np.uint8))
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: the photo is 1×1 pixels, too small to hold a face (at least \
16×16)
    """
    h, w = img.shape[:2]
    if min(h, w) < MIN_PHOTO_SIDE:
        raise BioanonError(f"the photo is {w}×{h} pixels, too small to hold a face (at least "
                           f"{MIN_PHOTO_SIDE}×{MIN_PHOTO_SIDE})")
    return img


def centre_box(shape: tuple[int, ...], share: float = 0.6) -> tuple[int, int, int, int]:
    """The centred square (left, top, right, bottom) of side ``share · min(h, w)``."""
    h, w = shape[:2]
    side = max(2, int(round(share * min(h, w))))
    left, top = (w - side) // 2, (h - side) // 2
    return left, top, left + side, top + side


def _centre_crop(img: np.ndarray, size: int) -> np.ndarray:
    from PIL import Image

    left, top, right, bottom = centre_box(img.shape, share=0.8)
    crop = Image.fromarray(img[top:bottom, left:right])
    return np.asarray(crop.resize((size, size), Image.Resampling.BILINEAR), dtype=np.uint8)


# ---------------------------------------------------------------------- one photo
def face_landmarks(img: np.ndarray, upsample: int = 1) -> np.ndarray | None:
    """The 68 (x, y) landmarks of the largest face in a grayscale photo, or None."""
    detector, predictor = _detector_and_predictor()
    dets = detector(img, upsample)
    if len(dets) == 0:
        return None
    shape = predictor(img, max(dets, key=lambda r: r.area()))
    return np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float64)


def analyse_face(img: np.ndarray, features: str, size: int = 64, upsample: int = 1,
                 fallback: bool = True) -> tuple[np.ndarray | None, bool]:
    """Detect, align and describe the largest face of one grayscale photo.

    Returns the feature vector (None when no face was found and ``fallback`` is off) and
    whether a face was found.
    """
    dlib = _dlib()
    detector, predictor = _detector_and_predictor()
    dets = detector(img, upsample)
    found = len(dets) > 0
    if found:
        box = max(dets, key=lambda r: r.area())
    elif fallback:
        box = dlib.rectangle(*centre_box(img.shape))
    else:
        return None, False
    if features in ("pixels", "eigen"):
        if not found:
            return _centre_crop(img, size).ravel().astype(np.float32) / 255.0, False
        chip = dlib.get_face_chip(img, predictor(img, box), size=size, padding=0.25)
        return np.asarray(chip, dtype=np.float32).ravel() / 255.0, True
    shape = predictor(img, box)
    if features == "landmarks":
        pts = np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float64)
        return landmark_graph(pts[None])[0], found
    rgb = np.repeat(img[:, :, None], 3, axis=2)
    return np.asarray(_face_encoder().compute_face_descriptor(rgb, shape), np.float32), found


def landmark_graph(points: np.ndarray) -> np.ndarray:
    """Pairwise landmark distances over the eye distance; (n, 68, 2) -> (n, 68·67/2)."""
    pts = np.asarray(points, dtype=np.float64)
    iu = np.triu_indices(pts.shape[1], k=1)
    dist = np.linalg.norm(pts[:, :, None, :] - pts[:, None, :, :], axis=-1)[:, iu[0], iu[1]]
    eyes = np.linalg.norm(pts[:, LEFT_EYE].mean(1) - pts[:, RIGHT_EYE].mean(1), axis=1)
    return (dist / np.maximum(eyes, 1e-9)[:, None]).astype(np.float32)


#: the largest side of the aligned crop (size² pixel features a record)
MAX_SIZE = 1024
#: the most times the face detector upsamples a photo (each doubles both sides)
MAX_UPSAMPLE = 3


def face_feature_names(features: str, size: int = 64, n_components: int = 0) -> list[str]:
    """Column names of one face representation."""
    if features == "pixels":
        return [f"px{r}_{c}" for r in range(size) for c in range(size)]
    if features == "eigen":
        return [f"eigen{j}" for j in range(n_components)]
    if features == "landmarks":
        i, j = np.triu_indices(N_LANDMARKS, k=1)
        return [f"lm{a}_{b}" for a, b in zip(i, j, strict=True)]
    return [f"emb{j}" for j in range(128)]


def check_face_features(features: str) -> None:
    """Raise a one-line error for an unknown face representation."""
    if features not in FACE_FEATURES:
        raise BioanonError(f"unknown face features '{features}'; use one of "
                           f"{', '.join(FACE_FEATURES)}")


def _name(record: Record, i: int) -> str:
    return f"record {i}" if isinstance(record, np.ndarray) else str(record)


def extract_faces(records: Sequence[Record], features: str = "pixels", size: int = 64,
                  upsample: int = 1, fallback: bool = True,
                  progress: Progress | None = None
                  ) -> tuple[np.ndarray, np.ndarray, list[dict[str, str]], list[str]]:
    """Describe many photos.

    Returns
    -------
    X : (n_kept, d) float32 array (pixels for ``eigen``; project them with a fitted PCA)
    kept : positions of the records in ``X``
    skipped : ``[{"file", "reason"}]`` for records left out (unreadable, or faceless when
        ``fallback`` is off)
    fallback_used : names of the records described from the centre crop (no face found)
    """
    check_face_features(features)
    _detector_and_predictor()  # a missing extra fails before any file is read
    rows, kept, skipped, centred = [], [], [], []
    for i, rec in enumerate(records):  # dlib works one photo at a time
        name = _name(rec, i)
        try:
            img = refuse_tiny(read_gray(rec))
        except BioanonError as exc:
            skipped.append({"file": name, "reason": str(exc)})
            continue
        vec, found = analyse_face(img, features, size, upsample, fallback)
        if vec is None:
            skipped.append({"file": name, "reason": "no face found"})
        elif nonfinite_reason(vec):
            skipped.append({"file": name, "reason": nonfinite_reason(vec)})
        else:
            rows.append(vec)
            kept.append(i)
            if not found:
                centred.append(name)
        if progress is not None:
            progress(i + 1, len(records), os.path.basename(name))
    d = size * size if features in ("pixels", "eigen") else len(face_feature_names(features))
    X = np.vstack(rows).astype(np.float32) if rows else np.empty((0, d), np.float32)
    return X, np.asarray(kept, dtype=np.int64), skipped, centred


# ---------------------------------------------------------------------- the transformer
class FaceFeatures(TransformerMixin, BaseEstimator):
    """Photos in, FeatureTable out: one of ``pixels``, ``eigen``, ``landmarks``, ``embedding``.

    Parameters
    ----------
    features : str
        The representation (see the module docstring).
    size : int
        Side of the aligned crop in pixels (``pixels`` and ``eigen``).
    n_components : int
        Eigenfaces kept (``eigen``); capped by the number of records.
    upsample : int
        Times the HOG detector upsamples the photo (finds smaller faces, slower).
    fallback : bool
        Describe a faceless photo from its centre (reported) instead of leaving it out.
    random_state : int or None
        Seed of the randomized PCA solver.

    Examples
    --------
    >>> ff = FaceFeatures("landmarks")            # doctest: +SKIP
    >>> table = ff.fit_transform(paths, labels)   # doctest: +SKIP
    """

    def __init__(self, features: str = "pixels", size: int = 64, n_components: int = 50,
                 upsample: int = 1, fallback: bool = True, random_state: int | None = None):
        self.features = features
        self.size = size
        self.n_components = n_components
        self.upsample = upsample
        self.fallback = fallback
        self.random_state = random_state

    def _extract(self, records: Sequence[Record], progress: Progress | None) -> tuple:
        if self.size < 16:
            raise BioanonError(f"size={self.size} is too small; use at least 16 pixels")
        if self.size > MAX_SIZE:  # size² pixel features a record: a typo exhausted memory
            raise BioanonError(f"size={self.size} is too large; use at most {MAX_SIZE} pixels "
                               "(a record holds size² pixel features; e.g. 64)",
                               parameter="size")
        if not 0 <= self.upsample <= MAX_UPSAMPLE:  # each upsampling doubles both sides
            raise BioanonError(f"upsample={self.upsample} is out of range; use 0 to "
                               f"{MAX_UPSAMPLE} (each doubles the photo's sides; e.g. 1)",
                               parameter="upsample")
        return extract_faces(list(records), self.features, self.size, self.upsample,
                             self.fallback, progress)

    def _fit_pca(self, pixels: np.ndarray) -> None:
        if pixels.shape[0] < 2:
            raise BioanonError("eigenfaces need at least 2 photos with a readable face")
        k = int(min(self.n_components, pixels.shape[0] - 1, pixels.shape[1]))
        self.pca_ = PCA(n_components=k, svd_solver="randomized",
                        random_state=self.random_state).fit(pixels)

    def fit(self, X: Sequence[Record], y: Any = None, progress: Progress | None = None
            ) -> FaceFeatures:
        """Learn the eigenfaces (``eigen``); the other representations need no fitting."""
        check_face_features(self.features)
        if self.features == "eigen":
            self._fit_pca(self._extract(X, progress)[0])
        return self

    def transform(self, X: Sequence[Record], labels: pd.DataFrame | None = None,
                  progress: Progress | None = None) -> FeatureTable:
        """Describe the photos ``X``; ``labels`` has one row per photo (kept rows only out)."""
        return self._table(X, labels, self._extract(X, progress))

    def fit_transform(self, X: Sequence[Record], y: Any = None,
                      labels: pd.DataFrame | None = None,
                      progress: Progress | None = None) -> FeatureTable:
        """Fit and describe in one pass over the photos."""
        check_face_features(self.features)
        out = self._extract(X, progress)
        if self.features == "eigen":
            self._fit_pca(out[0])
        return self._table(X, labels if labels is not None else y, out)

    def _table(self, records: Sequence[Record], labels: pd.DataFrame | None,
               out: tuple) -> FeatureTable:
        pix, kept, skipped, centred = out
        if kept.size == 0:
            raise BioanonError(f"no photo could be described ({len(skipped)} skipped, first: "
                               f"{skipped[0]['reason'] if skipped else 'no input'}); check "
                               "the files")
        meta: dict[str, Any] = {"features": f"face {self.features}", "skipped": skipped,
                                "fallback": centred, "extractor": "dlib HOG + 68 landmarks"}
        if self.features == "eigen":
            if not hasattr(self, "pca_"):
                raise BioanonError("FaceFeatures('eigen') is not fitted; call fit first")
            X = self.pca_.transform(pix)
            names = face_feature_names("eigen", n_components=X.shape[1])
        else:
            X = pix
            names = face_feature_names(self.features, self.size)
        if self.features == "pixels":
            meta["image_shape"] = [self.size, self.size]
            meta["value_range"] = 1.0  # pixels are scaled to [0, 1]
        lab = (pd.DataFrame(index=range(len(records))) if labels is None
               else pd.DataFrame(labels).reset_index(drop=True))
        if len(lab) != len(records):
            raise BioanonError(f"{len(lab)} label rows for {len(records)} photos; pass one "
                               "label row per photo")
        return FeatureTable(X, lab.iloc[kept].reset_index(drop=True), names, meta)
