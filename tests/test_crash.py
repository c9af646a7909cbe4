"""Crash safety: a release killed mid-write leaves the previous release and manifest intact.

The release runs through the command line in a subprocess whose writer pauses at a chosen
point (table half written, or table written and manifest being written); the test kills it
there with SIGKILL or SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bioanon.datasets import make_biometric
from bioanon.io import file_sha256
from bioanon.release import manifest_path, verify_release

SRC = Path(__file__).resolve().parents[1] / "src"

CHILD = textwrap.dedent("""
    import sys, time
    import bioanon.release_unit as rel
    from bioanon.table import FeatureTable

    point = sys.argv[1]
    real_write, real_temp = FeatureTable.write_to, rel.new_temp_path
    calls = []

    def slow_write(self, tmp, fmt=None):
        if point == "table":
            with open(tmp, "wb") as fh:
                fh.write(b"PAR1 half a table")
            print("PAUSED", flush=True)
            time.sleep(60)
        real_write(self, tmp, fmt)

    def slow_temp(path, suffix=None):
        p = real_temp(path, suffix)
        calls.append(p)
        if point == "manifest" and len(calls) == 2:
            p.write_text("{half a manifest")
            print("PAUSED", flush=True)
            time.sleep(60)
        return p

    FeatureTable.write_to = slow_write
    rel.new_temp_path = slow_temp
    from bioanon.cli import app
    app(sys.argv[2:])
""")


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _anonymize_args(src: Path, out: Path) -> list[str]:
    return ["anonymize", str(src), "-o", str(out), "--interest", "expression", "--sensitive",
            "identity", "--g", "8", "--t", "0.5"]


@pytest.mark.parametrize(("sig", "point"), [(signal.SIGKILL, "table"),
                                             (signal.SIGTERM, "manifest")],
                         ids=["SIGKILL-during-table", "SIGTERM-during-manifest"])
def test_killed_release_leaves_the_old_pair_intact(tmp_path, point, sig):
    from typer.testing import CliRunner

    from bioanon.cli import app

    src = tmp_path / "in.parquet"
    make_biometric(n_identities=4, records_per_identity=16, n_features=32,
                   random_state=0).write(src)
    out = tmp_path / "rel.parquet"
    first = CliRunner().invoke(app, _anonymize_args(src, out))
    assert first.exit_code == 0, first.output
    old_table, old_manifest = out.read_bytes(), manifest_path(out).read_bytes()

    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, point, *_anonymize_args(src, out)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = child.stdout.readline()
        assert "PAUSED" in line, child.stderr.read()
        assert _temps(tmp_path)  # a temporary is being written right now
        child.send_signal(sig)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    child.stdout.close()
    child.stderr.close()

    # the previous release and its manifest are untouched and belong together
    assert out.read_bytes() == old_table
    assert manifest_path(out).read_bytes() == old_manifest
    assert verify_release(out)
    assert json.loads(old_manifest)["output"]["sha256"] == file_sha256(out)
    if sig == signal.SIGTERM:  # handled like Ctrl-C: unwound, temporaries removed
        assert child.returncode == 130
        assert _temps(tmp_path) == []
    # the next run removes what a killed run left and writes a consistent pair
    again = CliRunner().invoke(app, _anonymize_args(src, out))
    assert again.exit_code == 0, again.output
    assert _temps(tmp_path) == []
    assert verify_release(out) and out.read_bytes() != old_table
