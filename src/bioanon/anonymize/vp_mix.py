"""Variance-preserving class-conditional mix: a mean of donors that keeps each class's spread.

A plain mean of ``g`` records shrinks a class's spread by √g, so a model trained on the release
learns a caricature of each class. This mix restores the spread. For a record ``i`` of stratum
``s`` (its interest class, or its interest × additional class), with ``m_i`` the mean of ``g``
donors drawn uniformly **without regard to identity** from the other records (never the record
itself; a share ``t`` of them from ``s``, the rest from the interest class outside ``s``)::

    x'_i = μ_{s,−i} + c_s · (m_i − E[m_i]),      E[m_i] = (k₁ μ_{s,−i} + k₂ μ_o) / g

where ``μ_{s,−i}`` is the mean of the stratum without the record, ``μ_o`` the mean of the
rest of the interest class and ``c_s = (tr S_s / tr Cov(m_i))^restoration``: with
``restoration = 0.5`` each stratum keeps its mean and (for ``t = 1``, exactly in expectation,
finite-population correction included) its covariance; ``restoration = 0`` is the plain mean of
the donors. ``x'_i`` is a function of the *other* records only: the record's own weight, which
the parrot and reverse attackers learn from, is zero (unless features are retained, below).

For all records at once the release is one sparse product ``M X`` (``M`` the secret mixing
matrix of :func:`bioanon.anonymize.row_blocks.mixing_matrix`) followed by per-stratum
affine terms, applied by row blocks::

    X' = c[s] ⊙ (M X) + b[s] ⊙ X + C[s]

With ``r_p > 0`` the record's own value is retained on the most interest-relevant features
(``w``, as in the selective mean): utility may rise, but the record's own weight returns and
the reverse attacker learns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import BioanonError
from ..privacy import resolve_seed
from ..table import FeatureTable
from .base import Anonymizer, Release, label_values
from .bounded_design import circulant_sets
from .params import Param
from .random_sets import _with_replacement, assemble_sets, n_same
from .registration import register
from .relevance import (
    MAX_RECORDS,
    relevance_records_param,
    relevance_scores,
    retention_ignored,
    retention_unchanged,
    select_features,
)
from .row_blocks import apply_vp_mix, mixing_matrix
from .strata import check_strata, strata, stratum_names, sums_by


# ---------------------------------------------------------------------- the math
def donor_sets(classes: np.ndarray, strat: np.ndarray, g: int, t: float,
               rng: np.random.Generator, allow_replacement: bool = False,
               names: np.ndarray | None = None) -> np.ndarray:
    """Donors of every record: ``g`` others of its interest class, ``round(t·g)`` of its stratum.

    Identity plays no part in the draw. With ``allow_replacement``, a stratum too small to
    give ``g`` donors with spread left over (``n_s − 1 ≤ k₁``) is drawn with replacement.
    Loops over interest classes, never over records. ``names``: the strata's names by code
    (:func:`~.strata.stratum_names`), for an error to name one as the table has it (not its
    code, '0').
    """
    if np.array_equal(classes, strat) and not _needs_replacement(strat, g, allow_replacement):
        return assemble_sets(strat, g, 1.0, rng, names, allow_replacement, include_self=False)
    sets = np.empty((classes.size, g), dtype=np.int64)
    for c in np.unique(classes):
        members = np.flatnonzero(classes == c)
        present, sub = np.unique(strat[members], return_inverse=True)
        if sub.max() == 0 and _needs_replacement(sub, g, allow_replacement):
            sets[members] = members[_with_replacement(members.size, g, rng)]
            continue
        t_c = t if sub.max() > 0 else 1.0  # one stratum only: all donors from it
        sets[members] = members[assemble_sets(sub, g, t_c, rng,
                                              None if names is None else names[present],
                                              allow_replacement, include_self=False)]
    return sets


def _needs_replacement(codes: np.ndarray, k: int, allow: bool) -> bool:
    """Whether some class of ``codes`` is drawn with replacement (``n − 1 ≤ k``, allowed)."""
    return bool(allow and (np.bincount(codes) - 1 <= k).any())


def stratum_terms(X: np.ndarray, classes: np.ndarray, strat: np.ndarray, g: int, t: float,
                  restoration: float, allow_replacement: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-stratum coefficients ``(c, b, C)`` of ``x' = c·(M X) + b·x + C``.

    ``c`` restores the spread (see the module docstring), ``b`` and ``C`` recentre the mix on
    the leave-one-out stratum mean. One pass over ``X`` (sums and squared norms per stratum).
    """
    n_strata = int(strat.max()) + 1
    count = np.bincount(strat, minlength=n_strata).astype(np.float64)
    sums, sq = sums_by(X, strat, n_strata)
    cls_of = np.zeros(n_strata, dtype=np.int64)
    cls_of[strat] = classes
    n_cls = int(classes.max()) + 1
    cls_count = np.bincount(cls_of, weights=count, minlength=n_cls)
    cls_sums = np.zeros((n_cls, X.shape[1]))
    np.add.at(cls_sums, cls_of, sums)
    cls_sq = np.bincount(cls_of, weights=sq, minlength=n_cls)
    if (count < 2).any():
        raise BioanonError("a class has a single record: it has no donor; drop or merge it")
    mu = sums / count[:, None]
    tr_s = sq / count - np.einsum("ij,ij->i", mu, mu)  # trace of the stratum's covariance
    n_o = cls_count[cls_of] - count  # rest of the interest class
    single = np.bincount(cls_of, minlength=n_cls)[cls_of] == 1
    k1 = np.where(single, g, n_same(g, t)).astype(np.float64)
    k2 = g - k1
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_o = np.where(n_o[:, None] > 0, (cls_sums[cls_of] - sums) / n_o[:, None], 0.0)
        tr_o = np.where(n_o > 0, (cls_sq[cls_of] - sq) / n_o - np.einsum("ij,ij->i", mu_o, mu_o),
                        0.0)
        pool1 = count - 1
        replaced = (pool1 < k1) | (bool(allow_replacement) & single & (pool1 <= k1))
        fpc1 = np.where(replaced, 1.0, (pool1 - k1) / np.maximum(pool1 - 1, 1))
        fpc2 = np.where(n_o >= k2, (n_o - k2) / np.maximum(n_o - 1, 1), 1.0)
        var_m = (k1 * fpc1 * tr_s + k2 * fpc2 * tr_o) / g**2
        ratio = np.where(var_m > 0, tr_s / var_m, 1.0)
    flat = (var_m <= 0) & (tr_s > 0)
    if flat.any():
        raise BioanonError(
            f"g={g} draws every other record of a class of {int(count[flat].min())}, so the mix "
            "has no spread to restore; lower g below the class size minus 1, or allow "
            "sampling with replacement (allow_replacement=True)", parameter="allow_replacement")
    c = ratio ** float(restoration)
    a = 1.0 - c * k1 / g  # coefficient of the leave-one-out stratum mean
    b = -a / pool1
    C = (a * count / pool1)[:, None] * mu - (c * k2 / g)[:, None] * mu_o
    return c, b, C


def shrink_terms(X: np.ndarray, strat: np.ndarray, c: np.ndarray, b: np.ndarray,
                 C: np.ndarray, alpha: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scale the mix by √(1−α) around the stratum mean; noise sd √α·σ_s per feature."""
    n_strata = int(strat.max()) + 1
    count = np.bincount(strat, minlength=n_strata).astype(np.float64)
    sums, _ = sums_by(X, strat, n_strata)
    sq, _ = sums_by(np.square(np.asarray(X, dtype=np.float32)), strat, n_strata)
    mu = sums / count[:, None]
    var = np.maximum(sq / count[:, None] - mu * mu, 0.0)
    k = np.sqrt(1.0 - alpha)
    return k * c, k * b, k * C + (1.0 - k) * mu, np.sqrt(alpha * var)


# ---------------------------------------------------------------------- the estimator
@register("vp-mix")
class VarianceMixAnonymizer(Anonymizer):
    """Variance-preserving class-conditional mix: class means and covariances kept.

    Parameters
    ----------
    interest : str
        Label column whose classes the mix is conditioned on (their means and covariances kept).
    additional : sequence of str or mapping {column: r_q}, optional
        Additional attributes: donors are drawn within the record's interest × additional
        stratum for a share ``t`` of the set (the rest from the rest of its interest class).
    sensitive : str, optional
        Needed only for ``r_s > 0``. Never used to choose donors.
    g : int, default 32
        Donors per record (the record itself is never one).
    t : float, default 1.0
        Share of donors from the record's stratum (with additional attributes only).
    restoration : float, default 0.5
        Exponent of the spread restoration: 0.5 keeps the covariance, 0 the plain mean.
    shrinkage : float, default 0
        Share α of each stratum's spread released as independent per-feature Gaussian noise
        instead of the mix: the covariance becomes ``(1−α) S + α diag(S)`` (means and variances
        kept). The release then leaves the span of the members, which membership inference
        exploits when a class has fewer records than features.
    w, r_p, r_q, r_s, relevance
        Optional retention of the record's own value on the most relevant features, as in the
        selective mean (``r_p = 0``, the default, retains nothing: zero own weight).
    allow_replacement : bool, default False
        Draw donors with replacement when a class is too small for ``g``.
    design : {"uniform", "bounded"}, default "uniform"
        ``"uniform"`` draws each record's donors independently (a record's number of uses is
        random, about Poisson(g)); ``"bounded"`` is the circulant design of
        :mod:`bioanon.anonymize.bounded_design`: every record donates to exactly ``g`` released
        records (donors from the record's stratum only: ``t = 1``). Measured on issue 20's
        runs, the bound alone does not lower membership inference (the noise of
        :class:`~bioanon.anonymize.dp_mix.DPMixAnonymizer`, which builds on it, does).
    random_state : int or None
        Secret key of the draw; ``None`` draws fresh OS entropy per release. Never published.

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> out = VarianceMixAnonymizer("expression", g=8, random_state=0).fit_transform(t.X,
    ...                                                                           t.labels)
    >>> out.shape
    (120, 32)
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest",
                          help="attribute whose class means and covariances are kept"),
        "additional": Param("object", role="additional",
                            help="additional attributes: donors share a share t of the stratum"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="sensitive attribute (needed when r_s > 0; never picks donors)"),
        "g": Param("int", low=2, help="donors per record, the record excluded"),
        "t": Param("float", low=0, high=1, low_open=True,
                   help="purity: share of donors from the record's stratum"),
        "restoration": Param("float", low=0, high=1,
                             help="spread restoration exponent: 0.5 keeps the covariance, 0 is "
                             "the plain mean of the donors"),
        "shrinkage": Param("float", low=0, high=1, high_open=True,
                           help="share of the spread released as independent noise"),
        "w": Param("float", low=1, help="weight of the record on retained features"),
        "r_p": Param("float", low=0, high=1,
                     help="share of interest-relevant features retained (0: zero own weight)"),
        "r_q": Param("weights", low=0, high=1, help="share retained per additional attribute"),
        "r_s": Param("float", low=0, high=1,
                     help="share of sensitive-relevant features excluded from retention"),
        "relevance": Param("str", options=("forest", "mutual_info"),
                           help="relevance scores (an estimator in the library)"),
        "relevance_records": relevance_records_param(),
        "allow_replacement": Param("bool", help="donors with replacement in small classes"),
        "design": Param("str", options=("uniform", "bounded"),
                        help="donor design: uniform draws, or bounded (every record donates "
                        "to exactly g released records)"),
        "random_state": Param("int", low=0, none=True,
                              help="secret seed; None draws fresh OS entropy"),
    }
    needs_labels = True
    bucketable = True  # mixes only the records it is given: runs on the dask path
    protects = ("the sensitive attribute against the informed attacker: each record is "
                "replaced by its class mean plus the restored spread of g other records, its own "
                "weight zero; class means and covariances kept")
    does_not_protect = ("who was mixed in (contributors share the interest class; few "
                        "identities per class show through) and anything the interest class "
                        "reveals; retention (r_p > 0) brings the record's own weight back")
    #: candidate settings for ``bioanon release``'s search (frontier runs: g=8 is best on
    #: SP-SW-HAR, g=32 on FSDD; shrinkage lowers membership inference in small classes)
    search_space: ClassVar[tuple[dict[str, Any], ...]] = (
        {"g": 8}, {"g": 32}, {"g": 64},
        {"g": 8, "shrinkage": 0.5}, {"g": 32, "shrinkage": 0.5},
    )

    def __init__(self, interest: str = "interest",
                 additional: Sequence[str] | Mapping[str, float] | None = None,
                 sensitive: str | None = None, g: int = 32, t: float = 1.0,
                 restoration: float = 0.5, shrinkage: float = 0.0, w: float = 10.0,
                 r_p: float = 0.0,
                 r_q: float | Mapping[str, float] = 0.0, r_s: float = 0.0,
                 relevance: Any = "forest", relevance_records: int | None = MAX_RECORDS,
                 allow_replacement: bool = False, design: str = "uniform",
                 random_state: int | None = None) -> None:
        self.interest = interest
        self.additional = additional
        self.sensitive = sensitive
        self.g = g
        self.t = t
        self.restoration = restoration
        self.shrinkage = shrinkage
        self.w = w
        self.r_p = r_p
        self.r_q = r_q
        self.r_s = r_s
        self.relevance = relevance
        self.relevance_records = relevance_records
        self.allow_replacement = allow_replacement
        self.design = design
        self.random_state = random_state

    def _additional(self) -> list[str]:
        return [] if self.additional is None else [str(c) for c in self.additional]

    def _retention_q(self) -> dict[str, float]:
        if isinstance(self.additional, Mapping):
            return {str(k): float(v) for k, v in self.additional.items()}
        if isinstance(self.r_q, Mapping):
            return {c: float(self.r_q.get(c, 0.0)) for c in self._additional()}
        return {c: float(self.r_q) for c in self._additional()}

    def _ignored(self) -> dict[str, str]:
        """Parameters this setting ignores (see :func:`.relevance.retention_ignored`)."""
        out = retention_ignored(float(self.r_p), self._retention_q(), float(self.r_s),
                                self.r_q)
        if not self._additional():
            out["t"] = ("without an additional attribute every donor comes from the record's "
                        "interest class (t shares donors between the strata of "
                        "additional=COL)")
        return out

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """A record weight that drowns the donors on every feature (scale-free)."""
        return retention_unchanged(float(self.r_p), self._retention_q(), float(self.r_s),
                                   float(self.w), int(self.g))

    def _check_relations(self) -> None:
        if not (1.0 / self.g - 1e-9 <= self.t <= 1.0):
            raise BioanonError(f"t={self.t} is out of range; use a number in [1/g, 1] = "
                               f"[{1 / self.g:.3g}, 1] (purity)")
        if self.design == "bounded" and (self.t != 1.0 or self.allow_replacement):
            raise BioanonError("design=bounded draws every donor from the record's stratum, "
                               "without replacement; set t=1 and allow_replacement=false")
        if self.r_s > 0 and not self.sensitive:
            raise BioanonError("r_s > 0 needs the sensitive column; pass sensitive=...")
        for c, v in self._retention_q().items():
            self.params["r_q"].check(f"r_q[{c}]", v)

    # ------------------------------------------------------------------ the family's hooks
    def _fit(self, X: np.ndarray, labels: Any, table: FeatureTable | None) -> None:
        """Check the labels; learn the retention mask when ``r_p`` or ``r_q`` > 0."""
        n, d = X.shape
        classes, _ = check_strata(labels, self.interest, self._additional(), n)
        mask = np.zeros(d, dtype=bool)
        r_q = self._retention_q()
        if self.r_p > 0 or any(r > 0 for r in r_q.values()):
            s = np.random.SeedSequence(resolve_seed(self.random_state)).generate_state(3)

            def scores(y: np.ndarray, seed: int) -> np.ndarray:
                return relevance_scores(X, y, self.relevance, seed, self.relevance_records)

            rel_p = scores(classes, int(s[0])) if self.r_p > 0 else np.zeros(d)
            rel_q = {c: scores(label_values(labels, c, n), int(s[1]))
                     for c, r in r_q.items() if r > 0}
            rel_s = (scores(label_values(labels, str(self.sensitive), n), int(s[2]))
                     if self.r_s > 0 else None)
            mask = select_features(rel_p, self.r_p, rel_q, r_q, rel_s, self.r_s)
        self.mask_ = mask

    def _release(self, X: np.ndarray, labels: Any, seed: int,
                 table: FeatureTable | None) -> Release:
        """Donors come from the records being released; ``mixing`` is the secret donor matrix."""
        n = X.shape[0]
        classes, strat = strata(labels, self.interest, self._additional(), n)
        g, t = int(self.g), float(self.t)
        c, b, C = stratum_terms(X, classes, strat, g, t, float(self.restoration),
                                bool(self.allow_replacement))
        s_donors, s_noise = np.random.SeedSequence(seed).spawn(2)
        rng = np.random.default_rng(s_donors)
        names = stratum_names(labels, self.interest, self._additional(), n)
        sets = (circulant_sets(strat, g, rng) if self.design == "bounded" else
                donor_sets(classes, strat, g, t, rng, bool(self.allow_replacement), names))
        M = mixing_matrix(sets)
        lam = (self.w - 1.0) / (self.w - 1.0 + g)
        sd = None
        alpha = float(self.shrinkage)
        if alpha > 0:
            c, b, C, sd = shrink_terms(X, strat, c, b, C, alpha)
        out = apply_vp_mix(np.asarray(X, dtype=np.float32), M, strat, c, b, C, self.mask_, lam,
                           noise_sd=sd, noise_seed=s_noise)
        return Release(out, mixing=M)
