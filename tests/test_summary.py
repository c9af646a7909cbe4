"""Score summaries by row blocks equal the whole-matrix metrics; the binned EER bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.attack import summary as S
from bioanon.attack.verification import binned_bootstrap_eer
from bioanon.metrics import kl_from_uniform, top_k_accuracy
from bioanon.metrics.intervals import bootstrap_eer


@pytest.mark.parametrize("block", [7, 10**6])
def test_summary_equals_whole_matrix_metrics_with_ties_and_unseen_labels(monkeypatch, block):
    monkeypatch.setattr(S, "BLOCK_ENTRIES", block)
    rng = np.random.default_rng(0)
    classes = np.array([f"id{i}" for i in range(9)])
    P = rng.integers(0, 4, size=(50, 9)).astype(float) + 0.01  # many ties
    P /= P.sum(axis=1, keepdims=True)
    y = rng.choice(np.r_[classes, ["unseen"]], size=50)
    out = S.summarize_scores(lambda r: P[r], 50, classes, y, 5, "proba")
    assert out["top_k"] == top_k_accuracy(P, classes, y, 5)
    assert out["kl_uniform"] == pytest.approx(kl_from_uniform(P), rel=1e-12)
    assert (out["pred"] == classes[np.argmax(P, axis=1)]).all()


def test_summary_kinds():
    P = np.array([[0.2, 0.8], [0.9, 0.1]])
    dec = S.summarize_scores(lambda r: P[r], 2, np.array([0, 1]), np.array([1, 1]), 3,
                             "decision")
    assert dec["top_k"] == [0.5, 1.0] and dec["kl_uniform"] is None
    lab = S.summarize_scores(lambda r: P[r], 2, np.array([0, 1]), np.array([1, 1]), 3, "label")
    assert lab["top_k"] is None and lab["pred"].tolist() == [1, 0]


def test_true_columns_across_label_types():
    assert S.true_columns(np.array([3, 1, 2]), np.array(["1", "3", "7"])).tolist() == [1, 0, -1]


def test_binned_bootstrap_agrees_with_the_exact_one():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(60), 3)
    same = y[:, None] == np.arange(60)[None, :]
    scores = rng.normal(size=same.shape) + 1.5 * same
    exact = bootstrap_eer(scores, same, n_boot=100, seed=3)
    binned = binned_bootstrap_eer(scores, same, n_boot=100, seed=3)
    assert binned[0] == exact[0]  # the point estimate is exact
    assert binned[1] == pytest.approx(exact[1], abs=0.01)
    assert binned[2] == pytest.approx(exact[2], abs=0.01)
    assert binned[1] < binned[0] < binned[2]


@pytest.mark.parametrize("seed", range(6))
def test_sorted_eer_equals_the_reference_with_ties(seed):
    from bioanon.attack.verification import sorted_eer
    from bioanon.metrics.intervals import equal_error_rate

    rng = np.random.default_rng(seed)
    t = rng.integers(0, 12, size=rng.integers(1, 30)).astype(float)  # coarse: many ties
    nt = rng.integers(-4, 9, size=rng.integers(1, 300)).astype(float)
    assert sorted_eer(t, nt) == equal_error_rate(t, nt)
    t, nt = rng.normal(1, 1, 50), rng.normal(0, 1, 2000)
    assert sorted_eer(t, nt) == equal_error_rate(t, nt)


def test_verification_scores_a_seeded_sample_of_probes_above_the_cap(monkeypatch):
    """Above MAX_TRIALS the verifier scores a seeded sample of probes against every identity
    (its cost stops growing as probes × identities), says so, and reads the same EER as
    every probe within its interval; below the cap nothing changes."""
    from bioanon.attack import verification as V

    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(40), 25).astype(str)  # 40 identities, 25 records each
    centers = rng.normal(size=(40, 8))
    enrol = centers[np.repeat(np.arange(40), 25)] + rng.normal(size=(1000, 8))
    trials = centers[np.repeat(np.arange(40), 25)] + rng.normal(size=(1000, 8))
    whole = V.verification(enrol, ids, trials, ids, "naive", seed=3)
    assert whole.trials == "released" and whole.n_target + whole.n_nontarget == 40_000
    monkeypatch.setattr(V, "MAX_TRIALS", 12_000)  # 300 probes × 40 identities
    part = V.verification(enrol, ids, trials, ids, "naive", seed=3)
    assert part.n_target + part.n_nontarget == 12_000
    assert "sample of 300 of 1,000 probes" in part.trials
    # an unbiased sample: over 20 seeds the intervals cover every probe's EER about 95% of
    # the time (at least 15 of 20 holds with probability > 0.999) and centre on it
    draws = [V.verification(enrol, ids, trials, ids, "naive", seed=s) for s in range(20)]
    assert sum(d.ci[0] <= whole.eer <= d.ci[1] for d in draws) >= 15
    assert abs(np.mean([d.eer for d in draws]) - whole.eer) < 0.005
    again = V.verification(enrol, ids, trials, ids, "naive", seed=3)
    assert again == part  # seeded: the same probes, the same figures
    other = V.verification(enrol, ids, trials, ids, "naive", seed=4)
    assert other.eer != part.eer  # another seed draws other probes
