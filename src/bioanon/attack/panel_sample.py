"""The recognition panel's probes: every released record, or a seeded sample at scale.

Each recognizer of the panel scores every probe (a released record) against every identity:
probes × identities scores per probe set, a number that grows as the square of the records
(FSDD: about 900 probes × 6 speakers; 50,000 records of 5,000 people: about 12,500 × 5,000).
Above :data:`~bioanon.attack.verification.MAX_TRIALS` scores the probes are a seeded random
sample of ``MAX_TRIALS // identities`` released records, as the verification view samples
its probes. The attackers still train on every training record, and the linkage attacker
still searches every clear record; only the records they are scored on are sampled, so each
rate is an unbiased estimate whose interval is that of the sample (its ``n`` says how many
were scored), and the cost stops growing as the square of the records.

Examples
--------
>>> y = np.repeat(np.arange(50).astype(str), 4)          # 200 probes of 50 identities
>>> panel_probe_rows(y, 0) is None                        # 10,000 scores: all of them
True
>>> rows = panel_probe_rows(y, 0, max_trials=5_000)      # 100 probes × 50 identities
>>> rows.size, bool(np.all(np.diff(rows) > 0))
(100, True)
>>> sample_words(rows, y.size)
'a seeded random sample of 100 of 200 released records, each against every identity'
"""

from __future__ import annotations

import numpy as np

from .verification import MAX_TRIALS, bounded_rows


def panel_probe_rows(y: np.ndarray, seed: int, max_trials: int | None = None
                     ) -> np.ndarray | None:
    """The released records the panel scores, in their order: None for all of them, or a
    seeded random sample of ``max_trials // identities`` (None: :data:`MAX_TRIALS`) where
    every record against every identity would exceed ``max_trials`` scores."""
    y = np.asarray(y)
    n, n_ids = y.size, int(np.unique(y).size)
    return bounded_rows(n, n_ids, [seed, n, n_ids, 1],
                        MAX_TRIALS if max_trials is None else max_trials)


def sample_words(rows: np.ndarray | None, n: int) -> str:
    """What the panel scored, in words ('' for every released record)."""
    if rows is None:
        return ""
    return (f"a seeded random sample of {rows.size:,} of {n:,} released records, each "
            "against every identity")


__all__ = ["panel_probe_rows", "sample_words"]
