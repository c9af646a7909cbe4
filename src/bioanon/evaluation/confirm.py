"""Confirmation of a chosen setting on a fresh split and seed (no winner's curse).

A search picks the best of many noisy evaluations, so the winner's figures flatter it. The
chosen setting is evaluated again with a split and recognizer seed derived from the search's
seed (one way; different from it), and both figures are reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sklearn.base import clone

from ..table import FeatureTable
from .protocol import Evaluation
from .seeds import derive_seed
from .verdict import DEFAULT_TARGET, verdict


def confirmation_seed(seed: int) -> int:
    """The evaluation seed of the confirmation run (derived from the search's seed)."""
    return derive_seed(seed, "confirmation") % (2**31)


def confirm(table: FeatureTable, anonymizer: Any, interest: str, sensitive: str,
            additional: Mapping[str, float] | None = None,
            target_advantage: float = DEFAULT_TARGET, random_state: int = 0,
            **evaluation_kwargs: Any) -> dict[str, Any]:
    """Re-evaluate ``anonymizer`` on a fresh split and seed; return its verdict as a dict.

    ``evaluation_kwargs`` go to :class:`Evaluation` (models, attackers, group, ...). The
    returned dict holds the verdict block plus ``seed`` (the confirmation's evaluation seed;
    an evaluation seed, not a release key) and ``utility_U`` for comparison with the search.
    """
    seed = confirmation_seed(random_state)
    kwargs = {k: v for k, v in evaluation_kwargs.items() if k not in ("cache", "progress")}
    anon = clone(anonymizer)
    if "random_state" in anon.get_params(deep=False):
        anon.set_params(random_state=None)  # the evaluation derives a fresh one from its seed
    ev = Evaluation(table, interest, sensitive, additional, anon, random_state=seed,
                    target_advantage=target_advantage, **kwargs).evaluate()
    v = verdict(ev, target_advantage)
    return {**v.to_dict(), "seed": seed}
