"""``--public-data`` without ``--epsilon``: public records as the source of a public basis."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from public_tables import FAST, FAST_CLI, ROLES, loose, loose_cli, private_and_public
from typer.testing import CliRunner

from bioanon.anonymize.dp_basis import DPBasisAnonymizer
from bioanon.anonymize.dp_cells import DPCellsAnonymizer
from bioanon.certification import certify
from bioanon.certification.public_basis import USED_FOR, PublicRecords, public_records
from bioanon.certification.search import SearchSpace
from bioanon.certification.settings import ReleaseSettings
from bioanon.cli import app
from bioanon.errors import BioanonError
from bioanon.table import FeatureTable

WHY = "test of the public basis"
LOOSE = loose(WHY)
LOOSE_CLI = loose_cli(WHY)


@pytest.fixture(scope="module")
def tables() -> tuple[FeatureTable, FeatureTable]:
    """(private, public): 10 people to release, 2 other people as public records."""
    return private_and_public()


@pytest.fixture()
def one_setting_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """dp-cells searched at one setting in the stated basis and one in the public basis."""
    monkeypatch.setattr(DPCellsAnonymizer, "search_space", ({"cells": 0, "mu": 4.0},))
    monkeypatch.setattr(DPCellsAnonymizer, "public_basis_space", (
        {"cells": 0, "mu": 4.0, "basis": "public", "rank": 8, "public_data": "public"},))


def _public_texts(public: FeatureTable) -> list[str]:
    """Values of the public records as a JSON file would spell them (7 characters)."""
    texts = [json.dumps(float(v))[:8] for v in public.X[:3].ravel().astype(np.float64)]
    return [t for t in texts if len(t) == 8]


# ---------------------------------------------------------------------- the settings
def test_public_records_add_the_public_basis_settings(tables) -> None:
    private, public = tables
    cands, _ = SearchSpace(public=PublicRecords(public, "pub.csv")).candidates(
        private, ["dp-cells"], "identity")
    plain = [c for c in cands if c.params.get("basis") != "public"]
    laid = [c for c in cands if c.params.get("basis") == "public"]
    assert len(plain) == len(DPCellsAnonymizer.search_space)
    assert len(laid) == len(DPCellsAnonymizer.public_basis_space)
    for c in laid:  # the label says the basis used; the records travel hidden
        assert "basis=public" in c.label() and "public_data=public" in c.label()
        assert np.array_equal(c.hidden["public_data"], public.X.astype(np.float64))
    every, _ = SearchSpace(public=PublicRecords(public)).candidates(private, None, "identity")
    assert {"dp-cells", "dp-basis"} <= {c.method for c in every
                                         if c.params.get("basis") == "public"}


def test_without_public_records_nothing_changes(tables) -> None:
    private, _ = tables
    cands, _ = SearchSpace().candidates(private, ["dp-cells"], "identity")
    assert all(c.params.get("basis") != "public" for c in cands)
    assert public_records(ReleaseSettings()) is None
    assert public_records(ReleaseSettings(public=np.zeros((2, 32)), epsilon=1.0)) is None


def test_dp_basis_declares_a_public_basis_setting() -> None:
    assert any(p.get("basis") == "public" for p in DPBasisAnonymizer.public_basis_space)


def test_the_attacker_is_told_the_public_basis(tables) -> None:
    """The public records are public: the model-aware attacker rebuilds the same basis."""
    private, public = tables
    est = DPCellsAnonymizer("expression", basis="public", rank=8, public_data=public.X)
    model = est.release_model()
    assert model is not None and model.public_basis is not None
    d = private.n_features
    assert np.allclose(model.public_basis.build(None, d), est.stated_basis(d))
    words = est.fit(private.X, private.labels).privacy_statement()["basis"]
    assert words == "principal directions of the public records (stated, no privacy cost)"


# ---------------------------------------------------------------------- the checks
def test_public_records_holding_a_person_of_the_input_are_refused(tables) -> None:
    private, public = tables
    labels = public.labels.copy()  # one record of the public table is an input person's
    labels.loc[labels.index[0], "identity"] = private.labels["identity"].iloc[0]
    mixed = FeatureTable(public.X, labels, public.feature_names)
    with pytest.raises(BioanonError, match=r"public= holds 1 person\(s\) of the input in "
                                           "column 'identity'"):
        certify(private, ROLES, public=mixed, methods=["dp-cells"], **FAST, **LOOSE)


def test_a_text_feature_of_the_public_table_is_named_by_its_type(tables, tmp_path) -> None:
    private, public = tables
    frame = public.to_frame()
    frame["f3"] = frame["f3"].astype(str) + "x"
    frame.to_csv(tmp_path / "pub.csv", index=False)
    texty = FeatureTable.read(tmp_path / "pub.csv")
    with pytest.raises(BioanonError, match="column 'f3' holds text"):
        certify(private, ROLES, public=texty, methods=["dp-cells"], **FAST, **LOOSE)


def test_the_input_itself_is_refused_as_public_records(tables) -> None:
    private, _ = tables
    with pytest.raises(BioanonError, match="shares 300 record"):
        certify(private, ROLES, public=private, methods=["dp-cells"], **FAST, **LOOSE)


def test_methods_that_take_no_public_basis_are_refused(tables) -> None:
    private, public = tables
    with pytest.raises(BioanonError, match="gives a public basis, which none of methods="):
        certify(private, ROLES, public=public, methods=["noise"], **FAST, **LOOSE)


def test_the_budget_options_still_need_epsilon(tables) -> None:
    private, public = tables
    with pytest.raises(BioanonError, match="delta= belongs to a declared privacy budget"):
        certify(private, ROLES, public=public, delta=1e-6, methods=["dp-cells"], **FAST,
                **LOOSE)


# ---------------------------------------------------------------------- end to end
def test_certify_with_public_records_states_what_they_were_used_for(
        tables, one_setting_each) -> None:
    private, public = tables
    out = certify(private, ROLES, public=public, public_name="dir/pub.csv",
                  methods=["dp-cells"], random_state=3, **FAST, **LOOSE)
    assert any("basis=public" in r["setting"] for r in out.rows)
    stated = out.manifest["public_data"]
    assert stated["name"] == "pub.csv" and stated["n_records"] == public.n_records
    params = out.manifest["params"]
    if params.get("basis") == "public":
        assert stated["used_for"] == USED_FOR
        assert params["public_data"].startswith("public")
        assert "principal directions of the public records" in params["privacy"]["basis"]
    else:
        assert stated["used_for"].startswith("nothing")
    assert out.report["public_data"] == stated
    assert "differential_privacy" not in out.manifest  # no budget, no epsilon claimed
    text = json.dumps(out.manifest) + out.report.to_json()
    assert not [v for v in _public_texts(public) if v in text]


def test_release_public_data_without_epsilon(tables, one_setting_each,
                                             tmp_path: Path) -> None:
    private, public = tables
    src, pub = tmp_path / "bio.parquet", tmp_path / "pub.csv"
    private.write(src)
    public.write(pub)
    out = tmp_path / "rel.parquet"
    res = CliRunner().invoke(app, [
        "release", str(src), "-o", str(out), "--interest", "expression", "--sensitive",
        "identity", "--identifying", "gender", "--identifying", "environment",
        "--methods", "dp-cells", "--public-data", str(pub), "--seed", "5", *FAST_CLI,
        *LOOSE_CLI])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "basis=public" in text and "epsilon" not in text.split("certified:")[-1]
    man = json.loads((tmp_path / "rel.parquet.manifest.json").read_text())
    assert man["public_data"]["name"] == "pub.csv"
    assert "differential_privacy" not in man


def test_the_public_class_means_basis_needs_labels_and_is_stated(tables) -> None:
    """``basis="public-lda"`` (the candidate of issue 43: between-class directions first, at
    no privacy cost): the public records' labels are needed, and the attacker is told."""
    private, public = tables
    with pytest.raises(BioanonError, match="needs public_labels"):
        DPCellsAnonymizer("expression", basis="public-lda", public_data=public.X).fit(
            private.X, private.labels)
    y = public.labels["expression"].to_numpy()
    est = DPCellsAnonymizer("expression", basis="public-lda", rank=8, public_data=public.X,
                            public_labels=y, mu=4.0, cells=0, random_state=0)
    released = est.fit_transform(private.X, private.labels)
    assert released.shape == private.X.shape
    P = est.stated_basis(private.n_features)
    assert P.shape == (8, private.n_features) and np.allclose(P @ P.T, np.eye(8))
    model = est.release_model()
    assert model is not None and model.public_basis is not None
    assert np.allclose(model.public_basis.build(None, private.n_features), P)
    assert est.public_params()["public_labels"] == "given (not written)"
