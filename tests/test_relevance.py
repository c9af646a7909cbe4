"""Relevance scores rank the informative feature first; selection F is a union minus R_s."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from bioanon.anonymize.relevance import relevance_scores, select_features, top_fraction
from bioanon.errors import BioanonError


@pytest.fixture()
def xy():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 8))
    X[:, 5] += 2.5 * y
    return X, y


@pytest.mark.parametrize("scorer", ["forest", "mutual_info", LogisticRegression(max_iter=500)])
def test_informative_feature_ranks_first(xy, scorer):
    X, y = xy
    scores = relevance_scores(X, y, scorer, random_state=0)
    assert scores.shape == (8,) and np.argmax(scores) == 5
    assert scores.min() >= 0


def test_unknown_scorer_and_estimator_without_scores(xy):
    X, y = xy
    with pytest.raises(BioanonError, match="unknown relevance scorer"):
        relevance_scores(X, y, "gini")
    from sklearn.neighbors import KNeighborsClassifier

    with pytest.raises(BioanonError, match="neither feature_importances_ nor coef_"):
        relevance_scores(X, y, KNeighborsClassifier())


def test_top_fraction_counts():
    s = np.arange(200, dtype=float)
    assert top_fraction(s, 0.01).tolist() == [198, 199]
    assert top_fraction(s, 0.001).tolist() == [199]  # at least one when r > 0
    assert top_fraction(s, 0.0).size == 0


def test_selection_is_union_of_useful_minus_sensitive():
    rp = np.array([9, 8, 0, 0, 0, 0], float)
    rq = {"q": np.array([0, 0, 0, 7, 0, 0], float)}
    rs = np.array([0, 5, 0, 0, 0, 0], float)
    mask = select_features(rp, 2 / 6, rq, {"q": 1 / 6}, rs, 1 / 6)
    assert mask.tolist() == [True, False, False, True, False, False]


def test_relevance_on_a_bounded_stratified_sample() -> None:
    """Above max_records the scorer sees a stratified sample; the relevant feature still wins."""
    from bioanon.anonymize.relevance import relevance_sample_size

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 3000)
    X = rng.standard_normal((3000, 12))
    X[:, 7] += y
    full = relevance_scores(X, y, "mutual_info", random_state=0, max_records=None)
    part = relevance_scores(X, y, "mutual_info", random_state=0, max_records=600)
    assert int(np.argmax(full)) == int(np.argmax(part)) == 7
    assert not np.allclose(full, part)  # a different (smaller) fit really ran
    assert relevance_sample_size(3000, 600) == 600 and relevance_sample_size(300, 600) == 300
