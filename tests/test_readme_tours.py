"""The tours of the README and docs/ are run: every ``bioanon …`` command of their code blocks.

The commands are read from the Markdown (``tests/docs_blocks.py``: so the documentation cannot
drift from the tool), the README first and then the docs pages in name order, and run in a
temporary folder in that order, the extraction commands first (the others read their
outputs); blocks marked ``no-run`` are only parsed (``tests/test_docs.py`` checks their
flags). ``$BIOANON_DATA`` (and ``../shared/datasets``) become the data home. To keep the suite
fast, the voice table the extraction writes is cut to 20 takes per speaker and digit (1,200 of
3,000 recordings; every label column kept), and flags that only make a command slower are
swapped for their fast forms (``FAST``): the commands, flags and file names are the docs' own.
The dask tour's ``big.parquet`` is the voice table; a command with a placeholder (``...``,
``HOST``) cannot run as written and is only checked to be a known command; a ``> FILE``
redirect writes the command's stdout to FILE. The Python snippets run as written (a test of
their own, beside the commands'), in the same order, on the whole voice table the README's
extraction writes, with the judge's panel made small.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import typer
from docs_blocks import README, commands, pages, snippets
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.table import FeatureTable

#: README flag -> fast flag (same meaning, smaller panel); README stand-in -> real file
FAST = {"--models all": "--models knn", "--selection auto": "--selection none",
        "big.parquet": "voice.parquet"}
PLACEHOLDERS = (" ... ", "HOST")
#: added to commands of these kinds (a small panel and budget; never changes what is checked)
#: (the tours' voice table is a 1,200-record subset, where neither the default level's record
#: target nor recognition's 0.05 can be shown and the plan would stop the run: looser targets
#: keep the tour running)
#: (the consumer's panel is the ranking panel's two linear models: its whole panel, and
#: gradient boosting's ten-class fits above all, is tested in tests/test_consumer.py)
EXTRA = {"release": ["--models", "knn", "--attackers", "naive,parrot,reverse",
                     "--methods", "selective-mean", "--budget-minutes", "1", "--jobs", "1",
                     "--level", "0.2", "--target-advantage", "0.1",
                     "--consumer-panel", "ranking"],
         "tune": ["--models", "knn", "--attackers", "naive,parrot,reverse",
                  "--consumer-panel", "ranking"],
         "evaluate": ["--jobs", "1", "--models", "knn", "--attackers", "naive,parrot,reverse",
                      "--consumer-panel", "ranking"]}


def readme_commands(runnable: bool = True) -> list[str]:
    """Every ``bioanon …`` command of the README's and docs' shell blocks, in order (with
    ``runnable``, those of blocks not marked ``no-run``)."""
    return [c.text for page in pages() for c in commands(page)
            if c.kind == "bioanon" and (c.block.run or not runnable)]


def _expand(line: str, home: Path) -> str:
    """The data home for ``$BIOANON_DATA``, ``${BIOANON_DATA:-…}`` and ``../shared/datasets``."""
    line = re.sub(r"\$\{BIOANON_DATA(:-[^}]*)?\}|\$BIOANON_DATA", str(home), line)
    return line.replace("../shared/datasets", str(home))


def test_the_docs_have_tours_for_every_main_command():
    kinds = {shlex.split(c)[1] for c in readme_commands()}
    assert {"release", "anonymize", "evaluate", "tune", "extract", "preview", "methods",
            "datasets"} <= kinds
    readme = {shlex.split(c.text)[1] for c in commands(README) if c.kind == "bioanon"}
    assert {"extract", "release"} <= readme  # the first five minutes


def with_extra(args: list[str]) -> list[str]:
    """``args`` with the test's faster options (:data:`EXTRA`): an option the command already
    gives takes the faster value in its place (an option given twice is refused), any other
    is added.

    >>> with_extra(["tune", "t.parquet", "--models", "all", "--grid", "g=8"])[:7]
    ['tune', 't.parquet', '--models', 'knn', '--grid', 'g=8', '--attackers']
    >>> with_extra(["tune", "t.parquet", "--grid", "g=8"])[-2:]
    ['--consumer-panel', 'ranking']
    """
    out = list(args)
    extra = EXTRA.get(args[0], [])
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        if flag in out:
            out[out.index(flag) + 1] = value
        else:
            out += [flag, value]
    return out


@pytest.mark.slow
def test_every_readme_command_runs(data_home, tmp_path, monkeypatch):
    monkeypatch.setenv("BIOANON_DATA", str(data_home))
    cmds = readme_commands()
    cmds = sorted(cmds, key=lambda c: shlex.split(c)[1] != "extract")  # stable: extract first
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    known = set(typer.main.get_command(app).list_commands(None))  # type: ignore[attr-defined]
    ran, skipped = 0, 0
    for cmd in cmds:
        if any(p in cmd for p in PLACEHOLDERS):  # not runnable as written
            assert shlex.split(cmd)[1] in known, cmd
            skipped += 1
            continue
        line = _expand(cmd, data_home)
        for slow, fast in FAST.items():
            line = line.replace(slow, fast)
        line, _, redirect = line.partition(" > ")
        args = with_extra(shlex.split(line)[1:])
        res = runner.invoke(app, args)
        ran += 1
        if redirect:
            Path(redirect.strip()).write_text(res.stdout)
            json.loads(res.stdout)  # the redirected output is the one JSON document
        # release: 1 is its honest "nothing met the target" (no output); anything else fails
        ok = (0, 1) if args[0] == "release" else (0,)
        assert res.exit_code in ok, f"documented command failed: {cmd}\n{res.output}"
        assert res.exception is None or isinstance(res.exception, SystemExit), cmd
        if args[0] == "release" and res.exit_code == 1:  # nothing written at its output
            written = Path(args[args.index("-o") + 1])
            assert "closest" in res.output and not written.exists(), cmd
        if args[:2] == ["extract", "voice"]:
            t = FeatureTable.read("voice.parquet")
            keep = (t.labels["take"].astype(int) < 20).to_numpy().nonzero()[0]
            Path("voice.parquet").unlink()
            t.subset(keep).write("voice.parquet")
    # only the placeholders (a scheduler's HOST) are not run
    assert ran == len(cmds) - skipped and skipped <= 2


@pytest.mark.slow
def test_every_readme_snippet_runs(data_home, tmp_path, monkeypatch):
    """The Python snippets, in order, in one namespace, on the whole voice table (the
    snippets' settings, g=64 with t=0.8, need FSDD's 300 records per digit), which the
    README's own extraction command writes first: a test of its own, so that it runs beside
    the commands' tour (they read no file the commands write)."""
    monkeypatch.setenv("BIOANON_DATA", str(data_home))
    monkeypatch.chdir(tmp_path)
    extract = next(c for c in readme_commands() if shlex.split(c)[1:3] == ["extract", "voice"])
    res = CliRunner().invoke(app, shlex.split(_expand(extract, data_home))[1:])
    assert res.exit_code == 0 and Path("voice.parquet").is_file(), res.output
    run_python_snippets(monkeypatch)


def readme_snippets() -> list[tuple[str, str]]:
    """(where, code) of every Python block of the README and docs to run, in order."""
    return [(b.where, b.body) for page in pages() for b in snippets(page) if b.run]


def run_python_snippets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every Python snippet of the README and docs as written, one after the other (a
    snippet uses the names the ones before it defined, as a reader's session would); the
    judge's panel is made small (as ``EXTRA`` does for the commands): the code is the docs'."""
    import bioanon

    certify, evaluate = bioanon.certify, bioanon.evaluate
    fast = {"models": ["knn"], "attackers": "naive,parrot", "n_jobs": 1,
            "consumer_panel": "ranking"}
    monkeypatch.setattr(bioanon, "certify", lambda *a, **kw: certify(
        *a, **{**kw, **fast, "methods": ["selective-mean"], "budget_minutes": 1}))
    monkeypatch.setattr(bioanon, "evaluate", lambda *a, **kw: evaluate(*a, **{**kw, **fast}))
    namespace: dict[str, object] = {"__name__": "readme"}
    found = readme_snippets()
    assert len(found) >= 4
    for where, code in found:
        try:
            exec(compile(code, f"python snippet at {where}", "exec"), namespace)
        except Exception as exc:  # the snippet as a reader pastes it must run
            raise AssertionError(f"python snippet at {where} fails: {exc!r}\n{code}") from exc


def test_the_readme_snippets_are_complete_programs():
    """Each name a snippet uses is imported or defined by it or a snippet before it (the
    CAS snippet once used X, y_digit, cross_val_score and LogisticRegression undefined)."""
    import builtins
    import symtable

    defined: set[str] = set(dir(builtins))
    for where, code in readme_snippets():
        table = symtable.symtable(code, where, "exec")
        used = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
        missing = sorted(used - defined - {s.get_name() for s in table.get_symbols()
                                            if s.is_assigned() or s.is_imported()})
        assert not missing, f"python snippet at {where} uses undefined {missing}"
        defined |= {s.get_name() for s in table.get_symbols()
                    if s.is_assigned() or s.is_imported()}


def test_the_readme_says_how_bioanon_gets_on_the_path():
    """After make demo, bioanon lives in .venv: the README's first block activates it
    (every command after it is typed as 'bioanon ...'), and make demo says so too."""
    first = README.read_text().split("```")[1]
    assert "source .venv/bin/activate" in first
    makefile = (README.parent / "Makefile").read_text()
    demo = makefile[makefile.index("\ndemo:"):].split("\n\n")[0]
    assert "source $(VENV)/bin/activate" in demo
