"""Every release an evaluation makes draws its own noise: the training split's, each record
game's and each release without some identities, besides the release it judges (made with
the anonymizer's own seed). With one seed, two releases of as many records of the same
classes drew the same noise row by row, so the record games judged one draw four times and
an attacker trained on the training split's release read the judged release by its rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bioanon.anonymize import GaussianNoiseAnonymizer
from bioanon.anonymize.registry import build_method
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation
from bioanon.evaluation.protocol import anonymize_splits
from bioanon.evaluation.split import split_table


def _residual_rows(a: np.ndarray, b: np.ndarray) -> float:
    """Correlation of the two releases' records, row by row, after each column's mean."""
    a, b = a - a.mean(axis=0), b - b.mean(axis=0)
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def test_the_training_split_s_release_is_another_draw() -> None:
    t = make_biometric(n_identities=40, records_per_identity=10, n_features=32,
                       random_state=0)
    tr, te = split_table(t, "expression", "identity", 0.5, 0)
    train, test = t.subset(tr), t.subset(te)
    assert train.n_records == test.n_records  # the shape under which one seed repeats
    anon = build_method("dp-cells", {"cells": 0, "mu": 4.0}, interest="expression",
                        sensitive="identity", random_state=3)
    a_tr, a_te = anonymize_splits(anon, train, test)
    # the same seed would give the same synthetic records row by row (a Gaussian release
    # of the other half reads 0.97 correlated with it); another draw shares nothing
    same = np.asarray(anon.fit_transform(train, train.labels).X)
    assert _residual_rows(same, a_te) > 0.5
    assert abs(_residual_rows(a_tr, a_te)) < 0.2
    # the judged release is the anonymizer's own draw, unchanged
    assert np.array_equal(a_te, np.asarray(anon.fit_transform(test, test.labels).X))


def test_each_game_and_identity_release_draws_its_own_noise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seeds: list[Any] = []
    real = GaussianNoiseAnonymizer.fit_transform

    def counted(self: Any, X: Any, y: Any = None) -> Any:
        seeds.append(self.random_state)
        return real(self, X, y)

    monkeypatch.setattr(GaussianNoiseAnonymizer, "fit_transform", counted)
    t = make_biometric(n_identities=24, records_per_identity=12, n_features=32,
                       random_state=1)
    Evaluation(t, "expression", "identity", anonymizer=GaussianNoiseAnonymizer(sigma=1.0),
               models=["knn"], attackers="naive", n_jobs=1, verification=False,
               selection="none", consumer_panel="off",
               random_state=0).evaluate(recognition=False)
    # the training split, the judged release, 3 more record games, 3 identity releases
    assert len(seeds) >= 6
    assert all(isinstance(s, int) for s in seeds)
    assert len(set(seeds)) == len(seeds)
