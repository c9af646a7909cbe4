"""The selective weighted-mean anonymizer: Algorithm 1, line 9, exactly, and as an estimator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from bioanon.anonymize import SelectiveMeanAnonymizer
from bioanon.anonymize.mix_kernel import sets_kernel
from bioanon.errors import BioanonError


def _loop_reference(X, sets, mask, w):
    """Algorithm 1 line 9 written per record, straight from the paper."""
    out = np.empty_like(X, dtype=np.float64)
    g = sets.shape[1]
    for i in range(X.shape[0]):
        total = X[sets[i]].sum(axis=0, dtype=np.float64)
        weighted = ((w - 1) * X[i] + total) / (w - 1 + g)
        out[i] = np.where(mask, weighted, total / g)
    return out


def test_matrix_form_equals_the_per_record_formula(small_table):
    anon = SelectiveMeanAnonymizer("expression", g=8, t=0.75, w=10, r_p=0.2, random_state=7)
    anon.fit(small_table.X, small_table.labels)
    out = anon.transform(small_table.X, small_table.labels)
    M = anon.mixing_matrix(small_table.labels, small_table.n_records)
    sets = M.indices.reshape(small_table.n_records, 8)
    ref = _loop_reference(small_table.X, sets, anon.mask_, 10)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    assert 0 < anon.mask_.sum() < small_table.n_features


@pytest.mark.skipif(sets_kernel() is None, reason="numba (the scale extra) is not installed")
def test_compiled_kernel_equals_the_scipy_path(small_table, monkeypatch):
    """The numba mixing kernel (large tables) and the SciPy product agree to float32 rounding,
    on the same sets and mask."""
    from bioanon.anonymize import selective_mean

    anon = SelectiveMeanAnonymizer("expression", g=8, t=0.75, w=10, r_p=0.2, random_state=7)
    anon.fit(small_table.X, small_table.labels)
    monkeypatch.setattr(selective_mean, "MIN_ROWS", 1)
    compiled = anon.transform(small_table.X, small_table.labels)
    monkeypatch.setattr(selective_mean, "MIN_ROWS", 10**9)
    plain = anon.transform(small_table.X, small_table.labels)
    assert 0 < anon.mask_.sum() < small_table.n_features
    np.testing.assert_allclose(compiled, plain, rtol=1e-5, atol=1e-6)
    assert not np.allclose(compiled, small_table.X, atol=1e-3)


def test_w_one_is_the_plain_set_mean(small_table):
    anon = SelectiveMeanAnonymizer("expression", g=6, t=0.5, w=1, r_p=0.5, random_state=1)
    out = anon.fit_transform(small_table.X, small_table.labels)
    M = anon.mixing_matrix(small_table.labels, small_table.n_records)
    np.testing.assert_allclose(out, M @ small_table.X, rtol=1e-5, atol=1e-5)


def test_g_one_is_refused_because_it_releases_the_data(small_table):
    # with g=1 every record's set is the record itself: the release would equal the input
    anon = SelectiveMeanAnonymizer("expression", g=1, t=1.0, w=5, r_p=1.0, random_state=1)
    with pytest.raises(BioanonError, match=r"^g=1 is out of range; use an integer >= 2"):
        anon.fit_transform(small_table.X, small_table.labels)


def test_selected_features_keep_the_interest_signal():
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 20)).astype(np.float32)
    X[:, 3] += 4 * y  # feature 3 carries the interest attribute
    labels = pd.DataFrame({"p": y})
    anon = SelectiveMeanAnonymizer("p", g=16, t=0.5, w=50, r_p=0.05, random_state=0)
    out = anon.fit_transform(X, labels)
    assert anon.mask_.tolist() == [j == 3 for j in range(20)]
    # the record keeps most of its own value on feature 3 but not elsewhere
    own3 = np.corrcoef(out[:, 3], X[:, 3])[0, 1]
    own0 = np.corrcoef(out[:, 0], X[:, 0])[0, 1]
    assert own3 > 0.9 and own0 < 0.5


def test_sensitive_features_are_removed_from_the_selection():
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 3, n)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 10)).astype(np.float32)
    X[:, 0] += 3 * y + 3 * s  # relevant to both: must be excluded
    X[:, 1] += 2 * y
    labels = pd.DataFrame({"p": y, "s": s})
    anon = SelectiveMeanAnonymizer("p", sensitive="s", g=8, t=0.5, r_p=0.2, r_s=0.1,
                                   relevance="mutual_info", random_state=0).fit(X, labels)
    assert anon.mask_[1] and not anon.mask_[0]


def test_estimator_contract_clone_and_params():
    anon = SelectiveMeanAnonymizer("digit", additional={"accent": 0.05}, g=64, random_state=3)
    twin = clone(anon)
    assert twin.get_params() == anon.get_params()
    assert twin.set_params(g=16).g == 16 and anon.g == 64
    assert "random_state" not in anon.public_params()


def test_randomness_fixed_by_seed_and_fresh_without(small_table):
    kw = dict(interest="expression", g=8, t=0.75, r_p=0.1)
    a = SelectiveMeanAnonymizer(**kw, random_state=5).fit(small_table.X, small_table.labels)
    first = a.transform(small_table.X, small_table.labels)
    np.testing.assert_array_equal(first, a.transform(small_table.X, small_table.labels))
    b = SelectiveMeanAnonymizer(**kw, random_state=None).fit(small_table.X, small_table.labels)
    assert not np.allclose(b.transform(small_table.X, small_table.labels),
                           b.transform(small_table.X, small_table.labels))


def test_bad_parameters_and_inputs_raise_one_line_errors(small_table):
    X, lab = small_table.X, small_table.labels
    with pytest.raises(BioanonError, match="purity"):
        SelectiveMeanAnonymizer("expression", g=10, t=0.01).fit(X, lab)
    with pytest.raises(BioanonError, match="w=0.5"):
        SelectiveMeanAnonymizer("expression", w=0.5).fit(X, lab)
    with pytest.raises(BioanonError, match="did you mean 'expression'"):
        SelectiveMeanAnonymizer("expresion").fit(X, lab)
    with pytest.raises(BioanonError, match="r_s > 0 needs the sensitive"):
        SelectiveMeanAnonymizer("expression", r_s=0.1).fit(X, lab)
    fitted = SelectiveMeanAnonymizer("expression", g=4, r_p=0.1, random_state=0).fit(X, lab)
    with pytest.raises(BioanonError, match="is expecting 32 features"):
        fitted.transform(X[:, :10], lab)
    with pytest.raises(BioanonError, match="needs 64 per class"):
        SelectiveMeanAnonymizer("expression", g=80, t=0.8).fit_transform(X, lab)


def test_feature_table_in_feature_table_out(small_table):
    anon = SelectiveMeanAnonymizer("expression", g=4, r_p=0.1, random_state=0)
    out = anon.fit_transform(small_table)
    assert out.labels.equals(small_table.labels)
    assert out.X.shape == small_table.X.shape and not np.allclose(out.X, small_table.X)


def test_leaving_the_record_out_defeats_the_linear_reverse_attacker():
    from bioanon import evaluate
    from bioanon.datasets import make_biometric

    t = make_biometric(n_identities=8, records_per_identity=60, n_features=48,
                       random_state=11)
    acc = {}
    for include_self in (True, False):
        anon = SelectiveMeanAnonymizer("expression", g=24, t=1.0, w=1, r_p=0.0,
                                       include_self=include_self, random_state=0)
        r = evaluate(t, "expression", "identity", anonymizer=anon, models=["logreg"],
                     attackers=["reverse"])
        acc[include_self] = r["privacy"]["worst_case"]["accuracy"]
        assert r["utility"]["interest"]["anonymized"] > 0.9
    chance = 1 / 8
    # with itself in the set, a linear model trained on releases re-identifies clear probes;
    # without it, the release carries nothing of the record and the attack falls to chance
    assert acc[True] > 0.5
    assert acc[False] < chance + 0.1


@pytest.mark.parametrize("compiled", [True, False])
def test_release_in_order_is_the_release_permuted_bit_for_bit(small_table, monkeypatch,
                                                              compiled):
    """The shuffled release computed in one pass (the kernel reads record ``order[j]`` for
    output row ``j``) equals the release in input order, permuted afterwards: same values."""
    from bioanon.anonymize import selective_mean

    if compiled and sets_kernel() is None:
        pytest.skip("numba (the scale extra) is not installed")
    monkeypatch.setattr(selective_mean, "MIN_ROWS", 1 if compiled else 10**9)
    anon = SelectiveMeanAnonymizer("expression", g=8, t=0.75, w=10, r_p=0.2, random_state=7)
    anon.fit(small_table.X, small_table.labels)
    order = np.random.default_rng(3).permutation(small_table.n_records)
    fused = anon.release_in_order(small_table.X, small_table.labels, order)
    plain = anon.transform(small_table.X, small_table.labels)
    np.testing.assert_array_equal(fused, plain[order])
    assert not np.array_equal(fused, plain)  # the order was applied
    with pytest.raises(BioanonError, match="pass a permutation"):
        anon.release_in_order(small_table.X, small_table.labels, order[:-1])


@pytest.mark.skipif(sets_kernel() is None, reason="numba (the scale extra) is not installed")
def test_prefetching_kernel_equals_the_loop_without_hints_bit_for_bit():
    """The mixing kernel with its prefetch hints gives the values of the same loop without
    them, bit for bit, in shuffled order over several parallel blocks (a short last one
    included); off the selected columns it is the float32 sum in set order of a plain NumPy
    loop, exactly, and on them to float32 rounding (a fused multiply-add)."""
    from bioanon.anonymize.mix_kernel import _ROWS, mixing_kernel
    from bioanon.anonymize.random_sets import assemble_sets

    rng = np.random.default_rng(0)
    n, d, g = 2 * _ROWS + 555, 40, 8
    X = rng.standard_normal((n, d), dtype=np.float32)
    sets = assemble_sets(rng.integers(0, 3, n), g, 0.75, np.random.default_rng(1))
    rows = rng.permutation(n).astype(np.int64)
    cols = np.array([1, 7, 39], dtype=np.int64)
    lam = np.float32(9 / 17)
    hinted, plain = np.empty((n, d), np.float32), np.empty((n, d), np.float32)
    sets_kernel()(sets, X, cols, lam, hinted, rows)
    mixing_kernel(0, 0, 0)(sets, X, cols, lam, plain, rows)
    np.testing.assert_array_equal(hinted, plain)
    acc = np.zeros((n, d), np.float32)
    for p in range(g):
        acc += X[sets[:, p]]
    ref = np.float32(1) / np.float32(g) * acc
    ref[:, cols] += lam * (X[:, cols] - ref[:, cols])
    ref = ref[rows]
    off = np.setdiff1d(np.arange(d), cols)
    np.testing.assert_array_equal(hinted[:, off], ref[:, off])
    np.testing.assert_allclose(hinted[:, cols], ref[:, cols], rtol=0, atol=4e-7)
