"""The one base class of every anonymizer, and label access.

:class:`Anonymizer` owns the scikit-learn plumbing: ``fit``, ``transform``, ``fit_transform``
and ``release`` (FeatureTable or array in; float32 out; ``n_features_in_`` with scikit-learn's
wording; the random state through :func:`bioanon.privacy.resolve_seed`; labels as ``y``).
A family implements only

- ``_fit(X, y, table)``: learn what the release needs (optional; ``X`` is checked float32);
- ``_release(X, y, seed, table)``: return the released array, or a :class:`Release` with
  diagnostics (never written onto the estimator);
- ``_check_relations()``: checks across parameters and refusals of settings that release the
  input unchanged (optional; single parameters are checked from ``params``).

Semantics
---------
``fit_transform(X, y)`` and ``release(X, y)`` anonymize. ``transform(X, y)`` anonymizes too:
a bioanon estimator never hands clear data back. Inside a scikit-learn pipeline, use
:class:`bioanon.pipeline.TrainOnRelease`, which releases the training data during ``fit`` and
lets predict-time data pass (so cross-validation measures CAS).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..errors import BioanonError, missing_column
from ..privacy import resolve_seed
from ..table import (
    FeatureTable,
    all_finite,
    as_feature_matrix,
    refuse_continuous,
    refuse_dates,
    refuse_masked,
    refuse_mixed_types,
    refuse_nested,
    refuse_ragged,
)
from .params import Param, check_params
from .release_model import ReleaseModel

#: float32's relative precision: a change below ``FLOAT32_EPS × |x|`` does not survive storage
FLOAT32_EPS = float(np.finfo(np.float32).eps)
#: rows read to estimate a feature's scale (evenly spaced; nothing random, nothing stored)
_SCALE_ROWS = 20_000


def float32_resolution(X: np.ndarray) -> np.ndarray:
    """Each feature's float32 resolution: ``FLOAT32_EPS`` × its root mean square value.

    A change smaller than this, added to the feature, is indistinguishable from it once the
    release is stored as float32. Estimated on at most 20,000 evenly spaced records.

    Examples
    --------
    >>> float32_resolution(np.array([[1000.0, 0.0], [-1000.0, 0.0]])).round(7).tolist()
    [0.0001192, 0.0]
    """
    rows = X[:: max(1, X.shape[0] // _SCALE_ROWS)]
    rms = np.sqrt(np.mean(np.square(rows, dtype=np.float64), axis=0))
    return FLOAT32_EPS * rms


def below_resolution(change: np.ndarray | float, X: np.ndarray) -> float | None:
    """The smallest informative feature's resolution when ``change`` (per feature or one
    number) is below the float32 resolution of every non-constant-zero feature, else None."""
    res = float32_resolution(X)
    live = res > 0
    if not live.any():
        return None
    ch = np.broadcast_to(np.asarray(change, dtype=np.float64), res.shape)
    return float(res[live].min()) if bool(np.all(ch[live] < res[live])) else None


def split_input(X: Any, labels: Any) -> tuple[np.ndarray, Any]:
    """Accept a FeatureTable or an array plus labels; return (checked array, labels)."""
    if isinstance(X, FeatureTable):
        return X.X, X.labels if labels is None else labels
    return as_feature_matrix(X), labels


def label_values(labels: Any, column: str, n: int) -> np.ndarray:
    """One label column as an array, checked for presence, length and empty values.

    ``labels`` may be a DataFrame, a mapping of arrays, or a bare array standing for
    ``column``.
    """
    if labels is None:
        raise BioanonError("this method requires y to be passed, but the target y is None; "
                           f"pass the labels (a DataFrame with column '{column}') as y")
    if isinstance(labels, pd.DataFrame):
        if column not in labels.columns:
            raise missing_column(column, labels.columns)
        values = labels[column].to_numpy()
    elif isinstance(labels, Mapping):
        if column not in labels:
            raise missing_column(column, list(labels))
        values = np.asarray(labels[column])
    else:
        values = np.asarray(labels)
        if values.ndim != 1:
            raise BioanonError(f"y has shape {values.shape}; pass a DataFrame with column "
                               f"'{column}' or one label per record")
    if values.shape[0] != n:
        raise BioanonError(
            f"label column '{column}' has {values.shape[0]} values for {n} records; "
            "pass one label per record"
        )
    refuse_nested(column, values)
    if pd.isna(values).any():
        raise BioanonError(f"label column '{column}' has empty values; fill or drop them")
    refuse_mixed_types(column, values)
    refuse_continuous(column, values)
    return values


@dataclass(frozen=True)
class Release:
    """One release: the released records and diagnostics that are safe to show.

    ``info`` never holds secrets (seeds, cluster assignments, donor indices). ``mixing``, set
    by mixing methods, is the secret matrix of who was mixed into whom (``M[i, j] > 0`` when
    record j is in released record i), or a function of no argument that builds it (large
    releases skip the matrix unless the evaluator asks): it stays in process for the
    evaluator's contributor disclosure and is never written, printed or kept on the estimator.
    """

    X: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    mixing: Any = field(default=None, repr=False)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple | list):  # element by element: a list of arrays is no plain value
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if v is None or isinstance(v, str | int | float | bool | dict):
        return v
    return type(v).__name__


@dataclass(frozen=True)
class DPCapability:
    """What a differentially private method declares (:attr:`Anonymizer.dp`): its one
    declaration of the formal guarantee, read by every list of it (``bioanon methods``, the
    ``--privacy-unit`` help, a declared budget's search and the manifest's statement).

    Attributes
    ----------
    units : tuple of str
        The privacy units its accounting covers: ``"record"`` (one record's features) and,
        where the method bounds a person's records, ``"identity"``.
    accountant : str
        How (ε, δ) becomes the method's noise, in words.
    budget : str
        The parameter that sets the privacy loss (``"epsilon"``, or ``"mu"`` for a
        Gaussian-DP method); its default is read from the class.
    delta : str
        How δ is set, in words (empty: the class's ``delta`` default, stated as a number).
    basis, split : str
        Where the release's basis comes from and how the budget is split among the
        mechanisms, in words (empty: nothing to say).

    Examples
    --------
    >>> cap = DPCapability(("record",), "analytic Gaussian mechanism")
    >>> cap.to_dict()["units"], cap.unit_words()
    (['record'], 'record')
    >>> cap.guarantee({"epsilon": 2.0, "delta": 1e-06})["budget"]
    'epsilon (default 2)'
    """

    units: tuple[str, ...] = ("record",)
    accountant: str = ""
    budget: str = "epsilon"
    delta: str = ""
    basis: str = ""
    split: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form of what the method can do (units and accountant)."""
        return {"units": list(self.units), "accountant": self.accountant}

    def unit_words(self) -> str:
        """The privacy units, in words (how a unit other than the record is asked for)."""
        if tuple(self.units) == ("record",):
            return "record"
        others = " or ".join(u for u in self.units if u != "record")
        return (f"record (default) or {others} (privacy_unit={others} with the sensitive "
                "column named, max_records_per_identity=m)")

    def guarantee(self, defaults: dict[str, Any]) -> dict[str, str]:
        """The formal guarantee in words (``bioanon methods``; the accountant is listed with
        what the method can do, :meth:`to_dict`), the defaults read from the class's
        ``__init__`` (``defaults``)."""
        budget = defaults.get(self.budget)
        delta = defaults.get("delta")
        out = {"budget": self.budget if not isinstance(budget, int | float)
               else f"{self.budget} (default {budget:g})",
               "delta": self.delta or (f"{delta:g} (default)" if isinstance(delta, int | float)
                                       else "1/n^2, n the records"),
               "privacy_unit": self.unit_words()}
        if self.basis:
            out["basis"] = self.basis
        if self.split:
            out["split"] = self.split
        return out


class SettingError(BioanonError):
    """A method's setting failed numerically on valid input (e.g. noise that overflows)."""


class AnonymizerMixin:
    """The light mixin of estimators that do their own plumbing (tests' stand-ins, wrappers):
    ``fit_on_auxiliary`` and :meth:`public_params`. New methods subclass :class:`Anonymizer`.
    """

    fit_on_auxiliary: ClassVar[bool] = False

    def public_params(self) -> dict[str, Any]:
        """Parameters safe to publish: everything but the random state, as plain values."""
        params = self.get_params(deep=False)  # type: ignore[attr-defined]
        params.pop("random_state", None)
        return {k: _plain(v) for k, v in params.items()}


class Anonymizer(AnonymizerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class of bioanon anonymizers (scikit-learn transformers that release data).

    Class attributes a family sets
    ------------------------------
    params : dict of name -> :class:`~bioanon.anonymize.params.Param`
        The declared constraint of every ``__init__`` parameter (the CLI, ``bioanon methods``
        and ``fit`` all read it).
    method_name : str
        Set by :func:`bioanon.anonymize.registration.register`.
    protects, does_not_protect : str
        One line each for ``bioanon methods``.
    seeded : bool
        True when a fixed ``random_state`` makes the release reproducible (scikit-learn's
        ``non_deterministic`` tag is its negation).
    needs_labels : bool
        ``fit``/``release`` read label columns (scikit-learn's ``requires_y`` tag).
    batch_dependent : bool
        A record's release depends on the other records of the batch or on its position
        (donors, clusters, batch statistics, noise drawn per position). scikit-learn's
        sample-order and subset invariance checks then do not apply (declared deviations).
    fit_on_auxiliary : bool
        True when ``fit`` learns from auxiliary data and ``release`` applies it to other
        records (the evaluation fits once on the training split); False when each release is
        computed from the records being released.
    search_space : tuple of dict
        Candidate settings ``bioanon release`` (:func:`bioanon.certification.search.search`) tries,
        each a dict of parameter values (role parameters such as ``interest`` are filled from
        the roles). Empty (the default): the method is not searched.
    public_basis_space : tuple of dict
        Settings in a basis taken from public records, tried beside ``search_space`` when
        the user gives public records without a privacy budget (``--public-data``:
        :mod:`bioanon.certification.public_basis`); a value ``"public"`` takes the public
        records. Empty (the default): none.

    What the method can do (every list of methods reads these: ``bioanon methods``, the
    declared budget's search, the dask paths; a new method declares them and nothing else)
    dp : DPCapability or None
        Set on a method whose release is (ε, δ)-differentially private by its own accounting:
        the privacy units it covers and its accountant. A declared budget
        (:mod:`bioanon.certification.dp_budget`) searches exactly these methods.
    bucketable : bool
        The release mixes only the records it is given, so it can run bucket by bucket on
        dask (:mod:`bioanon.scale.bucketed`).
    streamable : bool
        A DP method whose statistics are sums over records, so its release can stream over
        Parquet partitions (:mod:`bioanon.certification.streamed`).

    Examples
    --------
    >>> import numpy as np
    >>> from bioanon.anonymize import GaussianNoiseAnonymizer
    >>> est = GaussianNoiseAnonymizer(sigma=0.1, random_state=0).fit(np.zeros((4, 2)))
    >>> est.release(np.zeros((4, 2))).dtype
    dtype('float32')
    """

    params: ClassVar[dict[str, Param]] = {}
    method_name: ClassVar[str] = ""
    protects: ClassVar[str] = ""
    does_not_protect: ClassVar[str] = ""
    seeded: ClassVar[bool] = True
    needs_labels: ClassVar[bool] = False
    batch_dependent: ClassVar[bool] = True
    fit_on_auxiliary: ClassVar[bool] = False
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ()
    public_basis_space: ClassVar[tuple[dict[str, Any], ...]] = ()

    @classmethod
    def setting_for(cls, params: dict[str, Any], table: Any) -> dict[str, Any]:
        """A searched setting ``params`` as it acts on ``table``: a parameter with no effect
        there is dropped (so that no setting is searched twice or labelled with it), one the
        table states (e.g. a declared layout) is filled in. Default: unchanged."""
        return dict(params)

    # ------------------------------------------------------------------ what it can do
    dp: ClassVar[DPCapability | None] = None
    bucketable: ClassVar[bool] = False
    streamable: ClassVar[bool] = False

    # ------------------------------------------------------------------ release model
    # (read by the model-aware attackers; see :mod:`bioanon.anonymize.release_model`)
    def release_model(self) -> ReleaseModel | None:
        """The model this setting's release is a sample of, or None (no closed form).

        A method whose release is a fresh sample of a fitted model overrides this and returns
        a :class:`~bioanon.anonymize.release_model.ReleaseModel` built from its parameters
        (public knowledge: family, covariance shape, the class column, rank, basis source).
        The model-aware attacker refits that family on the release and on its reference
        records; methods returning None are attacked by shadow models (the attacker runs
        the method itself) and by the generic Gaussian families.

        Examples
        --------
        >>> from bioanon.anonymize import GaussianNoiseAnonymizer
        >>> GaussianNoiseAnonymizer(sigma=0.1).release_model() is None
        True
        """
        return None

    # ------------------------------------------------------------------ hooks
    def _check_relations(self) -> None:
        """Checks across parameters; refuse settings whose release equals the input."""

    def _fit(self, X: np.ndarray, y: Any, table: FeatureTable | None) -> None:
        """Learn what the release needs (default: nothing)."""

    def _release(self, X: np.ndarray, y: Any, seed: int,
                 table: FeatureTable | None) -> np.ndarray | Release:
        raise NotImplementedError

    def _unchanged(self, X: np.ndarray | None) -> str | None:
        """Why this setting would release records indistinguishable from ``X`` at float32
        precision, by the method's own account, or None (the default: it changes them).

        ``X`` is the data to release (None before it is read: answer what needs no data).
        :func:`float32_resolution` gives each feature's resolution. Exact no-ops are refused
        by the declared ranges and :meth:`_check_relations`; this hook covers settings that
        are no-ops in effect (noise far below the values' precision, a record weight that
        drowns its donors).
        """
        return None

    def _ignored(self) -> dict[str, str]:
        """Parameters this setting ignores, each with the reason (what would make it count).

        Front ends refuse a parameter the user set that is listed here (``bioanon anonymize
        --rq 0.1`` without an ``--additional`` attribute). Default: none.
        """
        return {}

    def ignored_params(self) -> dict[str, str]:
        """Parameters that have no effect with this setting: name -> why (see :meth:`_ignored`).

        Examples
        --------
        >>> from bioanon.anonymize import SelectiveMeanAnonymizer
        >>> sorted(SelectiveMeanAnonymizer("digit", r_p=0.0).ignored_params())
        ['r_q', 'relevance', 'relevance_records', 'w']
        """
        return self._ignored()

    def ignored_on(self, table: Any) -> dict[str, str]:
        """Parameters with no effect on ``table`` (a :class:`FeatureTable` or an array):
        :meth:`ignored_params` and those the data leave idle (dp-cells' ``keep`` where no
        trajectory is longer). Front ends refuse one the user set, once the table is read.

        Examples
        --------
        >>> from bioanon.anonymize import SelectiveMeanAnonymizer
        >>> sorted(SelectiveMeanAnonymizer("digit", r_p=0.0).ignored_on(np.zeros((2, 2))))
        ['r_q', 'relevance', 'relevance_records', 'w']
        """
        return self.ignored_params()

    def check_changes(self, X: Any = None) -> Anonymizer:
        """Refuse, before any work, a setting whose release the method declares
        indistinguishable from ``X`` at float32 precision (see :meth:`_unchanged`); return self.

        Examples
        --------
        >>> from bioanon.anonymize import GaussianNoiseAnonymizer
        >>> X = np.full((4, 2), 1000.0)
        >>> try:
        ...     GaussianNoiseAnonymizer(sigma=1e-9).check_changes(X)
        ... except BioanonError as exc:
        ...     print(str(exc).split(": ", 1)[1].split(" (")[0])
        sigma=1e-09 is below the resolution of every feature
        """
        arr = None if X is None else (X.X if isinstance(X, FeatureTable) else np.asarray(X))
        why = self._unchanged(arr)
        if why:
            raise BioanonError("this setting would release the records unchanged at float32 "
                               f"precision: {why}")
        return self

    # ------------------------------------------------------------------ checks
    def check_params(self) -> Anonymizer:
        """Check every parameter against its declared constraint; return self.

        Raises :class:`~bioanon.errors.BioanonError` naming the parameter and its range.
        Called by ``fit``; front ends call it to refuse a setting before any work.
        """
        check_params(self.params, self.get_params(deep=False))
        self._check_relations()
        return self

    def _input(self, X: Any, y: Any, reset: bool) -> tuple[np.ndarray, Any, FeatureTable | None]:
        table = X if isinstance(X, FeatureTable) else None
        if table is not None:
            arr, labels = table.X, table.labels if y is None else y
            n_features = arr.shape[1]
            if reset:
                self.n_features_in_ = n_features
                self.feature_names_in_ = np.asarray(table.feature_names, dtype=object)
            elif n_features != self.n_features_in_:
                raise BioanonError(
                    f"X has {n_features} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input; release data with the "
                    "features it was fitted on")
            return arr, labels, table
        if isinstance(X, pd.DataFrame):  # labels beside the features: NumPy's "could not
            text = [str(c) for c in X.columns  # convert string to float" named no fix
                    if not pd.api.types.is_numeric_dtype(X[c])]
            if text:
                raise BioanonError(
                    f"X (a DataFrame) holds {len(text)} non-numeric column(s) ({text[:4]}); "
                    "pass a FeatureTable (bioanon.table.table_of(frame) reads them as labels) "
                    "or the numeric features as X with the labels as y")
        refuse_masked(X)
        refuse_dates(X)
        try:
            with np.errstate(over="ignore"):  # 1e300 to float32: NumPy's warning came first
                arr = validate_data(self, X, reset=reset, dtype=np.float32,
                                    accept_sparse=False, ensure_all_finite=True)
        except BioanonError:
            raise
        except (TypeError, ValueError) as exc:
            msg = str(exc).strip()
            if isinstance(exc, TypeError) and "Sparse data" not in msg:
                raise  # scikit-learn's estimator checks expect float()'s TypeError
            refuse_ragged(X)
            if "infinity" in msg or "NaN" in msg:
                as_feature_matrix(X, "X")  # names the column, the record and the fix
            if "features as input" in msg:
                msg = msg.rstrip(".") + "; release data with the features it was fitted on"
            lines = msg.splitlines()  # a 1-D X: scikit-learn prints the whole array between
            if len(lines) > 1 and lines[1].startswith("array="):  # its two lines of text
                msg = f"{lines[0].rstrip(':')} (shape {np.shape(X)}); {lines[-1]}"
            raise BioanonError(msg) from None
        return arr, y, None

    # ------------------------------------------------------------------ estimator API
    def fit(self, X: Any, y: Any = None) -> Anonymizer:
        """Check the parameters and the input; learn what the release needs.

        Parameters
        ----------
        X : array (n, d) or FeatureTable
        y : DataFrame of label columns (column roles are parameters), a 1-D array standing
            for the one column the method reads, or None (a FeatureTable's own labels)
        """
        self.check_params()
        arr, labels, table = self._input(X, y, reset=True)
        self._fit(arr, labels, table)
        return self

    def release_result(self, X: Any, y: Any = None) -> Release:
        """Release ``X`` with a fitted estimator; return the records and diagnostics."""
        check_is_fitted(self, "n_features_in_")
        arr, labels, table = self._input(X, y, reset=False)
        result = self._checked_release(arr, labels, table)
        return Release(self._finite_output(result.X), result.info)

    def _checked_release(self, arr: np.ndarray, labels: Any,
                         table: FeatureTable | None) -> Release:
        """:meth:`_release` without NumPy's overflow warnings: a setting whose noise or scale
        leaves float32's range is refused by :meth:`_finite_output`, naming it; the warning
        (``overflow encountered in cast``) was printed before that refusal."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = self._release(arr, labels, resolve_seed(getattr(self, "random_state", None)),
                                table)
        return out if isinstance(out, Release) else Release(out)

    def release_with_mixing(self, X: Any, y: Any = None) -> tuple[np.ndarray, Any]:
        """Fit, release ``X`` and return the release with its secret mixing matrix.

        For the evaluator only (contributor disclosure), in process; the matrix is None for
        methods that do not mix records. It reveals the donor sets or cluster assignments:
        never write it anywhere.
        """
        self.fit(X, y)
        arr, labels, table = self._input(X, y, reset=False)
        result = self._checked_release(arr, labels, table)
        mixing = result.mixing() if callable(result.mixing) else result.mixing
        return self._finite_output(result.X), mixing

    def _finite_output(self, X: Any) -> np.ndarray:
        """The release as float32, refused when the mechanism produced NaN or inf: the input
        was checked finite, so the setting failed (noise or a scale that overflows float32),
        and the error says so, naming the setting."""
        with np.errstate(over="ignore", invalid="ignore"):
            arr = np.asarray(X, dtype=np.float32)
        if all_finite(arr):
            return arr
        bad = int((~np.isfinite(arr)).sum())
        params = ", ".join(f"{k}={v}" for k, v in self.public_params().items()
                           if isinstance(v, int | float) and not isinstance(v, bool))
        raise SettingError(
            f"the setting {self.method_name or type(self).__name__}({params}) produced {bad} "
            "NaN/inf value(s) from finite input: its noise or scale overflows float32, so this "
            "setting is unusable (the input is fine); choose another one (e.g. a larger "
            "epsilon or a smaller noise scale)")

    def release(self, X: Any, y: Any = None) -> Any:
        """Release ``X`` with a fitted estimator: an array (n, d) float32 in input order, or a
        FeatureTable when a FeatureTable was given."""
        out = self.release_result(X, y).X
        if isinstance(X, FeatureTable) and out.shape[1] == X.n_features:
            return X.with_features(out)
        return out

    def transform(self, X: Any, y: Any = None) -> Any:
        """Release ``X`` (as :meth:`release`): never clear data. Labels go in ``y``."""
        return self.release(X, y)

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit on ``X`` and release it (the data owner's one call)."""
        return self.fit(X, y, **fit_params).release(X, y)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = not self.seeded
        tags.target_tags.required = self.needs_labels
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float32"]
        return tags
