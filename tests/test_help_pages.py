"""Every command's help fits an 80-column terminal, whole; every boolean flag has its --no-."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.cli.help_pages import DETAILS, HELP_ALL, stale_details

runner = CliRunner()
GROUP = typer.main.get_command(app)
COMMANDS = sorted(GROUP.list_commands(None))  # type: ignore[arg-type]


def _help(*args: str) -> str:
    res = runner.invoke(app, [*args], env={"COLUMNS": "80", "TERM": "dumb"})
    assert res.exit_code == 0, res.output
    return res.output


def test_every_command_is_listed():
    assert {"anonymize", "evaluate", "release", "extract", "tune", "datasets",
            "methods"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_help_is_whole_at_80_columns_and_short(name):
    short, full = _help(name, "--help"), _help(name, HELP_ALL)
    for page in (short, full):
        assert "…" not in page
        assert max(len(line) for line in page.splitlines()) <= 80
    assert len(short.splitlines()) <= 80, f"{name} --help runs to {len(short.splitlines())} lines"
    cmd = GROUP.get_command(None, name)  # type: ignore[arg-type]
    for param in cmd.params:  # --help-all lists every option, --help points to it
        retired = param.hidden and not getattr(param, "_bioanon_detail", False)
        if param.param_type_name == "option" and param.opts[-1] != HELP_ALL and not retired:
            assert param.opts[-1] in full, f"{name} {HELP_ALL} lacks {param.opts[-1]}"
    if len(full.splitlines()) > len(short.splitlines()):
        assert f"bioanon {name} {HELP_ALL}" in " ".join(short.split())


@pytest.mark.parametrize("name", COMMANDS)
def test_every_boolean_flag_has_its_no_form(name):
    cmd = GROUP.get_command(None, name)  # type: ignore[arg-type]
    flags = [p for p in cmd.params
             if getattr(p, "is_bool_flag", False) and not p.is_eager and p.name != "version"]
    lacking = [p.opts for p in flags if not p.secondary_opts]
    assert not lacking, f"{name}: flags without a --no- form: {lacking}"
    for p in flags:
        long = [o for o in p.opts if o.startswith("--")][0]
        assert p.secondary_opts == [f"--no-{long[2:]}"]


def test_a_no_form_parses():
    res = runner.invoke(app, ["methods", "--json", "--no-json"])
    assert res.exit_code == 0 and not res.output.lstrip().startswith("{")


def test_help_pages_name_only_flags_that_exist():
    """``--help-all``'s list of detail flags names only flags its command declares."""
    assert stale_details(GROUP) == {}
    assert set(DETAILS) <= set(COMMANDS)


def test_a_stale_detail_is_caught(monkeypatch):
    import bioanon.cli.help_pages as help_pages

    monkeypatch.setitem(help_pages.DETAILS, "tune", DETAILS["tune"] | {"--no-such-flag"})
    assert stale_details(GROUP) == {"tune": ["--no-such-flag"]}


def test_help_all_leaves_the_command_as_it_was():
    """The group built once and asked ``--help-all`` then ``--help`` (a library user's
    group, or the suite's) gives the short page again: the full page is shown, not kept."""
    import contextlib
    import io

    group = typer.main.get_command(app)

    def page(*args: str) -> str:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            group.main(["release", *args], prog_name="bioanon", standalone_mode=False)
        return out.getvalue()

    short = page("--help")
    assert len(page(HELP_ALL).splitlines()) > len(short.splitlines())
    assert page("--help") == short
