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


# ---------------------------------------------------------------------- one DP declaration
def _is_dp(cls: Any) -> bool:
    return getattr(cls, "dp", None) is not None


def test_every_dp_method_shows_its_dp_line_in_bioanon_methods(toy):
    out = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"}).output
    blocks = {b.split(":", 1)[0].split()[-1]: b for b in out.split("\n\n") if ":" in b}
    dp = [name for name, cls in methods().items() if _is_dp(cls)]
    assert toy in dp and len(dp) >= 5  # the test's own DP method and the five of the package
    for name in dp:
        text = " ".join(blocks[name].split())
        assert "differential privacy: " in text, f"{name}: no DP line in bioanon methods"
        units = methods()[name].dp.units
        assert ("privacy unit record (default) or identity" in text) == ("identity" in units)
    assert "differential privacy: epsilon (default 1); delta 1e-06 (default); privacy unit " \
           "record (default) or identity" in " ".join(blocks[toy].split())
    for name, cls in methods().items():  # and none for a method that declares no DP
        if not _is_dp(cls):
            assert "differential privacy: " not in blocks[name], name


def test_the_dp_line_is_read_from_the_one_declaration():
    doc = json.loads(CliRunner().invoke(app, ["methods", "--json"]).stdout)
    for m in doc["methods"]:
        cls = methods()[m["name"]]
        assert ("differential_privacy" in m) == _is_dp(cls), m["name"]
        assert not hasattr(cls, "dp_guarantee"), f"{m['name']}: a second DP declaration"
        if _is_dp(cls):
            assert m["differential_privacy"]["budget"].startswith(cls.dp.budget)


def _privacy_unit_help() -> str:
    page = CliRunner().invoke(app, ["release", "--help-all"], env={"COLUMNS": "80"}).output
    (entry,) = [e for e in page.split("\n  --") if e.startswith("privacy-unit ")]
    return " ".join(entry.split()).replace("- ", "-")  # lines broken after a hyphen rejoined


def test_the_privacy_unit_help_names_exactly_the_methods_declaring_each_unit(toy):
    text = _privacy_unit_help()
    record, _, identity = text.partition(" or identity ")
    named = set(methods())

    def listed(part: str) -> set[str]:
        return {w.strip(",.;()") for w in part.split()} & named

    want = {u: {n for n, c in methods().items() if _is_dp(c) and u in c.dp.units}
            for u in ("record", "identity")}
    assert toy in want["identity"] and "dp-cells" in want["identity"]
    assert listed(identity) == want["identity"]
    assert listed(record) == want["record"]


def test_the_privacy_unit_help_follows_a_method_that_drops_the_identity_unit(toy,
                                                                           monkeypatch):
    monkeypatch.setattr(_ToyDP, "dp", DPCapability(("record",), "a toy accountant"))
    record, _, identity = _privacy_unit_help().partition(" or identity ")
    assert toy not in identity and toy in record
