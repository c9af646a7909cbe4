"""The library speaks its own parameters: no ``--flag`` in the errors and warnings it raises
outside ``cli/``; the command line turns ``NAME=VALUE`` into flags in one place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import bioanon
from bioanon.cli.common import cli_message
from bioanon.errors import BioanonError

ROOT = Path(bioanon.__file__).parent
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

#: (module, flag) pairs allowed in a library message, each with its reason
ALLOWED = {
    # a pip option in the install hint, not a bioanon flag
    ("features/image.py", "--force-reinstall"),
}


def _messages(tree: ast.AST) -> list[ast.Constant]:
    """String constants (f-string parts included) inside raised exceptions and warnings."""
    calls: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            calls.append(node.exc)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("warn", "warning"):
                calls.append(node)
    return [c for call in calls for c in ast.walk(call)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def flags_in_library_messages() -> set[tuple[str, str, int]]:
    """``(module, flag, line)`` of every ``--flag`` in a library message outside ``cli/``."""
    found = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("cli/"):
            continue
        for const in _messages(ast.parse(path.read_text(encoding="utf-8"))):
            for flag in FLAG.findall(const.value):
                found.add((rel, flag, const.lineno))
    return found


def test_library_messages_name_no_flags():
    bad = sorted(f"{m}:{line}: {flag}" for m, flag, line in flags_in_library_messages()
                 if (m, flag) not in ALLOWED)
    assert not bad, "library messages naming command-line flags (name the parameter, "\
        "BioanonError(..., parameter=...)):\n" + "\n".join(bad)


def test_allowlist_is_not_stale():
    seen = {(m, flag) for m, flag, _ in flags_in_library_messages()}
    assert ALLOWED <= seen, f"allowed but no longer used: {sorted(ALLOWED - seen)}"


def test_the_scan_sees_flags(tmp_path):
    tree = ast.parse('raise BioanonError(f"pass --interest {x}")\nwarnings.warn("use --seed")\n'
                     'msg = "--not-raised"')
    found = [FLAG.findall(c.value) for c in _messages(tree)]
    assert sorted(sum(found, [])) == ["--interest", "--seed"]


@pytest.mark.parametrize(("message", "parameter", "cli"), [
    ("lower identities= to at most 5", "identities", "lower --identities to at most 5"),
    ("e.g. models=knn,forest", "models", "e.g. --models knn,forest"),
    ("(allow_replacement=True)", "allow_replacement", "(--allow-replacement)"),
    ("or pass force=True", "force", "or pass --force"),
    ("pass n_channels=6 (the number)", "params.n_channels",
     "pass --param n_channels=6 (the number)"),
    ("add sigma=VALUE", "params.sigma", "add --param sigma=VALUE"),
    ("lower bucket_size= or", "bucket_size", "lower --bucket-size or"),
    ("pass image_shape=(h, w) or", "image_shape", "pass --param image_shape=HxW or"),
    ("features=pixels or pass shape=(h, w)", ("features", "shape"),
     "--features pixels or pass --shape HxW"),
    ("columns (labels=COL) or", "labels", "columns (--label COL) or"),
    ("set with random_state=SEED, not", "random_state", "set with --seed SEED, not"),
    ("grid='g16' must look like KEY=V1,V2 (e.g. g=16)", "grid",
     "--grid 'g16' must look like KEY=V1,V2 (e.g. g=16)"),
    ("name it with interest=mood", "interest", "name it with --interest mood"),
    ("my_interest=x stays", "interest", "my_interest=x stays"),
])
def test_cli_turns_parameters_into_flags(message, parameter, cli):
    assert cli_message(BioanonError(message, parameter=parameter)) == cli


def test_library_errors_carry_their_parameter():
    import numpy as np

    from bioanon.anonymize.random_sets import assemble_sets
    from bioanon.attack.recognizers import parse_models
    from bioanon.attack.selection import identity_counts
    from bioanon.attack.threat import parse_modes
    from bioanon.tuning.grid_search import parse_grid

    rng = np.random.default_rng(0)
    cases = [(lambda: parse_models([]), "--models knn,forest"),
             (lambda: assemble_sets(np.array([0, 0, 1, 1]), 4, 1.0, rng),
              "with replacement (--allow-replacement)"),
             (lambda: parse_modes([]), "--attackers naive,parrot,linkage"),
             (lambda: identity_counts(5, "3,x"), "--identities '3,x'"),
             (lambda: identity_counts(5, [9]), "lower --identities to at most 5"),
             (lambda: parse_grid(["g16"]), "--grid 'g16' must look like")]
    from bioanon.anonymize.registry import build_method
    from bioanon.anonymize.relevance import retention_ignored

    cases += [(lambda: build_method("noise", {}), "add --param sigma=VALUE")]
    none = retention_ignored(0.1, {}, 0.0, {"accent": 0.1})["r_q"]
    stray = retention_ignored(0.1, {"age": 0.1}, 0.0, {"accent": 0.1})["r_q"]
    assert "--" not in none + stray
    assert "additional=COL" in none and "additional=accent" in stray
    for call, cli in cases:
        with pytest.raises(BioanonError) as info:
            call()
        assert "--" not in str(info.value)
        assert cli in cli_message(info.value)


# ---------------------------------------------------------------------- any library text
def cli_flags() -> set[str]:
    """Every flag the command line declares (``--no-`` forms included), from the app."""
    import typer

    from bioanon.cli import app

    flags: set[str] = set()

    def walk(cmd: object) -> None:
        for p in getattr(cmd, "params", []):
            flags.update(o for o in (*p.opts, *p.secondary_opts) if o.startswith("--"))
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return flags


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (documentation for developers, not text shown)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _flag_declarations(tree: ast.AST) -> set[int]:
    """ids of the strings inside a ``Flag(...)`` call: a release setting's command-line
    spelling and help, declared once beside the setting (:mod:`bioanon.certification.settings`)
    and read only by the command line (``cli/release_flags.py``)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Flag":
            out.update(id(n) for n in ast.walk(node)
                       if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return out


def flags_in_library_text(flags: set[str]) -> set[tuple[str, str, int]]:
    """``(module, flag, line)`` of every command-line flag in a string of the library outside
    ``cli/`` (messages, manifest and report texts, declared descriptions), docstrings aside."""
    found = set()
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("cli/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree) | _flag_declarations(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs):
                found.update((rel, f, node.lineno) for f in FLAG.findall(node.value)
                             if f in flags)
    return found


def test_library_text_names_no_flag_of_the_command_line():
    """The library names its parameters (``accept_risks=``, ``public=``); only the command
    line writes flags (:func:`bioanon.cli.common.cli_message`)."""
    flags = cli_flags()
    assert {"--accept-risk", "--public-data", "--out", "--level"} <= flags
    bad = sorted(f"{m}:{line}: {flag}" for m, flag, line in flags_in_library_text(flags))
    assert not bad, "library text naming command-line flags:\n" + "\n".join(bad)


def test_the_text_scan_sees_flags_but_not_docstrings(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "m.py").write_text('"""Run --out."""\nX = "give --out DIR"\nY = "--nosuch"\n')
    (pkg / "cli" / "c.py").write_text('X = "--out"\n')
    monkeypatch.setitem(globals(), "ROOT", pkg)
    assert flags_in_library_text({"--out"}) == {("m.py", "--out", 2)}
