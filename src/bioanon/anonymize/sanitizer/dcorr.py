"""Distance correlation (Székely et al. 2007), the decorrelation term of the decoupler.

``dcorr(x, y) = dcov(x, y) / sqrt(dcov(x, x) · dcov(y, y))`` with
``dcov(x, y) = (1/n²) Σ_jk A_jk B_jk``, where A and B are the double-centred Euclidean distance
matrices of the n samples of x and of y (the biased V-statistic, as in section 3.1 of the
sanitizer paper). It is 0 for independent variables in the population, 1 for a variable with
itself, and x and y may have different dimensions.

:func:`distance_correlation` works on NumPy arrays; :func:`distance_correlation_torch` is the
differentiable version used on each training batch (torch is imported only when it is called).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.distance import cdist

from ...errors import BioanonError


def _as_samples(a: Any, name: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise BioanonError(f"{name} must be a 1-D or 2-D array of samples, got {a.ndim}-D")
    return a


def _double_centred(a: np.ndarray) -> np.ndarray:
    d = cdist(a, a)
    return d - d.mean(axis=0) - d.mean(axis=1)[:, None] + d.mean()


def distance_correlation(x: Any, y: Any) -> float:
    """Sample distance correlation of two sets of paired samples.

    Parameters
    ----------
    x : array (n,) or (n, p)
    y : array (n,) or (n, q)

    Returns
    -------
    float in [0, 1]; 0 when either variable is constant.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(200, 3))
    >>> round(distance_correlation(x, x), 6)
    1.0
    """
    x, y = _as_samples(x, "x"), _as_samples(y, "y")
    if x.shape[0] != y.shape[0]:
        raise BioanonError(f"x has {x.shape[0]} samples and y has {y.shape[0]}; pair them")
    a, b = _double_centred(x), _double_centred(y)
    dxy, dxx, dyy = (a * b).mean(), (a * a).mean(), (b * b).mean()
    denom = np.sqrt(dxx * dyy)
    if denom <= 0:
        return 0.0
    return float(np.sqrt(max(dxy, 0.0) / denom))


def distance_correlation_torch(x: Any, y: Any, squared: bool = False,
                               eps: float = 1e-9) -> Any:
    """Differentiable distance correlation of two batches (torch tensors (n, p), (n, q)).

    Distances are ``sqrt(max(‖·‖², eps))`` so the gradient stays finite on the diagonal.
    ``squared=True`` returns dcorr², the ratio written in the paper's equation for dcorr; its
    gradient stays bounded near independence, so the training loss uses it.
    """
    import torch

    def centred(a: Any) -> Any:
        norms = a.pow(2).sum(1)
        sq = norms[:, None] + norms[None, :] - 2.0 * (a @ a.T)
        d = torch.sqrt(torch.clamp(sq, min=eps))
        return d - d.mean(0, keepdim=True) - d.mean(1, keepdim=True) + d.mean()

    a, b = centred(x), centred(y)
    dxy = (a * b).mean()
    dxx = (a * a).mean()
    dyy = (b * b).mean()
    ratio = torch.clamp(dxy, min=0.0) / torch.sqrt(dxx * dyy + eps)
    return ratio if squared else torch.sqrt(ratio + eps)
