"""A declared feature layout (``--layout``, ``layout=``): checked in one place with one-line
errors; with it dp-cells uses the temporal DCT of the trajectories it states; without any
trajectory no setting is searched twice or labelled with a ``keep`` that had no effect, and
the manifest states the basis actually used."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bioanon.anonymize.dp_cells import DPCellsAnonymizer
from bioanon.anonymize.registry import build_method
from bioanon.certification.search import candidates
from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.layout import layout_dct_basis, parse_layout, with_layout
from bioanon.release import Roles, release
from bioanon.table import FeatureTable

runner = CliRunner()
ROLES = Roles(sensitive="identity", interest="expression")


@pytest.fixture(scope="module")
def owner_table() -> FeatureTable:
    """400 features named f0 … f399 (another pipeline's names: no NAME_tK)."""
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=400, random_state=0)
    assert t.feature_names[:2] == ["f0", "f1"]
    return t


@pytest.mark.parametrize("text, fault", [
    ("20by16", "is not a layout"),
    ("", "is not a layout"),
    ("20x16+", "is not a layout"),
    ("0x16+80", "at least 1 track"),
    ("20x0+80", "at least 1 step"),
    ("20x16", "lays out 320 features but the table has 400; add the 80"),
    ("20x20+80", "lays out 480 features but the table has 400"),
])
def test_layout_errors_are_one_line(text: str, fault: str) -> None:
    with pytest.raises(BioanonError, match=fault) as info:
        parse_layout(text, 400)
    assert "\n" not in str(info.value)


def test_a_layout_reads_in_column_order() -> None:
    lay = parse_layout("2x3+1+1x2", 9)
    assert lay.segments() == [(0, 3), (3, 3), (6, 1), (7, 2)]
    assert lay.n_trajectories == 3 and lay.text == "2x3+1+1x2"
    P = layout_dct_basis(lay, keep=1)
    assert P.shape == (4, 9) and np.allclose(P @ P.T, np.eye(4))
    assert np.allclose(P[0, :3], 1 / np.sqrt(3)) and np.allclose(P[0, 3:], 0)  # track 0 only
    assert np.allclose(P[2], np.eye(9)[6])  # the lone feature as it is


def test_a_declared_layout_gives_dp_cells_the_temporal_dct(owner_table: FeatureTable) -> None:
    table = with_layout(owner_table, "20x16+80")
    anon = DPCellsAnonymizer("expression", mu=4.0, cells=1, keep=4, bounds=(-10.0, 10.0),
                             random_state=0)
    out = release(table, anon, ROLES)
    basis = out.manifest["params"]["privacy"]["basis"]
    assert "temporal DCT" in basis and "20 trajectories of 16 steps" in basis, basis
    assert anon.stated_basis(400).shape == (20 * 4 + 80, 400)
    # the search states the layout in every dp-cells setting, and keeps keep
    labels = [c.label() for c in candidates(table, ["dp-cells"])[0]]
    assert labels and all("keep=4" in x and "layout=20x16+80" in x for x in labels), labels


def test_without_a_trajectory_the_identity_is_stated(owner_table: FeatureTable) -> None:
    anon = DPCellsAnonymizer("expression", mu=4.0, cells=1, keep=4, bounds=(-10.0, 10.0),
                             random_state=0)
    out = release(owner_table, anon, ROLES)
    basis = out.manifest["params"]["privacy"]["basis"]
    assert "identity" in basis and "temporal DCT of each trajectory:" not in basis, basis
    assert anon.stated_basis(400).shape == (400, 400)
    cands = candidates(owner_table, ["dp-cells"])[0]
    assert all("keep" not in c.params for c in cands)
    assert len({c.label() for c in cands}) == len(cands)


def test_settings_that_differ_only_by_a_void_keep_are_searched_once(
        owner_table: FeatureTable) -> None:
    space = ({"cells": 1, "mu": 4.0, "keep": 4}, {"cells": 1, "mu": 4.0, "keep": 8})
    original = DPCellsAnonymizer.search_space
    try:
        DPCellsAnonymizer.search_space = space  # type: ignore[misc]
        plain = candidates(owner_table, ["dp-cells"])[0]
        laid = candidates(with_layout(owner_table, "20x16+80"), ["dp-cells"])[0]
    finally:
        DPCellsAnonymizer.search_space = original  # type: ignore[misc]
    assert [c.label() for c in plain] == ["dp-cells(cells=1, mu=4)"]
    assert len(laid) == 2


def test_the_method_parameter_is_checked_too() -> None:
    with pytest.raises(BioanonError, match="is not a layout"):
        build_method("dp-cells", {"layout": "20by16"}, interest="expression")


def test_the_command_line_refuses_a_wrong_layout_before_work(owner_table, tmp_path) -> None:
    path = tmp_path / "in.csv"
    owner_table.write(path)
    for text, fault in (("20x16", "lays out 320 features but the table has 400"),
                        ("twenty", "is not a layout")):
        out = tmp_path / f"rel-{len(text)}.csv"
        res = runner.invoke(app, ["anonymize", str(path), "--out", str(out), "--interest",
                                  "expression", "--sensitive", "identity", "--label",
                                  "gender", "--label", "environment", "--method", "dp-cells",
                                  "--layout", text])
        assert res.exit_code == 2, res.output
        assert fault in res.output and "Traceback" not in res.output
        assert not out.exists()


def test_the_command_line_layout_reaches_the_manifest(owner_table, tmp_path) -> None:
    path = tmp_path / "in.csv"
    owner_table.write(path)
    out = tmp_path / "rel.csv"
    res = runner.invoke(app, ["anonymize", str(path), "--out", str(out), "--interest",
                              "expression", "--sensitive", "identity", "--label", "gender",
                              "--label", "environment", "--method", "dp-cells", "--param",
                              "keep=4", "--param", "bounds=-10,10", "--layout", "20x16+80"])
    assert res.exit_code == 0, res.output
    manifest = json.loads(next(tmp_path.glob("rel*.json")).read_text())
    assert "20 trajectories of 16 steps" in manifest["params"]["privacy"]["basis"]


def test_a_keep_no_trajectory_is_long_enough_for_is_searched_once(
        owner_table: FeatureTable) -> None:
    """keep=4 and keep=8 on trajectories of 4 steps both keep every coefficient: one setting,
    labelled without keep; on trajectories of 16 steps they differ."""
    space = ({"cells": 1, "mu": 4.0, "keep": 4}, {"cells": 1, "mu": 4.0, "keep": 8})
    original = DPCellsAnonymizer.search_space
    try:
        DPCellsAnonymizer.search_space = space  # type: ignore[misc]
        short = candidates(with_layout(owner_table, "100x4"), ["dp-cells"])[0]
        long = candidates(with_layout(owner_table, "20x16+80"), ["dp-cells"])[0]
    finally:
        DPCellsAnonymizer.search_space = original  # type: ignore[misc]
    assert [c.label() for c in short] == ["dp-cells(cells=1, mu=4, layout=100x4)"], \
        [c.label() for c in short]
    assert sorted(c.params["keep"] for c in long) == [4, 8]


def test_the_manifest_states_a_keep_that_cut_nothing(owner_table: FeatureTable) -> None:
    anon = DPCellsAnonymizer("expression", mu=4.0, cells=0, keep=50, layout="20x16+80",
                             bounds=(-10.0, 10.0), random_state=0)
    basis = release(owner_table, anon, ROLES).manifest["params"]["privacy"]["basis"]
    assert "all coefficients (keep=50: no trajectory has more than 16 steps" in basis, basis
    assert "the first 50 coefficients" not in basis


@pytest.mark.parametrize("layout, fault", [
    ("20x16+80", "keep=400 has no effect on this table: no trajectory has more than 16 steps"
                 ", so it keeps every coefficient; give keep below 16, or leave it out"),
    (None, "keep=400 has no effect on this table: the table lays out no trajectory (no "
           "NAME_tK feature names, no declared layout); declare the trajectories (--layout "
           "TRACKSxSTEPS, e.g. 20x16+80), or leave it out"),
])
def test_the_command_line_refuses_a_keep_with_no_effect(owner_table, tmp_path, layout,
                                                        fault) -> None:
    path = tmp_path / "in.csv"
    owner_table.write(path)
    before = path.read_bytes()
    for command in ("anonymize", "evaluate"):
        out = tmp_path / ("rel.csv" if command == "anonymize" else "judged")
        args = [command, str(path), "--out", str(out), "--interest", "expression",
                "--sensitive", "identity", "--method", "dp-cells", "--param", "keep=400",
                "--param", "bounds=-10,10", "--label", "gender", "--label", "environment"]
        if layout is not None:
            args += ["--layout", layout]
        res = runner.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert fault in " ".join(res.output.split()), res.output
        assert "Traceback" not in res.output and not out.exists()
    assert path.read_bytes() == before


def test_a_layout_for_a_method_that_reads_none_is_refused() -> None:
    """A declared layout only changes a method with a layout parameter (dp-cells' stated
    basis): given to another method, it was left without effect."""
    from bioanon import evaluate
    from bioanon.anonymize import SelectiveMeanAnonymizer

    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                       random_state=0)
    with pytest.raises(BioanonError, match="layout=4x8 has no effect with method "
                                           "'selective-mean'"):
        evaluate(t, "expression", "identity", layout="4x8",
                 anonymizer=SelectiveMeanAnonymizer("expression", g=8, t=0.5))


def test_a_layout_for_a_search_whose_methods_read_none_is_refused() -> None:
    """certify(methods=[...], layout=...) where no named method reads a layout: refused
    before any work; with dp-cells among them, or every method searched, it is not."""
    from bioanon import certify
    from bioanon.certification.settings import refuse_layout_no_method_reads

    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                       random_state=0)
    with pytest.raises(BioanonError, match="layout=4x8 has no effect with the methods noise"):
        certify(t, Roles(sensitive="identity", interest="expression"), methods=["noise"],
                layout="4x8")
    refuse_layout_no_method_reads(None, "4x8")
    refuse_layout_no_method_reads(["noise", "dp-cells"], "4x8")


def test_a_composition_reads_the_layout_its_first_method_reads() -> None:
    """dp-cells+leace reads the declared layout through dp-cells (a composition has no layout
    parameter of its own): accepted, where noise+leace is refused."""
    from bioanon.anonymize.registry import build_method, get_method
    from bioanon.certification.settings import refuse_layout_no_method_reads
    from bioanon.layout import reads_layout, refuse_unread_layout

    roles = {"interest": "expression", "sensitive": "identity"}
    refuse_unread_layout(build_method("dp-cells+leace", {}, **roles), "4x8")
    refuse_layout_no_method_reads(["noise", "dp-cells+leace"], "4x8")
    assert reads_layout(get_method("dp-cells")) and not reads_layout(get_method("noise"))
    with pytest.raises(BioanonError, match="has no effect"):
        refuse_unread_layout(build_method("noise+leace", {"sigma": 1.0}, **roles), "4x8")
