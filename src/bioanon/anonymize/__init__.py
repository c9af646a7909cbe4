"""Anonymizers: scikit-learn style estimators, one module per family."""

from .selective_mean import SelectiveMeanAnonymizer

__all__ = ["SelectiveMeanAnonymizer"]
