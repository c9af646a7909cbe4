"""Metrics: utility, mixture, chance, KL from chance, top-k, confidence intervals, and more.

One module per kind of measure; everything public is re-exported here.
"""

from .pareto import pareto_auc, pareto_front
from .scores import (
    accuracy,
    advantage,
    chance_level,
    kl_from_uniform,
    mixture,
    top_k_accuracy,
    utility,
    wilson_interval,
)

__all__ = [
    "accuracy",
    "advantage",
    "chance_level",
    "kl_from_uniform",
    "mixture",
    "pareto_auc",
    "pareto_front",
    "top_k_accuracy",
    "utility",
    "wilson_interval",
]
