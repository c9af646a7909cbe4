"""What a differential-privacy guarantee implies for a membership test, and the inverse.

A membership test distinguishes "X's data is in the release" from "it is not": a hypothesis
test between neighbouring datasets, whose every (FPR, TPR) a DP guarantee bounds.

- **(ε, δ)-DP** (Kairouz, Oh & Viswanath 2015): TPR ≤ e^ε·FPR + δ and 1 − FPR ≤
  e^ε·(1 − TPR) + δ, so the membership advantage TPR − FPR ≤ (e^ε − 1 + 2δ) / (e^ε + 1)
  (Humphries et al. 2023, for a candidate drawn as a member or not with probability ½
  independently of the other records).
- **μ-GDP** (Dong, Roth & Su 2019): the trade-off curve is that of N(0, 1) against N(μ, 1),
  so TPR − FPR ≤ 2Φ(μ/2) − 1 and AUC ≤ Φ(μ/√2).
- **ρ-zCDP from Gaussian noise only**: a Gaussian mechanism of noise σ on a query of L2
  sensitivity Δ is exactly μ-GDP with μ = Δ/σ and ρ-zCDP with ρ = Δ²/(2σ²), so μ = √(2ρ);
  Gaussian mechanisms compose as μ = √(Σ μᵢ²) and ρ = Σ ρᵢ, so μ = √(2ρ) still holds for the
  composition (and post-processing keeps both). This is what ``dp-synthetic`` accounts
  (two Gaussian mechanisms composed in zCDP) and what ``dp-mix`` is (one analytic Gaussian,
  μ = Δ/σ). ρ-zCDP of another origin (e.g. a Laplace mechanism converted to zCDP) does **not**
  imply √(2ρ)-GDP: use its (ε, δ) then.

The bound is the most any attacker can reach *on average* over the randomness of the
mechanism; an empirical advantage whose lower 95% end exceeds it is a bug (of the mechanism,
its accounting or its bounds), never a finding about the data: :func:`check_empirical` raises.

Which level a guarantee covers: a guarantee whose unit is the identity (all records of one
person) covers membership of a person and, by inclusion, of a record; a guarantee at the
record unit covers the record level only (when a person contributes several records, group
privacy at k records gives kε, which this module does not claim).

Examples
--------
>>> round(advantage_bound_epsilon(1.0), 4)               # tanh(ε/2)
0.4621
>>> round(advantage_bound_gdp(1.0), 4), round(auc_bound_gdp(1.0), 4)
(0.3829, 0.7602)
>>> round(epsilon_for_advantage(0.10), 4), round(mu_for_advantage(0.10), 4)
(0.2007, 0.2513)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import BioanonError
from .metrics.normal import cdf, ppf

#: the units a guarantee covers, per privacy unit
COVERS = {"identity": ("identity", "record"), "record": ("record",)}


def _check_advantage(a: float) -> float:
    a = float(a)
    if not 0.0 < a < 1.0:
        raise BioanonError(f"target advantage {a} must lie strictly between 0 and 1")
    return a


# ---------------------------------------------------------------------- guarantee -> bound
def advantage_bound_epsilon(epsilon: float, delta: float = 0.0) -> float:
    """The largest membership advantage (TPR − FPR) under (ε, δ)-DP: (e^ε − 1 + 2δ)/(e^ε + 1).

    Examples
    --------
    >>> advantage_bound_epsilon(0.0)
    0.0
    >>> round(advantage_bound_epsilon(math.log(3)), 6)       # (3 − 1)/(3 + 1)
    0.5
    >>> round(advantage_bound_epsilon(math.log(3), 0.01), 6) # (2 + 0.02)/4
    0.505
    """
    eps, delta = float(epsilon), float(delta)
    if eps < 0 or not 0.0 <= delta < 1.0:
        raise BioanonError(f"epsilon={epsilon}, delta={delta}: need epsilon >= 0, 0 <= delta < 1")
    if eps > 700:
        return 1.0
    e = math.exp(eps)
    return float(min(1.0, (e - 1.0 + 2.0 * delta) / (e + 1.0)))


def advantage_bound_gdp(mu: float) -> float:
    """The largest membership advantage under μ-GDP: 2Φ(μ/2) − 1.

    >>> advantage_bound_gdp(0.0), round(advantage_bound_gdp(2 * ppf(0.75)), 6)
    (0.0, 0.5)
    """
    mu = float(mu)
    if mu < 0:
        raise BioanonError(f"mu={mu} must be >= 0")
    return float(2.0 * cdf(mu / 2.0) - 1.0)


def auc_bound_gdp(mu: float) -> float:
    """The largest membership AUC under μ-GDP: Φ(μ/√2) (the binormal ROC at distance μ).

    >>> auc_bound_gdp(0.0), round(auc_bound_gdp(math.sqrt(2) * ppf(0.6)), 6)
    (0.5, 0.6)
    """
    return float(cdf(float(mu) / math.sqrt(2.0)))


def auc_bound_epsilon(epsilon: float, delta: float = 0.0) -> float:
    """The largest membership AUC under (ε, δ)-DP: the area under its ROC ceiling
    TPR(α) = min(1, e^ε·α + δ, 1 − e^{−ε}·(1 − δ − α)).

    Examples
    --------
    >>> auc_bound_epsilon(0.0)
    0.5
    >>> round(auc_bound_epsilon(math.log(3)), 9)  # kink at α = 1/4: 3/32 + (3/4 − 9/96)
    0.75
    """
    eps, delta = float(epsilon), float(delta)
    if eps > 700:
        return 1.0
    e = math.exp(eps)
    # the lines e·α + δ and 1 − (1 − δ − α)/e meet at α* = (1 − δ)/(e + 1); the second
    # reaches 1 at α = 1 − δ (u = 1 − δ − α runs from u* = (1 − δ)·e/(e + 1) down to 0)
    a_star = (1.0 - delta) / (e + 1.0)
    u_star = (1.0 - delta) * e / (e + 1.0)
    area = 0.5 * e * a_star ** 2 + delta * a_star + u_star - u_star ** 2 / (2.0 * e) + delta
    return float(min(1.0, area))


def mu_from_rho(rho: float) -> float:
    """μ = √(2ρ): exact for ρ-zCDP that comes from Gaussian mechanisms only (see the module).

    >>> mu_from_rho(0.5)
    1.0
    """
    rho = float(rho)
    if rho < 0 or not math.isfinite(rho):
        raise BioanonError(f"rho={rho} must be a non-negative finite number")
    return math.sqrt(2.0 * rho)


# ---------------------------------------------------------------------- target -> guarantee
def epsilon_for_advantage(target: float, delta: float = 0.0) -> float:
    """The largest ε whose (ε, δ)-DP bounds the advantage by ``target``:
    ln((1 + a − 2δ)/(1 − a)); pure DP (δ = 0): 2·artanh(a).

    Examples
    --------
    >>> round(epsilon_for_advantage(0.5), 6) == round(math.log(3), 6)
    True
    >>> round(advantage_bound_epsilon(epsilon_for_advantage(0.1, 1e-6), 1e-6), 9)
    0.1
    """
    a = _check_advantage(target)
    delta = float(delta)
    if 2.0 * delta >= 1.0 + a or delta >= a:
        raise BioanonError(f"delta={delta} is too large for an advantage of {a}: at epsilon 0 "
                           "the bound is already delta")
    return float(math.log((1.0 + a - 2.0 * delta) / (1.0 - a)))


def mu_for_advantage(target: float) -> float:
    """The largest μ whose μ-GDP bounds the advantage by ``target``: 2Φ⁻¹((1 + a)/2).

    >>> round(advantage_bound_gdp(mu_for_advantage(0.142)), 9)
    0.142
    """
    a = _check_advantage(target)
    return float(2.0 * ppf((1.0 + a) / 2.0))


def mu_for_auc(auc: float) -> float:
    """The largest μ whose μ-GDP bounds the membership AUC by ``auc``: √2·Φ⁻¹(auc).

    >>> round(mu_for_auc(0.6), 4)
    0.3583
    """
    auc = float(auc)
    if not 0.5 < auc < 1.0:
        raise BioanonError(f"AUC {auc} must lie strictly between 0.5 and 1")
    return float(math.sqrt(2.0) * ppf(auc))


def rho_for_advantage(target: float) -> float:
    """The largest ρ of Gaussian-mechanism zCDP that bounds the advantage by ``target``
    (μ²/2 of :func:`mu_for_advantage`).

    >>> round(rho_for_advantage(0.1), 5)
    0.03158
    """
    return float(mu_for_advantage(target) ** 2 / 2.0)


def gaussian_epsilon_for_advantage(target: float, delta: float) -> float:
    """The ε at ``delta`` a Gaussian-mechanism method accounted in zCDP (``dp-synthetic``)
    may declare and still bound the advantage by ``target``: its ρ = zcdp_rho(ε, δ) gives
    μ = √(2ρ), so ε = zcdp_epsilon(μ²/2, δ) with μ = :func:`mu_for_advantage` (much larger
    than the pure ε: the Gaussian's trade-off curve is far from the (ε, δ) one's corners).

    >>> round(gaussian_epsilon_for_advantage(0.14, 1e-6), 2)
    1.66
    """
    from .privacy import zcdp_epsilon

    return float(zcdp_epsilon(rho_for_advantage(target), delta))


def gaussian_mu(epsilon: float, delta: float, unit: str = "record") -> float:
    """The μ-GDP of the DP methods run at a declared (ε, δ): ``dp-synthetic`` spends
    ρ = zcdp_rho(ε, δ) on Gaussian mechanisms (μ = √(2ρ)); ``dp-mix`` (record unit only) is
    one analytic Gaussian of σ(ε, δ) at sensitivity Δ (μ = Δ/σ). At the record unit the
    larger (weaker) of the two is returned.

    >>> round(gaussian_mu(1.0, 1e-6, "identity"), 3)
    0.221
    """
    from .privacy import analytic_gaussian_sigma, zcdp_rho

    mu = math.sqrt(2.0 * zcdp_rho(epsilon, delta))
    if unit != "identity":
        mu = max(mu, 1.0 / analytic_gaussian_sigma(epsilon, delta, 1.0))
    return float(mu)


# ---------------------------------------------------------------------- a declared guarantee
@dataclass(frozen=True)
class Guarantee:
    """A DP guarantee as a release declares it.

    ``epsilon``, ``delta``: its (ε, δ); ``unit``: "record" or "identity"; ``mu``: its GDP
    parameter when known (Gaussian mechanisms: Δ/σ, or √(2ρ) of their zCDP), which gives the
    tighter bound; ``strict``: the bounds and standardization come from public data (a
    guarantee that is not strict covers nothing); ``source``: how μ was obtained.

    Examples
    --------
    >>> g = Guarantee(1.0, 1e-6, "identity", mu=None, strict=True)
    >>> round(g.advantage_bound(), 4), g.covers("record"), g.covers("group")
    (0.4621, True, False)
    """

    epsilon: float
    delta: float
    unit: str
    mu: float | None = None
    strict: bool = True
    source: str = "(epsilon, delta)"

    def advantage_bound(self) -> float:
        """The tightest advantage bound this guarantee implies."""
        b = advantage_bound_epsilon(self.epsilon, self.delta)
        if self.mu is not None:
            b = min(b, advantage_bound_gdp(self.mu))
        return b

    def auc_bound(self) -> float:
        """The tightest membership AUC bound this guarantee implies."""
        b = auc_bound_epsilon(self.epsilon, self.delta)
        if self.mu is not None:
            b = min(b, auc_bound_gdp(self.mu))
        return b

    def covers(self, level: str) -> bool:
        """Whether its unit protects membership at ``level`` (and it holds strictly)."""
        return self.strict and level in COVERS.get(self.unit, ())

    def words(self) -> str:
        """"(ε 1, δ 1e-06, identity)": how the report names it."""
        mu = f", μ {self.mu:.3g}" if self.mu is not None else ""
        return f"(ε {self.epsilon:.3g}, δ {self.delta:.2g}, {self.unit}{mu})"

    def to_dict(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "unit": self.unit, "mu": self.mu,
                "strict": self.strict, "source": self.source,
                "advantage_bound": self.advantage_bound(), "auc_bound": self.auc_bound()}


def guarantee_of(info: dict[str, Any]) -> Guarantee | None:
    """The guarantee of a DP method's privacy statement or release info (``epsilon``,
    ``delta``, ``privacy_unit`` or ``unit``, ``rho``, ``strict``); None when it holds none.

    μ is √(2ρ) when the statement carries the ρ of its Gaussian mechanisms (dp-synthetic)."""
    if not info or "epsilon" not in info or info.get("epsilon") is None:
        return None
    unit = str(info.get("privacy_unit", info.get("unit", "record"))).split(" ")[0]
    rho = info.get("rho")
    mu = mu_from_rho(float(rho)) if rho is not None else None
    return Guarantee(float(info["epsilon"]), float(info.get("delta") or 0.0),
                     unit if unit in COVERS else "record", mu, bool(info.get("strict", False)),
                     "sqrt(2 rho), Gaussian mechanisms" if mu is not None else "(epsilon, delta)")


class BoundExceeded(BioanonError):
    """An empirical membership advantage above what the DP guarantee allows: a bug."""


def check_empirical(lower: float, bound: float, what: str) -> None:
    """Raise :class:`BoundExceeded` when an empirical advantage's lower 95% end exceeds the
    proven bound (sampling noise alone would do that in fewer than 2.5% of evaluations).

    >>> check_empirical(0.05, 0.1, "record membership")
    >>> try:
    ...     check_empirical(0.3, 0.1, "record membership")
    ... except BoundExceeded as e:
    ...     print(str(e)[:59])
    record membership: the measured advantage's lower 95% bound
    """
    if math.isfinite(lower) and lower > bound + 1e-12:
        raise BoundExceeded(f"{what}: the measured advantage's lower 95% bound {lower:.3f} "
                            f"exceeds the bound {bound:.3f} the DP guarantee proves; the "
                            "mechanism, its accounting or its bounds are wrong (a bug: "
                            "report it)")
