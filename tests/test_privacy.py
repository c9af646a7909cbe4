"""The privacy core and the method listing."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.anonymize import LaplaceAnonymizer
from bioanon.cli import app
from bioanon.errors import BioanonError
from bioanon.privacy import PrivacyLeakWarning, check_epsilon, laplace, resolve_seed


def test_epsilon_check_refuses_zero_nan_and_inf() -> None:
    assert check_epsilon("0.5") == 0.5
    for bad in (0, -1, float("nan"), float("inf"), "abc", None):
        with pytest.raises(BioanonError, match="epsilon"):
            check_epsilon(bad)


def test_budgets_outside_the_honoured_range_are_refused_naming_the_range() -> None:
    from bioanon.privacy import EPSILON_RANGE, MU_RANGE, check_mu

    lo, hi = EPSILON_RANGE
    assert check_epsilon(lo) == lo and check_epsilon(hi) == hi
    for bad in (1e308, 1e-308, hi * 2, lo / 2):
        with pytest.raises(BioanonError, match=r"epsilon=.* from 1e-06 to 1e\+06"):
            check_epsilon(bad)
    for bad in (1e308, 1e-308):
        with pytest.raises(BioanonError, match=r"^mu=") as err:
            check_mu(bad)
        assert "rho" not in str(err.value)
    assert check_mu(MU_RANGE[1]) == MU_RANGE[1]


@pytest.mark.parametrize("method", ["dp-cells", "dp-basis", "dp-synthetic"])
def test_every_zcdp_method_states_the_budget_it_was_given_across_the_range(method) -> None:
    """The range is what the methods honour: at both ends each states (nearly) the ε it was
    given, and releases finite records."""
    from bioanon.anonymize.registry import build_method
    from bioanon.datasets import make_biometric
    from bioanon.privacy import EPSILON_RANGE

    t = make_biometric(n_identities=6, records_per_identity=8, n_features=32, random_state=0)
    for eps in EPSILON_RANGE:
        est = build_method(method, {"epsilon": str(eps), "bounds": "-10,10"},
                           interest="expression", sensitive="identity", random_state=0)
        out = np.asarray(est.fit_transform(t.X, t.labels), dtype=float)
        assert np.all(np.isfinite(out))
        assert est.epsilon_ == pytest.approx(eps, rel=1e-3)


def test_seed_is_fresh_without_random_state() -> None:
    assert resolve_seed(7) == 7
    assert resolve_seed(None) != resolve_seed(None)


def test_laplace_scale_and_hardened_sampler() -> None:
    noisy = laplace(np.zeros(20000), 2.0, np.random.default_rng(0))
    assert abs(np.mean(np.abs(noisy)) - 2.0) < 0.1  # E|Lap(b)| = b
    pytest.importorskip("opendp")
    hard = laplace(np.zeros(200), 2.0, np.random.default_rng(0), hardened=True)
    assert hard.shape == (200,) and 1.0 < np.mean(np.abs(hard)) < 3.5


def test_data_derived_bounds_warn_and_the_statement_says_so() -> None:
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.warns(PrivacyLeakWarning):
        LaplaceAnonymizer(epsilon=1.0).fit_transform(X)
    est = LaplaceAnonymizer(epsilon=1.0, bounds=(-3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        est.fit_transform(X)
    assert est.public_params()["privacy"]["assumes"] == "bounds fixed in advance"


def test_methods_command_lists_every_method_with_ranges() -> None:
    res = CliRunner().invoke(app, ["methods", "--json"])
    assert res.exit_code == 0, res.output
    doc = {m["name"]: m for m in json.loads(res.output)["methods"]}
    assert {"selective-mean", "ksame", "sanitizer", "noise"} <= set(doc)
    g = doc["selective-mean"]["params"]["g"]
    assert (g["type"], g["default"], g["min"]) == ("int", 32, 2)
    assert all(m["protects"] and m["does_not_protect"] for m in doc.values())
    assert "random_state" not in doc["noise"]["params"]
    text = CliRunner().invoke(app, ["methods"])
    assert text.exit_code == 0 and "--param r_p" in text.output


def test_cli_refuses_no_op_settings_in_one_line(tmp_path) -> None:
    from bioanon.datasets import make_biometric

    src = tmp_path / "in.parquet"
    make_biometric(n_identities=4, records_per_identity=10, n_features=32).write(src)
    for extra, message in ((["--method", "noise", "--sigma", "0"], "sigma=0.0 is out of range"),
                           (["--w", "nan"], "w=nan is out of range"),
                           (["--param", "g=1"], "g=1 is out of range")):
        res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(tmp_path / "o.parquet"),
                                       "--sensitive", "identity", "--interest", "expression",
                                       *extra])
        assert res.exit_code == 2 and message in res.output
        assert res.output.count("\n") == 1 and "NaN records" not in res.output
        assert not (tmp_path / "o.parquet").exists()
    res = CliRunner().invoke(app, ["tune", str(src), "--out", str(tmp_path / "t"),
                                   "--sensitive", "identity", "--interest", "expression",
                                   "--grid", "g=abc"])
    assert res.exit_code == 2 and res.output.startswith("error: g='abc' is not valid")
