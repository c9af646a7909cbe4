"""A declared differential-privacy budget for the search (``bioanon release --epsilon``).

With a :class:`DPBudget` the search (:func:`bioanon.certification.search.search`) considers
only the DP methods (those whose class declares ``dp``), **every candidate at exactly the
declared ε and δ**: the budget is the owner's (the figure written into a DPIA), never
searched upwards; the other parameters (covariance, rank, clip, g) vary as each method's
search space says.

Public side data (a table of people **not** in the release, with the same feature columns)
make the guarantee strict: each DP method's ``public_search_space`` names the parameters
taken from it — ``"public"``: the clipping box (:func:`~bioanon.privacy.public_bounds`), the
centre (their mean), the scale (their standard deviation); ``"public:q"``: the clip radius
as the q-quantile of their norms (:func:`~bioanon.anonymize.dp_synthetic.public_clip`).
Without them the candidates take their clipping bounds (dp-synthetic) or standardization
(dp-mix) from the data being released, and every statement says the guarantee does **not**
hold strictly (a :class:`~bioanon.privacy.PrivacyLeakWarning`).

The values taken from the public records travel with the candidate (``Candidate.hidden``),
never in its label, its search row, the manifest or the report (they say ``public``); bounds
taken from the private data are never kept anywhere.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=8, records_per_identity=10, n_features=32, random_state=0)
>>> aux = t.labels["identity"].to_numpy() == "person00"  # public: not released
>>> pub, private = t.subset(np.flatnonzero(aux)), t.subset(np.flatnonzero(~aux))
>>> b = DPBudget(epsilon=2.0, public=pub)
>>> cands, skipped = b.candidates(private, None, "identity")
>>> sorted({c.params["epsilon"] for c in cands}), sorted({c.method for c in cands})
([2.0], ['dp-basis', 'dp-mix', 'dp-synthetic'])
>>> b.statement(private, "identity")["strict"]
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..privacy import check_epsilon
from ..table import FeatureTable

#: what ε protects
UNITS = ("record", "identity")
#: the value of a parameter taken from the public table
PUBLIC = "public"

STRICT_TEXT = ("strict: the clipping box, centre, clip radius and scale come from the public "
               "table (people not in the release) or are declared; the released features are "
               "(epsilon, delta)-differentially private for the privacy unit")
NOT_STRICT_TEXT = ("NOT STRICT: the clipping bounds (dp-synthetic) or the standardization "
                   "(dp-mix) come from the released data (PrivacyLeakWarning): the (epsilon, "
                   "delta) guarantee does not hold strictly; give public data (records of "
                   "people not in the release) for the bounds to come from")
BESIDE_TEXT = ("the certificate's risks are empirical figures and each must be met too; this "
               "guarantee is stated beside them, not instead of them")


def public_columns_problem(public: FeatureTable, features: Sequence[str],
                           labels: Sequence[str] = ()) -> str | None:
    """What is wrong with the public table's feature columns against the input's, in words
    (``None``: nothing): a feature of the input the public table holds as text (its type
    named, not "missing"), one it lacks, or one of its own the input lacks. A label column of
    the input that the public table holds as a number is a label there too."""
    theirs = list(public.feature_names or [])
    have, want, known = set(theirs), set(features), {str(c) for c in labels}
    missing = [c for c in features if c not in have]
    typed = [c for c in missing if c in public.labels.columns]
    if typed:
        col = typed[0]
        dtype = public.labels[col].dtype
        kind = ("text" if dtype.kind in "OSU" or str(dtype) in ("str", "string")
                else f"{dtype} values")
        more = f" (and {len(typed) - 1} more such column(s))" if len(typed) > 1 else ""
        return (f"column '{col}' holds {kind} (dtype {dtype}){more}, but it is a numeric "
                "feature of the input; give the public table numbers in that column")
    if missing:
        return (f"lacks {len(missing)} feature column(s) of the input, e.g. {missing[:5]}; "
                "give a table of people not in the release with the same feature columns")
    extra = [c for c in theirs if c not in want and c not in known]
    if extra:  # never ignored: a column the bounds would silently skip
        return (f"has {len(extra)} feature column(s) the input lacks, e.g. {extra[:5]}; give "
                "a table with the same feature columns (drop those, or store them as label "
                "columns)")
    return None


@dataclass(frozen=True)
class DPBudget:
    """The owner's differential-privacy budget, and public side data for strict bounds.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε (positive, finite); every candidate runs at exactly it.
    delta : float or None
        δ in (0, 1); None: 1/n², n the records (or the identities, ``privacy_unit="identity"``)
        of the table to release (public: the record count is released).
    privacy_unit : {"record", "identity"}
        What ε protects: one record's features, or all records of one person (the
        ``sensitive`` column names the person; only dp-synthetic accounts for it).
    max_records_per_identity : int or None
        Records of one person the statistics use (identity unit; default: the method's, 10).
    public : FeatureTable or array-like of shape (m, d), optional
        Records of people not in the release with the same feature columns (auxiliary or
        public data). Without them the guarantee is stated as not strict.
    public_name : str, optional
        The public table's file name, for the manifest.
    total_records : int or None
        The records of the whole table to release when the table the budget is checked on is
        a sample of it (the streamed dask path): n of δ's default 1/n² and of the δ < 1/n
        check (record unit). None: the table given is the whole table.
    """

    epsilon: float
    delta: float | None = None
    privacy_unit: str = "record"
    max_records_per_identity: int | None = None
    public: Any = None
    public_name: str | None = None
    total_records: int | None = None

    # ------------------------------------------------------------------ checks
    def check(self, table: FeatureTable, sensitive: str | None) -> None:
        """Refuse a bad budget (one line naming the fix) before any work."""
        try:  # the range every DP method honours (bioanon.privacy.EPSILON_RANGE)
            check_epsilon(self.epsilon)
        except BioanonError as exc:
            raise BioanonError(str(exc), parameter="epsilon") from None
        if self.delta is not None:
            try:
                d = float(self.delta)
            except (TypeError, ValueError):
                d = float("nan")
            if not 0.0 < d < 1.0:
                raise BioanonError(f"delta={self.delta} must lie strictly between 0 and 1; "
                                   "e.g. delta=1e-6 (default: 1/n², n the records or "
                                   "identities)", parameter="delta")
        if self.privacy_unit not in UNITS:
            raise BioanonError(f"privacy_unit={self.privacy_unit!r} is not one of "
                               f"{', '.join(UNITS)}; e.g. privacy_unit=record",
                               parameter="privacy_unit")
        if self.privacy_unit == "identity":
            if not sensitive:
                raise BioanonError("privacy_unit=identity needs the identity column; name "
                                   "it with sensitive=COLUMN (in Roles)",
                                   parameter=("privacy_unit", "sensitive"))
            table.label(sensitive)
        m = self.max_records_per_identity
        if m is not None:
            if self.privacy_unit != "identity":
                raise BioanonError("max_records_per_identity= applies to "
                                   "privacy_unit=identity only; add privacy_unit=identity or "
                                   "drop it",
                                   parameter=("max_records_per_identity", "privacy_unit"))
            if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
                raise BioanonError(f"max_records_per_identity={m} must be a positive "
                                   "integer; e.g. 10", parameter="max_records_per_identity")
        if self.delta is not None:
            n = self.units(table, sensitive)
            if float(self.delta) >= 1.0 / n:  # the README's rule: delta below 1/n
                unit = "identities" if self.privacy_unit == "identity" else "records"
                raise BioanonError(
                    f"delta={self.delta} is not below 1/n = {1.0 / n:.3g} (n = {n} {unit}): a "
                    "mechanism may then publish a whole record outright with that probability; "
                    f"choose delta < 1/n, or leave it out (default 1/n² = {1.0 / n**2:.3g})",
                    parameter="delta")
        if self.public is not None:
            self.public_X(table)

    def public_X(self, table: FeatureTable) -> np.ndarray:
        """The public records' features in the input's column order (float64, checked)."""
        return public_features(self.public, table)

    # ------------------------------------------------------------------ accounting
    def units(self, table: FeatureTable, sensitive: str | None) -> int:
        """n of the default δ = 1/n²: the records (of the whole table when ``total_records``
        is set), or the identities (identity unit)."""
        if self.privacy_unit == "identity" and sensitive:
            return int(table.label(sensitive).nunique())
        if self.total_records is not None:
            return int(self.total_records)
        return int(table.n_records)

    def delta_for(self, table: FeatureTable, sensitive: str | None) -> float:
        """δ: the declared one, else 1/n² of the table to release."""
        if self.delta is not None:
            return float(self.delta)
        return 1.0 / max(self.units(table, sensitive), 2) ** 2

    def guarantee(self, table: FeatureTable, sensitive: str | None) -> Any:
        """The :class:`~bioanon.privacy_bounds.Guarantee` this budget gives a membership test:
        (ε, δ) at its unit, with the μ-GDP of the Gaussian mechanisms the DP methods spend
        it on (:func:`~bioanon.privacy_bounds.gaussian_mu`); strict only with public data."""
        from ..privacy_bounds import Guarantee, gaussian_mu

        delta = self.delta_for(table, sensitive)
        return Guarantee(float(self.epsilon), delta, self.privacy_unit,
                         gaussian_mu(float(self.epsilon), delta, self.privacy_unit),
                         self.strict, "the DP methods' Gaussian mechanisms at (epsilon, delta)")

    @property
    def strict(self) -> bool:
        """True when public side data fix every data-dependent input of the mechanism."""
        return self.public is not None

    def statement(self, table: FeatureTable, sensitive: str | None,
                  method: str | None = None) -> dict[str, Any]:
        """What the manifest and report state: ε, δ, the unit, strict or not (no bound), and
        the accountant ``method`` declares (:class:`~bioanon.anonymize.base.DPCapability`)."""
        out: dict[str, Any] = {
            "epsilon": float(self.epsilon), "delta": self.delta_for(table, sensitive),
            "delta_rule": "given" if self.delta is not None else
                          f"1/n^2, n = {self.units(table, sensitive)} "
                          f"{'identities' if self.privacy_unit == 'identity' else 'records'}",
            "privacy_unit": self.privacy_unit,
            "strict": self.strict,
            "statement": STRICT_TEXT if self.strict else NOT_STRICT_TEXT,
            "public_data": None,
            "beside_the_certificate": BESIDE_TEXT,
        }
        if method is not None:
            from ..anonymize.registry import get_method

            declared = getattr(get_method(method), "dp", None)
            if declared is not None:
                out["accountant"] = declared.accountant
        if self.privacy_unit == "identity":
            out["identity_column"] = sensitive
            out["max_records_per_identity"] = self.max_records_per_identity or 10
        if self.public is not None:
            n = (self.public.n_records if isinstance(self.public, FeatureTable)
                 else int(np.asarray(self.public).shape[0]))
            out["public_data"] = {"name": self.public_name, "n_records": int(n),
                                  "used_for": "clipping box, centre, clip radius, scale "
                                              "(values not written)"}
        return out

    # ------------------------------------------------------------------ candidates
    def candidates(self, table: FeatureTable, methods: Sequence[str] | None,
                   sensitive: str | None) -> tuple[list[Any], list[dict[str, Any]]]:
        """The DP candidates at this budget and the methods left out, with their reasons.

        The DP methods are those whose class declares ``dp``
        (:class:`~bioanon.anonymize.base.DPCapability`); named methods that are not DP,
        cannot hold the privacy unit or declare no settings to search are refused (one
        line): a user's choice is never dropped silently.
        """
        from ..anonymize.registry import get_method, methods_that

        self.check(table, sensitive)
        dp = methods_that("dp")
        if methods is None:
            names = dp
        else:
            bad = [m for m in methods if m not in dp]
            if bad:
                raise BioanonError(
                    f"epsilon= declares a differential-privacy budget, which method(s) {bad} "
                    f"do not take; name DP methods only (methods={','.join(dp)}) or "
                    "drop epsilon=", parameter=("epsilon", "methods"))
            names = list(dict.fromkeys(methods))
        X_pub = None if self.public is None else self.public_X(table)
        skipped: list[dict[str, Any]] = []
        spaces: list[list[Any]] = []
        for name in names:
            why = self._cannot_hold(get_method(name), X_pub is not None)
            if why is not None:
                if methods is not None:
                    raise BioanonError(f"method '{name}' {why}; drop it from methods=",
                                       parameter=("privacy_unit", "methods"))
                skipped.append({"method": name, "reason": why})
                continue
            spaces.append(self._settings(name, get_method(name), table, sensitive, X_pub))
        out = [c for depth in range(max((len(s) for s in spaces), default=0))
               for s in spaces if depth < len(s) for c in s[depth:depth + 1]]
        if not out:
            raise BioanonError("no DP method can hold this budget on this table; use "
                               "privacy_unit=record or methods=dp-synthetic",
                               parameter=("privacy_unit", "methods"))
        return out, skipped

    def _cannot_hold(self, cls: Any, public: bool) -> str | None:
        """Why DP method ``cls`` cannot be searched at this budget (None when it can)."""
        if self.privacy_unit not in cls.dp.units:
            return (f"cannot hold privacy_unit={self.privacy_unit}: it accounts for "
                    f"{' and '.join(cls.dp.units)} units only (a person would be covered by "
                    "group privacy at a multiple of epsilon, not at the declared one)")
        if not (getattr(cls, "public_search_space", ()) if public else cls.search_space):
            return "declares no settings to search (not searched at a budget)"
        return None

    def _settings(self, name: str, cls: Any, table: FeatureTable, sensitive: str | None,
                  X_pub: np.ndarray | None) -> list[Any]:
        """Method ``name``'s settings at exactly this budget (those differing only in ε
        are one)."""
        from .search import Candidate

        delta = self.delta_for(table, sensitive)
        space = getattr(cls, "public_search_space", ()) if X_pub is not None else \
            cls.search_space
        mine: list[Any] = []
        for setting in space:
            p = {k: v for k, v in setting.items() if k not in ("epsilon", "delta")}
            p.update(epsilon=float(self.epsilon), delta=delta)
            if self.privacy_unit == "identity":
                p["privacy_unit"] = "identity"
                p["max_records_per_identity"] = int(self.max_records_per_identity or 10)
            if any(c.params == p for c in mine):  # ε was the only difference
                continue
            mine.append(Candidate(name, p, resolve_public(p, X_pub)))
        return mine


def public_features(pub: Any, table: FeatureTable) -> np.ndarray:
    """The public records' features (``pub``: a :class:`FeatureTable` or an array (m, d)) in
    the input's column order, float64, checked against ``table`` (one line each, naming
    ``public=``): the same feature columns, numeric (a text-typed feature names its type), at
    least 2 records, finite, and no record of the input among them."""
    names = list(table.feature_names or [])
    if isinstance(pub, FeatureTable):
        theirs = list(pub.feature_names or [])
        if names and theirs:
            # a label column of the input read as a feature of the public table (a numeric
            # label such as 'digit': a table read alone cannot tell) is a label
            problem = public_columns_problem(pub, names, list(table.labels.columns))
            if problem:
                raise BioanonError(f"public= {problem}", parameter="public")
            where = {c: j for j, c in enumerate(theirs)}
            X = np.asarray(pub.X, dtype=np.float64)[:, [where[c] for c in names]]
        else:
            X = np.asarray(pub.X, dtype=np.float64)
    else:
        X = np.asarray(pub, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != table.n_features:
        raise BioanonError(f"public= has {X.shape[-1] if X.ndim else 0} feature "
                           f"columns, the input {table.n_features}; give a table with "
                           "the same feature columns", parameter="public")
    if X.shape[0] < 2:
        raise BioanonError("public= holds fewer than 2 records; give a table of "
                           "people not in the release (the more, the better the bounds)",
                           parameter="public")
    if not np.all(np.isfinite(X)):
        raise BioanonError("public= holds empty or non-finite feature values; "
                           "fill or drop those records", parameter="public")
    shared = shared_records(X, table.X)
    if shared:
        raise BioanonError(f"public= shares {shared} record(s) with the input; "
                           "public data must hold people NOT in the release (bounds "
                           "taken from released records would leak)", parameter="public")
    return X


def shared_records(A: Any, B: Any) -> int:
    """How many rows of ``A`` appear exactly (as float32) among the rows of ``B``.

    >>> shared_records(np.eye(3)[:2], np.eye(3))
    2
    """
    def rows(M: Any) -> np.ndarray:
        m = np.ascontiguousarray(np.asarray(M, dtype=np.float32))
        return m.view(np.dtype((np.void, m.dtype.itemsize * m.shape[1]))).ravel()

    a, b = np.asarray(A), np.asarray(B)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or not a.size or not b.size:
        return 0
    return int(np.isin(rows(a), rows(b)).sum())


def resolve_public(params: dict[str, Any], X_public: np.ndarray | None) -> dict[str, Any]:
    """The values of the ``"public"``/``"public:q"`` parameters, from the public records.

    >>> X = np.random.default_rng(0).normal(size=(100, 4))
    >>> r = resolve_public({"bounds": "public", "center": "public", "clip": "public:0.5"}, X)
    >>> sorted(r), bool(0 < r["clip"] <= 1)
    (['bounds', 'center', 'clip'], True)
    """
    from ..anonymize.dp_synthetic import public_clip
    from ..privacy import public_bounds

    wanted = {k: v for k, v in params.items()
              if isinstance(v, str) and (v == PUBLIC or v.startswith(PUBLIC + ":"))}
    if not wanted:
        return {}
    if X_public is None:
        raise BioanonError(f"parameters {sorted(wanted)} need public data; give "
                           "public=FILE", parameter="public")
    out: dict[str, Any] = {}
    if "public_data" in wanted:  # the method derives what it needs from the records
        out["public_data"] = X_public
    if "bounds" in wanted:
        out["bounds"] = public_bounds(X_public, quantile=0.01, margin=0.1)
    if "center" in wanted:
        out["center"] = X_public.mean(axis=0)
    if "scale" in wanted:
        out["scale"] = X_public.std(axis=0)
    if "clip" in wanted:
        q = float(wanted["clip"].partition(":")[2] or 0.9)
        bounds = out.get("bounds")
        if bounds is None:
            raise BioanonError("clip=public:q needs bounds=public (the clip is measured in "
                               "the public box)")
        out["clip"] = public_clip(X_public, bounds, q, out.get("center"))
    return out


__all__ = ["BESIDE_TEXT", "NOT_STRICT_TEXT", "STRICT_TEXT", "UNITS", "DPBudget",
           "public_columns_problem", "public_features", "resolve_public", "shared_records"]
