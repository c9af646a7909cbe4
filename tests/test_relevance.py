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


class _Recorder:
    """An estimator that records the rows and classes it is fitted on."""

    seen: list[tuple[int, dict[int, int]]] = []

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        values, counts = np.unique(y, return_counts=True)
        _Recorder.seen.append((X.shape[0], dict(zip(values.tolist(), counts.tolist(),
                                                     strict=True))))
        self.feature_importances_ = np.ones(X.shape[1])
        return self


def test_relevance_is_fitted_on_a_stratified_sample_of_the_size_asked():
    """At most ``max_records`` records, each class in proportion; every record with None
    or when the table is smaller; the default is MAX_RECORDS."""
    from bioanon.anonymize.relevance import MAX_RECORDS, relevance_scores

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    y = np.repeat([0, 1, 2], [1500, 900, 600])
    _Recorder.seen.clear()
    relevance_scores(X, y, _Recorder(), 0, max_records=100)
    relevance_scores(X, y, _Recorder(), 0, max_records=None)
    relevance_scores(X[:50], y[:50], _Recorder(), 0, max_records=100)
    relevance_scores(X, y, _Recorder(), 0)
    (n1, by_class), (n2, _), (n3, _), (n4, _) = _Recorder.seen
    assert n1 == 100 and by_class == {0: 50, 1: 30, 2: 20}
    assert (n2, n3, n4) == (3000, 50, min(3000, MAX_RECORDS))


def test_a_search_fits_the_same_relevance_once(monkeypatch, xy):
    """The settings a search judges on one split fit the same seeded forest on the same
    records: it is fitted once, and what comes back is the fit's own result, bit for bit."""
    from bioanon.anonymize import relevance

    X, y = xy
    relevance._KEPT.clear()
    fits = []
    real = relevance._scores
    monkeypatch.setattr(relevance, "_scores", lambda *a: fits.append(1) or real(*a))
    first = relevance_scores(X, y, "forest", random_state=3)
    first[:] = -1.0  # a caller writing into its scores changes no one else's
    again = relevance_scores(X, y, "forest", random_state=3)
    assert len(fits) == 1 and np.array_equal(again, real(X, y, "forest", 3, None))
    # another seed, other records or other labels: fitted anew
    relevance_scores(X, y, "forest", random_state=4)
    relevance_scores(X[::-1], y, "forest", random_state=3)
    relevance_scores(X, np.where(y == y[0], "a", "b"), "forest", random_state=3)
    assert len(fits) == 4
    # no seed: a fresh draw each time, nothing kept
    relevance_scores(X, y, "forest", random_state=None)
    relevance_scores(X, y, "forest", random_state=None)
    assert len(fits) == 6


def test_classes_of_dates_or_decimals_are_scored_as_their_classes():
    """A label column of dates or decimals (a Parquet date32 or decimal column given the
    sensitive role) reached the forest as Python objects: scikit-learn's "Unknown label type"
    as an internal error. They are scored as the classes they are."""
    import datetime
    import decimal

    X = np.random.default_rng(0).normal(size=(60, 4))
    codes = (X[:, 1] > 0).astype(int)
    expected = relevance_scores(X, codes, "forest", random_state=0, max_records=None)
    for y in ([datetime.date(2020, 1, 1 + int(c)) for c in codes],
              [decimal.Decimal(int(c)) for c in codes]):
        got = relevance_scores(X, np.array(y, dtype=object), "forest", random_state=0,
                               max_records=None)
        assert np.allclose(got, expected)
