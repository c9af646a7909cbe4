"""Every function of the package stays small: none over 120 lines, none over 15 parameters
(command-line commands and estimator constructors excepted: their parameters are the user's
options). Measured with :mod:`ast` (a method's ``self`` is not counted; ``*args`` and
``**kwargs`` count one each)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "bioanon"
#: every module of the package
MODULES = ["**/*.py"]
MAX_LINES, MAX_PARAMS = 120, 15


def functions() -> list[tuple[str, int, int, bool]]:
    """(module:function, lines, parameters, exempt from the parameter rule) of every
    function of :data:`MODULES`."""
    out = []
    for pattern in MODULES:
        for path in sorted(SRC.glob(pattern)):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                a = node.args
                n = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                     + (a.vararg is not None) + (a.kwarg is not None))
                if a.args and a.args[0].arg in ("self", "cls"):
                    n -= 1
                command = any("command" in ast.unparse(d) for d in node.decorator_list)
                exempt = command or node.name == "__init__"
                name = f"{path.relative_to(SRC)}:{node.name}"
                out.append((name, node.end_lineno - node.lineno + 1, n, exempt))
    return out


def test_no_function_of_the_release_path_is_too_long():
    long = [(n, lines) for n, lines, _, _ in functions() if lines > MAX_LINES]
    assert not long, f"over {MAX_LINES} lines: {long}"


def test_no_function_of_the_release_path_takes_too_many_parameters():
    many = [(n, p) for n, _, p, exempt in functions() if p > MAX_PARAMS and not exempt]
    assert not many, f"over {MAX_PARAMS} parameters: {many}"


def test_the_measure_sees_the_release_command():
    found = {n: (lines, p, exempt) for n, lines, p, exempt in functions()}
    lines, params, exempt = found["cli/release.py:release_command"]
    assert exempt and params > MAX_PARAMS  # the command's flags: exempt, and counted
