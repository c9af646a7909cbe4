"""Anonymizers: scikit-learn style estimators, one module per family."""

from .baselines import (
    BlurAnonymizer,
    DPPixAnonymizer,
    EyeBandMaskAnonymizer,
    GaussianNoiseAnonymizer,
    KeepChannelsAnonymizer,
    LaplaceAnonymizer,
    MotionExtractAnonymizer,
    PixelateAnonymizer,
)
from .clustering import FixedSizeClusterer, cluster_quality, fixed_size_clusters
from .ksame import KSameAnonymizer, KSameSelectAnonymizer
from .mixing import ClusterMixAnonymizer
from .sanitizer import SanitizerAnonymizer  # torch is imported only when it is used
from .selective_mean import SelectiveMeanAnonymizer

__all__ = [
    "BlurAnonymizer",
    "ClusterMixAnonymizer",
    "DPPixAnonymizer",
    "EyeBandMaskAnonymizer",
    "FixedSizeClusterer",
    "GaussianNoiseAnonymizer",
    "KSameAnonymizer",
    "KSameSelectAnonymizer",
    "KeepChannelsAnonymizer",
    "LaplaceAnonymizer",
    "MotionExtractAnonymizer",
    "PixelateAnonymizer",
    "SanitizerAnonymizer",
    "SelectiveMeanAnonymizer",
    "cluster_quality",
    "fixed_size_clusters",
]
