"""Sanitizer: decouple-and-sample (global β-VAE decoupler + differentially private sampling).

Importing this package does not import torch; training, loading or applying a decoupler does
(install the ``deep`` extra: ``pip install 'bioanon[deep]'``).
"""

from .dcorr import distance_correlation, distance_correlation_torch
from .decoupler import DEFAULT_CONFIG, Decoupler, train_decoupler
from .dp import (
    MEAN_SHARE,
    RonGaussSampler,
    dp_obfuscate,
    laplace_mechanism,
    os_rng,
    random_orthonormal,
    suppress,
)
from .estimator import SAMPLERS, SanitizerAnonymizer

__all__ = [
    "DEFAULT_CONFIG",
    "MEAN_SHARE",
    "SAMPLERS",
    "Decoupler",
    "RonGaussSampler",
    "SanitizerAnonymizer",
    "distance_correlation",
    "distance_correlation_torch",
    "dp_obfuscate",
    "laplace_mechanism",
    "os_rng",
    "random_orthonormal",
    "suppress",
    "train_decoupler",
]
