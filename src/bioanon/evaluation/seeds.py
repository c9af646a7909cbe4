"""Seeds of an evaluation: what may be written and what may not.

The evaluation seed fixes the evaluation's own randomness (the split, the recognizers, the
mixes of training data, the selections) and is written in the report. The anonymizer inside
an evaluation must never draw from it: a release made with ``anonymize --seed S`` and an
evaluation reported with seed S would otherwise share their key. The anonymizer's seed is
derived from the evaluation seed by a one-way hash (BLAKE2b), so the written seed does not
reveal it, and the derived seed is never written.
"""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, purpose: str) -> int:
    """A 63-bit seed derived one way from ``seed`` for ``purpose`` (never write it).

    Examples
    --------
    >>> derive_seed(0, "anonymizer") != 0
    True
    >>> derive_seed(0, "anonymizer") == derive_seed(0, "anonymizer")
    True
    """
    digest = hashlib.blake2b(f"bioanon/{purpose}/{int(seed)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
