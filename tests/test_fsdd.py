"""Real voice data (FSDD): MFCC features separate speakers and digits; the anonymizer runs."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.attack import make_recognizer


def test_mfcc_table_shape_and_labels(fsdd_table):
    assert fsdd_table.X.shape == (3000, 400)
    assert fsdd_table.labels["speaker"].nunique() == 6
    assert fsdd_table.labels["digit"].nunique() == 10
    assert np.isfinite(fsdd_table.X).all()


def test_clear_features_recognise_speaker_and_digit(fsdd_table):
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    idx = np.arange(0, 3000, 3)
    X = fsdd_table.X[idx]
    for col, floor in [("speaker", 0.8), ("digit", 0.8)]:
        y = fsdd_table.labels[col].to_numpy()[idx]
        acc = cross_val_score(make_recognizer("knn"), X, y, cv=cv).mean()
        assert acc > floor, (col, acc)


def test_anonymized_fsdd_keeps_digit_and_hides_speaker_from_naive_model(fsdd_table):
    rng = np.random.default_rng(0)
    test = rng.permutation(3000)[:900]
    train = np.setdiff1d(np.arange(3000), test)
    lab = fsdd_table.labels
    anon = SelectiveMeanAnonymizer("digit", g=64, t=0.8, w=10, r_p=0.01, random_state=0)
    released = anon.fit_transform(fsdd_table.X[test], lab.iloc[test])
    digit = make_recognizer("forest", 0).fit(fsdd_table.X[train], lab["digit"].iloc[train])
    speaker = make_recognizer("forest", 0).fit(fsdd_table.X[train], lab["speaker"].iloc[train])
    assert (digit.predict(released) == lab["digit"].iloc[test]).mean() > 0.9
    assert (speaker.predict(released) == lab["speaker"].iloc[test]).mean() < 0.35
