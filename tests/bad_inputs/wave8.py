"""Cases of wave 8 (reliability, round eight): inputs a data owner gives by mistake that
were handled badly, each kept fixed here (0 tracebacks, 0 wrong exits, 0 silent accepts,
0 hangs).

Before the fixes: a typo in a size option ran the machine out of memory (``tune-k
--k-max 1000000000`` listed a billion k values; ``train-decoupler --latent-dim 1000000000``
failed inside torch's allocator as an internal error).
"""

from __future__ import annotations

from pathlib import Path

from .cases import Case, _csv

TD = ["--sensitive", "identity", "--label", "gender", "--label", "environment", "--label",
      "expression"]


def _train_decoupler(d: Path, *extra: str) -> list[str]:
    return ["train-decoupler", str(_csv(d)), "-o", str(d / "d.pt"), *TD, "--epochs", "1",
            *extra]


def wave8_cases() -> list[Case]:
    return [
        Case("tune-k-k-max-a-billion-is-refused-by-the-records", lambda d: [
            "tune-k", str(_csv(d)), "--out", str(d / "tk"), *TD, "--k-max", "1000000000"],
            says="k=1000000000 exceeds the 48 records; lower the largest k to at most 48"),
        Case("train-decoupler-latent-dim-a-billion-is-refused", lambda d: _train_decoupler(
            d, "--latent-dim", "1000000000"),
            says="--latent-dim 1000000000 and --hidden 256 make a decoupler of"),
        Case("train-decoupler-hidden-a-hundred-million-is-refused", lambda d: _train_decoupler(
            d, "--hidden", "100000000"), says="lower the latent size or the hidden width"),
    ]
