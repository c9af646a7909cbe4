"""Start-up: a command imports what it needs, and no more.

``bioanon --help`` lists every command without importing one (no pandas, no scikit-learn);
a release whose plan is refused reads the table and says so without the search's stack
(scikit-learn's models, torch, dask, matplotlib). Asserted on the modules a fresh
interpreter holds after the command, never on time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bioanon.anonymize.catalogue import METHOD_NAMES, TEXT_CHOICES
from bioanon.cli.app import COMMANDS
from bioanon.datasets import make_biometric

#: imported by no command's start-up
HEAVY = ("torch", "dask", "distributed", "matplotlib")

PROBE = """
import json, sys
from bioanon.cli import app
try:
    app(sys.argv[1:], prog_name="bioanon")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run(*args: str, full: bool = False) -> tuple[int, set[str]]:
    """A command's exit code and the packages it imported (``full``: every module)."""
    src = Path(__file__).resolve().parents[1] / "src"
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(src)}, check=False,
                         timeout=300)
    last = out.stdout.strip().splitlines()[-1]
    doc = json.loads(last)
    names = set(doc["modules"])
    return doc["code"], names if full else {m.split(".")[0] for m in names}


def test_help_imports_no_command_and_no_heavy_stack() -> None:
    code, modules = _run("--help")
    assert code == 0
    assert not modules & {*HEAVY, "sklearn", "pandas", "scipy"}, modules & {
        *HEAVY, "sklearn", "pandas", "scipy"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_help_imports_no_model_stack(command: str) -> None:
    """Every command's help, ``anonymize``'s and ``evaluate``'s included (their --method
    list and the choices of --relevance and --sampler): no model, no SciPy statistics
    (scikit-learn alone took seconds of a 4 s ``bioanon anonymize --help``)."""
    code, full = _run(command, "--help", full=True)
    modules = {m.split(".")[0] for m in full}
    assert code == 0
    assert not modules & {*HEAVY, "sklearn", "joblib"}, modules & {*HEAVY, "sklearn", "joblib"}
    assert "scipy.stats" not in full


def test_the_catalogue_names_every_registered_method_and_choice() -> None:
    """The help texts' catalogue (read without importing a method) is the registry's, in the
    order a fresh command sees it (registration follows import order: in this process other
    tests may have imported the methods in another)."""
    code = """
import json
from bioanon.anonymize.registry import methods
found = {}
for cls in methods().values():
    for name, p in getattr(cls, "params", {}).items():
        if p.kind == "str" and p.options:
            found.setdefault(name, {}).update(dict.fromkeys(p.options))
print(json.dumps([list(methods()), {k: list(v) for k, v in found.items()}]))
"""
    src = Path(__file__).resolve().parents[1] / "src"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(src)}, check=True, timeout=300)
    names, choices = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(METHOD_NAMES) == names
    assert {k: list(v) for k, v in TEXT_CHOICES.items()} == choices
    assert list(TEXT_CHOICES) == list(choices)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = make_biometric(n_identities=10, records_per_identity=60, n_features=32,
                       random_state=0)
    path = tmp_path_factory.mktemp("startup") / "tiny.parquet"
    t.write(path)
    return path


def test_a_refused_plan_stops_before_the_search_stack(tiny: Path) -> None:
    out = tiny.with_name("out.parquet")
    code, full = _run("release", str(tiny), "--sensitive", "identity", "--interest",
                      "expression", "-o", str(out), full=True)
    modules = {m.split(".")[0] for m in full}
    assert code == 2  # the plan refuses: 600 records of 10 people cannot show the level
    assert not out.exists()
    assert not modules & {*HEAVY, "sklearn", "joblib"}, modules & {*HEAVY, "sklearn", "joblib"}
    # scipy.stats loads scipy's optimizers, interpolators and sparse matrices (seconds on a
    # busy machine); the plan needs the normal quantile only (bioanon.metrics.normal)
    assert "scipy.stats" not in full
