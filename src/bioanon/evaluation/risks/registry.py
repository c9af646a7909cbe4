"""The registered risks: one entry per risk, from which the evaluation's loop, the verdict's
targets, the search chart's panels and the targets' option names derive.

A new risk is one module (an evaluator built as ``Risk(ctx, target)``, with ``evaluate()``
returning itself and ``results()`` its typed results per level), one line in
:data:`REGISTRY` (and its target as a field of
:class:`~bioanon.evaluation.options.EvaluationOptions`), and one test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .inference import InferenceRisk
from .membership import MembershipRisk
from .recognition import RecognitionRisk


@dataclass(frozen=True)
class RiskSpec:
    """One registered risk.

    Attributes
    ----------
    name : str
        The risk's name in results and reports (``recognition``, ``membership``, ...).
    evaluator : type
        Built as ``evaluator(ctx: RiskContext, target)``: a float, or for membership and
        inference the privacy level (:class:`bioanon.levels.Level`: one target per level).
    statistic : str
        What its figure measures (``advantage``, ``AUC``).
    target_option : str
        The attribute of the evaluation (and of a search result) holding its target:
        ``target_advantage``, or ``level_`` (the resolved privacy level of
        :class:`~bioanon.evaluation.options.EvaluationOptions`' ``level``).
    switch : str or None
        The field of the options that turns it off (None: always run).
    axis : str
        The search chart's axis label (``{sensitive}`` is filled in).
    no_leak : float
        Its value for a release that leaks nothing (the chart's reference line).
    stage : str or None
        The progress stage named while it runs.
    """

    name: str
    evaluator: Any
    statistic: str
    target_option: str
    switch: str | None
    axis: str
    no_leak: float
    stage: str | None = None


#: every risk the certificate judges, in the order they are run and shown
REGISTRY: tuple[RiskSpec, ...] = (
    RiskSpec("recognition", RecognitionRisk, "advantage", "target_advantage", None,
             "advantage on '{sensitive}'", 0.0),
    RiskSpec("membership", MembershipRisk, "advantage", "level_", "membership",
             "membership advantage TPR − FPR, worst level", 0.0, "membership and tracing"),
    RiskSpec("inference", InferenceRisk, "advantage", "level_", "inference",
             "inference as membership advantage, worst level", 0.0),
)


__all__ = ["REGISTRY", "RiskSpec"]
