"""The model a release reproduces, as a method declares it to the model-aware attackers.

The threat model gives the attacker the method and its parameters. For a method whose release
is a fresh sample of a fitted model, that knowledge is a **declaration**: which family the
release samples from, how its covariance is shaped, which label column its classes come from
and where its basis comes from. :meth:`bioanon.anonymize.base.Anonymizer.release_model`
returns one (None: no closed form — mixing, selective mean, k-Same, the sanitizer; the
shadow-model attacker runs those methods instead). The attacker refits the declared family
on the release and on its own clear reference records and scores each candidate by the
likelihood ratio (:mod:`bioanon.attack.parametric`).

A declaration states what a reader of the method's documentation knows; it never holds
anything fitted (no means, no basis, no bounds): the attacker refits everything from the
release.

Declaring a model on a new method (one method, a few lines)::

    from .release_model import ReleaseModel

    class MyMethod(Anonymizer):
        def release_model(self) -> ReleaseModel | None:
            return ReleaseModel("basis-gaussian", "pooled", interest=self.interest,
                                rank=self.rank, basis="public")

Examples
--------
>>> m = ReleaseModel("class-gaussian", "diag", interest="digit")
>>> m.family, m.covariance, m.interest, m.rank, m.basis
('class-gaussian', 'diag', 'digit', None, 'none')
>>> m.describe()
'class-gaussian (covariance diag, per digit)'
>>> ReleaseModel("basis-gaussian", "class", interest="digit", rank=16, basis="released").describe()
'basis-gaussian (covariance class, per digit, rank 16, basis released)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import BioanonError

#: families of released models: one Gaussian per class in all d features; one Gaussian per
#: class in k basis directions plus a residual outside them; a Gaussian mixture per class; a
#: Gaussian copula per class (marginals transformed, then a Gaussian)
FAMILIES = ("class-gaussian", "basis-gaussian", "mixture", "copula")
#: covariance shapes: per feature only; one within-class covariance pooled over the classes;
#: one per class; per class, ``rank`` factors plus a diagonal; full per class (shrunk or not)
COVARIANCES = ("diag", "pooled", "class", "factor", "full", "spherical")
#: where a basis comes from: the released records (its principal or discriminant directions,
#: so the records choose it), public records (people not released), random, a stated
#: structure (e.g. a DCT), a DP computation on the released records, or none (all d features)
BASES = ("released", "public", "random", "structured", "dp", "none")

Family = Literal["class-gaussian", "basis-gaussian", "mixture", "copula"]
Covariance = Literal["diag", "pooled", "class", "factor", "full", "spherical"]
Basis = Literal["released", "public", "random", "structured", "dp", "none"]


@dataclass(frozen=True)
class ReleaseModel:
    """What a release is a sample of, declared by its method (public knowledge only).

    Parameters
    ----------
    family : {"class-gaussian", "basis-gaussian", "mixture", "copula"}
    covariance : {"diag", "pooled", "class", "factor", "full", "spherical"}
        The covariance's shape (in the basis for ``basis-gaussian``).
    interest : str or None
        The label column whose classes get their own model (None: one model for all).
    additional : tuple of str
        Further label columns the model is stratified on (interest × additional).
    rank : int or None
        The basis dimension k (``basis-gaussian``), or the factors per class
        (``covariance="factor"``); None where the method picks it by a public rule the
        attacker can recompute (the attacker then uses its own small set).
    basis : {"released", "public", "random", "structured", "dp", "none"}
        Where the basis comes from ("none": no basis, all d features modelled).
    components : int
        Components per class (``mixture``).
    noisy : bool
        The fitted statistics carry DP noise (the attacker's refit sees a noisy model).
    """

    family: Family
    covariance: Covariance
    interest: str | None = None
    additional: tuple[str, ...] = ()
    rank: int | None = None
    basis: Basis = "none"
    components: int = 1
    noisy: bool = False

    def __post_init__(self) -> None:
        for name, value, allowed in (("family", self.family, FAMILIES),
                                     ("covariance", self.covariance, COVARIANCES),
                                     ("basis", self.basis, BASES)):
            if value not in allowed:
                raise BioanonError(f"release model {name}={value!r} is not one of "
                                   f"{', '.join(allowed)}; declare one of them")
        if self.rank is not None and int(self.rank) < 1:
            raise BioanonError(f"release model rank={self.rank} must be at least 1")
        if int(self.components) < 1:
            raise BioanonError(f"release model components={self.components} must be >= 1")
        object.__setattr__(self, "additional", tuple(self.additional or ()))

    def describe(self) -> str:
        """One line for ``bioanon methods`` and the report."""
        parts = [f"covariance {self.covariance}"]
        if self.interest:
            parts.append("per " + " x ".join((self.interest, *self.additional)))
        if self.rank is not None:
            parts.append(f"rank {self.rank}")
        if self.basis != "none":
            parts.append(f"basis {self.basis}")
        if self.components > 1:
            parts.append(f"{self.components} components")
        if self.noisy:
            parts.append("noisy statistics")
        return f"{self.family} ({', '.join(parts)})"

    def as_dict(self) -> dict[str, Any]:
        """Plain values (JSON)."""
        return {"family": self.family, "covariance": self.covariance,
                "interest": self.interest, "additional": list(self.additional),
                "rank": self.rank, "basis": self.basis, "components": self.components,
                "noisy": self.noisy}


__all__ = ["BASES", "COVARIANCES", "FAMILIES", "ReleaseModel"]
