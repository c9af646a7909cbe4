"""One evaluator per risk; the verdict conjoins them.

- :mod:`.recognition`: is this released record X's? (the cross-fitted worst case);
- :mod:`.membership`: is X in the release? (tracing, density ratio, nearest record);
- :mod:`.inference`: what does the release tell about X's labels beyond a non-member's?

Each evaluator is built the same way, ``Risk(ctx, target)`` with the shared
:class:`~.base.RiskContext`; ``evaluate()`` returns it and ``results()`` the typed
:class:`~bioanon.metrics.results.RiskResult` per level. :data:`.registry.REGISTRY` lists
them: the evaluation, the plan, the caps, the report's risk table, the search chart and the
command line's target and switch flags derive from it, so a fourth risk is one module here,
one line there and its test.
"""

from .base import RiskContext, not_covered, rejudge, risk_result
from .inference import InferenceRisk
from .membership import MembershipRisk
from .recognition import ADVANTAGE_METHOD, RecognitionRisk, advantage_interval
from .registry import LEVELS, REGISTRY, RISKS, RiskSpec, apply_accepted, check_accepted, cover

__all__ = ["ADVANTAGE_METHOD", "LEVELS", "REGISTRY", "RISKS", "InferenceRisk",
           "MembershipRisk", "RecognitionRisk", "RiskContext", "RiskSpec",
           "advantage_interval", "apply_accepted", "check_accepted", "cover", "not_covered",
           "rejudge", "risk_result"]
