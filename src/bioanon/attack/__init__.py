"""Attacks on released data: threat models, the recognizer zoo, the attack panel and identity
selection."""

from .attackers import LinkageAttacker, ModelCache, run_panel, training_set
from .recognizers import RECOGNIZERS, make_recognizer, parse_models, register_recognizer
from .selection import STRATEGIES, identity_counts, selection_curves
from .threat import MODES, ThreatModel, parse_modes

__all__ = ["MODES", "RECOGNIZERS", "STRATEGIES", "LinkageAttacker", "ModelCache", "ThreatModel",
           "identity_counts", "make_recognizer", "parse_models", "parse_modes",
           "register_recognizer", "run_panel", "selection_curves", "training_set"]
