"""Datasets: the synthetic default (:func:`make_biometric`) and loaders for real sets."""

from .synthetic import make_biometric

__all__ = ["make_biometric"]
