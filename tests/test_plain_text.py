"""``bioanon methods`` prints plain text: no reST markup from the docstrings."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from bioanon.anonymize.registry import describe, methods
from bioanon.cli import app
from bioanon.plain_text import plain

MARKUP = re.compile(r"``|:[a-z]+:`|`[^`]+`_?")


def test_plain_removes_inline_markup():
    assert plain("``x`` and :class:`~a.b.C` and :func:`f`") == "x and C and f"
    assert plain("`Link <https://e.org>`_ and `name`") == "Link and name"
    assert plain("a · b * c ** 2") == "a · b * c ** 2"  # arithmetic is not markup


def test_methods_output_has_no_markup():
    raw = [c for c in methods().values()
           if MARKUP.search((c.__doc__ or "") + c.protects + c.does_not_protect)]
    assert raw, "no docstring uses markup: this test would check nothing"
    res = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    assert not MARKUP.search(res.output), MARKUP.search(res.output)
    for cls in raw:
        assert not MARKUP.search(str(describe(cls)))
