"""Anonymizers: scikit-learn style estimators, one module per family.

Every name is imported on first use (``bioanon.anonymize.params`` or the registry alone do not
bring scikit-learn, SciPy or the families' stacks: the command line's plan starts without
them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    from .peer_sdv import SDVCopulaAnonymizer
    from .release_model import ReleaseModel
    from .sanitizer import SanitizerAnonymizer
    from .selective_mean import SelectiveMeanAnonymizer
    from .synthetic import SyntheticAnonymizer
    from .vp_mix import VarianceMixAnonymizer

from .._lazy import lazy_getattr

#: each public name and the module (under this package) that defines it
_LAZY = {
    "BasisSyntheticAnonymizer": "basis_synthetic",
    "BlurAnonymizer": "baselines",
    "ClusterMixAnonymizer": "mixing",
    "ComposedAnonymizer": "compose",
    "DPBasisAnonymizer": "dp_basis",
    "DPMixAnonymizer": "dp_mix",
    "DPPixAnonymizer": "baselines",
    "DPSyntheticAnonymizer": "dp_synthetic",
    "EyeBandMaskAnonymizer": "baselines",
    "FixedSizeClusterer": "clustering",
    "GaussianNoiseAnonymizer": "baselines",
    "KSameAnonymizer": "ksame",
    "KSameSelectAnonymizer": "ksame",
    "KeepChannelsAnonymizer": "baselines",
    "LaplaceAnonymizer": "baselines",
    "LeaceAnonymizer": "erasure",
    "MotionExtractAnonymizer": "baselines",
    "PixelateAnonymizer": "baselines",
    "ReleaseModel": "release_model",
    "SDVCopulaAnonymizer": "peer_sdv",
    "SanitizerAnonymizer": "sanitizer",
    "SelectiveMeanAnonymizer": "selective_mean",
    "SyntheticAnonymizer": "synthetic",
    "VarianceMixAnonymizer": "vp_mix",
    "cluster_quality": "clustering",
    "fixed_size_clusters": "clustering",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


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
