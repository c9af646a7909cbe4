"""Methods declare what they can do (DP with its units and accountant, bucketable,
streamable) as class attributes, and every list of methods reads them: a new DP, bucketable
or streamable method is its module and its test, nothing else."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.anonymize.base import Anonymizer, DPCapability
from bioanon.anonymize.params import Param
from bioanon.anonymize.registration import _METHODS, register
from bioanon.anonymize.registry import capabilities, methods, methods_that
from bioanon.certification.dp_budget import DPBudget
from bioanon.cli import app
from bioanon.datasets import make_biometric


def test_the_declared_lists_are_the_code_s():
    # DP: each of these releases (epsilon, delta)-DP features by its own accounting; the
    # sanitizer's epsilon covers the sensitive latents only, not the release: not DP
    # (subsets, not equalities: a new method adds itself without editing this test)
    dp = methods_that("dp")
    assert {"dp-basis", "dp-mix", "dp-synthetic", "smartnoise-dp"} <= set(dp)
    assert not {"sanitizer", "noise", "selective-mean", "vp-mix", "synthetic"} & set(dp)
    assert {"selective-mean", "vp-mix"} <= set(methods_that("bucketable"))
    assert "dp-basis" in methods_that("streamable") and "dp-mix" not in methods_that(
        "streamable")
    assert set(methods_that("streamable")) <= set(dp)  # the stream runs under a budget
    units = {m: capabilities(methods()[m])["dp"]["units"] for m in dp}
    assert units["dp-synthetic"] == units["dp-basis"] == ["record", "identity"]
    assert units["dp-mix"] == units["smartnoise-dp"] == ["record"]
    assert all(set(u) <= {"record", "identity"} for u in units.values())
    assert all(capabilities(methods()[m])["dp"]["accountant"] for m in dp)
    with pytest.raises(ValueError, match="unknown capability"):
        methods_that("fast")


class _ToyDP(Anonymizer):
    """A toy DP method registered by the test (its own module would hold only this)."""

    params: ClassVar[dict[str, Param]] = {
        "epsilon": Param("float", low=0, low_open=True),
        "delta": Param("float", low=0, high=1, low_open=True, high_open=True),
        "random_state": Param("int", low=0, none=True)}
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"epsilon": 1.0, "delta": 1e-6},)
    dp = DPCapability(("record", "identity"), "a toy accountant")
    streamable = True

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-6,
                 random_state: int | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state

    def _release(self, X, y, seed, table):
        return X + np.random.default_rng(seed).normal(0, 1.0, X.shape)


@pytest.fixture
def toy():
    register("toy-dp-test")(_ToyDP)
    try:
        yield "toy-dp-test"
    finally:
        _METHODS.pop("toy-dp-test", None)


def test_a_new_dp_method_is_searched_listed_and_streamable_with_no_other_change(toy):
    t = make_biometric(n_identities=6, records_per_identity=10, n_features=32, random_state=0)
    cands, _ = DPBudget(epsilon=0.5).candidates(t, None, "identity")
    mine = [c for c in cands if c.method == toy]
    assert mine and mine[0].params["epsilon"] == 0.5  # at exactly the declared budget
    cands, skipped = DPBudget(epsilon=0.5, privacy_unit="identity").candidates(
        t, None, "identity")
    assert toy in {c.method for c in cands} and toy not in {s["method"] for s in skipped}
    assert toy in methods_that("streamable")
    from bioanon.certification.streamed import _checked_methods

    assert toy in _checked_methods(None)[0]
    doc = json.loads(CliRunner().invoke(app, ["methods", "--json"]).stdout)
    listed = {m["name"]: m for m in doc["methods"]}[toy]
    assert listed["dp"] == {"units": ["record", "identity"], "accountant": "a toy accountant"}
    assert listed["streamable"] is True and listed["bucketable"] is False
    text = " ".join(CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"}).output.split())
    assert "can: differential privacy (units: record, identity; accountant: a toy " in text


def test_methods_json_lists_every_capability():
    doc = json.loads(CliRunner().invoke(app, ["methods", "--json"]).stdout)
    for m in doc["methods"]:
        assert {"dp", "bucketable", "streamable"} <= set(m)
    by = {m["name"]: m for m in doc["methods"]}
    assert by["vp-mix"]["bucketable"] and by["dp-basis"]["streamable"]
    assert by["noise"]["dp"] is None and not by["noise"]["bucketable"]
