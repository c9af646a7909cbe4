"""What the DP methods of the Gaussian family share: the privacy units and their neighbouring
relation, the clipping box, a person's records bounded, the public records checked.

dp-synthetic, dp-basis and dp-cells each release noisy statistics of records clipped to a
box and rescaled to [−1, 1] per feature; the box (and its centre) is declared, taken from
public records, or — not strict, with a :class:`~bioanon.privacy.PrivacyLeakWarning` — from
the data. Under ``privacy_unit="identity"`` each person contributes at most
``max_records_per_identity`` records (:func:`bound_contributions`), and every sensitivity is
multiplied by that bound (:func:`records_per_unit`). This module holds those parts once, so
that no method module imports another.

Examples
--------
>>> lo, hi = box_bounds((-1.0, 3.0), None, np.zeros((2, 1)), "dp-test")
>>> box_scaler(lo, hi, (lo + hi) / 2)(np.array([[5.0]], dtype=np.float32)).tolist()
[[1.0]]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..privacy import PrivacyLeakWarning, public_bounds
from .base import label_values
from .strata import strata

#: what a guarantee protects
UNITS = ("record", "identity")
#: the neighbouring relation of each unit (the privacy statements say it)
NEIGHBOURING = {"record": "the features of one record change arbitrarily (labels, record "
                          "count and class sizes are released and public)",
                "identity": "the features of all records of one identity change (at most "
                            "max_records_per_identity of them are used; labels, record count "
                            "and class sizes are public)"}


def check_box_and_unit(est: Any) -> None:
    """The relations every box-clipped DP method checks: ``bounds`` is a pair, and the
    identity unit names its identity column (``sensitive``)."""
    if est.bounds is not None and len(est.bounds) != 2:
        raise BioanonError(f"bounds={est.bounds!r} must be (lo, hi); e.g. bounds=-5,5")
    if est.privacy_unit == "identity" and est.sensitive is None:
        raise BioanonError("privacy_unit=identity needs the identity column; add "
                           "sensitive=COLUMN", parameter="sensitive")


def records_per_unit(est: Any) -> int:
    """m: the records one unit may change (the sensitivities' multiplier): 1 for a record,
    ``max_records_per_identity`` for an identity."""
    return int(est.max_records_per_identity) if est.privacy_unit == "identity" else 1


def accounting_units(est: Any, labels: Any, n: int) -> int:
    """The n of the default δ = 1/n²: the records, or the identities (identity unit)."""
    if est.privacy_unit != "identity":
        return n
    assert est.sensitive is not None  # check_box_and_unit
    return int(np.unique(label_values(labels, est.sensitive, n)).size)


def bound_contributions(ids: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask keeping at most ``m`` records of each identity, chosen at random.

    Whole-array: a random order, a stable sort by identity, each record's rank within its
    identity.

    >>> keep = bound_contributions(np.array([0, 0, 0, 1, 2, 2]), 2, np.random.default_rng(0))
    >>> np.bincount(np.array([0, 0, 0, 1, 2, 2])[keep]).tolist()
    [2, 1, 2]
    """
    _, codes = np.unique(np.asarray(ids), return_inverse=True)
    order = rng.permutation(codes.size)
    order = order[np.argsort(codes[order], kind="stable")]
    sorted_codes = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1]
    counts = np.diff(np.r_[starts, sorted_codes.size])
    rank = np.arange(sorted_codes.size) - np.repeat(starts, counts)
    keep = np.zeros(codes.size, dtype=bool)
    keep[order[rank < m]] = True
    return keep


def public_records(public_data: Any, d: int) -> np.ndarray:
    """``public_data`` as finite records (m ≥ 2, d) of people not in the release (float64),
    or a one-line error."""
    P = np.asarray(public_data, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] != d or P.shape[0] < 2 or not np.all(np.isfinite(P)):
        raise BioanonError(f"public_data has shape {P.shape}; it must be finite records "
                           f"(m >= 2, {d}) of people not in the release")
    return P


def per_feature(value: Any, d: int, name: str) -> np.ndarray:
    """``value`` (one number, or one per feature) as ``d`` float64 values (a copy); any other
    length is refused naming ``name`` (NumPy's broadcast error once ended the run).

    >>> per_feature(2, 3, "center")
    array([2., 2., 2.])
    >>> per_feature([1, 2], 32, "center")
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: center has 2 values for the 32 features; give one per \
feature (or one for them all)
    """
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim > 1 or arr.size not in (1, d):
        raise BioanonError(f"{name} has {arr.size} values for the {d} features; give one per "
                           "feature (or one for them all)")
    return np.broadcast_to(arr.reshape(-1) if arr.ndim else arr, (d,)).copy()


def declared_box(bounds: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    """A declared ``(lo, hi)`` broadcast to ``d`` features (float64 copies), checked."""
    lo, hi = (per_feature(b, d, f"bounds' {side} bound") for b, side in zip(
        bounds, ("lower", "upper"), strict=False))
    if np.any(hi < lo):
        raise BioanonError("bounds (lo, hi) need lo <= hi for every feature")
    if d and np.all(hi == lo):  # bounds=1,1 released a table of ones, exit 0
        raise BioanonError(f"bounds ({lo[0]:g}, {hi[0]:g}) clip every feature to one value, "
                           "so the release would hold nothing of the features; give lo < hi, "
                           "e.g. bounds=-5,5")
    return lo, hi


def box_bounds(bounds: Any, public: np.ndarray | None, X: np.ndarray, method: str, *,
               quantile: float = 0.01, hint: str = "pass public_data (people not in the "
                                                   "release) or bounds=(lo, hi)",
               stacklevel: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """The clipping box ``(lo, hi)``: declared ``bounds``, else from the ``public``
    records (:func:`~bioanon.privacy.public_bounds`), else the ``quantile`` and 1 −
    ``quantile`` of the data ``X`` — then ``method``'s guarantee no longer holds strictly
    (a :class:`~bioanon.privacy.PrivacyLeakWarning` saying so; such values are never kept)."""
    d = X.shape[1]
    if bounds is not None:
        return declared_box(bounds, d)
    if public is not None:
        lo, hi = public_bounds(public, quantile=0.01, margin=0.1)
    else:
        warnings.warn(f"{method} clipping bounds come from the data: the (epsilon, delta) "
                      f"guarantee no longer holds strictly; {hint}", PrivacyLeakWarning,
                      stacklevel=stacklevel)
        lo, hi = np.quantile(X, [quantile, 1.0 - quantile], axis=0)
    return lo, hi  # as computed: each method widens them where it always has


def box_scale(X: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              center: np.ndarray | None = None) -> np.ndarray:
    """Clip to [lo, hi], subtract the public ``center`` (default: the box's midpoint) and
    divide by the half-width per feature (float64); lo = hi maps to 0.

    >>> box_scale(np.array([[5.0, 1.0]]), np.array([-1.0, 1.0]), np.array([3.0, 1.0])).tolist()
    [[1.0, 0.0]]
    """
    mid = (lo + hi) / 2.0 if center is None else center
    half = (hi - lo) / 2.0
    safe = np.where(half > 0, half, 1.0)
    u = (np.clip(np.asarray(X, dtype=np.float64), lo, hi) - mid) / safe
    u[:, half <= 0] = 0.0
    return u


def box_scaler(lo: np.ndarray, hi: np.ndarray, mid: np.ndarray
               ) -> Callable[[np.ndarray], np.ndarray]:
    """The box scaling of :func:`box_scale` in float32 (what the statistics read; float64
    input is scaled in float64).

    >>> box_scaler(np.array([-1.0]), np.array([3.0]), np.array([1.0]))(
    ...     np.array([[5.0]], dtype=np.float32)).tolist()
    [[1.0]]
    """
    half = (hi - lo) / 2.0
    live = half > 0
    inv = np.where(live, 1.0 / np.where(live, half, 1.0), 0.0)
    # clipping to the box then the affine map = the affine map then clipping to the mapped
    # box (inv >= 0): two in-place passes of minimum / maximum, faster than np.clip
    lo_u, hi_u = (lo - mid) * inv, (hi - mid) * inv
    typed = {dt: (mid.astype(dt), inv.astype(dt), lo_u.astype(dt), hi_u.astype(dt))
             for dt in (np.float32, np.float64)}

    def scale(block: np.ndarray) -> np.ndarray:
        dt = np.float32 if np.asarray(block).dtype == np.float32 else np.float64
        m, v, a, b = typed[dt]
        u = np.subtract(block, m, dtype=dt)
        u *= v
        np.minimum(u, b, out=u)
        np.maximum(u, a, out=u)
        return u

    return scale


def release_inputs(est: Any, X: np.ndarray, labels: Any, seed: int) -> tuple[
        np.ndarray, tuple[Any, Any, Any], np.ndarray,
        tuple[np.ndarray, np.ndarray, np.ndarray], Any]:
    """What a DP method of the basis family (dp-basis, dp-cells) fits from, before any
    statistic: the strata of the interest (× the additional columns), the seed streams of the
    noise, the draws and the basis, the records used (the identity unit keeps at most
    ``max_records_per_identity`` of each person's), the box ``(lo, hi, mid)`` and its scaler.

    ``est`` carries ``interest``, ``additional``, ``privacy_unit``, ``sensitive``,
    ``max_records_per_identity`` and ``_scaling(X)``.
    """
    n = X.shape[0]
    _, strat = strata(labels, est.interest, list(est.additional or []), n)
    noise_seq, draw_seq, drop_seq, basis_seq = np.random.SeedSequence(seed).spawn(4)
    used = np.ones(n, dtype=bool)
    if est.privacy_unit == "identity":
        assert est.sensitive is not None
        used = bound_contributions(label_values(labels, est.sensitive, n),
                                   int(est.max_records_per_identity),
                                   np.random.default_rng(drop_seq))
    lo, hi, mid = est._scaling(X)
    return strat, (noise_seq, draw_seq, basis_seq), used, (lo, hi, mid), box_scaler(lo, hi, mid)


__all__ = ["NEIGHBOURING", "UNITS", "accounting_units", "bound_contributions", "box_bounds",
           "box_scale", "box_scaler", "check_box_and_unit", "declared_box", "public_records",
           "records_per_unit", "release_inputs"]
