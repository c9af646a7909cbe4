"""TrainOnRelease: cross-validating a pipeline measures CAS (trained on the release, scored
on clear data), with numbers, not NaN; a bare anonymizer never passes clear data."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

from bioanon.anonymize import KSameSelectAnonymizer, SelectiveMeanAnonymizer
from bioanon.datasets import make_biometric
from bioanon.pipeline import TrainOnRelease, make_cas_pipeline


def _data():
    t = make_biometric(n_identities=8, records_per_identity=20, n_features=32, random_state=0)
    return t.X, t.labels["expression"].to_numpy()


def test_cross_val_score_of_a_cas_pipeline_gives_numbers() -> None:
    X, y = _data()
    for anon in (SelectiveMeanAnonymizer("expression", g=8, t=0.8, r_p=0.1,
                                         relevance="mutual_info", random_state=0),
                 KSameSelectAnonymizer("expression", k=3, random_state=0)):
        scores = cross_val_score(make_cas_pipeline(anon, LogisticRegression(max_iter=300)),
                                 X, y, cv=3, error_score="raise")
        assert np.isfinite(scores).all() and (scores > 0.0).all()


def test_training_data_are_released_and_predict_data_pass() -> None:
    X, y = _data()
    step = TrainOnRelease(SelectiveMeanAnonymizer("expression", g=8, r_p=0.0, random_state=0))
    released = step.fit_transform(X, y)
    assert released.shape == X.shape and not np.allclose(released, X)
    assert step.transform(X) is X


def test_the_bare_anonymizer_never_returns_clear_data() -> None:
    X, y = _data()
    anon = SelectiveMeanAnonymizer("expression", g=8, r_p=0.0, random_state=0).fit(X, y)
    assert not np.allclose(anon.transform(X, y), X)
    # the plain pipeline (no wrapper) fails loudly at predict time instead of leaking
    pipe = make_pipeline(SelectiveMeanAnonymizer("expression", g=8, r_p=0.0),
                         LogisticRegression(max_iter=300)).fit(X, y)
    try:
        pipe.predict(X)
    except ValueError as exc:
        assert "requires y" in str(exc)
    else:  # pragma: no cover - a silent predict would hide the semantics
        raise AssertionError("predict without labels should have raised")
