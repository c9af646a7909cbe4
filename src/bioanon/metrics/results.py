"""Small typed results of an evaluation, from which ``report.json`` is built.

- :class:`Rate`: a proportion with its 95% interval (and the counts behind it);
- :class:`AttackResult`: one attacker (threat model + recognizer), its rate, and its advantage
  over the stronger of chance and the control baseline, with an interval;
- :class:`UtilityResult`: one useful attribute in every view (CAS first);
- :class:`MembershipResult`, :class:`ContributorResult`, :class:`VerificationResult`.

Each has ``to_dict()`` giving plain JSON values. None of them holds a secret.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .scores import wilson_interval


@dataclass(frozen=True)
class Rate:
    """A proportion with its 95% interval.

    Examples
    --------
    >>> r = Rate.from_counts(8, 10)
    >>> r.value, [round(v, 3) for v in r.ci]
    (0.8, [0.49, 0.943])
    """

    value: float
    ci: tuple[float, float]
    n: int = 0
    successes: int | None = None

    @classmethod
    def from_counts(cls, successes: int, n: int) -> Rate:
        return cls(successes / n if n else float("nan"), wilson_interval(successes, n), n,
                   int(successes))

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": list(self.ci), "n": self.n}


@dataclass(frozen=True)
class Interval:
    """A difference (e.g. an advantage) with its 95% interval and how it was computed."""

    value: float
    ci: tuple[float, float]
    method: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": list(self.ci), "method": self.method}


@dataclass(frozen=True)
class AttackResult:
    """One attack: who (threat model, recognizer), how well, and how far above the baseline."""

    mode: str
    recognizer: str
    rate: Rate
    advantage: Interval
    baseline: float
    baseline_name: str
    voiceprivacy: str = ""

    @property
    def attacker(self) -> str:
        return f"{self.mode} attacker with {self.recognizer}"

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "model": self.recognizer, "attacker": self.attacker,
                "accuracy": self.rate.value, "ci": list(self.rate.ci), "n": self.rate.n,
                "advantage": self.advantage.to_dict(), "baseline": self.baseline,
                "baseline_name": self.baseline_name, "voiceprivacy": self.voiceprivacy}


@dataclass(frozen=True)
class UtilityResult:
    """One useful attribute: CAS (train on release, score on clear), the paper's view, clear."""

    column: str
    cas: Rate
    clear: Rate
    paper: Rate
    anonymized_to_anonymized: Rate
    chance: float
    split: str
    alpha: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "cas": self.cas.to_dict(), "clear": self.clear.to_dict(),
                "paper_view": self.paper.to_dict(),
                "anonymized_to_anonymized": self.anonymized_to_anonymized.to_dict(),
                "chance": self.chance, "split": self.split, "alpha": self.alpha}


@dataclass(frozen=True)
class MembershipResult:
    """Can an attacker holding clear records tell members of the release from non-members?"""

    level: str  # "record" or "identity"
    auc: float
    ci: tuple[float, float]
    attacker: str
    n_members: int
    n_nonmembers: int
    per_attacker: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ci": list(self.ci)}


@dataclass(frozen=True)
class ContributorResult:
    """How often an attacker names someone who was mixed into the released record."""

    rate: Rate
    base_rate: float
    attacker: str
    fires: bool
    own_identity_included: bool

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate.value, "ci": list(self.rate.ci), "n": self.rate.n,
                "base_rate": self.base_rate, "attacker": self.attacker, "fires": self.fires,
                "own_identity_included": self.own_identity_included}


@dataclass(frozen=True)
class VerificationResult:
    """A same/different verifier on cosine scores (VoicePrivacy convention)."""

    mode: str
    voiceprivacy: str
    eer: float
    ci: tuple[float, float]
    enrolment: str
    trials: str
    n_target: int
    n_nontarget: int

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ci": list(self.ci)}
