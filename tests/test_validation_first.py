"""What the input decides is refused before any work, and a failing setting is named as such."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.anonymize import GaussianNoiseAnonymizer, SelectiveMeanAnonymizer
from bioanon.anonymize.base import SettingError
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import Roles, release


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=6, records_per_identity=20, n_features=32,
                          random_state=0)


@pytest.mark.parametrize("empty", [None, "", "  "])
def test_an_empty_label_is_refused_before_any_progress(table, empty):
    t = table.subset(np.arange(table.n_records))
    t.labels["expression"] = t.labels["expression"].astype(object)
    t.labels.loc[5, "expression"] = empty
    steps = []
    anon = SelectiveMeanAnonymizer(interest="expression", g=8, t=0.5, random_state=0)
    with pytest.raises(BioanonError, match=r"'expression' has 1 empty value\(s\) \(first at "
                                           r"record 5\)"):
        release(t, anon, Roles(interest="expression", sensitive="identity"),
                progress=lambda *a: steps.append(a))
    assert steps == []


def test_an_empty_column_name_is_refused_before_any_progress(table):
    steps = []
    anon = SelectiveMeanAnonymizer(interest="expression", g=8, t=0.5, random_state=0)
    with pytest.raises(BioanonError, match="empty column name given the role interest"):
        release(table, anon, Roles(interest="", sensitive="identity"),
                progress=lambda *a: steps.append(a))
    assert steps == []


def test_noise_that_overflows_is_a_bad_setting_not_bad_input(table):
    anon = GaussianNoiseAnonymizer(sigma=1e39, random_state=0).fit(table)
    with pytest.raises(SettingError, match=r"setting noise\(sigma=1e\+39\) produced .* from "
                                           r"finite input.*unusable \(the input is fine\)"):
        anon.release(table)
    with pytest.raises(BioanonError, match="the input is fine") as err:
        release(table, GaussianNoiseAnonymizer(sigma=1e39, random_state=0),
                Roles(sensitive="identity"))
    assert "impute" not in str(err.value)


def test_a_scheduler_that_accepts_no_connection_is_refused_at_once():
    import socket

    from bioanon.scale.cluster import check_scheduler_reachable

    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        check_scheduler_reachable(f"tcp://127.0.0.1:{port}")
    with pytest.raises(BioanonError,
                       match=rf"cannot reach the dask scheduler at tcp://127.0.0.1:{port} "):
        check_scheduler_reachable(f"tcp://127.0.0.1:{port}", timeout=2)
    with pytest.raises(BioanonError, match="must look like tcp://HOST:PORT"):
        check_scheduler_reachable("tcp://127.0.0.1:port")


def test_release_refuses_an_empty_label_before_printing_the_plan(table, tmp_path):
    """The table's labels are checked before the plan is printed: one error line, no plan
    (on Yale, empty 'expression' values were refused only after the plan's five rows)."""
    from typer.testing import CliRunner

    from bioanon.cli import app

    t = table.subset(np.arange(table.n_records))
    t.labels["expression"] = t.labels["expression"].astype(object)
    t.labels.loc[3, "expression"] = None
    src = tmp_path / "t.parquet"
    t.write(src)
    res = CliRunner().invoke(app, ["release", str(src), "-o", str(tmp_path / "rel.parquet"),
                                   "--interest", "expression", "--sensitive", "identity"])
    assert res.exit_code == 2, res.output
    assert "plan" not in res.output
    assert [ln for ln in res.output.splitlines() if ln.startswith("error:")] == [
        "error: label column 'expression' has 1 empty value(s) (first at record 3); fill or "
        "drop those records"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
