"""Cases of wave 15: a file to write typed as a folder, each kept fixed here.

Before the fix, ``anonymize -o o.parquet/`` (and ``release``, ``extract``, ``preview`` and
``train-decoupler``: every ``-o`` that names a file) wrote the file ``o.parquet``, exit 0: a
path drops the trailing slash, so the command never saw that the user meant a folder, and a
file of that name (``o.parquet/`` typed for a folder beside it) was replaced by the release.
``cp`` refuses the same ("Not a directory"). Now the slash is refused in one line naming the
file name to give; ``anonymize`` and ``release`` add that ``--dask`` writes a folder of
Parquet parts, where the slash is accepted. A folder output (``evaluate --out rep/``) keeps
its slash.
"""

from __future__ import annotations

from pathlib import Path

from .cases import ROLES, Case, _csv, _pixels, _wav_folder

EV = ["--interest", "expression", "--sensitive", "identity", "--label", "gender", "--label",
      "environment"]
SAYS = "ends with a slash, which names a folder; -o names the file to write: give -o '"


def _folder_spelled(d: Path, name: str) -> str:
    """``d/name/``: the file ``name`` typed as a folder."""
    return str(d / name) + "/"


def _over_a_users_file(d: Path) -> list[str]:
    """``-o o.parquet/`` where the user's own ``o.parquet`` lies: refused, the file kept."""
    (d / "o.parquet").write_bytes(b"the user's own file")
    return ["anonymize", str(_csv(d)), "-o", _folder_spelled(d, "o.parquet"), *ROLES,
            "--method", "noise", "--sigma", "1"]


def wave15_cases() -> list[Case]:
    return [
        Case("anonymize-output-typed-as-a-folder",
             lambda d: ["anonymize", str(_csv(d)), "-o", _folder_spelled(d, "o.parquet"),
                        *ROLES, "--method", "noise", "--sigma", "1"],
             says=SAYS),
        Case("anonymize-output-typed-as-a-folder-over-a-users-file", _over_a_users_file,
             says="(or add --dask to write a folder of Parquet parts)"),
        Case("anonymize-output-typed-as-a-folder-with-equals",
             lambda d: ["anonymize", str(_csv(d)), f"--out={_folder_spelled(d, 'o.csv')}",
                        *ROLES, "--method", "noise", "--sigma", "1"],
             says=SAYS),
        Case("release-output-typed-as-a-folder",
             lambda d: ["release", str(_csv(d)), "-o", _folder_spelled(d, "r.parquet"),
                        *ROLES],
             says=SAYS),
        Case("extract-voice-output-typed-as-a-folder",
             lambda d: ["extract", "voice", str(_wav_folder(d)), "-o",
                        _folder_spelled(d, "v.parquet")],
             says=SAYS),
        Case("preview-output-typed-as-a-folder",
             lambda d: ["preview", str(_pixels(d, "a.parquet")),
                        str(_pixels(d, "b.parquet", seed=1)), "-o",
                        _folder_spelled(d, "s.png")],
             says=SAYS),
        Case("train-decoupler-output-typed-as-a-folder",
             lambda d: ["train-decoupler", str(_csv(d)), "-o", _folder_spelled(d, "dec.pt"),
                        "--sensitive", "identity", "--label", "gender", "--label",
                        "environment", "--label", "expression", "--epochs", "1"],
             says=SAYS),
        Case("evaluate-out-folder-with-a-trailing-slash-valid",
             lambda d: ["evaluate", str(_csv(d)), *EV, "--method", "noise", "--sigma", "1",
                        "--models", "knn", "--attackers", "naive", "--jobs", "1", "--out",
                        _folder_spelled(d, "rep")],
             "ok", ("rep/report.html", "rep/report.json")),
    ]
