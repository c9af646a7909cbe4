"""The registered risks: one entry per risk, from which everything that names a risk derives.

The evaluation's loop, the verdict's targets, the names a user may accept
(``accept_risks``/``--accept-risk LEVEL-RISK``), which risks a DP guarantee covers, the plan's
rows (:func:`bioanon.plan.make_plan`), the caps' half-widths, the report's risk table, the
search chart's panels and the command line's target and switch flags
(:mod:`bioanon.cli.options`) all read :data:`REGISTRY`.

A new risk is one module (an evaluator built as ``Risk(ctx, target)``, with ``evaluate()``
returning itself and ``results()`` its typed results per level), one line in
:data:`REGISTRY` and one test. Its target is an existing option (``target_advantage``, a
target of its own like recognition's, or ``level``, the privacy level's target per level
like membership's); a risk the user may turn off names a boolean field of
:class:`~bioanon.evaluation.options.EvaluationOptions` as its ``switch``.

Consumers read ``registry.REGISTRY`` when they run (never a copy taken at import), so a
registry patched in a test reaches all of them.

Examples
--------
>>> [s.name for s in REGISTRY]
['recognition', 'membership', 'inference']
>>> accept_names()[:3]
('record-recognition', 'group-recognition', 'record-membership')
>>> spec_of("inference").needs_labels, spec_of("nosuch") is None
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...errors import BioanonError, suggest
from ...metrics.results import COVERED, RiskResult
from .inference import InferenceRisk
from .membership import MembershipRisk
from .recognition import RecognitionRisk

#: the options a risk's target can be read from: a target of its own (recognition's), or
#: the privacy level, one target per level (membership's and inference's)
TARGET_OPTIONS = ("target_advantage", "level")


@dataclass(frozen=True)
class RiskSpec:
    """One registered risk.

    Attributes
    ----------
    name : str
        The risk's name in results and reports (``recognition``, ``membership``, ...).
    evaluator : type
        Built as ``evaluator(ctx: RiskContext, target)``: a float, or for a risk judged at
        the privacy level the level (:class:`bioanon.levels.Level`: one target per level).
    statistic : str
        What its figure measures (``advantage``, ``AUC``).
    target_option : str
        The option of :class:`~bioanon.evaluation.options.EvaluationOptions` holding its
        target (one of :data:`TARGET_OPTIONS`): ``target_advantage`` or ``level``.
    switch : str or None
        The boolean option that turns it off (None: always run).
    axis : str
        The search chart's axis label (``{sensitive}`` is filled in).
    no_leak : float
        Its value for a release that leaks nothing (the chart's reference line).
    stage : str or None
        The progress stage named while it runs.
    question : str
        What it asks, in the data owner's words (the report's risk table).
    levels : tuple of str
        The levels it is measured at: ``record`` (``group`` when the split keeps groups
        apart) and ``identity``.
    counts : {"members", "released"}
        What the plan counts to say whether its target can be shown: members against
        non-members (a membership advantage), or the released records (a rate against
        chance).
    needs_labels : bool
        Measured only when the release carries a label column.
    dp_bounded : bool
        A DP guarantee's proven advantage bound covers it (at a level the guarantee's unit
        covers).
    panel : bool
        It reads the attack panel's guesses (the search's cheap stage runs without it).
    """

    name: str
    evaluator: Any
    statistic: str
    target_option: str
    switch: str | None
    axis: str
    no_leak: float
    stage: str | None = None
    question: str = ""
    levels: tuple[str, ...] = ("record", "identity")
    counts: str = "members"
    needs_labels: bool = False
    dp_bounded: bool = False
    panel: bool = False

    def measured_at(self, group: str | None = None) -> tuple[str, ...]:
        """The levels it is measured at under a split (``record`` becomes ``group`` when
        the split keeps groups apart)."""
        return tuple("group" if lv == "record" and group is not None else lv
                     for lv in self.levels)

    def accept_names(self) -> tuple[str, ...]:
        """``LEVEL-RISK`` of every level it can be measured at (and accepted)."""
        levels = [lv for level in self.levels
                  for lv in ((level, "group") if level == "record" else (level,))]
        return tuple(f"{lv}-{self.name}" for lv in levels)


#: every risk the certificate judges, in the order they are run and shown
REGISTRY: tuple[RiskSpec, ...] = (
    RiskSpec("recognition", RecognitionRisk, "advantage", "target_advantage", None,
             "advantage on '{sensitive}'", 0.0, question="is this released record X's?",
             levels=("record",), counts="released", panel=True),
    RiskSpec("membership", MembershipRisk, "advantage", "level", "membership",
             "membership advantage TPR − FPR, worst level", 0.0, "membership and tracing",
             question="is X in the release?", dp_bounded=True),
    RiskSpec("inference", InferenceRisk, "advantage", "level", "inference",
             "inference as membership advantage, worst level", 0.0,
             question="what does the release tell about X's labels beyond a non-member's?",
             needs_labels=True, dp_bounded=True),
)


# ---------------------------------------------------------------------- read from it
def risk_names() -> tuple[str, ...]:
    """The registered risks' names, in order."""
    return tuple(s.name for s in REGISTRY)


def level_names() -> tuple[str, ...]:
    """Every level a registered risk is measured at (``group`` beside ``record``)."""
    out: dict[str, None] = {}
    for s in REGISTRY:
        for name in s.accept_names():
            out[name.rsplit("-" + s.name, 1)[0]] = None
    return tuple(out)


def accept_names() -> tuple[str, ...]:
    """Every ``LEVEL-RISK`` a user may accept."""
    return tuple(n for s in REGISTRY for n in s.accept_names())


def spec_of(risk: str) -> RiskSpec | None:
    """The registered risk named ``risk`` (None when none is)."""
    return next((s for s in REGISTRY if s.name == risk), None)


def target_options() -> tuple[str, ...]:
    """The options the registered risks read their targets from (each once, in order)."""
    return tuple(dict.fromkeys(s.target_option for s in REGISTRY))


def panel_risks() -> tuple[str, ...]:
    """The registered risks that read the attack panel's guesses (``panel``): the search's
    cheap stage judges every other risk, these on the survivors.

    >>> panel_risks()
    ('recognition',)
    """
    return tuple(s.name for s in REGISTRY if s.panel)


def risks_judged_by(option: str) -> tuple[str, ...]:
    """The registered risks whose target ``option`` holds."""
    return tuple(s.name for s in REGISTRY if s.target_option == option)


#: the risks and the levels a verdict can name, as registered when the package was loaded
#: (read :func:`risk_names` and :func:`level_names` to follow a patched registry)
RISKS = risk_names()
LEVELS = level_names()


# ---------------------------------------------------------------------- accepted, covered
def check_accepted(accept: Mapping[str, str] | None) -> dict[str, str]:
    """Validate accepted risk names (``LEVEL-RISK`` of a registered risk) and their reasons.

    >>> check_accepted({"identity-membership": " too few people "})
    {'identity-membership': 'too few people'}
    """
    if accept is not None and not isinstance(accept, Mapping):  # a list once failed in dict()
        raise BioanonError(f"accept_risks={accept!r} must map each accepted risk "
                           "(LEVEL-RISK) to its reason, e.g. accept_risks={'identity-"
                           "membership': 'why'}")
    out: dict[str, str] = {}
    valid = accept_names()
    for name, reason in dict(accept or {}).items():
        if str(name) not in valid:
            raise BioanonError(f"cannot accept unknown risk '{name}'"
                               f"{suggest(str(name), valid)}; name one of {', '.join(valid)}")
        if not str(reason or "").strip():
            raise BioanonError(f"accepting the risk '{name}' needs a reason: "
                               f"accept_risks={name} with its reason", parameter="accept_risks")
        out[str(name)] = str(reason).strip()
    return out


def apply_accepted(results: list[RiskResult], accept: Mapping[str, str] | None
                   ) -> list[RiskResult]:
    """Mark the named risks accepted (their figures kept, the user's reason recorded)."""
    acc = check_accepted(accept)
    return [r.accepted(acc[r.name]) if r.name in acc else r for r in results]


def cover(results: list[RiskResult], guarantee: Any) -> list[RiskResult]:
    """The risks a DP guarantee bounds (``dp_bounded``), covered by it: at a level its unit
    covers (it holding strictly) and with its proven advantage bound within the target, the
    status is "covered by the guarantee (ε, δ, unit)" — the measured figure kept beside it.
    A measured advantage whose lower 95% bound exceeds the proven bound raises
    :class:`~bioanon.privacy_bounds.BoundExceeded` (a bug, never a finding).

    >>> from bioanon.privacy_bounds import Guarantee
    >>> from bioanon.evaluation.risks.base import risk_result
    >>> r = risk_result("membership", "identity", "advantage", 0.02, (-0.2, 0.24), "x", 0.0,
    ...                 "no signal", 0.14, 0.22, "")
    >>> r.status, cover([r], Guarantee(1.0, 1e-6, "identity", mu=0.22))[0].status
    ('inconclusive at this size', 'covered by the guarantee')
    """
    if guarantee is None:
        return list(results)
    from ...privacy_bounds import check_empirical

    bound = guarantee.advantage_bound()
    bounded = {s.name for s in REGISTRY if s.dp_bounded}
    out = []
    for r in results:
        if (r.risk in bounded and r.statistic == "advantage"
                and guarantee.covers(r.level)):  # strict, and its unit covers the level
            check_empirical(r.ci[0], bound, f"{r.name} under {guarantee.words()}")
            if bound <= r.target and r.status != "accepted":
                extras = {**r.extras, "guarantee": {**guarantee.to_dict(),
                                                    "words": guarantee.words()}}
                r = replace(r, status=COVERED, extras=extras,
                            reason=f"{COVERED} {guarantee.words()}: proven advantage bound "
                                   f"{bound:.3f} ≤ target {r.target:g} (measured "
                                   f"{r.value:+.3f}, upper 95% bound {r.ci[1]:.3f})")
        out.append(r)
    return out


__all__ = ["LEVELS", "REGISTRY", "RISKS", "TARGET_OPTIONS", "RiskSpec", "accept_names",
           "apply_accepted", "check_accepted", "cover", "level_names", "panel_risks", "risk_names",
           "risks_judged_by", "spec_of", "target_options"]
