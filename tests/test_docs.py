"""The documentation cannot drift from the tool: every command it shows names flags that exist,
every link resolves, the generated methods page is current, and the README stays short.

The commands are run (on small data) by ``tests/test_readme_tours.py``; this module checks, in
seconds, what running cannot: the blocks marked ``no-run`` and the commands quoted in the prose.
The conventions are described in ``tests/docs_blocks.py``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main
from docs_blocks import DOCS, README, REPO, Command, commands, inline_code, pages, snippets
from typer.testing import CliRunner

from bioanon.cli import app

#: links to pages another branch adds (skipped while the file is missing, checked once it
#: exists): the utility floor and the trade-off table per level
PENDING = {"docs/levels-and-floor.md"}


def _cli() -> Any:
    """The command line as click sees it (typer's own copy of click: read by duck typing)."""
    group = typer.main.get_command(app)
    assert hasattr(group, "commands")
    return group


def _options(cmd: Any) -> dict[str, bool]:
    """Every option name of a command -> whether it takes a value."""
    out = {}
    for p in cmd.params:
        if p.param_type_name == "option":
            for name in [*p.opts, *p.secondary_opts]:
                out[name] = not (p.is_flag or p.count)
    out["--help"] = False
    return out


def _unknown_flags(argv: list[str]) -> tuple[str, list[str]]:
    """(the subcommand, the flags of ``bioanon ARGV`` that it does not declare)."""
    group = _cli()
    root = _options(group)
    k = 0
    while k < len(argv) and argv[k].startswith("-"):  # bioanon -q release ...
        assert argv[k] in root, f"unknown global flag {argv[k]}"
        k += 1
    assert k < len(argv), "no command"
    name = argv[k]
    assert name in group.commands, f"unknown command 'bioanon {name}'"
    opts = _options(group.get_command(None, name))  # as built to run: --no- forms, --help-all
    bad, rest = [], argv[k + 1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word.startswith("-") and not re.fullmatch(r"-[\d.]+(e-?\d+)?", word) and word != "-":
            flag = word.split("=", 1)[0]
            if flag not in opts:
                bad.append(flag)
            elif opts[flag] and "=" not in word:
                i += 1  # its value
        i += 1
    return name, bad


def all_commands() -> list[Command]:
    return [c for page in pages() for c in commands(page)]


def test_every_shell_line_is_a_command_the_tests_know():
    unknown = [f"{c.block.where}: {c.text}" for c in all_commands() if c.kind == "unknown"]
    assert not unknown, "shell lines of no known kind (see tests/docs_blocks.py):\n" + \
        "\n".join(unknown)


@pytest.mark.parametrize("cmd", [c for c in all_commands() if c.kind == "bioanon"],
                         ids=lambda c: c.block.where)
def test_every_documented_command_names_flags_that_exist(cmd):
    name, bad = _unknown_flags(cmd.argv)
    assert not bad, f"{cmd.block.where}: 'bioanon {name}' has no {bad}: {cmd.text}"


def _inline_commands() -> list[tuple[Path, str]]:
    out = []
    for page in pages():
        for span in inline_code(page):
            if re.match(r"(\.venv/bin/)?bioanon [a-z]", span) and "…" not in span:
                out.append((page, span))
    return out


@pytest.mark.parametrize(("page", "span"), _inline_commands(),
                         ids=[f"{p.name}:{s[:40]}" for p, s in _inline_commands()])
def test_every_command_quoted_in_the_prose_names_flags_that_exist(page, span):
    words = shlex.split(span.replace("...", ""))[1:]
    name, bad = _unknown_flags(words)
    assert not bad, f"{page.name}: `{span}`: 'bioanon {name}' has no {bad}"


def test_every_flag_quoted_in_the_prose_exists():
    """A span such as `--accept-risk LEVEL-RISK` names a flag of some bioanon command (or,
    on the benchmarks page and beside a benchmark, of a benchmark script)."""
    group = _cli()
    known = set(_options(group))
    for name in group.commands:
        known |= set(_options(group.get_command(None, name)))
    scripts = "".join(p.read_text() for p in (REPO / "benchmarks").glob("*.py"))
    bad = []
    for page in pages():
        for span in inline_code(page):
            for flag in re.findall(r"(?:^|[\s(/])(--[a-z][a-z0-9-]*[a-z0-9])(?![\w-])", span):
                if flag in known or f'"{flag}"' in scripts and (
                        page.name == "benchmarks.md" or "benchmarks/" in span):
                    continue
                bad.append(f"{page.name}: `{span}`")
    assert not bad, "flags that no command declares:\n" + "\n".join(bad)


def _declared_flags(tree: ast.AST) -> set[str]:
    """The option strings of every ``add_argument`` call under ``tree``."""
    return {a.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "add_argument"
            for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            and a.value.startswith("-")}


def _argparse_flags(script: Path) -> set[str]:
    """The option strings a benchmark's argparse declares (read, not run), with those that
    the functions it imports from a sibling benchmark declare (a parser built by a shared
    helper, e.g. ``basis_frontier.frontier_args``)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    flags = _declared_flags(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module
                and (script.parent / f"{node.module}.py").is_file()):
            continue
        names = {a.name for a in node.names}
        sibling = ast.parse((script.parent / f"{node.module}.py").read_text(encoding="utf-8"))
        flags |= {f for fn in ast.walk(sibling) if isinstance(fn, ast.FunctionDef)
                  and fn.name in names for f in _declared_flags(fn)}
    return flags | {"--help", "-h"}


@pytest.mark.parametrize("cmd", [c for c in all_commands() if c.kind == "benchmark"],
                         ids=lambda c: c.block.where)
def test_every_documented_benchmark_exists_with_its_flags(cmd):
    script = REPO / cmd.argv[0]
    assert script.is_file(), f"{cmd.block.where}: no {cmd.argv[0]}"
    flags = {w.split("=")[0] for w in cmd.argv[1:] if w.startswith("--")}
    bad = flags - _argparse_flags(script)
    assert not bad, f"{cmd.block.where}: {cmd.argv[0]} has no {sorted(bad)}"


def test_every_benchmark_named_anywhere_exists():
    """Docs, docstrings and comments name benchmark scripts that exist (renames followed)."""
    texts = [*pages(), *REPO.glob("src/bioanon/**/*.py"), *REPO.glob("benchmarks/*.py"),
             *REPO.glob("tests/*.py"), REPO / "Makefile"]
    missing = set()
    for path in texts:
        for name in re.findall(r"benchmarks/([a-z0-9_]+\.py)", path.read_text(encoding="utf-8")):
            if not (REPO / "benchmarks" / name).is_file():
                missing.add(f"{path.relative_to(REPO)}: benchmarks/{name}")
    assert not missing, sorted(missing)


def test_the_benchmarks_page_lists_every_script():
    page = (DOCS / "benchmarks.md").read_text()
    unlisted = [p.name for p in sorted((REPO / "benchmarks").glob("*.py"))
                if f"`{p.name}`" not in page]
    assert not unlisted, f"docs/benchmarks.md does not list {unlisted}"


def test_every_make_target_shown_exists():
    makefile = (REPO / "Makefile").read_text()
    for cmd in (c for c in all_commands() if c.kind == "make"):
        for target in cmd.argv:
            if "=" not in target:
                assert re.search(rf"^{re.escape(target)}:", makefile, re.M), cmd.text


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_every_link_resolves():
    bad = []
    for page in pages():
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # http:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            rel = file.relative_to(REPO).as_posix() if file.is_relative_to(REPO) else path
            if not file.exists():
                if rel not in PENDING:
                    bad.append(f"{page.name}: {target}")
                continue
            if anchor:
                heads = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
                if anchor not in {_slug(h) for h in heads}:
                    bad.append(f"{page.name}: {target} (no such heading)")
    assert not bad, "links that do not resolve:\n" + "\n".join(bad)


def test_every_docs_page_is_reachable_from_the_readme():
    seen, todo = set(), [README]
    while todo:
        page = todo.pop()
        if page in seen or not page.exists():
            continue
        seen.add(page)
        for target in re.findall(r"\]\(([^)#\s]+)", page.read_text(encoding="utf-8")):
            if target.endswith(".md") and not re.match(r"[a-z]+:", target):
                todo.append((page.parent / target).resolve())
    orphans = [p.name for p in DOCS.glob("*.md") if p.resolve() not in seen]
    assert not orphans, f"docs pages no link leads to from the README: {orphans}"


def test_the_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_methods_page_is_generated_from_bioanon_methods_json():
    spec = importlib.util.spec_from_file_location("gen_methods", DOCS / "gen_methods.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    res = CliRunner().invoke(app, ["methods", "--json"])
    assert res.exit_code == 0, res.output
    want = gen.render(json.loads(res.stdout))
    have = (DOCS / "methods.md").read_text(encoding="utf-8")
    assert have == want, ("docs/methods.md is stale: run `make docs` (docs/gen_methods.py) "
                          "and commit the page")
    names = {m["name"] for m in json.loads(res.stdout)["methods"]}
    assert all(f"\n## {n}\n" in have for n in names)


def test_the_architecture_page_names_every_layer():
    from test_import_graph import LAYERS

    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    missing = [m for layer in LAYERS for m in layer if f"`{m}`" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"
    pkgs = {p.name for p in (REPO / "src" / "bioanon").iterdir()
            if p.is_dir() and (p / "__init__.py").exists()}
    assert all(f"`bioanon.{p}`" in page for p in pkgs), pkgs


def test_every_python_snippet_parses():
    for page in pages():
        for block in snippets(page):
            compile(block.body, block.where, "exec")


def test_the_levels_table_is_the_code_s():
    """docs/certification.md shows the levels as bioanon.levels defines them."""
    from bioanon.levels import levels_table

    assert levels_table() in (DOCS / "certification.md").read_text(encoding="utf-8"), (
        "docs/certification.md's levels table differs from bioanon.levels.levels_table(): "
        "paste its output there")
