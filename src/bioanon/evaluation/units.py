"""The features' units, as the judge's utility models read them.

A table in other units (metres or micrometres, pixels in [0, 1] or [0, 255]) is the same data,
and its utility should read the same. Most of the consumer's models do not care, but
scikit-learn's trees treat values closer than 1e-7 as equal. On features whose spread is
about 1e-6, the consumer's forest then reads a release poorly: a 360-record table scaled by
1e-6 read CAS 0.911 against 0.978 in its own units.

So before the utility models see a table whose typical feature spread lies far outside the
usual (median standard deviation below 2**-10 or above 2**20), every array they read is
multiplied by one power of two. That brings the spread near 1. A power of two changes no
digit of a float, only its exponent. The multiplying happens after anonymization, so a
setting's own parameters (a noise scale, a clip bound) keep the units of the data they were
given. Tables inside the usual range are read exactly as they are.

Examples
--------
>>> X = np.random.default_rng(0).normal(size=(200, 4))
>>> unit_scale(X), unit_scale(X * 1e-6) == 2.0 ** 20, unit_scale(np.zeros((3, 2)))
(1.0, True, 1.0)
"""

from __future__ import annotations

import math

import numpy as np

#: the median feature standard deviation read as it is: from 2**-10 (about 0.001) to 2**20
LOW, HIGH = 2.0 ** -10, 2.0 ** 20


def unit_scale(X: np.ndarray) -> float:
    """The power of two that brings the median standard deviation of ``X``'s features near
    1, or 1.0 where it already lies in [:data:`LOW`, :data:`HIGH`] (or no feature varies)."""
    sd = np.asarray(X, np.float64).std(axis=0)
    sd = sd[np.isfinite(sd) & (sd > 0)]
    if sd.size == 0:
        return 1.0
    med = float(np.median(sd))
    if LOW <= med <= HIGH:
        return 1.0
    return float(2.0 ** -round(math.log2(med)))


def in_units(X: np.ndarray, scale: float) -> np.ndarray:
    """``X`` multiplied by :func:`unit_scale`'s power of two, as float32: in float64 first,
    so that a power beyond float32's range (``2**140`` for features of about 1e-42, whose
    ``np.float32`` was inf) multiplies without overflow. Exact either way (a power of two
    changes only the exponent); ``scale`` 1: ``X`` as it is.

    >>> x = in_units(np.full((1, 2), 1e-42, np.float32), 2.0 ** 140)
    >>> x.dtype, bool(np.all(np.isfinite(x))), float(x[0, 0]) > 1
    (dtype('float32'), True, True)
    """
    if scale == 1.0:
        return X
    return (np.asarray(X, np.float64) * scale).astype(np.float32)
