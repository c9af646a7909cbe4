"""The membership game as the attackers see it, and the shape of a registered attacker.

One :class:`Game` holds what an attacker may use to score candidates: the clear candidates
(members of the release and non-members) with their label columns, the release with its label
columns, the attacker's clear **reference** population (records of people it knows, with
their labels and identities; a non-member candidate is one of its rows and must never sit in
a model that scores it), the method that made the release (the threat model gives the
attacker the method and its parameters) and a cache that lives as long as the candidates and
the reference stay the same (the identity level scores the same candidates against K
releases).

An :class:`Attacker` is a name, what it knows (one line, for the threat model's prose) and a
function ``Game -> {score name: score per candidate}`` (membership: higher means member) or
``Game -> {attack name: label guessed per candidate}`` keyed by label column (inference).
The registry (:mod:`bioanon.attack.registry`) lists them; the evaluation's membership and
inference risks run every registered attacker and let the cross-fitted advantage choose.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Game:
    """Everything an attacker may read for one release (in process only).

    Attributes
    ----------
    candidates : (n, d) array
        The clear records scored (members first or not: the attackers never see who is).
    candidate_labels : {column: (n,) str array}
        The label columns of each candidate the attacker knows (membership: the interest at
        least; inference: none of the columns it infers).
    released : (m, d) array
    released_labels : {column: (m,) str array}
        The released label columns.
    reference : (r, d) array
        The attacker's clear reference population.
    reference_labels : {column: (r,) str array}
    reference_ids : (r,) str array
        The identity of each reference record.
    candidate_ids : (n,) str array
        The identity of each candidate (the attacker holds a person's records by name).
    in_reference : (n,) int array
        The reference row that *is* candidate i (left out of any model that scores it), or -1.
    interest : str
        The column the method models its classes on when it declares none (the interest).
    groups : (n,) array or None
        One score per group (an identity, or the group of a group split): every attacker
        returns one value per group, in sorted order of the groups' string values.
    anonymizer : estimator or None
        The method and its parameters (cloned, never refitted in place).
    n_released : int
        Records in the release (the shadow attacker releases as many).
    tops : list of int
        The best-matching released records the tracing attackers average (1, and the
        method's set size g when it has one).
    seed : int
        The evaluation's seed for this game (the attackers' own randomness derives from it).
    cache : dict
        Kept while the candidates and the reference stay the same (reference-side figures).
    level : str
        "record", "group" or "identity" (what a unit of the game is).
    targets : tuple of str
        Inference: the released label columns to infer (the candidates' own values of them
        are never in ``candidate_labels``).
    reference_table : FeatureTable or None
        The reference as a table (every label column): the shadow attacker releases parts
        of it with the method.
    sensitive : str or None
        The identity column of ``reference_table``.
    linking : tuple of str
        Released label columns, beside the roles, that may link a person's released records
        (pseudonyms, a subject or session code): :mod:`bioanon.attack.pooled` pools by them.
    """

    candidates: np.ndarray
    candidate_labels: Mapping[str, np.ndarray]
    released: np.ndarray
    released_labels: Mapping[str, np.ndarray]
    reference: np.ndarray
    reference_labels: Mapping[str, np.ndarray]
    reference_ids: np.ndarray
    candidate_ids: np.ndarray
    in_reference: np.ndarray
    interest: str
    groups: np.ndarray | None = None
    anonymizer: Any = None
    n_released: int = 0
    tops: list[int] = field(default_factory=lambda: [1])
    seed: int = 0
    cache: dict[str, Any] = field(default_factory=dict)
    level: str = "record"
    targets: tuple[str, ...] = ()
    reference_table: Any = None
    sensitive: str | None = None
    linking: tuple[str, ...] = ()

    def feature_names(self) -> list[str] | None:
        """The feature names (public: the release carries them), from the reference table."""
        names = getattr(self.reference_table, "feature_names", None)
        return None if names is None else [str(n) for n in names]

    def rng(self, purpose: str) -> np.random.Generator:
        """A generator derived from the game's seed for one purpose (never the method's)."""
        digest = hashlib.blake2b(f"bioanon/attack/{purpose}/{int(self.seed)}".encode(),
                                 digest_size=8).digest()
        return np.random.default_rng(int.from_bytes(digest, "big") >> 1)

    def group_codes(self) -> tuple[np.ndarray, int] | None:
        """Each candidate's group code (sorted order of the groups' string values) and the
        number of groups, or None when every candidate is its own unit."""
        if self.groups is None:
            return None
        _, codes = np.unique(np.asarray(self.groups).astype(str), return_inverse=True)
        return codes, int(codes.max()) + 1

    def per_unit(self, score: np.ndarray) -> np.ndarray:
        """A per-candidate score as one per unit: its group's mean (unchanged without
        groups). A person's log-likelihood ratios add up over their records; their mean
        ranks the groups alike when groups hold as many records each."""
        gc = self.group_codes()
        if gc is None:
            return np.asarray(score, np.float64)
        codes, n = gc
        s = np.asarray(score, np.float64)
        return np.bincount(codes, weights=s, minlength=n) / np.bincount(codes, minlength=n)


Scores = dict[str, np.ndarray]


@dataclass(frozen=True)
class Attacker:
    """One registered attacker.

    Attributes
    ----------
    name : str
        Its registry name (also the prefix of the score names it returns).
    risk : {"membership", "inference"}
    knows : str
        What the attacker knows and uses, in one sentence (the threat model's prose).
    run : callable ``(Game) -> {name: array}``
        Membership: one score per unit (higher: member). Inference: one guessed label per
        unit for every label column of ``game.candidate_labels`` that the release carries,
        keyed ``"attack, 'column'"``.
    """

    name: str
    risk: str
    knows: str
    run: Callable[[Game], Scores]


def run_attackers(attackers: list[Attacker], game: Game,
                  known: Mapping[str, Scores] | None = None) -> Scores:
    """Every attacker's scores (or guesses) on one game, merged (names are unique).

    While an attacker runs, the game's cache holds the list being run under ``"panel"`` and
    the scores of the attackers before it under ``"scores so far"`` (the shadow attacker
    combines those); both are removed after. ``known``: scores an attacker already gave on
    this very game (by the attacker's name: a search's screen, :data:`~.registry.SCREEN`),
    taken as they are, in their place in the order.
    """
    out: Scores = {}
    for a in attackers:
        game.cache["panel"] = attackers
        game.cache["scores so far"] = out
        res = known[a.name] if known is not None and a.name in known else a.run(game)
        out.update({k: np.asarray(v) for k, v in res.items()})
    game.cache.pop("scores so far", None)
    game.cache.pop("panel", None)
    return out


__all__ = ["Attacker", "Game", "Scores", "run_attackers"]
