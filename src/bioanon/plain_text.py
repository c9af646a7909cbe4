"""reStructuredText inline markup rendered as plain text, for a terminal.

Docstrings are written in reST (``sigma``, :class:`~bioanon.anonymize.Foo`); a terminal shows
the markup as it is. :func:`plain` removes it.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_INTERPRETED = re.compile(r"(?<![`\w])`([^`]+)`(?:_{1,2})?(?![`\w])")
_STRONG = re.compile(r"\*\*([^*\s][^*]*?)\*\*")


def _target(text: str) -> str:
    """The shown text of a role's content: ``Title <target>`` -> Title, ``~a.b.C`` -> C."""
    m = re.fullmatch(r"(.+?)\s*<[^>]+>", text, re.S)
    if m:
        return m.group(1)
    if text.startswith("~"):
        return text[1:].rsplit(".", 1)[-1]
    return text


def plain(text: str) -> str:
    """Render reST inline markup as plain text.

    Examples
    --------
    >>> plain("Gaussian blur of ``sigma`` pixels; see :class:`~bioanon.anonymize.Blur`")
    'Gaussian blur of sigma pixels; see Blur'
    >>> plain(":math:`x + \\\\sigma`, :func:`bioanon.release`, `DP <https://x.org>`_, **not**::")
    'x + \\\\sigma, bioanon.release, DP, not:'
    """
    out = _ROLE.sub(lambda m: _target(m.group(1)), text)
    out = _LITERAL.sub(r"\1", out)
    out = _INTERPRETED.sub(lambda m: _target(m.group(1)), out)
    out = _STRONG.sub(r"\1", out)
    return re.sub(r"::(\s*)$", r":\1", out)


def plain_values(obj: Any) -> Any:
    """:func:`plain` applied to every string in nested dicts and lists."""
    if isinstance(obj, str):
        return plain(obj)
    if isinstance(obj, dict):
        return {k: plain_values(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(plain_values(v) for v in obj)
    return obj


__all__ = ["plain", "plain_values"]
