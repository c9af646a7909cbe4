"""dp-cells' public prior (``prior="public"``): noisy class means shrunk towards the public
people's class means, and the search trying it where ``--public-data`` holds the roles."""

from __future__ import annotations

import json

import numpy as np
import pytest
from public_tables import FAST, PUBLIC_PEOPLE, ROLES, loose, private_and_public

from bioanon.anonymize.dp_cells import PRIOR_WORDS, DPCellsAnonymizer
from bioanon.certification import certify
from bioanon.certification.public_basis import (
    PRIOR_USED_FOR,
    USED_FOR,
    PublicRecords,
    without_prior,
)
from bioanon.certification.search import SearchSpace
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable

WHY = "test of the public prior"
#: every setting judged (FAST's budget stops the search after the first)
UNBUDGETED = {k: v for k, v in FAST.items() if k != "budget_minutes"}


@pytest.fixture(scope="module")
def tables() -> tuple[FeatureTable, FeatureTable]:
    return private_and_public()


def _prior(public: FeatureTable, **kw) -> DPCellsAnonymizer:
    return DPCellsAnonymizer(
        "expression", cells=0, basis="public", rank=8, public_data=public.X,
        public_labels=public.labels["expression"].to_numpy(),
        public_groups=public.labels["identity"].to_numpy(), **kw)


def _class_means(X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    return {c: X[y == c].mean(axis=0) for c in np.unique(y)}


def test_the_prior_pulls_the_noisy_class_means_towards_the_public_ones(tables) -> None:
    private, public = tables
    y = private.labels["expression"].astype(str).to_numpy()
    pub_means = _class_means(public.X, public.labels["expression"].astype(str).to_numpy())
    gaps = {}
    for prior in ("none", "public"):
        est = _prior(public, prior=prior, mu=0.05, random_state=4)
        rel = est.fit_transform(private.X, private.labels)
        means = _class_means(np.asarray(rel, np.float64), y)
        lo, hi, _ = est._scaling(private.X)
        P = est.stated_basis(private.n_features)  # the gap in the basis, in box units
        gaps[prior] = np.mean([np.linalg.norm(P @ ((means[c] - pub_means[c]) / (hi - lo)))
                               for c in pub_means])
    # much noise (mu 0.05 on 300 records): the public class means take most of the weight
    assert gaps["public"] < 0.3 * gaps["none"], gaps


def test_with_little_noise_the_prior_changes_little(tables) -> None:
    private, public = tables
    a = _prior(public, prior="none", mu=1e3, random_state=1).fit_transform(
        private.X, private.labels)
    b = _prior(public, prior="public", mu=1e3, random_state=1).fit_transform(
        private.X, private.labels)
    c = _prior(public, prior="none", mu=0.05, random_state=1).fit_transform(
        private.X, private.labels)
    d = _prior(public, prior="public", mu=0.05, random_state=1).fit_transform(
        private.X, private.labels)
    # the same draws: only the means move, by the weight the noise gives the prior
    assert np.abs(a - b).max() < 0.02 * np.abs(c - d).max()


def test_the_prior_needs_one_gaussian_per_class_and_the_public_roles(tables) -> None:
    private, public = tables
    with pytest.raises(BioanonError, match="set cells=0"):
        _prior(public, prior="public").set_params(cells=2).fit(private.X, private.labels)
    with pytest.raises(BioanonError, match="needs public_groups"):
        _prior(public, prior="public").set_params(public_groups=None).fit(
            private.X, private.labels)
    with pytest.raises(BioanonError, match="one value per public record"):
        _prior(public, prior="public").set_params(
            public_groups=public.labels["identity"].to_numpy()[:5]).fit_transform(
            private.X, private.labels)
    plain = _prior(public).ignored_params()
    assert "public_groups" in plain and "public_labels" in plain  # prior none: idle
    assert "public_groups" not in _prior(public, prior="public").ignored_params()


def test_the_statement_names_the_prior_and_writes_no_public_value(tables) -> None:
    private, public = tables
    est = _prior(public, prior="public", mu=2.0, random_state=0).fit(private.X,
                                                                     private.labels)
    params = est.public_params()
    assert params["privacy"]["prior"] == PRIOR_WORDS
    assert params["public_groups"] == params["public_labels"] == "given (not written)"
    assert "prior" not in _prior(public, mu=2.0).public_params()["privacy"]


def test_the_search_gives_the_prior_the_public_roles_or_drops_it(tables) -> None:
    private, public = tables
    space = SearchSpace(public=PublicRecords(public))
    cands, _ = space.candidates(private, ["dp-cells"], "identity", "expression")
    priors = [c for c in cands if c.params.get("prior") == "public"]
    assert len(priors) == 1 and priors[0].params["cells"] == 0
    hidden = priors[0].hidden
    assert np.array_equal(hidden["public_labels"],
                          public.labels["expression"].astype(str).to_numpy())
    assert np.array_equal(hidden["public_groups"],
                          public.labels["identity"].astype(str).to_numpy())
    # the prior's setting is the same setting without it where the roles are missing
    bare = [(c.method, c.params) for c in cands if c not in priors]
    for args in ((private, ["dp-cells"], "identity"),  # no interest told
                 (private, ["dp-cells"], "identity", "expression", ["environment"])):
        other, _ = space.candidates(*args)
        assert not [c for c in other if "prior" in c.params]
        assert [(c.method, c.params) for c in other] == bare + [
            (priors[0].method, without_prior(priors[0].params))]
    on_array, _ = SearchSpace(public=PublicRecords(public.X)).candidates(
        private, ["dp-cells"], "identity", "expression")
    assert not [c for c in on_array if "prior" in c.params]
    assert len(on_array) == len(cands)


def test_a_certified_prior_says_what_the_public_records_gave(tables, monkeypatch) -> None:
    private, public = tables
    # the stated basis tried at a noise no consumer would train on, so the prior is chosen
    monkeypatch.setattr(DPCellsAnonymizer, "search_space", ({"cells": 0, "mu": 0.001},))
    monkeypatch.setattr(DPCellsAnonymizer, "public_basis_space", (
        {"cells": 0, "mu": 4.0, "basis": "public", "rank": 8, "public_data": "public",
         "prior": "public", "public_labels": "public", "public_groups": "public"},))
    out = certify(private, ROLES, public=public, public_name="pub.csv",
                  methods=["dp-cells"], random_state=3, **UNBUDGETED, **loose(WHY))
    assert out.manifest["method"] == "dp-cells"
    params = out.manifest["params"]
    assert params["prior"] == "public" and params["privacy"]["prior"] == PRIOR_WORDS
    for key in ("public_labels", "public_groups", "public_data"):
        assert params[key].startswith("public (from the public table")
    assert out.manifest["public_data"]["used_for"] == USED_FOR + PRIOR_USED_FOR
    text = json.dumps(out.manifest) + out.report.to_json()
    assert not [p for p in PUBLIC_PEOPLE if p in text]  # the public people are not named
