"""A pre-trained recognizer for face pixel releases: dlib's 128-d ResNet face embedding.

The evaluation-methodology paper's second architecture: a feature extractor trained on a
large background population, then a classifier on the target identities. Each released image
(a row of pixels, aligned face chips as ``bioanon extract faces`` writes them) is resized to
dlib's 150×150 chip and embedded; a linear SVM then learns the identities. Needs the face
extra (dlib and its model files); :func:`available` says whether it can run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin


def available() -> bool:
    """True when dlib and its face recognition model file are installed."""
    try:
        import dlib  # noqa: F401

        from ..features.image import face_model_paths

        face_model_paths()
    except Exception:  # any missing piece means the recognizer does not apply
        return False
    return True


class DlibEmbedding(TransformerMixin, BaseEstimator):
    """Pixels (n, h·w) in [0, 1] → dlib face descriptors (n, 128).

    Parameters
    ----------
    image_shape : (h, w), optional
        Shape of each image; square when not given.
    """

    def __init__(self, image_shape: tuple[int, int] | None = None) -> None:
        self.image_shape = image_shape

    def fit(self, X: Any, y: Any = None) -> DlibEmbedding:
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def transform(self, X: Any) -> np.ndarray:
        import dlib
        from scipy.ndimage import zoom

        from ..features.image import face_model_paths

        X = np.asarray(X, dtype=np.float64)
        h, w = self.image_shape or (int(round(np.sqrt(X.shape[1]))),) * 2
        enc = dlib.face_recognition_model_v1(str(face_model_paths()["resnet"]))
        imgs = X.reshape(-1, h, w)
        lo, hi = np.nanmin(imgs), np.nanmax(imgs)
        scale = 255.0 / (hi - lo) if hi > lo else 1.0
        big = zoom((imgs - lo) * scale, (1, 150 / h, 150 / w), order=1)
        rgb = np.repeat(np.clip(big, 0, 255).astype(np.uint8)[..., None], 3, axis=-1)
        chips = list(rgb)  # dlib takes a list of chips and loops over them in C++
        return np.asarray(enc.compute_face_descriptor(chips), dtype=np.float64)
