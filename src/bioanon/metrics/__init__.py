"""Metrics: utility, mixture, chance, KL from chance, top-k, confidence intervals, and more.

One module per kind of measure; everything public is re-exported here.
"""

# the module ``advantage`` is loaded before the function of that name is bound below, so that
# ``bioanon.metrics.advantage`` is the function whatever order the modules are imported in
from . import advantage as _advantage_module  # noqa: F401
from .disclosure import (
    anonymity_sets,
    homogeneity,
    information_loss,
    is_k_anonymous,
    k_anonymity,
    rank1,
    rank1_panel,
    record_linkage_rate,
)
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
    "anonymity_sets",
    "chance_level",
    "homogeneity",
    "information_loss",
    "is_k_anonymous",
    "k_anonymity",
    "kl_from_uniform",
    "mixture",
    "rank1",
    "rank1_panel",
    "record_linkage_rate",
    "pareto_auc",
    "pareto_front",
    "top_k_accuracy",
    "utility",
    "wilson_interval",
]
