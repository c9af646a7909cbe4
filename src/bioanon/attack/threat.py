"""Threat models: what an attacker knows, what it trains on, and which recognizer it uses.

A :class:`ThreatModel` is separate from the attack that realises it. Attacker modes:

========== ================================ ============================ ====================
mode       trains on                        scored on                    knows
========== ================================ ============================ ====================
naive      clear train records              anonymized test records      nothing
parrot     anonymized train records         anonymized test records      method + parameters
parrot25   train, 25% of records anonymized anonymized test records      method + parameters
parrot50   train, 50% anonymized            anonymized test records      method + parameters
parrot75   train, 75% anonymized            anonymized test records      method + parameters
reverse    anonymized train (the gallery)   clear test records (probes)  method + parameters
linkage    no training: clear test records  anonymized test records      the clear originals
========== ================================ ============================ ====================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import BioanonError, suggest


@dataclass(frozen=True)
class ModeSpec:
    """How one attacker mode builds its training set and its probes."""

    anonymized_fraction: float | None  # share of training records anonymized; None: no training
    probes: str  # "anonymized" or "clear"
    knowledge: str
    description: str


KNOWS_METHOD = "the method and its parameters (Kerckhoffs's principle)"

MODES: dict[str, ModeSpec] = {
    "naive": ModeSpec(0.0, "anonymized", "nothing about the anonymization",
                      "trained on clear records, scored on released records"),
    "parrot": ModeSpec(1.0, "anonymized", KNOWS_METHOD,
                       "trained on records anonymized with the same method and parameters"),
    "parrot25": ModeSpec(0.25, "anonymized", KNOWS_METHOD,
                         "trained on a mix: 25% of the training records anonymized"),
    "parrot50": ModeSpec(0.5, "anonymized", KNOWS_METHOD,
                         "trained on a mix: 50% of the training records anonymized"),
    "parrot75": ModeSpec(0.75, "anonymized", KNOWS_METHOD,
                         "trained on a mix: 75% of the training records anonymized"),
    "reverse": ModeSpec(1.0, "clear", KNOWS_METHOD,
                        "anonymized gallery (training records), clear probes"),
    "linkage": ModeSpec(None, "anonymized", "the clear originals of the released records",
                        "each released record matched to its nearest clear record (cosine)"),
}


def train_data_label(mode: str) -> str:
    """What a mode trains on, in words (the report's ``train_data``)."""
    frac = MODES[mode].anonymized_fraction
    if frac is None:
        return "none (clear test records as gallery)"
    if frac == 0.0:
        return "clear"
    if frac == 1.0:
        return "anonymized"
    return f"mix: {round(100 * frac)}% anonymized"


@dataclass(frozen=True)
class ThreatModel:
    """One attacker: what it knows, what it trains on, which recognizer, which seed.

    Parameters
    ----------
    mode : str
        One of :data:`MODES`.
    recognizer : str
        Display name of the recognizer (``cosine_nn`` for linkage).
    seed : int
        Seed of the recognizer and of the choice of anonymized records in a mix.

    Examples
    --------
    >>> tm = ThreatModel("parrot50", "knn", seed=3)
    >>> tm.train_data, tm.probes
    ('mix: 50% anonymized', 'anonymized')
    """

    mode: str
    recognizer: str
    seed: int = 0

    def __post_init__(self) -> None:
        check_mode(self.mode)

    @property
    def spec(self) -> ModeSpec:
        return MODES[self.mode]

    @property
    def train_data(self) -> str:
        return train_data_label(self.mode)

    @property
    def probes(self) -> str:
        return self.spec.probes

    @property
    def anonymized_fraction(self) -> float | None:
        return self.spec.anonymized_fraction

    def to_dict(self) -> dict[str, Any]:
        """Plain description for the report (no secret: the seed is an evaluation seed)."""
        return {**asdict(self), "train_data": self.train_data, "probes": self.probes,
                "knows": self.spec.knowledge, "anonymized_fraction": self.anonymized_fraction}


def check_mode(mode: str) -> str:
    """Return ``mode`` if known, else raise a one-line error naming the choices."""
    if mode not in MODES:
        raise BioanonError(f"unknown attacker mode '{mode}'{suggest(mode, MODES)}; choose from "
                           f"{', '.join(MODES)} or all")
    return mode


def parse_modes(modes: str | Sequence[str]) -> list[str]:
    """Attacker modes from ``"all"``, ``"naive,parrot"`` or a sequence, in panel order.

    Examples
    --------
    >>> parse_modes("reverse,naive")
    ['naive', 'reverse']
    """
    items = ([m.strip() for m in modes.split(",") if m.strip()] if isinstance(modes, str)
             else list(modes))
    if not items:
        raise BioanonError("no attacker mode given; e.g. attackers=naive,parrot,linkage",
                           parameter="attackers")
    if "all" in items:
        return list(MODES)
    chosen = {check_mode(m) for m in items}
    return [m for m in MODES if m in chosen]
