"""The privacy core: secure random state, the ε and δ checks, the Laplace and Gaussian
mechanisms, the zero-concentrated DP accountant, leak warnings.

Every anonymizer draws its randomness through :func:`resolve_seed` (``None`` means fresh
operating-system entropy, never a fixed default) and every DP mechanism checks its budget with
:func:`check_epsilon` (and :func:`check_delta`) and adds noise with :func:`laplace` or
:func:`gaussian`.

Accounting
----------
Gaussian mechanisms compose in zero-concentrated DP (Bun & Steinke 2016): a Gaussian of
standard deviation σ on a query of L2 sensitivity Δ is ρ-zCDP with ρ = Δ² / (2σ²), and the ρ
of several add up. :func:`zcdp_epsilon` converts ρ to (ε, δ)-DP with the conversion of Canonne,
Kamath & Steinke (2020, Prop. 12), the one OpenDP's ``make_zCDP_to_approxDP`` uses;
:func:`zcdp_rho` inverts it (the largest ρ within a budget (ε, δ)), and
:func:`opendp_epsilon` asks OpenDP itself for the ε of a composition of Gaussians (an
optional dependency, imported only there).

Noise source
------------
:func:`laplace` uses NumPy's PCG64 generator (seeded from OS entropy unless the owner passes
a secret ``random_state``). NumPy's floating-point Laplace sampler is not hardened against the
floating-point attacks of Mironov (2012). OpenDP's sampler is (it samples on a discrete grid
with exact arithmetic), and ``laplace(..., hardened=True)`` uses it; it is not the default
because it costs about 60 µs per value (6 s for 10⁵ values, 10 minutes for a 10⁴ × 1024 image
release, against milliseconds for NumPy), takes no seed (so ``random_state`` could not make a
release reproducible) and is an optional dependency.

Examples
--------
>>> import numpy as np
>>> check_epsilon(0.5)
0.5
>>> rng = np.random.default_rng(resolve_seed(0))
>>> laplace(np.zeros(3), 1.0, rng).shape
(3,)
>>> round(zcdp_epsilon(0.02625, 1e-6), 4)
1.0409
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .errors import BioanonError, install_hint

__all__ = ["EPSILON_RANGE", "MU_RANGE", "PrivacyLeakWarning", "analytic_gaussian_epsilon",
           "analytic_gaussian_sigma", "budget_range", "check_delta", "check_epsilon", "check_mu",
           "gaussian", "gaussian_sigma", "leak_warnings_silenced",
           "laplace", "opendp_epsilon", "os_rng", "public_bounds", "resolve_seed", "secure_seed",
           "zcdp_epsilon", "zcdp_rho"]


class PrivacyLeakWarning(UserWarning):
    """A privacy parameter came from the data itself (e.g. clipping bounds), so the stated
    guarantee holds only for bounds fixed in advance."""


@contextmanager
def leak_warnings_silenced() -> Iterator[None]:
    """A certification's search and release without the DP methods' leak warnings.

    The search fits every candidate, the DP methods among them, with clipping bounds taken
    from the data: each would warn that its ε does not hold strictly (eight times, with
    source lines, for one search). With a declared budget the one statement of the budget
    says so (strict or not); without one no ε is claimed — the certificate rests on the
    measured risks, and a DP setting that wins carries its own statement in the manifest
    (``params.privacy``) — so the warnings are noise there. Fitting a DP method directly
    (``anonymize``, ``evaluate``, the estimator) still warns.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        yield


def secure_seed() -> int:
    """A fresh 128-bit seed from the operating system's secure entropy source."""
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)
    return entropy


def resolve_seed(random_state: Any) -> int:
    """The seed of one release: ``random_state`` when given, else fresh OS entropy.

    ``random_state`` may be None, an int, or a NumPy ``RandomState``/``Generator`` (a seed is
    drawn from it). The seed is a secret key: never write it anywhere.
    """
    if random_state is None:
        return secure_seed()
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer):
        raise BioanonError(f"random_state={random_state!r} must be None or an integer seed")
    return int(random_state)


def os_rng() -> np.random.Generator:
    """A generator seeded from fresh operating-system entropy (never a fixed seed)."""
    return np.random.default_rng(np.random.SeedSequence())


#: the privacy budgets ε every DP method honours (each method declares its ``epsilon``
#: parameter with this range, the command line's ``--epsilon`` too, and
#: :func:`check_epsilon` refuses outside it). Below 1e-6 the accountant's conversions lose the
#: budget to rounding (an ε of 1e-8 is stated as 0); above 1e6 no noise is left at float32
#: precision, and the zCDP conversion leaves floating point (math domain errors past 1e20).
EPSILON_RANGE = (1e-6, 1e6)
#: the μ of Gaussian DP (ρ = μ²/2) every μ-budgeted method honours: the same span (ρ from
#: 5e-13 to 5e5; past 1e154 μ² overflows, under 1e-154 it is 0).
MU_RANGE = (1e-6, 1e3)


def budget_range(name: str = "epsilon") -> str:
    """The accepted range of ``epsilon`` (or ``mu``) in words, as every refusal says it.

    >>> budget_range()
    'a number from 1e-06 to 1e+06'
    """
    lo, hi = MU_RANGE if name == "mu" else EPSILON_RANGE
    return f"a number from {lo:g} to {hi:g}"


def _check_budget(value: Any, name: str, span: tuple[float, float], example: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise BioanonError(f"{name}={value!r} is not a number; e.g. {name}={example}") from None
    if not (math.isfinite(x) and span[0] <= x <= span[1]):
        raise BioanonError(f"{name}={value} is out of range; use {budget_range(name)} "
                           f"(e.g. {name}={example}): outside it no DP method states the "
                           "budget it was given")
    return x


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ε as a float, or raise unless it lies in :data:`EPSILON_RANGE`."""
    return _check_budget(epsilon, name, EPSILON_RANGE, "1.0")


def check_mu(mu: Any, name: str = "mu") -> float:
    """Return the μ of Gaussian DP as a float, or raise unless it lies in :data:`MU_RANGE`."""
    return _check_budget(mu, name, MU_RANGE, "1.0")


def laplace(values: Any, scale: Any, rng: np.random.Generator,
            hardened: bool = False) -> np.ndarray:
    """The Laplace mechanism: ``values + Laplace(0, scale)`` elementwise.

    ``scale`` is ``sensitivity / ε`` (a scalar, or an array broadcasting against ``values``).
    ``hardened=True`` samples with OpenDP (resistant to floating-point attacks, slow, no seed;
    needs ``pip install opendp``); ``rng`` is then not used.
    """
    values = np.asarray(values, dtype=np.float64)
    scale_arr = np.broadcast_to(np.asarray(scale, dtype=np.float64), values.shape)
    if not np.all(np.isfinite(scale_arr)) or np.any(scale_arr < 0):
        raise BioanonError("Laplace scale must be a non-negative finite number")
    if not hardened:
        return values + rng.laplace(0.0, 1.0, values.shape) * scale_arr
    return _opendp_noise(values, scale_arr, "laplace")


def _opendp_noise(values: np.ndarray, scale: np.ndarray, kind: str) -> np.ndarray:
    """``values`` plus OpenDP's ``make_laplace`` or ``make_gaussian`` noise (``kind``), one
    measurement per distinct scale (a zero scale leaves its values as they are)."""
    dp = _opendp()
    make, metric = ((dp.m.make_laplace, dp.l1_distance(T=float)) if kind == "laplace"
                    else (dp.m.make_gaussian, dp.l2_distance(T=float)))
    out = np.empty(values.size)
    flat_v, flat_s = values.ravel(), scale.ravel()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    for s in np.unique(flat_s):
        idx = np.flatnonzero(flat_s == s)
        if s == 0:
            out[idx] = flat_v[idx]
            continue
        meas = make(domain, metric, scale=float(s))
        out[idx] = np.asarray(meas(flat_v[idx].tolist()), dtype=np.float64)
    return out.reshape(values.shape)


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return δ as a float, or raise unless 0 < δ < 1."""
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise BioanonError(f"{name}={delta!r} is not a number; e.g. {name}=1e-6") from None
    if not 0.0 < d < 1.0:
        raise BioanonError(f"{name}={delta} must lie strictly between 0 and 1 (e.g. 1/n² for "
                           f"n records); e.g. {name}=1e-6")
    return d


def gaussian(values: Any, sigma: Any, rng: np.random.Generator,
             hardened: bool = False) -> np.ndarray:
    """The Gaussian mechanism: ``values + N(0, sigma²)`` elementwise (float64).

    ``sigma`` is a scalar or an array broadcasting against ``values``; for a query of L2
    sensitivity Δ, ``sigma = gaussian_sigma(Δ, ρ)`` gives ρ-zCDP. ``hardened=True`` samples
    with OpenDP's ``make_gaussian`` (exact discrete sampling, resistant to floating-point
    attacks, about 70 µs per value, no seed; needs ``pip install opendp``); ``rng`` is then
    not used.

    Examples
    --------
    >>> out = gaussian(np.zeros(20000), 2.0, np.random.default_rng(0))
    >>> bool(1.9 < out.std() < 2.1)
    True
    """
    values = np.asarray(values, dtype=np.float64)
    sigma_arr = np.broadcast_to(np.asarray(sigma, dtype=np.float64), values.shape)
    if not np.all(np.isfinite(sigma_arr)) or np.any(sigma_arr < 0):
        raise BioanonError("Gaussian sigma must be a non-negative finite number")
    if not hardened:
        return values + rng.standard_normal(values.shape) * sigma_arr
    return _opendp_noise(values, sigma_arr, "gaussian")


def _opendp() -> Any:
    try:
        import opendp.prelude as dp
    except ImportError:
        raise BioanonError(f"this needs OpenDP; {install_hint('dp')}") from None
    dp.enable_features("contrib")
    return dp


def gaussian_sigma(sensitivity: float, rho: float) -> float:
    """The σ of a ρ-zCDP Gaussian mechanism for L2 ``sensitivity``: ``Δ / sqrt(2ρ)``.

    >>> gaussian_sigma(1.0, 0.5)
    1.0
    """
    if not rho > 0 or not math.isfinite(rho):
        raise BioanonError(f"rho={rho} must be a positive finite number")
    return float(sensitivity) / math.sqrt(2.0 * float(rho))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The ε of a ρ-zCDP mechanism at δ (Canonne, Kamath & Steinke 2020, Prop. 12).

    ε = min over α > 1 of ``αρ + (ln(1/δ) + (α−1) ln(1 − 1/α) − ln α) / (α − 1)``, the same
    conversion as OpenDP's ``make_zCDP_to_approxDP``; tighter than ``ρ + 2 sqrt(ρ ln(1/δ))``.
    """
    from scipy.optimize import minimize_scalar

    rho, delta = float(rho), check_delta(delta)
    if rho < 0 or not math.isfinite(rho):
        raise BioanonError(f"rho={rho} must be a non-negative finite number")
    if rho == 0:
        return 0.0
    log_inv = math.log(1.0 / delta)

    def eps_at(t: float) -> float:  # α = 1 + e^t keeps α > 1 over the whole search
        a = 1.0 + math.exp(t)
        return a * rho + (log_inv + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)

    t0 = math.log(math.sqrt(log_inv / rho))  # near the optimum: α ≈ 1 + sqrt(ln(1/δ)/ρ)
    res = minimize_scalar(eps_at, bounds=(t0 - 8.0, t0 + 8.0), method="bounded",
                          options={"xatol": 1e-10})
    return float(max(min(res.fun, rho + 2.0 * math.sqrt(rho * log_inv)), 0.0))


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP implies (ε, δ)-DP (bisection on :func:`zcdp_epsilon`).

    >>> rho = zcdp_rho(1.0, 1e-6)
    >>> bool(zcdp_epsilon(rho, 1e-6) <= 1.0)
    True
    """
    eps, delta = check_epsilon(epsilon), check_delta(delta)
    lo, hi = 0.0, eps  # ε(ρ) ≥ ρ, so ρ ≤ ε
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if zcdp_epsilon(mid, delta) <= eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


def opendp_epsilon(noise_multipliers: Any, delta: float, d_in: float = 1.0) -> float:
    """OpenDP's ε at δ for a composition of Gaussian mechanisms.

    ``noise_multipliers`` are σ / Δ of each mechanism (its noise over its L2 sensitivity);
    OpenDP builds one ``make_gaussian`` per mechanism, composes them with ``make_composition``
    (zCDP) and converts with ``make_zCDP_to_approxDP``. Needs ``pip install opendp``.
    """
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    metric = dp.l2_distance(T=float)
    meas = [dp.m.make_gaussian(domain, metric, scale=float(z))
            for z in np.atleast_1d(np.asarray(noise_multipliers, dtype=np.float64))]
    approx = dp.c.make_zCDP_to_approxDP(dp.c.make_composition(meas))
    return float(approx.map(float(d_in)).epsilon(check_delta(delta)))


def public_bounds(X_public: Any, quantile: float = 0.01, margin: float = 0.1
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature clipping bounds from **public or auxiliary** data (never the private set).

    The ``quantile`` and ``1 − quantile`` quantiles of each feature, widened by ``margin`` of
    their width on each side. Pass the result as ``bounds=`` of a DP method; computed on the
    data being released instead, the DP guarantee would no longer hold strictly.

    Examples
    --------
    >>> lo, hi = public_bounds(np.arange(200.0).reshape(100, 2), quantile=0.0, margin=0.0)
    >>> lo.tolist(), hi.tolist()
    ([0.0, 1.0], [198.0, 199.0])
    """
    X = np.asarray(X_public, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise BioanonError("public bounds need a 2-D array of at least 2 public records")
    if not 0.0 <= quantile < 0.5:
        raise BioanonError(f"quantile={quantile} must lie in [0, 0.5)")
    lo, hi = np.quantile(X, [quantile, 1.0 - quantile], axis=0)
    width = hi - lo
    return lo - margin * width, hi + margin * width


# ---------------------------------------------------------------------- the analytic Gaussian
def _delta_of(sigma: float, epsilon: float, sensitivity: float) -> float:
    """δ of the Gaussian mechanism with noise ``sigma`` at ``epsilon`` (Balle & Wang, Thm. 8),
    in log space so that a large ε does not overflow."""
    from scipy.special import log_ndtr  # not at import: every command's start-up reads this

    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = math.exp(float(log_ndtr(a - b)))
    second = math.exp(min(epsilon + float(log_ndtr(-a - b)), 700.0))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The least σ of the analytic Gaussian mechanism that is (ε, δ)-DP at this L2 sensitivity.

    Bisection on σ (δ falls as σ grows), to a relative precision of 1e-10.

    Examples
    --------
    >>> s = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    >>> 3.5 < s < 4.84  # below the classical bound √(2 ln(1.25/δ))/ε = 4.84
    True
    """
    if not (epsilon > 0 and 0 < delta < 1 and sensitivity > 0):
        raise BioanonError(f"epsilon={epsilon}, delta={delta}, sensitivity={sensitivity}: "
                           "need epsilon > 0, 0 < delta < 1 and a positive sensitivity")
    return _least(lambda s: _delta_of(s, epsilon, sensitivity) > delta,
                  1e-12 * sensitivity, sensitivity, floor=0.0)


def analytic_gaussian_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """The least ε for which noise ``sigma`` is (ε, δ)-DP at this sensitivity (bisection).

    Examples
    --------
    >>> s = analytic_gaussian_sigma(2.0, 1e-6, 1.0)
    >>> round(analytic_gaussian_epsilon(s, 1e-6, 1.0), 6)
    2.0
    """
    return _least(lambda e: _delta_of(sigma, e, sensitivity) > delta, 0.0, 1.0, floor=1.0)


def _least(short: Callable[[float], bool], lo: float, hi: float, floor: float) -> float:
    """The least x ≥ ``lo`` where ``short(x)`` (δ still above its target) turns false, for a
    ``short`` that is monotone in x: ``hi`` doubled until it passes, then bisection to a
    precision of 1e-10 relative to max(x, ``floor``)."""
    while short(hi):
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if short(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * max(hi, floor):
            break
    return hi
