"""One evaluator per risk; the verdict conjoins them.

- :mod:`.recognition`: is this released record X's? (the cross-fitted worst case);
- :mod:`.membership`: is X in the release? (tracing, density ratio, nearest record);
- :mod:`.inference`: what does the release tell about X's labels beyond a non-member's?

Each evaluator is built the same way, ``Risk(ctx, target)`` with the shared
:class:`~.base.RiskContext`; ``evaluate()`` returns it and ``results()`` the typed
:class:`~bioanon.metrics.results.RiskResult` per level. :data:`.registry.REGISTRY` lists
them: the evaluation runs them from it and the search chart draws one panel per entry, so a
fourth risk is one module here, one line there (its target a field of
:class:`~bioanon.evaluation.options.EvaluationOptions`) and its test.
"""

from .base import (
    LEVELS,
    RISKS,
    RiskContext,
    apply_accepted,
    check_accepted,
    not_covered,
    rejudge,
    risk_result,
)
from .inference import InferenceRisk
from .membership import MembershipRisk
from .recognition import ADVANTAGE_METHOD, RecognitionRisk, advantage_interval
from .registry import REGISTRY, RiskSpec

__all__ = ["ADVANTAGE_METHOD", "LEVELS", "REGISTRY", "RISKS", "InferenceRisk",
           "MembershipRisk", "RecognitionRisk", "RiskContext", "RiskSpec",
           "advantage_interval", "apply_accepted", "check_accepted", "not_covered", "rejudge",
           "risk_result"]
