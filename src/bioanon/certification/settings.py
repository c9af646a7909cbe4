"""The options of a certified release, declared once and checked in one place.

The three public front doors (:func:`bioanon.certify`,
:func:`~bioanon.certification.parquet.certify_parquet`,
:func:`~bioanon.certification.streamed.certify_streamed`) take the same keywords: the
fields of :class:`ReleaseSettings` (how the search runs, the release policy, a declared
DP budget, what the caller is told), the judge's options (the fields of
:class:`~bioanon.evaluation.options.EvaluationOptions`, or ``options=``) and ``target``
(short for ``target_advantage``). :func:`settings_of` splits and checks them; each path
says which settings it takes (the others are refused as Python refuses an unknown keyword).

A new release option is a field here (with its check in :meth:`ReleaseSettings.check`), the
place that reads it, and its flag in ``cli/release.py``.

Examples
--------
>>> s, judge = settings_of("certify", {"methods": ["noise"], "target": 0.3, "models": "knn"})
>>> s.methods, judge.target_advantage, judge.models
(('noise',), 0.3, 'knn')
>>> settings_of("certify", {"method": ["noise"]})
Traceback (most recent call last):
...
TypeError: certify() got an unexpected keyword argument 'method' (did you mean 'methods'?)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..levels import DEFAULT_MIN_UTILITY

Progress = Callable[[int, int, str], None]


def check_min_utility(min_utility: float | None) -> float | None:
    """``min_utility`` checked: a fraction of the clear accuracy in [0, 1]; 0 or None: no
    floor (None returned).

    Examples
    --------
    >>> check_min_utility(0.8), check_min_utility(0), check_min_utility(None)
    (0.8, None, None)
    """
    if min_utility is None or isinstance(min_utility, bool):
        if min_utility is None:
            return None
        value = float("nan")
    else:
        try:
            value = float(min_utility)
        except (TypeError, ValueError):
            value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise BioanonError(f"min_utility={min_utility!r} must be a fraction of the clear "
                           "accuracy in [0, 1], e.g. 0.9 (the CAS must reach 0.9 × clear); "
                           "0 sets no floor", parameter="min_utility")
    return value or None


def check_search_args(budget_minutes: float | None,
                      min_utility: float | None) -> float | None:
    """The search's own arguments checked (one line each; the target advantage is checked
    with the evaluation options); returns the utility floor."""
    floor = check_min_utility(min_utility)
    if budget_minutes is not None and budget_minutes <= 0:
        raise BioanonError(f"budget_minutes={budget_minutes} must be positive; e.g. 10",
                           parameter="budget_minutes")
    return floor


@dataclass(frozen=True)
class ReleaseSettings:
    """Every option of a certified release that is not the judge's.

    The search
        ``methods`` (default: every method the path can release), ``random_state`` (a
        secret key, never written), ``budget_minutes``, ``exhaustive``, ``min_utility``
        (the utility floor, a fraction of the clear CAS: by default
        :data:`~bioanon.levels.DEFAULT_MIN_UTILITY`, 0 sets none), ``tradeoff_panels`` (how
        many more settings the recognition panel may judge for the trade-off table),
        ``report_closest``, ``decoupler`` (:func:`~bioanon.certification.search.search`).
    The release policy
        ``keep_sensitive``, ``force`` (:func:`bioanon.release.release`), ``keep_as_feature``
        (metadata-looking columns kept as features knowingly:
        :func:`bioanon.release.check_columns`), ``input_name`` and ``input_sha256``
        (provenance).
    A declared differential-privacy budget
        ``epsilon``, ``delta``, ``public``, ``privacy_unit``, ``max_records_per_identity``,
        ``public_name`` (:mod:`bioanon.certification.dp_budget`). ``public`` (and
        ``public_name``) without ``epsilon``: the source of a public basis, at no privacy
        cost (:mod:`bioanon.certification.public_basis`).
    What the caller is told
        ``progress`` (done, total, text) and ``on_plan`` (called with the
        :class:`~bioanon.plan.Plan` before any setting is judged, refused or not).
    """

    methods: tuple[str, ...] | None = None
    random_state: int | None = None
    budget_minutes: float | None = 10.0
    exhaustive: bool = False
    min_utility: float | None = DEFAULT_MIN_UTILITY
    tradeoff_panels: int = 2
    report_closest: bool = False
    decoupler: Any = None
    keep_sensitive: bool = False
    force: bool = False
    keep_as_feature: tuple[str, ...] | None = None
    input_name: str | None = None
    input_sha256: str | None = None
    epsilon: float | None = None
    delta: float | None = None
    public: Any = None
    privacy_unit: str | None = None
    max_records_per_identity: int | None = None
    public_name: str | None = None
    progress: Progress | None = None
    on_plan: Callable[[Any], None] | None = None

    @classmethod
    def names(cls) -> list[str]:
        """The settings' names."""
        return [f.name for f in fields(cls)]

    def check(self, judge: EvaluationOptions) -> None:
        """Refuse bad settings (one line each, naming the parameter) before any work."""
        check_search_args(self.budget_minutes, self.min_utility)
        if isinstance(self.tradeoff_panels, bool) or not isinstance(self.tradeoff_panels, int) \
                or self.tradeoff_panels < 0:
            raise BioanonError(f"tradeoff_panels={self.tradeoff_panels!r} must be a whole "
                               "number ≥ 0, e.g. 2 (0: the trade-off table's rows judged at "
                               "stage 1 only say so)", parameter="tradeoff_panels")
        if self.methods is not None and not self.methods:
            raise BioanonError("methods= is empty; name methods, e.g. methods=selective-mean",
                               parameter="methods")
        if self.epsilon is None:
            given = [name for name in ("delta", "privacy_unit", "max_records_per_identity")
                     if getattr(self, name) is not None]
            if given:
                many = len(given) > 1
                raise BioanonError(f"{', '.join(g + '=' for g in given)} "
                                   f"{'belong' if many else 'belongs'} to a declared privacy "
                                   "budget; add epsilon=E or drop "
                                   f"{'them' if many else 'it'}", parameter=(*given, "epsilon"))


def _sequence(name: str, value: Any) -> tuple[str, ...] | None:
    """A list of names given as a sequence (a bare string is one name)."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in items):
        raise BioanonError(f"{name}= must be names (strings), got {value!r}", parameter=name)
    return tuple(items)


def settings_of(function: str, values: Mapping[str, Any],
                accepts: Collection[str] | None = None
                ) -> tuple[ReleaseSettings, EvaluationOptions]:
    """Split a front door's keywords into its :class:`ReleaseSettings` and the judge's
    :class:`~bioanon.evaluation.options.EvaluationOptions` (``options=`` the base,
    ``target`` short for ``target_advantage``), refusing a keyword the path does not take.

    Parameters
    ----------
    function : str
        The front door's name, for the messages.
    values : mapping
        Its keywords.
    accepts : collection of str, optional
        The settings the path takes (default: every one).

    Raises
    ------
    TypeError
        For a keyword that is neither a setting the path takes nor an evaluation option.
    """
    values = dict(values)
    base = values.pop("options", None)
    target = values.pop("target", None)
    mine = set(ReleaseSettings.names() if accepts is None else accepts)
    judged = set(EvaluationOptions.names())
    for key in values:
        if key not in mine and key not in judged:
            close = difflib.get_close_matches(key, sorted(mine | judged | {"target"}), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise TypeError(f"{function}() got an unexpected keyword argument '{key}'{hint}")
    judge = EvaluationOptions.of(base, **{k: v for k, v in values.items() if k in judged})
    if target is not None:
        judge = replace(judge, target_advantage=float(target))
    own = {k: v for k, v in values.items() if k in mine}
    for key in ("methods", "keep_as_feature"):
        if key in own:
            own[key] = _sequence(key, own[key])
    return ReleaseSettings(**own), judge


__all__ = ["ReleaseSettings", "settings_of"]
