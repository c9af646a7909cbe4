"""Attacks on released data: threat models, the recognizer zoo, the attack panel and identity
selection.

Every name is imported on first use (the threat model or the recognizers' names alone do not
bring scikit-learn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .attackers import LinkageAttacker, ModelCache, run_panel, training_set
    from .recognizers import RECOGNIZERS, make_recognizer, parse_models, register_recognizer
    from .selection import STRATEGIES, identity_counts, selection_curves
    from .threat import MODES, ThreatModel, parse_modes

from .._lazy import lazy_getattr

#: each public name and the module (under this package) that defines it
_LAZY = {
    "LinkageAttacker": "attackers",
    "MODES": "threat",
    "ModelCache": "attackers",
    "RECOGNIZERS": "recognizers",
    "STRATEGIES": "selection",
    "ThreatModel": "threat",
    "identity_counts": "selection",
    "make_recognizer": "recognizers",
    "parse_models": "recognizers",
    "parse_modes": "threat",
    "register_recognizer": "recognizers",
    "run_panel": "attackers",
    "selection_curves": "selection",
    "training_set": "attackers",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = ["MODES", "RECOGNIZERS", "STRATEGIES", "LinkageAttacker", "ModelCache", "ThreatModel",
           "identity_counts", "make_recognizer", "parse_models", "parse_modes",
           "register_recognizer", "run_panel", "selection_curves", "training_set"]
