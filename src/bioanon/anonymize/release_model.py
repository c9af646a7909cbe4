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
release. Two public **rules** may ride along, each a function of public quantities only:

- :class:`PublicBasis` — a basis stated by the method (e.g. the temporal DCT of each feature
  trajectory): a rule ``(feature names, d) -> (k, d)`` orthonormal rows that the attacker
  calls to rotate into the very coordinates the release's model is diagonal in. A basis drawn
  from a secret seed, or the principal directions of public records the attacker does not
  hold, has no such rule: the method declares none and the attacker refits the generic
  families;
- ``rank_rule`` — the k a method picks by a stated rule when ``rank`` is None:
  ``(d, number of classes) -> k``.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

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
#: how each feature is scaled before a public basis applies: mapped to [-1, 1] by its
#: clipping box (``"box"``: the declared bounds, else the attacker's reference records' 1% /
#: 99% quantiles, the rule the methods use without public bounds) or as it is (``"none"``)
SCALES = ("box", "none")
#: the model of the d − k directions outside a public basis: one variance for all of them
#: (``"isotropic"``) or nothing (``"none"``: the release carries no residual)
RESIDUALS = ("isotropic", "none")


@dataclass(frozen=True)
class PublicBasis:
    """A basis the attacker rebuilds from public knowledge alone (no seed, no records).

    Parameters
    ----------
    rule : str
        The rule in words (``bioanon methods``, the report).
    build : callable ``(feature_names or None, d) -> (k, d) array``
        Orthonormal rows: the coordinates the release's model lives in, the kept ones. A
        function of the names, d and the method's public parameters only.
    scale : {"box", "none"}
        Per-feature scaling before the basis (:data:`SCALES`).
    bounds : (lo, hi) or None
        The public clipping box when the method declares one (scalars or per feature).
    residual : {"isotropic", "none"}
        How the release models the directions outside the basis (:data:`RESIDUALS`).

    Examples
    --------
    >>> import numpy as np
    >>> b = PublicBasis("the first 2 features", lambda names, d: np.eye(d)[:2])
    >>> b.build(None, 5).shape, b.describe()
    ((2, 5), 'the first 2 features (box-scaled, isotropic residual)')
    """

    rule: str
    build: Callable[[Sequence[str] | None, int], Any] = field(compare=False)
    scale: str = "box"
    bounds: Any = field(default=None, compare=False)
    residual: str = "isotropic"

    def __post_init__(self) -> None:
        for name, value, allowed in (("scale", self.scale, SCALES),
                                     ("residual", self.residual, RESIDUALS)):
            if value not in allowed:
                raise BioanonError(f"public basis {name}={value!r} is not one of "
                                   f"{', '.join(allowed)}; declare one of them")

    def describe(self) -> str:
        scale = "box-scaled" if self.scale == "box" else "unscaled"
        resid = "isotropic residual" if self.residual == "isotropic" else "no residual"
        return f"{self.rule} ({scale}, {resid})"


@dataclass(frozen=True)
class ReleaseModel:
    """What a release is a sample of, declared by its method (public knowledge only).

    Every field is a plain value, checked against :data:`FAMILIES`, :data:`COVARIANCES` and
    :data:`BASES` when the declaration is made.

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
    mean_rank : int or None
        The class means differ only in this many directions (a discriminant subspace, e.g.
        classes − 1); None: in every modelled direction.
    public_basis : PublicBasis or None
        The stated basis as a rule the attacker calls (None: the basis is released-, DP-,
        secret-seed- or public-record-derived, or there is none).
    rank_rule : callable ``(d, n_classes) -> k`` or None
        The public rule that picks k when ``rank`` is None (d features, the number of
        classes the model is stratified on).
    """

    family: str
    covariance: str
    interest: str | None = None
    additional: tuple[str, ...] = ()
    rank: int | None = None
    basis: str = "none"
    components: int = 1
    noisy: bool = False
    mean_rank: int | None = None
    public_basis: PublicBasis | None = None
    rank_rule: Callable[[int, int], int] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name, value, allowed in (("family", self.family, FAMILIES),
                                     ("covariance", self.covariance, COVARIANCES),
                                     ("basis", self.basis, BASES)):
            if value not in allowed:
                raise BioanonError(f"release model {name}={value!r} is not one of "
                                   f"{', '.join(allowed)}; declare one of them")
        if self.rank is not None and int(self.rank) < 1:
            raise BioanonError(f"release model rank={self.rank} must be at least 1")
        if self.mean_rank is not None and int(self.mean_rank) < 1:
            raise BioanonError(f"release model mean_rank={self.mean_rank} must be at least 1")
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
        if self.mean_rank is not None:
            parts.append(f"class means in {self.mean_rank} directions")
        if self.rank is None and self.rank_rule is not None:
            parts.append("rank by a public rule")
        if self.public_basis is not None:
            parts.append("public basis: " + self.public_basis.describe())
        if self.noisy:
            parts.append("noisy statistics")
        return f"{self.family} ({', '.join(parts)})"

    def as_dict(self) -> dict[str, Any]:
        """Plain values (JSON)."""
        return {"family": self.family, "covariance": self.covariance,
                "interest": self.interest, "additional": list(self.additional),
                "rank": self.rank, "basis": self.basis, "components": self.components,
                "noisy": self.noisy, "mean_rank": self.mean_rank,
                "public_basis": (None if self.public_basis is None
                                 else self.public_basis.describe())}


__all__ = ["BASES", "COVARIANCES", "FAMILIES", "RESIDUALS", "SCALES", "PublicBasis",
           "ReleaseModel"]
