"""``bioanon release --epsilon``: a declared DP budget, public side data, strict or not."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from public_tables import FAST, FAST_CLI, ROLES, loose, loose_cli, private_and_public
from typer.testing import CliRunner

from bioanon.anonymize.dp_basis import DPBasisAnonymizer
from bioanon.anonymize.dp_cells import DPCellsAnonymizer
from bioanon.anonymize.dp_mix import DPMixAnonymizer
from bioanon.anonymize.dp_synthetic import DPSyntheticAnonymizer
from bioanon.anonymize.registry import get_method
from bioanon.certification import certify
from bioanon.certification.dp_budget import NOT_STRICT_TEXT, DPBudget
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.privacy import PrivacyLeakWarning, public_bounds
from bioanon.table import FeatureTable

WHY = "test of the declared budget"
#: these tests are about the stated guarantee; the risks' own tests are in test_risks.py,
#: the utility floor's in test_min_utility.py (on this small table the consumer's pick on
#: the fresh split can sit under 0.8 x the clear data's pick)
LOOSE = loose(WHY)
LOOSE_CLI = loose_cli(WHY)


@pytest.fixture(scope="module")
def tables() -> tuple[FeatureTable, FeatureTable]:
    """(private, public): 10 people to release, 2 other people as public records."""
    return private_and_public()


def _bound_texts(public: FeatureTable) -> list[str]:
    """The public box's and centre's values as a JSON file would spell them."""
    lo, hi = public_bounds(public.X.astype(np.float64), quantile=0.01, margin=0.1)
    values = [*lo, *hi, *public.X.astype(np.float64).mean(axis=0)]
    texts = [json.dumps(float(v))[:8] for v in values]
    return [t for t in texts if len(t) == 8]  # 7 significant characters: no chance match


# ---------------------------------------------------------------------- the library
def test_certify_with_a_budget_and_public_data_is_strict_at_that_epsilon(tables) -> None:
    private, public = tables
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # strict: nothing from the data
        out = certify(private, ROLES, epsilon=4.0, public=public, public_name="dir/pub.csv",
                      random_state=3, **FAST, **LOOSE)
    assert out.rows and all(r["params"]["epsilon"] == 4.0 for r in out.rows)
    # one of the DP methods the budget searched (which one is the consumer's pick's to say)
    assert out.manifest["method"] in {r["method"] for r in out.rows}
    assert get_method(out.manifest["method"]).dp is not None
    assert out.manifest["params"]["epsilon"] == 4.0
    dp = out.manifest["differential_privacy"]
    assert dp["strict"] is True and dp["epsilon"] == 4.0 and dp["privacy_unit"] == "record"
    assert dp["delta"] == pytest.approx(1.0 / private.n_records ** 2)
    assert dp["public_data"]["name"] == "pub.csv" and dp["public_data"]["n_records"] == 60
    declared = get_method(out.manifest["method"]).dp  # the chosen method's one declaration
    assert declared is not None and dp["accountant"] == declared.accountant
    assert out.report["differential_privacy"] == dp
    assert out.report.summary()["differential_privacy"] == {  # --json's document
        "epsilon": 4.0, "delta": dp["delta"], "privacy_unit": "record", "strict": True}
    assert out.verdict["met"]  # the certificate's risks are still required
    # the values taken from the public people are named, never written
    params = out.manifest["params"]
    named = {k: params.get(k) for k in ("bounds", "center", "public_data")
             if params.get(k) is not None}  # dp-synthetic, dp-mix: bounds, center; dp-basis
    assert named and all(str(v).startswith("public") for v in named.values())
    text = json.dumps(out.manifest) + out.report.to_json()
    assert not [v for v in _bound_texts(public) if v in text]


def test_without_public_data_the_statement_says_not_strict(tables) -> None:
    private, _ = tables
    with pytest.warns(PrivacyLeakWarning) as said:
        out = certify(private, ROLES, epsilon=4.0, methods=["dp-synthetic"],
                      random_state=3, **FAST, **LOOSE)
    # said once, not once per candidate the search fitted (issue 46)
    assert sum(issubclass(w.category, PrivacyLeakWarning) for w in said) == 1
    dp = out.manifest["differential_privacy"]
    assert dp["strict"] is False and dp["statement"] == NOT_STRICT_TEXT
    assert "NOT STRICT" in dp["statement"] and dp["public_data"] is None
    assert out.manifest["params"]["privacy"]["strict"] is False
    assert out.manifest["params"]["bounds"] is None  # data-derived bounds are never kept
    assert out.report["differential_privacy"]["strict"] is False


def test_every_candidate_runs_at_exactly_the_declared_budget(tables) -> None:
    private, public = tables
    strict, _ = DPBudget(epsilon=0.5, delta=1e-7, public=public).candidates(
        private, None, "identity")
    assert {c.method for c in strict} == {"dp-synthetic", "dp-mix", "dp-basis"}
    assert {(c.params["epsilon"], c.params["delta"]) for c in strict} == {(0.5, 1e-7)}
    for c in strict:  # the public values travel hidden, never in the label
        assert c.hidden and all(c.params[k].startswith("public") for k in c.hidden)
        assert "[" not in c.label() and "array" not in c.label()
    # without public data: the registry's search space at that epsilon (dp-mix's three
    # settings differed only in epsilon: one is left)
    plain, _ = DPBudget(epsilon=0.5).candidates(private, None, "identity")
    assert [c.method for c in plain].count("dp-mix") == 1
    assert len(plain) == (len(DPSyntheticAnonymizer.search_space) + 1
                          + len(DPBasisAnonymizer.search_space)
                          + len(DPCellsAnonymizer.search_space))
    assert all(c.params["epsilon"] == 0.5 and not c.hidden for c in plain)


def test_the_identity_unit_leaves_out_dp_mix_and_bounds_each_person(tables) -> None:
    private, _ = tables
    cands, skipped = DPBudget(epsilon=2.0, privacy_unit="identity",
                              max_records_per_identity=5).candidates(private, None,
                                                                      "identity")
    assert {c.method for c in cands} == {"dp-synthetic", "dp-basis", "dp-cells"}
    why = {s["method"]: s["reason"] for s in skipped}  # every DP method, said why not
    assert sorted(why) == ["dp-mix", "smartnoise-dp"]  # both account for records only
    assert all(w.startswith("cannot hold privacy_unit=identity") for w in why.values())
    _, record = DPBudget(epsilon=2.0).candidates(private, None, "identity")
    assert record == [{"method": "smartnoise-dp",
                       "reason": "declares no settings to search (not searched at a budget)"}]
    assert all(c.params["privacy_unit"] == "identity"
               and c.params["max_records_per_identity"] == 5 for c in cands)
    statement = DPBudget(epsilon=2.0, privacy_unit="identity").statement(private, "identity")
    assert statement["delta"] == pytest.approx(1.0 / 10 ** 2)  # 10 identities
    assert statement["identity_column"] == "identity"


@pytest.mark.parametrize("budget, match", [
    (dict(epsilon=0.0), "epsilon="), (dict(epsilon=float("inf")), "epsilon="),
    (dict(epsilon=float("nan")), "epsilon="), (dict(epsilon=1.0, delta=1.0), "delta="),
    (dict(epsilon=1.0, privacy_unit="person"), "privacy_unit="),
    (dict(epsilon=1.0, max_records_per_identity=5), "identity only"),
    (dict(epsilon=1.0, privacy_unit="identity", max_records_per_identity=0),
     "positive integer"),
])
def test_a_bad_budget_is_one_line_naming_the_fix(tables, budget, match) -> None:
    private, _ = tables
    with pytest.raises(BioanonError, match=match):
        DPBudget(**budget).check(private, "identity")


def test_public_data_must_match_and_identity_needs_its_column(tables) -> None:
    private, public = tables
    narrow = FeatureTable(public.X[:, :30], public.labels, list(public.feature_names)[:30])
    with pytest.raises(BioanonError, match=r"lacks 2 feature column\(s\).*f30"):
        DPBudget(epsilon=1.0, public=narrow).check(private, "identity")
    with pytest.raises(BioanonError, match="fewer than 2 records"):
        DPBudget(epsilon=1.0, public=public.X[:1]).check(private, "identity")
    with pytest.raises(BioanonError, match="shares 3 record"):  # people in the release
        DPBudget(epsilon=1.0, public=np.r_[public.X, private.X[:3]]).check(private,
                                                                            "identity")
    with pytest.raises(BioanonError, match="needs the identity column"):
        DPBudget(epsilon=1.0, privacy_unit="identity").check(private, None)
    # the same columns in another order are aligned by name
    order = list(range(31, -1, -1))
    shuffled = FeatureTable(public.X[:, order], public.labels,
                            [public.feature_names[j] for j in order])
    assert np.array_equal(DPBudget(epsilon=1.0, public=shuffled).public_X(private),
                          public.X.astype(np.float64))


def test_certify_refuses_before_any_search(tables, monkeypatch) -> None:
    from bioanon.certification import search as search_mod

    def no_search(*a: Any, **k: Any) -> None:
        raise AssertionError("searched")

    monkeypatch.setattr(search_mod, "search", no_search)
    private, public = tables
    with pytest.raises(BioanonError, match="delta= belongs to a declared privacy budget"):
        certify(private, ROLES, delta=1e-6, **FAST)
    with pytest.raises(BioanonError, match=r"\['noise'\] do not take"):
        certify(private, ROLES, epsilon=1.0, methods=["noise"], **FAST)
    with pytest.raises(BioanonError, match="'dp-mix' cannot hold privacy_unit=identity"):
        certify(private, ROLES, epsilon=1.0, methods=["dp-mix"], privacy_unit="identity",
                **FAST)


def test_dp_mix_with_a_public_standardization_is_strict() -> None:
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=1)
    X = t.X.astype(np.float64) + 100.0  # the batch mean is far from the public centre
    loc, scale = np.full(32, 100.0), np.r_[np.ones(31), 0.0]
    est = DPMixAnonymizer("expression", g=8, epsilon=50.0, center=loc, scale=scale,
                          random_state=0)
    got_loc, got_scale = est._standardization(X)
    assert np.array_equal(got_loc, loc) and got_scale[-1] == 1.0  # scale 0 -> 1
    assert est.strict and not DPMixAnonymizer("expression").strict
    rel = est.fit(X, t.labels).release_result(X, t.labels)
    assert rel.info["strict"] is True and "public standardization" in rel.info["unit"]
    params = est.public_params()  # arrays are named, never written
    assert params["center"] == "ndarray" and json.dumps(params)


def test_public_params_write_no_array_values() -> None:
    est = DPSyntheticAnonymizer("a", bounds=(np.full(3, -1.5), np.full(3, 2.5)),
                                center=np.zeros(3))
    text = json.dumps(est.public_params())
    assert "-1.5" not in text and "2.5" not in text


# ---------------------------------------------------------------------- the command line
def test_release_epsilon_public_data_writes_the_statement(tables, tmp_path: Path) -> None:
    private, public = tables
    src, pub = tmp_path / "bio.parquet", tmp_path / "pub.csv"
    private.write(src)
    public.write(pub)
    out = tmp_path / "rel.parquet"
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(out), "--interest", "expression", "--sensitive",
        "identity", "--identifying", "gender", "--identifying", "environment",
        "--epsilon", "2", "--delta", "1e-6", "--public-data", str(pub), "--seed", "5",
        "--min-utility", "0",  # epsilon 2 on 300 records keeps ~0.6 x clear: no floor here
        *FAST_CLI, *LOOSE_CLI])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "differential privacy: epsilon 2, delta 1e-06 (given), privacy unit record; " \
           "strict" in text
    man = json.loads((tmp_path / "rel.parquet.manifest.json").read_text())
    dp = man["differential_privacy"]
    assert (dp["epsilon"], dp["delta"], dp["strict"]) == (2.0, 1e-6, True)
    assert dp["public_data"]["name"] == "pub.csv"
    html = (tmp_path / "rel.parquet.report" / "report.html").read_text()
    assert "Differential privacy (declared budget)" in html and "epsilon 2" in html
    written = (tmp_path / "rel.parquet.manifest.json").read_text() + \
        (tmp_path / "rel.parquet.report" / "report.json").read_text() + html
    assert not [v for v in _bound_texts(public) if v in written]
