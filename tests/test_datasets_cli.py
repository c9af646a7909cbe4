"""``bioanon datasets``: what the data home holds, as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets.catalog import list_datasets

runner = CliRunner()


def _fake_home(tmp_path):
    home = tmp_path / "home"
    (home / "voices").mkdir(parents=True)
    (home / "voices" / "README.md").write_text(
        "# Voices of nobody\n\nSome text.\n- Licence: **CC0 1.0**, do as you like.\n")
    (home / "voices" / "labels.csv").write_text(
        "file,speaker,digit\na.wav,ann,1\nb.wav,bob,2\nc.wav,ann,2\n")
    (home / "notes").mkdir()  # no README, no labels: not a dataset
    (home / "notes" / "x.txt").write_text("x")
    return home


def test_lists_a_fake_home_with_json(tmp_path):
    home = _fake_home(tmp_path)
    res = runner.invoke(app, ["datasets", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc == {"datasets": [{"name": "voices", "title": "Voices of nobody", "records": 3,
                                 "labels": {"speaker": 2, "digit": 2}, "segments": None,
                                 "segment_labels": {}, "licence": "CC0 1.0",
                                 "loader": None}]}
    assert str(tmp_path) not in res.stdout  # no absolute paths in the JSON
    res = runner.invoke(app, ["datasets", "--home", str(home)])
    assert res.exit_code == 0 and "voices" in res.output and "CC0 1.0" in res.output


def test_missing_home_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("BIOANON_DATA", str(tmp_path / "nowhere"))
    res = runner.invoke(app, ["datasets"])
    assert res.exit_code == 2 and "set BIOANON_DATA" in res.output
    assert "Traceback" not in res.output
    afile = tmp_path / "labels.csv"
    afile.write_text("file\n")
    res = runner.invoke(app, ["datasets", "--home", str(afile)])
    assert res.exit_code == 2 and "is a file, not a folder" in res.output


def test_without_bioanon_data_the_home_is_found_or_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("BIOANON_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    res = runner.invoke(app, ["datasets"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "BIOANON_DATA is not set" in res.output and "../shared/datasets" in res.output
    assert len(res.output.strip().splitlines()) <= 2  # one line (wrapped at most once)
    home = tmp_path / "shared" / "datasets" / "voices"
    home.mkdir(parents=True)
    (home / "README.md").write_text("# Voices\n")
    res = runner.invoke(app, ["datasets", "--json"])
    assert res.exit_code == 0 and '"voices"' in res.output


def test_the_real_data_home(data_home):
    found = {d["name"]: d for d in list_datasets(data_home)}
    assert found["fsdd"]["records"] == 3000 and found["fsdd"]["labels"]["speaker"] == 6
    assert found["fsdd"]["licence"] == "CC BY-SA 4.0"
    assert found["yale_faces"]["records"] == 164
    assert "research" in found["yale_faces"]["licence"]
    assert found["sp_sw_har"]["loader"] == "bioanon.datasets.load_sp_sw_har"


def test_labels_given_per_segment_are_listed(data_home):
    """SP-SW-HAR's utility label, the activity, is given per window in segments.csv: the
    listing names it (with the segments' count), not only the per-stream labels."""
    found = {d["name"]: d for d in list_datasets(data_home)}
    har = found["sp_sw_har"]
    assert har["segment_labels"]["activity"] == 5 and har["segments"] == 3525
    assert "start_row" not in har["segment_labels"] and "subject" not in har["segment_labels"]
    assert found["fsdd"]["segments"] is None and found["fsdd"]["segment_labels"] == {}
    res = CliRunner().invoke(app, ["datasets", "--home", str(data_home)])
    said = " ".join(res.output.split())  # a table cell: words may wrap, never vanish
    assert "per segment" in said and "(3,525):" in said and "activity" in said


def test_bioanon_data_naming_a_file_says_so(tmp_path, monkeypatch):
    """``BIOANON_DATA`` set to a file was refused as "not found" (``--home`` said "is a
    file")."""
    monkeypatch.setenv("BIOANON_DATA", str(tmp_path / "f.txt"))
    (tmp_path / "f.txt").write_text("x")
    res = runner.invoke(app, ["datasets"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: data home '{tmp_path / 'f.txt'}' (from BIOANON_DATA) "
                                 "is a file, not a folder; set BIOANON_DATA"), res.output
