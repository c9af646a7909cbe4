"""Face features on real Yale photos (dlib HOG + 68 landmarks + ResNet embedding)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

pytest.importorskip("dlib", reason="face extra not installed: pip install 'bioanon[face]'")

from bioanon.errors import BioanonError  # noqa: E402
from bioanon.features import image as fimg  # noqa: E402
from bioanon.features.image import FaceFeatures, face_landmarks, read_gray  # noqa: E402

SUBJECTS = [f"subject{i:02d}" for i in (2, 3, 5, 6, 9, 10)]


@pytest.fixture(scope="module")
def yale(data_home):
    folder = data_home / "yale_faces"
    if not folder.is_dir():
        pytest.skip("yale_faces not in the data home")
    return folder


@pytest.fixture(scope="module")
def embeddings(yale):
    """Embeddings of the expression photos of 6 subjects (36 photos)."""
    from bioanon.datasets import load_yale_faces

    return load_yale_faces(yale.parent, features="embedding", subset="expression",
                           subjects=SUBJECTS)


def test_landmarks_of_a_real_face(yale):
    img = read_gray(yale / "images" / "subject02_happy.png")
    pts = face_landmarks(img)
    assert pts is not None and pts.shape == (68, 2)
    h, w = img.shape
    assert (pts[:, 0] > 0).all() and (pts[:, 0] < w).all() and (pts[:, 1] < h).all()
    # eyes above the nose tip above the chin, in image coordinates
    eyes_y = pts[36:48, 1].mean()
    assert eyes_y < pts[30, 1] < pts[8, 1]


def test_feature_shapes_on_real_faces(yale):
    paths = [yale / "images" / f"subject03_{c}.png" for c in ("happy", "sad", "wink")]
    for kind, d in (("landmarks", 68 * 67 // 2), ("embedding", 128), ("pixels", 32 * 32)):
        t = FaceFeatures(kind, size=32).fit_transform(paths)
        assert t.X.shape == (3, d), kind
        assert np.isfinite(t.X).all()
        assert t.meta["fallback"] == [] and t.meta["skipped"] == []
    assert t.meta["image_shape"] == [32, 32]
    assert 0.0 <= t.X.min() and t.X.max() <= 1.0
    emb = FaceFeatures("embedding").fit_transform(paths).X
    assert (np.linalg.norm(emb, axis=1) > 0.5).all()
    assert np.linalg.norm(emb[0] - emb[1]) < 0.6  # one person: dlib's match threshold
    eig = FaceFeatures("eigen", size=32, n_components=10, random_state=0).fit_transform(paths)
    assert eig.X.shape == (3, 2)  # capped by the number of photos - 1


def test_same_subject_embeddings_are_closer(embeddings):
    X = embeddings.X.astype(np.float64)
    subj = embeddings.labels["subject"].to_numpy()
    assert embeddings.n_records == 36
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    same = subj[:, None] == subj[None]
    off = ~np.eye(len(X), dtype=bool)
    within, between = D[same & off].mean(), D[~same].mean()
    assert within < 0.75 * between, (within, between)
    # nearest other photo is of the same person for most photos
    D[~off] = np.inf
    assert (subj[D.argmin(1)] == subj).mean() > 0.8


def test_faceless_photo_falls_back_or_is_skipped(tmp_path, yale):
    blank = tmp_path / "blank.png"
    Image.fromarray(np.full((120, 160), 128, np.uint8)).save(blank)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not an image")
    real = yale / "images" / "subject05_happy.png"
    labels = pd.DataFrame({"who": ["a", "b", "c"]})
    t = FaceFeatures("pixels", size=32).fit_transform([blank, broken, real], labels=labels)
    assert t.labels["who"].tolist() == ["a", "c"]
    assert t.meta["fallback"] == [str(blank)]
    assert [s["file"] for s in t.meta["skipped"]] == [str(broken)]
    t2 = FaceFeatures("landmarks", fallback=False).fit_transform([blank, real], labels=labels[:2])
    assert t2.labels["who"].tolist() == ["b"]
    assert t2.meta["skipped"][0]["reason"] == "no face found"
    with pytest.raises(BioanonError, match="no photo could be described"):
        FaceFeatures("landmarks", fallback=False).fit_transform([blank, broken])


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setattr(fimg.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BioanonError, match=r"install the face extra: .* -m pip install .*\[face\]"):
        fimg.face_model_paths()


def test_bad_parameters_are_named():
    with pytest.raises(BioanonError, match="unknown face features"):
        FaceFeatures("pixel").fit([])
    with pytest.raises(BioanonError, match="too small"):
        FaceFeatures("pixels", size=4).fit_transform([np.zeros((50, 50), np.uint8)])
