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

Every name is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import RiskContext, not_covered, rejudge, risk_result
    from .inference import InferenceRisk
    from .membership import MembershipRisk
    from .recognition import ADVANTAGE_METHOD, RecognitionRisk, advantage_interval
    from .registry import LEVELS, REGISTRY, RISKS, RiskSpec, apply_accepted, check_accepted, cover

#: each public name and the module (under this package) that defines it
_LAZY = {
    "ADVANTAGE_METHOD": "recognition",
    "InferenceRisk": "inference",
    "LEVELS": "registry",
    "MembershipRisk": "membership",
    "REGISTRY": "registry",
    "RISKS": "registry",
    "RecognitionRisk": "recognition",
    "RiskContext": "base",
    "RiskSpec": "registry",
    "advantage_interval": "recognition",
    "apply_accepted": "registry",
    "check_accepted": "registry",
    "cover": "registry",
    "not_covered": "base",
    "rejudge": "base",
    "risk_result": "base",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ADVANTAGE_METHOD", "LEVELS", "REGISTRY", "RISKS", "InferenceRisk",
           "MembershipRisk", "RecognitionRisk", "RiskContext", "RiskSpec",
           "advantage_interval", "apply_accepted", "check_accepted", "cover", "not_covered",
           "rejudge", "risk_result"]
