"""The corpus's summary line, in the held-out corpus's terms.

Run from the repository root: ``PYTHONPATH=src:tests python -m bad_inputs.summary``. Each case
runs in a fresh folder; the line counts clean errors, valid runs and every kind of failure
(traceback, wrong exit status, output left behind, input modified, silent accept).
"""

from __future__ import annotations

import hashlib
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.io import REPORT_MARKER

from .cases import CASES, Case, foreign_warning


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def judge(case: Case, folder: Path) -> str:
    """One word for one case: clean, valid, traceback, wrong-exit, partial, modified, silent."""
    argv = case.build(folder)
    before = _snapshot(folder)
    with warnings.catch_warnings():  # a fresh registry: each case shows its own warnings
        res = CliRunner().invoke(app, argv)
    after = _snapshot(folder)
    if "Traceback" in res.output or (res.exception is not None
                                     and not isinstance(res.exception, SystemExit)):
        return "traceback"
    if any(after.get(k) != v for k, v in before.items()):
        return "modified"
    new = sorted(n for n in set(after) - set(before) if Path(n).name != REPORT_MARKER)
    if case.kind == "ok":
        return "valid" if res.exit_code == 0 and new == sorted(case.outputs) else "wrong-exit"
    if res.exit_code == 0:
        return "silent"
    errors = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    # a library's warning printed before the refusal: the error is not the one clear line
    if res.exit_code != 2 or len(errors) != 1 or foreign_warning(res.output):
        return "wrong-exit"
    return "partial" if new else "clean"


def main() -> None:
    counts: Counter[str] = Counter()
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(CASES):
            folder = Path(tmp) / f"c{i}"
            folder.mkdir()
            verdict = judge(case, folder)
            counts[verdict] += 1
            if verdict not in ("clean", "valid"):
                bad.append(f"{case.id}: {verdict}")
    print("\n".join(bad))
    print(f"{len(CASES)} cases: {counts['clean']} clean errors, {counts['valid']} valid runs, "
          f"{counts['traceback']} tracebacks, {counts['wrong-exit']} wrong exits, "
          f"{counts['partial']} partial outputs, {counts['modified']} inputs modified, "
          f"{counts['silent']} silent accepts")


if __name__ == "__main__":
    main()
