"""A release option is declared once (:data:`bioanon.certification.settings.SETTINGS`): its
default, constraint, paths, whether the search reads it and its flag; the command line, the
checks, the three front doors and the search all read that declaration.

The first test declares a new option (before the command line is imported, in a fresh
interpreter) and follows it to ``bioanon release``'s flag, its range check (command line and
library), and the search's keyword, with no other edit. The second counts where each declared
option is spelled out as a declaration in ``src/``: exactly once.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

from bioanon.certification.settings import SETTINGS, ReleaseSettings, source_for

SRC = Path(__file__).resolve().parents[1] / "src" / "bioanon"

PROBE = r'''
import json, sys
from pathlib import Path
from bioanon.anonymize.params import Param
from bioanon.certification import settings
settings.declare(settings.Setting(
    "toy_panels", 3, Param("int", low=1, help="a toy count, e.g. 3"), "a toy option",
    search=True, flag=settings.Flag("--toy-panels", int, 3, "A toy option of the test.")))

from typer.testing import CliRunner
from bioanon.cli import app
from bioanon.certification import certify
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.release import Roles
import bioanon.certification.search as search_pkg

class Reached(Exception):
    pass

seen = []
def fake_search(*args, **kwargs):
    seen.append(kwargs.get("toy_panels"))
    raise Reached()
search_pkg.search = fake_search

out = {}
runner = CliRunner()
out["help"] = "--toy-panels" in runner.invoke(app, ["release", "--help-all"]).output
t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
path = Path(sys.argv[1]) / "t.parquet"
t.write(path)
loose = ["--level", "0.5", "--target-advantage", "0.5", "--accept-risk",
         "identity-membership", "--accept-risk", "identity-inference", "--reason", "a test",
         "--methods", "noise"]
bad = runner.invoke(app, ["release", str(path), "--interest", "expression", "--sensitive",
                          "identity", "-o", str(path.with_name("o.parquet")),
                          "--toy-panels", "0", *loose])
out["cli_bad"] = [bad.exit_code, bad.output.strip().splitlines()[-1]]
runner.invoke(app, ["release", str(path), "--interest", "expression", "--sensitive",
                    "identity", "-o", str(path.with_name("o.parquet")), "--toy-panels", "7",
                    *loose])
out["cli_search"] = list(seen)
roles = Roles(sensitive="identity", interest="expression")
why = {"identity-membership": "a test", "identity-inference": "a test"}
try:
    certify(t, roles, methods=["noise"], level=0.5, target=0.5, accept_risks=why,
            toy_panels=0)
except BioanonError as exc:
    out["library_bad"] = str(exc)
try:
    certify(t, roles, methods=["noise"], level=0.5, target=0.5, accept_risks=why,
            toy_panels=5)
except Reached:
    pass
out["library_search"] = seen[-1]
out["default_search"] = settings.ReleaseSettings().toy_panels
print(json.dumps(out))
'''


def test_a_new_release_option_reaches_flag_check_and_search_with_no_other_edit(tmp_path):
    src = Path(__file__).resolve().parents[1] / "src"
    res = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(src)}, check=False,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["help"]  # the flag, with its help
    assert out["cli_bad"] == [2, "error: --toy-panels 0 is out of range; use an integer >= 1 "
                                 "(a toy count, e.g. 3)"]
    assert out["cli_search"] == [7]  # the typed value reached the search's keyword
    assert out["library_bad"] == ("toy_panels=0 is out of range; use an integer >= 1 (a toy "
                                  "count, e.g. 3)")
    assert out["library_search"] == 5 and out["default_search"] == 3


def _lists_settings(nodes: list[ast.AST], name: str) -> bool:
    """Whether ``nodes`` spell ``name`` among three or more release settings' names: a list
    of which settings something takes (a pair of callbacks named elsewhere is not one)."""
    names = {n.value for n in nodes if isinstance(n, ast.Constant)} & set(SETTINGS)
    return name in names and len(names) >= 3


@functools.lru_cache(maxsize=4)
def _parsed(src: Path) -> tuple[tuple[str, tuple[ast.AST, ...]], ...]:
    """Every node of every module under ``src``, by its path there (parsed once: each
    setting is looked for in all of them)."""
    return tuple((f"{path.relative_to(src)}",
                  tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
                 for path in sorted(src.rglob("*.py")))


def _declarations(name: str, flag: str | None) -> list[str]:
    """Where ``src/`` spells setting ``name`` (or its ``flag``) out as a declaration: a
    ``Setting(NAME, ...)``, a ``Flag(FLAG, ...)`` or ``bioanon release``'s own
    ``typer.Option(FLAG, ...)`` (other commands may have a flag of that spelling), a
    class-level field ``NAME: ...``, a key ``"NAME": Param(...)`` (a table of ranges of the
    command line or the certification; a method's own parameters are its business), an
    element of a set or frozenset listing
    release settings, or a pass-through to the search
    (``run_search(..., NAME=settings.NAME)``: the search takes the declared ones itself)."""
    flags = {flag, *(flag or "").split("/")} - {None, ""}
    found = []
    for where, nodes in _parsed(SRC):
        for node in nodes:
            if isinstance(node, ast.Call):
                fn = ast.unparse(node.func)
                first = node.args[0] if node.args else None
                text = first.value if isinstance(first, ast.Constant) else None
                if fn.endswith("Setting") and text == name:
                    found.append(f"{where}:{node.lineno} Setting")
                if text in flags and (fn.endswith("Flag") or (
                        fn.endswith("Option") and where == "cli/release.py")):
                    found.append(f"{where}:{node.lineno} {fn}")
                for kw in node.keywords:
                    value = kw.value
                    if kw.arg == name and fn.endswith(("run_search", "search")) \
                            and isinstance(value, ast.Attribute) and value.attr == name:
                        found.append(f"{where}:{node.lineno} pass-through")
                if fn in ("frozenset", "set") and _lists_settings(
                        [c for a in node.args if not isinstance(a, ast.Set)
                         for c in ast.walk(a)], name):  # a set literal is counted below
                    found.append(f"{where}:{node.lineno} a set of names")
            elif isinstance(node, ast.ClassDef):
                found += [f"{where}:{s.lineno} field" for s in node.body
                          if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                          and s.target.id == name and node.name.endswith("Settings")]
            elif isinstance(node, ast.Dict) and where.startswith(("cli", "certification")):
                found += [f"{where}:{node.lineno} range" for k, v in
                          zip(node.keys, node.values, strict=True)
                          if isinstance(k, ast.Constant) and k.value == name
                          and isinstance(v, ast.Call) and ast.unparse(v.func) == "Param"]
            elif isinstance(node, ast.Set) and _lists_settings(node.elts, name):
                found.append(f"{where}:{node.lineno} a set of names")
    return found


def test_every_release_option_is_declared_once():
    for name, setting in SETTINGS.items():
        flag = setting.flag.flag.split(" ")[0] if setting.flag else None
        found = _declarations(name, flag)
        want = 2 if flag else 1  # its Setting, and its Flag inside it
        assert len(found) == want, f"{name}: declared in {found}"


def test_the_count_sees_a_second_declaration(tmp_path, monkeypatch):
    """The count above could fail: a range table or a set of names spelling an option out
    again is found."""
    import tests.test_release_settings as me

    extra = tmp_path / "bioanon"
    extra.mkdir()
    (extra / "stray.py").write_text('RANGES = {"budget_minutes": Param("float")}\n'
                                    'NAMES = frozenset({"exhaustive", "methods", '
                                    '"progress"})\n', encoding="utf-8")
    monkeypatch.setattr(me, "SRC", extra)
    assert len(_declarations("budget_minutes", None)) == 1
    assert len(_declarations("exhaustive", None)) == 1


def test_each_path_takes_the_settings_it_always_took():
    dask = {"methods", "random_state", "budget_minutes", "exhaustive", "min_utility",
            "tradeoff_panels", "report_closest", "keep_sensitive", "keep_as_feature",
            "progress", "on_plan"}
    budget = {"epsilon", "delta", "public", "public_name", "privacy_unit",
              "max_records_per_identity"}
    assert ReleaseSettings.taken_by("bucketed") == dask
    assert ReleaseSettings.taken_by("streamed") == dask | budget
    assert ReleaseSettings.taken_by("memory") == set(SETTINGS)
    assert source_for() == "memory" and source_for(dask=True) == "bucketed"
    assert source_for(scheduler="tcp://h:1", epsilon=1.0) == "streamed"
