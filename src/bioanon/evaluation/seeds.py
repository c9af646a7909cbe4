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
from typing import Any

#: the largest seed a front door takes (NumPy's legacy seeds and joblib's stop there)
MAX_SEED = 2**32 - 1


def check_seed(value: Any, name: str = "random_state", optional: bool = True) -> None:
    """Refuse a seed that is not a whole number in [0, :data:`MAX_SEED`] (None passes when
    ``optional``), in one line naming ``name``: an evaluation's seed of 1.5, -3 or None was
    NumPy's "SeedSequence expects int" or "expected non-negative integer", or Python's
    "int() argument must be ... not 'NoneType'".

    >>> check_seed(7), check_seed(None)
    (None, None)
    >>> check_seed("a")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: random_state='a' is out of range; use a whole number from 0 \
to 4294967295 (a secret key) or None
    >>> check_seed(None, optional=False)
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: random_state=None is out of range; use a whole number from 0 \
to 4294967295 (a secret key)
    """
    import numpy as np

    from ..errors import BioanonError

    if value is None and optional:
        return
    if (isinstance(value, bool) or not isinstance(value, int | np.integer)
            or not 0 <= int(value) <= MAX_SEED):
        raise BioanonError(f"{name}={value!r} is out of range; use a whole number from 0 to "
                           f"{MAX_SEED} (a secret key){' or None' if optional else ''}",
                           parameter=name)


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


def reseeded(anonymizer: Any, purpose: str) -> Any:
    """A clone of ``anonymizer`` whose random state is derived one way from its own for
    ``purpose``; a clone as it is when it has no seed (``random_state`` None or absent).

    Every release an evaluation makes besides the one it judges as the release (the training
    split's, each record game's, each release without some identities) gets its own draw: with
    one seed, two releases of as many records of the same classes draw the same noise and
    the same synthetic records row by row (a Gaussian release of two halves of the 1,040-person
    table: 0.97 correlated), so an attacker trained on one release would read the other by
    its rows (knowing the seed, which the threat model keeps secret), and the record games'
    pooled figure would judge one noise draw four times instead of four draws.

    Examples
    --------
    >>> from bioanon.anonymize import GaussianNoiseAnonymizer
    >>> a = GaussianNoiseAnonymizer(random_state=3)
    >>> b = reseeded(a, "train split")
    >>> b.random_state != 3, b.random_state == reseeded(a, "train split").random_state
    (True, True)
    >>> reseeded(GaussianNoiseAnonymizer(), "train split").random_state is None
    True
    """
    from sklearn.base import clone

    est = clone(anonymizer)
    params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
    seed = params.get("random_state")
    if isinstance(seed, int) and not isinstance(seed, bool):
        est.set_params(random_state=derive_seed(seed, purpose) % (2**31))
    return est
