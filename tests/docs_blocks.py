"""The commands and snippets the README and docs/*.md show, read from the Markdown itself.

Conventions of the documentation (kept by ``tests/test_docs.py``):

- A fenced block whose info string is empty or starts with ``sh``, ``bash``, ``shell`` or
  ``console`` holds shell lines; one starting with ``python`` holds a Python snippet.
- ``no-run`` in the info string (```` ```console no-run ````) marks a block the test suite does
  not run (a long real-data run, a cluster's address, a file you must bring): its commands are
  still parsed, and every flag they name must exist. Every other block runs in
  ``tests/test_readme_tours.py``, except a command holding a placeholder (`` ... ``, ``HOST``),
  which is parsed only.
- A shell line is one of: ``bioanon …`` (or ``.venv/bin/bioanon …``), ``python
  benchmarks/SCRIPT.py …`` (any ``python``, optionally after ``VAR=value`` assignments),
  ``make TARGET``, ``source .venv/bin/activate``, ``export VAR=…``; a backslash continues a
  line, ``  #`` starts a comment, ``| …`` pipes into a program the line does not check.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
SHELL = ("", "sh", "bash", "shell", "console")


def pages() -> list[Path]:
    """The README first, then every page of docs/ in name order."""
    return [README, *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    run: bool
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, in order."""
    out: list[Block] = []
    current: list[str] | None = None
    info, start = "", 0
    for k, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if current is None:
                current, info, start = [], line[3:].strip(), k
            else:
                words = info.split()
                out.append(Block(page, start, words[0] if words else "", "no-run" not in words,
                                 "\n".join(current) + "\n"))
                current = None
        elif current is not None:
            current.append(line)
    return out


@dataclass(frozen=True)
class Command:
    text: str  # the logical line: continuations joined, comment removed
    block: Block

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text.split(" | ")[0].split(" > ")[0])

    @property
    def kind(self) -> str:
        """bioanon, benchmark, make, source, export, or unknown."""
        w = self.words
        while w and re.fullmatch(r"[A-Z_]+=\S*", w[0]):  # VAR=value before a command
            w = w[1:]
        if not w:
            return "unknown"
        head = w[0].rsplit("/", 1)[-1]
        if head == "bioanon":
            return "bioanon"
        if head.startswith("python") and len(w) > 1 and w[1].startswith("benchmarks/"):
            return "benchmark"
        if head in ("make", "source", "export"):
            return head
        return "unknown"

    @property
    def argv(self) -> list[str]:
        """The words after the program (after any ``VAR=value``)."""
        w = self.words
        while w and re.fullmatch(r"[A-Z_]+=\S*", w[0]):
            w = w[1:]
        return w[1:]


def commands(page: Path, *, lang: tuple[str, ...] = SHELL) -> list[Command]:
    """Every shell line of a page's shell blocks."""
    out = []
    for block in blocks(page):
        if block.lang not in lang:
            continue
        joined = re.sub(r"\\\n\s*", " ", block.body)
        for line in joined.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("$ "):
                line = line[2:]
            if line and not line.startswith("#"):
                out.append(Command(line, block))
    return out


def snippets(page: Path) -> list[Block]:
    """A page's Python blocks."""
    return [b for b in blocks(page) if b.lang == "python"]


INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def inline_code(page: Path) -> list[str]:
    """The inline code spans of a page's prose (outside fenced blocks)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return INLINE.findall(text)
