"""Attacks on released data: the recognizer zoo and the attackers built from it."""

from .attackers import LinkageAttacker
from .recognizers import RECOGNIZERS, make_recognizer

__all__ = ["RECOGNIZERS", "LinkageAttacker", "make_recognizer"]
