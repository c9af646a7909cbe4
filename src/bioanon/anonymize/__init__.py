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
from .basis_synthetic import BasisSyntheticAnonymizer
from .clustering import FixedSizeClusterer, cluster_quality, fixed_size_clusters
from .compose import ComposedAnonymizer
from .dp_basis import DPBasisAnonymizer
from .dp_mix import DPMixAnonymizer
from .dp_synthetic import DPSyntheticAnonymizer
from .erasure import LeaceAnonymizer
from .ksame import KSameAnonymizer, KSameSelectAnonymizer
from .mixing import ClusterMixAnonymizer
from .peer_sdv import SDVCopulaAnonymizer  # SDV is imported only when it is used
from .release_model import ReleaseModel
from .sanitizer import SanitizerAnonymizer  # torch is imported only when it is used
from .selective_mean import SelectiveMeanAnonymizer
from .synthetic import SyntheticAnonymizer
from .vp_mix import VarianceMixAnonymizer

__all__ = [
    "BasisSyntheticAnonymizer",
    "BlurAnonymizer",
    "ClusterMixAnonymizer",
    "ComposedAnonymizer",
    "DPBasisAnonymizer",
    "DPMixAnonymizer",
    "DPPixAnonymizer",
    "DPSyntheticAnonymizer",
    "EyeBandMaskAnonymizer",
    "FixedSizeClusterer",
    "GaussianNoiseAnonymizer",
    "KSameAnonymizer",
    "KSameSelectAnonymizer",
    "KeepChannelsAnonymizer",
    "LaplaceAnonymizer",
    "LeaceAnonymizer",
    "MotionExtractAnonymizer",
    "PixelateAnonymizer",
    "ReleaseModel",
    "SDVCopulaAnonymizer",
    "SanitizerAnonymizer",
    "SelectiveMeanAnonymizer",
    "SyntheticAnonymizer",
    "VarianceMixAnonymizer",
    "cluster_quality",
    "fixed_size_clusters",
]
