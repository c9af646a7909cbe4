"""``release`` and ``anonymize`` killed (SIGKILL) at every step of writing over a previous
release: afterwards there is the previous release or the new one, whole — never a table
without its manifest — and a refused ``release`` never touches the previous release.

One command runs in a subprocess up to the moment its release unit is staged
(:data:`bioanon.release_unit.STEPS`); there the step hook snapshots the output folder and,
for each step in turn, puts the snapshot back and forks a writer that goes on with the switch
and kills itself at that step; each killed writer's folder is moved aside for this test to
read (the search runs once per command, not once per step). Moved, not copied: the journal
recognises what the writer staged and kept by device and inode, as a recovery after a real
kill finds them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric
from bioanon.release_unit import (
    REFUSED_STEPS,
    STEPS,
    manifest_path,
    refused_report_path,
    report_path,
    verify_release,
)

SRC = Path(__file__).resolve().parents[1] / "src"

HARNESS = textwrap.dedent("""
    import os, shutil, signal, sys
    from pathlib import Path
    import bioanon.release_unit as ru

    work, results, steps = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(",")
    snapshot = results.parent / "snapshot"
    kill_at = [None]

    def hook(name):
        if kill_at[0] is not None:
            if name == kill_at[0]:
                os.kill(os.getpid(), signal.SIGKILL)
            return
        if name != "staged":
            return
        shutil.copytree(work, snapshot, symlinks=True)
        results.mkdir(parents=True)
        for step in steps:
            if work.exists():
                shutil.rmtree(work)
            shutil.copytree(snapshot, work, symlinks=True)
            pid = os.fork()
            if pid == 0:  # the writer: goes on with the switch, killed at its step
                kill_at[0] = step
                hook(name)
                return
            os.waitpid(pid, 0)
            os.rename(work, results / step)  # moved, not copied: the journal names inodes
        os._exit(0)

    ru._step_hook = hook
    from bioanon.cli import app
    app(sys.argv[4:], prog_name="bioanon")
""")

ROLES = ["--interest", "expression", "--sensitive", "identity", "--identifying", "gender",
         "--identifying", "environment"]
QUICK = ["--methods", "noise", "--models", "knn", "--attackers", "naive", "--jobs", "1",
         "--budget-minutes", "0.000001", "--seed", "1"]
ACCEPT = [a for risk in ("record-recognition", "record-membership", "record-inference",
                         "identity-membership", "identity-inference")
          for a in ("--accept-risk", risk, "--reason", "a kill test")]


@pytest.fixture(scope="module")
def previous(tmp_path_factory) -> tuple[Path, Path]:
    """(the input table, a folder holding a release made by anonymize: the previous one)."""
    d = tmp_path_factory.mktemp("previous")
    src = d / "in.parquet"
    make_biometric(n_identities=4, records_per_identity=16, n_features=32,
                   random_state=0).write(src)
    work = d / "work"
    work.mkdir()
    res = CliRunner().invoke(app, ["anonymize", str(src), "-o", str(work / "rel.parquet"),
                                   *ROLES, "--method", "noise", "--param", "sigma=1"])
    assert res.exit_code == 0, res.output
    return src, work


def _killed_at_every_step(previous: tuple[Path, Path], tmp_path: Path, steps: tuple[str, ...],
                          command: list[str]) -> tuple[dict[str, Path], bytes]:
    """Run ``command`` (writing ``rel.parquet`` in a copy of the previous release's folder),
    killed at each step in turn; return step -> the folder it left, and the previous
    manifest's bytes."""
    src, before = previous
    work = tmp_path / "work"
    shutil.copytree(before, work)
    results = tmp_path / "results"
    argv = [a.replace("{SRC}", str(src)).replace("{OUT}", str(work / "rel.parquet"))
            for a in command]
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-c", HARNESS, str(work), str(results),
                           ",".join(steps), *argv], env=env, capture_output=True, text=True,
                          timeout=300)
    left = {step: results / step for step in steps}
    assert all(f.is_dir() for f in left.values()), done.stdout + done.stderr
    return left, manifest_path(before / "rel.parquet").read_bytes()


def _which(folder: Path, previous_manifest: bytes) -> str:
    """'previous' or 'new' for the whole unit the reader finds (after it has put back what a
    killed writer left)."""
    out = folder / "rel.parquet"
    assert manifest_path(out).is_file(), "a table without its manifest"
    assert verify_release(out), "a manifest beside a table or report it does not name"
    return "previous" if manifest_path(out).read_bytes() == previous_manifest else "new"


@pytest.mark.parametrize("command", [
    ["anonymize", "{SRC}", "-o", "{OUT}", *ROLES, "--method", "noise", "--param", "sigma=2"],
    ["release", "{SRC}", "-o", "{OUT}", *ROLES, *QUICK, "--level", "0.99",
     "--target-advantage", "0.99", "--min-utility", "0", *ACCEPT],  # 64 records: no floor
], ids=["anonymize", "release"])
def test_a_command_killed_at_every_step_leaves_the_previous_release_or_the_new_one(
        previous, tmp_path, command):
    left, before = _killed_at_every_step(previous, tmp_path, STEPS, command)
    committed = STEPS.index("manifest-written")
    for step, folder in left.items():
        expected = "new" if STEPS.index(step) >= committed else "previous"
        assert _which(folder, before) == expected, step
        man = json.loads(manifest_path(folder / "rel.parquet").read_text())
        shown = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
        assert shown == ["rel.parquet", "rel.parquet.manifest.json",
                         *(["rel.parquet.report"] if man["report"] else [])], step
        assert man["method"] == "noise"


def test_a_refused_release_killed_at_every_step_leaves_the_previous_release(previous,
                                                                             tmp_path):
    """Noise leaves records' membership plain (advantage near 1, over the level's 0.7): the
    refused run writes the closest setting's report beside the previous release, which stays
    whole at every step."""
    kept = ACCEPT[:4] + ACCEPT[-8:]  # record-recognition and the identity level accepted
    command = ["release", "{SRC}", "-o", "{OUT}", *ROLES, *QUICK, "--level", "0.7", *kept]
    left, before = _killed_at_every_step(previous, tmp_path, REFUSED_STEPS, command)
    for step, folder in left.items():
        assert _which(folder, before) == "previous", step
        out = folder / "rel.parquet"
        assert (refused_report_path(out) / "report.json").is_file() == (
            step == "report-replaced")
        assert not report_path(out).exists()  # the previous release (by anonymize) had none
