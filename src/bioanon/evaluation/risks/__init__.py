"""One evaluator per risk; the verdict conjoins them.

- :mod:`.recognition`: is this released record X's? (the cross-fitted worst case);
- :mod:`.membership`: is X in the release? (tracing, density ratio, nearest record);
- :mod:`.inference`: what does the release tell about X's labels beyond a non-member's?

Each evaluator takes a :class:`~.base.RiskContext` (or its own inputs) and a target;
``evaluate()`` returns it and ``results()`` the typed
:class:`~bioanon.metrics.results.RiskResult` per level. A fourth risk is one module here
(with its test) and one line in :meth:`bioanon.evaluation.Evaluation.evaluate`.
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

__all__ = ["ADVANTAGE_METHOD", "LEVELS", "RISKS", "InferenceRisk", "MembershipRisk",
           "RecognitionRisk", "RiskContext", "advantage_interval", "apply_accepted",
           "check_accepted", "not_covered", "rejudge", "risk_result"]
