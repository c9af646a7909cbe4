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


#: a level the sample cannot show (even a leak-free release would read above the target):
#: never counted as met, and never said "not met" (a measured figure above its target)
INCONCLUSIVE = "inconclusive at this size"
#: a level covered by a strict DP guarantee (the bound it implies is within the target)
COVERED = "covered by the guarantee"
#: a risk the user accepted by name whose estimate is within its target (or not measured)
ACCEPTED = "accepted"
#: the statuses a risk can have; the verdict passes only "met", "covered by the guarantee"
#: and "accepted"
RISK_STATUSES = ("met", "not met", INCONCLUSIVE, COVERED, ACCEPTED)
#: the statuses that pass the verdict (the one rule the verdict, the search's ranking and the
#: reports read): an accepted risk is one whose point estimate is within its target
PASSING = ("met", COVERED, ACCEPTED)


def passes(status: str) -> bool:
    """Whether a risk of this status passes the verdict.

    >>> passes("accepted"), passes(INCONCLUSIVE), passes("not met")
    (True, False, False)
    """
    return status in PASSING


def accepted_text(measured: str, value: float) -> str:
    """What an accepted status stands for, in words (terminal, report and JSON):
    the measured status it replaced and that the estimate is within the target.

    >>> accepted_text(INCONCLUSIVE, 0.01)
    'accepted (inconclusive at this size, estimate within target)'
    >>> accepted_text(INCONCLUSIVE, float("nan"))
    'accepted (inconclusive at this size, not measured)'
    """
    est = "estimate within target" if value == value else "not measured"
    return f"{ACCEPTED} ({measured}, {est})"


def _measured(value: Any) -> bool:
    """A figure that was measured (a finite number; NaN or null: not measured)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def passing_counts(risks: Any) -> dict[str, list[str]]:
    """The risks that pass the verdict, by what each rests on: ``met`` (measured, its bound
    within the target), ``covered`` (by a DP guarantee), ``accepted_estimate`` (accepted by
    the user, its estimate within the target) and ``accepted_unmeasured`` (accepted by the
    user, never measured); each a list of names. ``risks``: RiskResult or their dicts.

    >>> passing_counts([{"name": "a", "status": "met", "value": 0.1},
    ...                 {"name": "b", "status": "accepted", "value": None}])["accepted_unmeasured"]
    ['b']
    """
    out: dict[str, list[str]] = {"met": [], "covered": [], "accepted_estimate": [],
                                 "accepted_unmeasured": []}
    for r in risks:
        d = r.to_dict() if isinstance(r, RiskResult) else r
        status, name = d.get("status"), str(d.get("name", ""))
        if status == "met":
            out["met"].append(name)
        elif status == COVERED:
            out["covered"].append(name)
        elif status == ACCEPTED:
            key = "accepted_estimate" if _measured(d.get("value")) else "accepted_unmeasured"
            out[key].append(name)
    return out


def passing_words(risks: Any, names: bool = False) -> str:
    """The risks that pass, counted by what each rests on, in words: a risk accepted and not
    measured is never counted as within its target. ``names``: the accepted ones named.

    >>> rs = [{"name": f"r{i}", "status": "met", "value": 0.0} for i in range(3)] + [
    ...     {"name": "identity-membership", "status": "accepted", "value": None},
    ...     {"name": "identity-inference", "status": "accepted", "value": None}]
    >>> passing_words(rs)
    '3 risks within their targets; 2 accepted by you, not measured'
    >>> passing_words(rs[:1] + rs[3:4], names=True)
    '1 risk within its target; 1 accepted by you, not measured (identity-membership)'
    """
    c = passing_counts(risks)

    def n(k: str) -> str:
        return f"{len(c[k])} risk{'' if len(c[k]) == 1 else 's'}"

    def named(k: str) -> str:
        return f" ({', '.join(c[k])})" if names and c[k] else ""

    parts = []
    if c["met"]:
        parts.append(f"{n('met')} within {'its target' if len(c['met']) == 1 else 'their targets'}")
    if c["covered"]:
        parts.append(f"{len(c['covered'])} covered by the DP guarantee{named('covered')}")
    if c["accepted_estimate"]:
        parts.append(f"{len(c['accepted_estimate'])} accepted by you, estimate within the "
                     f"target{named('accepted_estimate')}")
    if c["accepted_unmeasured"]:
        parts.append(f"{len(c['accepted_unmeasured'])} accepted by you, not measured"
                     f"{named('accepted_unmeasured')}")
    return "; ".join(parts) or "no risk judged"


@dataclass(frozen=True)
class RiskResult:
    """One risk a data owner answers for, at one level, judged against its target.

    ``risk`` is "recognition", "membership" or "inference"; ``level`` "record", "identity"
    or "group"; ``statistic`` names ``value`` (e.g. "advantage", "AUC"); ``ci`` is its 95%
    interval; ``attacker`` names who reached it; ``baseline`` is what a release that leaks
    nothing scores (``baseline_name`` says which: chance, control, "0.5 (no membership
    signal)", "non-member control"); ``target`` is the bound the judged end of the interval
    must not pass; ``status`` is one of "met", "not met" (measured above its target),
    "inconclusive at this size" (the level cannot be shown at this size: never counted as
    met), "covered by the guarantee" (a strict DP guarantee whose unit covers the level proves
    a bound within the target; the measured figure is kept) or "accepted" (the user accepted
    the risk by name, with ``reason``). ``extras`` holds further figures (e.g. TPR at a low FPR with
    intervals, per-attacker values).

    Examples
    --------
    >>> r = RiskResult("membership", "record", "AUC", 0.52, (0.47, 0.57), "tracing",
    ...                0.5, "no membership signal", 0.6, "met", "upper bound 0.570 ≤ 0.6")
    >>> r.met, r.name, r.to_dict()["ci"]
    (True, 'record-membership', [0.47, 0.57])
    """

    risk: str
    level: str
    statistic: str
    value: float
    ci: tuple[float, float]
    attacker: str
    baseline: float
    baseline_name: str
    target: float
    status: str
    reason: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The name ``--accept-risk`` takes: ``LEVEL-RISK`` (e.g. ``identity-membership``)."""
        return f"{self.level}-{self.risk}"

    @property
    def met(self) -> bool:
        """Measured and within the target."""
        return self.status == "met"

    @property
    def passes(self) -> bool:
        """Counts as passed by the verdict: met, covered by a DP guarantee, or accepted
        explicitly by the user with its estimate within the target (:data:`PASSING`)."""
        return passes(self.status)

    @property
    def status_text(self) -> str:
        """The status in words: "accepted" says what it replaced and that the estimate is
        within the target (e.g. "accepted (inconclusive at this size, estimate within
        target)"); every other status is its own text."""
        if self.status != ACCEPTED:
            return self.status
        return str(self.extras.get("status_text") or ACCEPTED)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "risk": self.risk, "level": self.level,
                "statistic": self.statistic, "value": self.value, "ci": list(self.ci),
                "attacker": self.attacker, "baseline": self.baseline,
                "baseline_name": self.baseline_name, "target": self.target,
                "status": self.status, "status_text": self.status_text, "met": self.met,
                "passes": self.passes, "reason": self.reason, "extras": self.extras}

    @classmethod
    def from_dict(cls, d: Any) -> RiskResult:
        """Read back :meth:`to_dict` (e.g. from ``report.json``)."""
        def num(x: Any) -> float:  # a figure not measured is written as null
            return float("nan") if x is None else float(x)

        status = INCONCLUSIVE if d["status"] == "not covered" else d["status"]  # older reports
        return cls(d["risk"], d["level"], d["statistic"], num(d["value"]),
                   (num(d["ci"][0]), num(d["ci"][1])), d["attacker"], num(d["baseline"]),
                   d["baseline_name"], num(d["target"]), status, d.get("reason", ""),
                   dict(d.get("extras") or {}))

    def accepted(self, reason: str) -> RiskResult:
        """This risk accepted by the user (the measured figures are kept).

        Accepting a risk takes on what the table cannot show, never a leak it does show: a
        risk whose **estimate** lies above its target stays "not met", however wide its
        interval (an accepted risk passes the verdict only where its point estimate is within
        the target); a risk met stays "met". A level that could not be measured at all (no
        estimate) can be accepted.

        Examples
        --------
        >>> r = RiskResult("membership", "record", "advantage", 0.3, (0.2, 0.4), "tracing",
        ...                0.0, "no membership signal", 0.1, "not met", "upper bound 0.4 > 0.1")
        >>> r.accepted("too few people").status
        'not met'
        >>> wide = RiskResult("membership", "identity", "advantage", 0.39, (0.11, 0.67),
        ...                   "tracing", 0.0, "no signal", 0.14, INCONCLUSIVE, "")
        >>> wide.accepted("too few people").status      # estimate 0.39 > target 0.14
        'not met'
        >>> r2 = RiskResult("membership", "record", "advantage", 0.05, (-0.1, 0.2), "tracing",
        ...                 0.0, "no membership signal", 0.1, INCONCLUSIVE, "")
        >>> a = r2.accepted("too few people")
        >>> a.status, a.status_text
        ('accepted', 'accepted (inconclusive at this size, estimate within target)')
        """
        from dataclasses import replace

        if self.status in ("met", COVERED):
            return self
        est, low, t = self.value, self.ci[0] if self.ci else float("nan"), self.target
        if est == est and t == t and est > t:  # NaN-safe: a measured leak is never accepted
            why = (f"the estimate {est:.3f} lies above the target {t:g}"
                   + (f" (and the whole 95% interval: lower bound {low:.3f} > {t:g})"
                      if low == low and low > t else
                      f", although its interval is wide (upper 95% bound {self.ci[1]:.3f})"))
            return replace(self, status="not met", reason=(
                f"{self.reason + '; ' if self.reason else ''}not accepted: {why}; accepting "
                "a risk covers what the table cannot show, not a measured leak"))
        text = accepted_text(self.status, est)
        why = f"{text}: accepted by the user: {reason}"
        if est == est:
            why += (f" (measured {est:+.3f}, upper 95% bound {self.ci[1]:.3f}, target "
                    f"{t:g})")
        return replace(self, status=ACCEPTED, reason=why,
                       extras={**self.extras, "status_text": text,
                               "accepted_reason": reason})
