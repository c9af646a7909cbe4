"""The sanitizer: decoupler training on a planted factor, save/load, samplers, estimator API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from bioanon.anonymize.registry import build_method
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError

torch = pytest.importorskip("torch")

from bioanon.anonymize.sanitizer import (  # noqa: E402
    Decoupler,
    SanitizerAnonymizer,
    train_decoupler,
)

TINY = {"latent_dim": 6, "sensitive_dim": 2, "hidden": 32, "epochs": 3, "batch_size": 64}


def planted(n: int = 2000, d: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Features driven by 4 nuisance factors plus one binary sensitive factor."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    mixing = rng.normal(size=(4, d))
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    X = (rng.normal(size=(n, 4)) @ mixing + 6.0 * np.outer(y - 0.5, direction)
         + 0.3 * rng.normal(size=(n, d)))
    return X.astype(np.float32), y


@pytest.fixture(scope="module")
def tiny_table():
    return make_biometric(n_identities=4, records_per_identity=40, n_features=32,
                          random_state=3)


@pytest.fixture(scope="module")
def tiny_decoupler(tiny_table) -> Decoupler:
    return train_decoupler(tiny_table.X, tiny_table.labels["gender"].to_numpy(), "gender",
                           tiny_table.feature_names, TINY, random_state=0)


def _probe(Z: np.ndarray, y: np.ndarray) -> float:
    a, b = train_test_split(np.arange(len(y)), test_size=0.4, random_state=0, stratify=y)
    return LogisticRegression(max_iter=2000).fit(Z[a], y[a]).score(Z[b], y[b])


def test_planted_sensitive_factor_is_concentrated_in_z_s() -> None:
    X_all, y_all = planted(n=3000)
    X, y, X_new, y_new = X_all[:2000], y_all[:2000], X_all[2000:], y_all[2000:]
    dec = train_decoupler(X, y, "s", config={"latent_dim": 8, "sensitive_dim": 2,
                                             "hidden": 64, "epochs": 60, "batch_size": 128,
                                             "lr": 3e-3, "alpha_aligner": 20.0,
                                             "alpha_adversary": 20.0}, random_state=0)
    assert _probe(X, y) > 0.95  # the factor is there to be found
    # held-out records from the same distribution
    z_s, z_ns = dec.split(dec.encode(X_new))
    assert _probe(z_s, y_new) > 0.9  # the aligner's side carries it
    assert _probe(z_ns, y_new) < 0.65  # a fresh adversary on z_NS is near chance (0.5)
    assert dec.info["final"]["aligner_acc"] > 0.9


def test_save_load_round_trip(tiny_decoupler: Decoupler, tiny_table, tmp_path: Path) -> None:
    path = tiny_decoupler.save(tmp_path / "dec.pt")
    loaded = Decoupler.load(path)
    assert loaded.config == tiny_decoupler.config
    assert loaded.info["z_radius"] == tiny_decoupler.info["z_radius"]
    Z = tiny_decoupler.encode(tiny_table.X)
    np.testing.assert_allclose(loaded.encode(tiny_table.X), Z, rtol=1e-6)
    np.testing.assert_allclose(loaded.decode(Z), tiny_decoupler.decode(Z), rtol=1e-5,
                               atol=1e-6)
    san = SanitizerAnonymizer("gender", sampler="suppress", decoupler=str(path))
    out = san.fit(tiny_table.X, tiny_table.labels).transform(tiny_table.X)
    z_s = np.zeros((tiny_table.n_records, 2))
    expected = tiny_decoupler.decode(np.concatenate([z_s, Z[:, 2:]], axis=1))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_decoupler_for_other_features_or_labels_is_refused(tiny_decoupler: Decoupler,
                                                           tiny_table, tmp_path: Path) -> None:
    path = tiny_decoupler.save(tmp_path / "dec.pt")
    with pytest.raises(BioanonError, match="trained on 32 features but the data has 16"):
        SanitizerAnonymizer("gender", decoupler=path).fit(tiny_table.X[:, :16],
                                                          tiny_table.labels)
    with pytest.raises(BioanonError, match="isolate 'gender', not 'identity'"):
        SanitizerAnonymizer("identity", decoupler=path).fit(tiny_table.X, tiny_table.labels)
    renamed = tiny_table.with_features(tiny_table.X)
    renamed.feature_names = [f"g{i}" for i in range(32)]
    with pytest.raises(BioanonError, match="feature 0 is 'g0'"):
        SanitizerAnonymizer("gender", decoupler=path).fit(renamed)
    junk = tmp_path / "junk.pt"
    torch.save({"weights": torch.zeros(3)}, junk)
    with pytest.raises(BioanonError, match="not a bioanon decoupler"):
        Decoupler.load(junk)
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(BioanonError, match="not a readable decoupler"):
        Decoupler.load(tmp_path / "text.pt")


def test_samplers_replace_only_the_sensitive_latents(tiny_decoupler: Decoupler,
                                                     tiny_table) -> None:
    X, labels = tiny_table.X, tiny_table.labels
    Z = tiny_decoupler.encode(X)
    for sampler in ("suppress", "dp-obfuscate", "dp-sample"):
        san = SanitizerAnonymizer("gender", sampler=sampler, epsilon=1.0,
                                  decoupler=tiny_decoupler, output="latents").fit(X, labels)
        latents, y_new = san.sanitize(X, labels)
        assert latents.shape == (len(X), 6)
        np.testing.assert_allclose(latents[:, 2:], Z[:, 2:], rtol=1e-5, atol=1e-6)
        if sampler == "suppress":
            assert not latents[:, :2].any()
        else:
            assert not np.allclose(latents[:, :2], Z[:, :2], atol=1e-3)
        if sampler == "dp-obfuscate":
            low, high = tiny_decoupler.info["z_low"], tiny_decoupler.info["z_high"]
            assert np.all(latents[:, :2] >= np.array(low) - 1e-6)
            assert np.all(latents[:, :2] <= np.array(high) + 1e-6)
        if sampler == "dp-sample":
            assert set(np.unique(y_new)) <= set(labels["gender"])
        else:
            assert y_new is None
    # noise is fresh on every call, whatever random_state says
    san = SanitizerAnonymizer("gender", decoupler=tiny_decoupler, random_state=0).fit(X, labels)
    assert not np.allclose(san.transform(X, labels), san.transform(X, labels))


def test_estimator_api_and_public_params(tiny_table) -> None:
    san = SanitizerAnonymizer("gender", sampler="dp-sample", epsilon=2.0, random_state=5,
                              **TINY)
    twin = clone(san)
    assert twin.get_params() == san.get_params()
    out = twin.fit(tiny_table).transform(tiny_table)
    assert out.X.shape == tiny_table.X.shape
    assert list(out.labels.columns) == list(tiny_table.labels.columns)
    params = twin.public_params()
    assert "random_state" not in params
    priv = params["privacy"]
    assert priv["epsilon"] == 2.0
    assert priv["epsilon_mean"] == pytest.approx(0.6)
    assert priv["epsilon_covariance"] == pytest.approx(1.4)
    assert "not the whole record" in priv["protects"]
    assert "passed to fit" in params["decoupler_training"]


def test_bad_parameters_are_user_errors(tiny_table) -> None:
    with pytest.raises(BioanonError, match="did you mean 'dp-sample'"):
        SanitizerAnonymizer("gender", sampler="dp-sampel").fit(tiny_table)
    with pytest.raises(BioanonError, match="epsilon"):
        SanitizerAnonymizer("gender", epsilon=0).fit(tiny_table)
    with pytest.raises(BioanonError, match="sensitive_dim=8 must be smaller"):
        SanitizerAnonymizer("gender", latent_dim=8, sensitive_dim=8).fit(tiny_table)
    with pytest.raises(BioanonError, match="label column 'sex' not found"):
        SanitizerAnonymizer("sex", **TINY).fit(tiny_table)


def test_method_registry_builds_the_sanitizer(tmp_path: Path) -> None:
    anon = build_method("sanitizer", {"sampler": "dp-obfuscate", "epsilon": "0.5", "beta": "2",
                                      "epochs": "4"}, sensitive="gender", random_state=1)
    assert isinstance(anon, SanitizerAnonymizer)
    assert (anon.sampler, anon.epsilon, anon.beta, anon.epochs) == ("dp-obfuscate", 0.5, 2.0, 4)
    with pytest.raises(BioanonError, match="did you mean 'beta'"):
        build_method("sanitizer", {"betta": "2"}, sensitive="g")
    with pytest.raises(BioanonError, match="needs sensitive .*sensitive=COL"):
        build_method("sanitizer")
    with pytest.raises(BioanonError, match="not found"):
        build_method("sanitizer", {"decoupler": str(tmp_path / "missing.pt")}, sensitive="g")


def test_evaluation_fits_on_train_split_and_reports_the_budget(tiny_table) -> None:
    from bioanon import evaluate

    anon = SanitizerAnonymizer("gender", sampler="dp-sample", epsilon=1.0, random_state=0,
                               **TINY)
    report = evaluate(tiny_table, "expression", "gender", anonymizer=anon, models=["knn"])
    params = report["params"]["anonymizer"]
    assert params["privacy"]["split"] == {"mean_and_class_sizes": 0.3,
                                          "covariance": pytest.approx(0.7)}
    assert 0.0 <= report["privacy"]["worst_case"]["accuracy"] <= 1.0
    assert {a["mode"] for a in report["privacy"]["attacks"]} >= {"naive", "parrot"}


def test_importing_the_package_does_not_import_torch() -> None:
    code = ("import sys; import bioanon.anonymize.sanitizer, bioanon.anonymize.registry, "
            "bioanon.cli; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_dp_sample_labels_are_independent_of_the_records(tiny_decoupler, tiny_table) -> None:
    labels = pd.DataFrame({"gender": np.repeat(["F", "M"], [40, 120])})
    san = SanitizerAnonymizer("gender", decoupler=tiny_decoupler, epsilon=50.0)
    san.fit(tiny_table.X, tiny_table.labels)
    draws = np.stack([san.sanitize(tiny_table.X, labels)[1] for _ in range(10)])
    # synthetic labels follow the class sizes (1/4 'F'), not the record order; the
    # tolerances are about 5 standard errors of the pooled proportions
    first, rest = np.mean(draws[:, :40] == "F"), np.mean(draws[:, 40:] == "F")
    assert abs(first - 0.25) < 0.1 and abs(rest - 0.25) < 0.06


@pytest.mark.parametrize("shape", [(16, 16), (20, 12)])
def test_conv_decoupler_on_small_images(shape: tuple[int, int], tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 96
    y = rng.integers(0, 2, n)
    images = rng.normal(size=(n, *shape)).astype(np.float32)
    images[:, : shape[0] // 2] += 2.0 * y[:, None, None]  # the sensitive factor: top half
    X = images.reshape(n, -1)
    dec = train_decoupler(X, y, "s", config={"architecture": "conv", "image_shape": shape,
                                             "latent_dim": 6, "sensitive_dim": 2,
                                             "epochs": 2, "batch_size": 32},
                          random_state=0)
    Z = dec.encode(X)
    assert Z.shape == (n, 6)
    assert dec.decode(Z).shape == X.shape
    loaded = Decoupler.load(dec.save(tmp_path / "conv.pt"))
    np.testing.assert_allclose(loaded.encode(X), Z, rtol=1e-5, atol=1e-6)
    with pytest.raises(BioanonError, match="at most 64"):
        train_decoupler(np.zeros((4, 65 * 2)), [0, 1, 0, 1], "s",
                        config={"architecture": "conv", "image_shape": (65, 2)})
