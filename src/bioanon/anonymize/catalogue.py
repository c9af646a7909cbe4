"""The registered methods' names and the choices of their text parameters, without importing
a method.

The command line's help texts (``--method``'s list, the choices of ``--relevance`` and
``--sampler``) read them here: building them from the registry imports every method, and with
them scikit-learn and SciPy's statistics, seconds before ``bioanon anonymize --help`` could
print (:mod:`bioanon.anonymize.registry` stays the one place a method is declared; a test
checks that these match it, so a method added there fails the test until it is named here).

Examples
--------
>>> METHOD_NAMES[:3], "dp-cells" in METHOD_NAMES
(('noise', 'laplace', 'blur'), True)
>>> TEXT_CHOICES["relevance"]
('forest', 'mutual_info')
"""

from __future__ import annotations

#: every registered method, in registration order (:func:`bioanon.anonymize.registry.methods`)
METHOD_NAMES: tuple[str, ...] = (
    "noise", "laplace", "blur", "pixelate", "mask", "dp-pix", "keep", "motion-extract",
    "basis-synthetic", "dp-basis", "dp-cells", "dp-mix", "dp-synthetic", "leace", "ksame",
    "ksame-select", "cluster-mix", "sdv-copula", "smartnoise-dp", "selective-mean",
    "synthetic", "vp-mix", "sanitizer")

#: the choices the methods declare for each text parameter (merged over the methods, in
#: registration order), by parameter name
TEXT_CHOICES: dict[str, tuple[str, ...]] = {
    "scale": ("absolute", "std"),
    "budget": ("record", "feature"),
    "basis": ("pca", "public", "random", "public-lda", "dp-pca", "dp-lda", "dct", "identity"),
    "covariance": ("class", "pooled", "diag", "lowrank", "class-diag", "full", "tied",
                   "spherical", "ledoit-wolf", "factor"),
    "residual": ("isotropic", "diag", "class-diag"),
    "means": ("full", "basis"),
    "privacy_unit": ("record", "identity"),
    "prior": ("none", "public"),
    "clusterer": ("mdav", "kmember", "knn", "hierarchical"),
    "linkage": ("average", "complete", "ward", "single"),
    "distribution": ("norm", "beta", "truncnorm", "uniform", "gamma", "gaussian_kde"),
    "synthesizer": ("dpctgan", "patectgan"),
    "relevance": ("forest", "mutual_info"),
    "design": ("uniform", "bounded"),
    "sampler": ("suppress", "dp-obfuscate", "dp-sample"),
    "architecture": ("mlp", "conv"),
    "output": ("features", "latents"),
}

__all__ = ["METHOD_NAMES", "TEXT_CHOICES"]
