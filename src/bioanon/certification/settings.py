"""The options of a certified release, declared once and checked in one place.

The three public front doors (:func:`bioanon.certify`,
:func:`~bioanon.certification.parquet.certify_parquet`,
:func:`~bioanon.certification.streamed.certify_streamed`; :func:`source_for` says which a
call takes) take the same keywords: the declared release settings (how the search runs, the
release policy, a declared DP budget, what the caller is told), the judge's options (the
fields of :class:`~bioanon.evaluation.options.EvaluationOptions`, or ``options=``) and
``target`` (short for ``target_advantage``). :func:`settings_of` splits and checks them;
each path takes the settings declared for it (the others are refused as Python refuses an
unknown keyword).

Every setting is declared once, in :data:`SETTINGS` (:class:`Setting`): its default, its
constraint (checked in one place, :meth:`ReleaseSettings.check`), the paths that take it
(:meth:`ReleaseSettings.taken_by`), whether the search reads it
(:meth:`ReleaseSettings.search_keywords`) and, where ``bioanon release`` offers it, its flag
(:class:`Flag`: added to the command by :mod:`bioanon.cli.release_flags`, its range checked
with the command line's other numbers). A new release option is one :class:`Setting` and
the place that reads it (``tests/test_release_settings.py`` declares one and follows it).

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
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..anonymize.params import Param
from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions, Parsed
from ..levels import DEFAULT_MIN_UTILITY
from ..privacy import EPSILON_RANGE

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


def _sequence(name: str, value: Any) -> tuple[str, ...] | None:
    """A list of names given as a sequence (a bare string is one name)."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in items):
        raise BioanonError(f"{name}= must be names (strings), got {value!r}", parameter=name)
    return tuple(items)




def _budget_minutes(value: Any) -> None:
    if value is not None and value <= 0:
        raise BioanonError(f"budget_minutes={value} must be positive; e.g. 10",
                           parameter="budget_minutes")


def _tradeoff_panels(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BioanonError(f"tradeoff_panels={value!r} must be a whole number ≥ 0, e.g. 2 (0: "
                           "the trade-off table's rows judged at stage 1 only say so)",
                           parameter="tradeoff_panels")


def _random_state(value: Any) -> None:
    from ..evaluation.seeds import check_seed

    check_seed(value)


def _methods(value: Any) -> None:
    if value is not None and not value:
        raise BioanonError("methods= is empty; name methods, e.g. methods=selective-mean",
                           parameter="methods")


def refuse_layout_no_method_reads(methods: Any, layout: Any) -> None:
    """Refuse a declared ``layout`` for a search whose named ``methods`` (a list, or a
    comma-separated string; None: every method, dp-cells among them) all read none.

    >>> refuse_layout_no_method_reads(["noise", "dp-cells"], "4x8")
    >>> try:
    ...     refuse_layout_no_method_reads("noise,selective-mean", "4x8")
    ... except BioanonError as exc:
    ...     print(str(exc).split(":")[0])
    layout=4x8 has no effect with the methods noise, selective-mean
    """
    if layout is None or methods is None:
        return
    from ..anonymize.registry import get_method
    from ..layout import reads_layout

    names = (_method_list(methods) or []) if isinstance(methods, str) else [
        str(m) for m in methods if str(m).strip()]
    # a composition METHOD+POST reads what its first method reads
    if not names or any(reads_layout(get_method(m.split("+")[0])) for m in names):
        return
    raise BioanonError(f"layout={layout} has no effect with the methods {', '.join(names)}: a "
                       "layout states the trajectories a stated basis reads (dp-cells' "
                       "temporal DCT), and these methods read none; add dp-cells to the "
                       "methods, or leave it out", parameter="layout")


def _method_list(text: str | None) -> list[str] | None:
    """``--methods`` as typed (comma-separated) -> the list of names."""
    if text is None:
        return None
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise BioanonError("methods= is empty; name methods, e.g. methods=selective-mean",
                           parameter="methods")
    return names


#: the release paths (:mod:`.run`'s sources) and the front door of each
PATHS = ("memory", "bucketed", "streamed")
#: the paths that take a declared DP budget, and the in-memory path alone
BUDGET_PATHS, MEMORY = ("memory", "streamed"), ("memory",)
#: a typed value that passes nothing (the library's default applies)
_NEVER = object()


@dataclass(frozen=True)
class Flag:
    """How ``bioanon release`` types a setting: its flag (``--budget-minutes``, or a pair
    ``--exhaustive/--no-exhaustive``), type, default and help; the command's parameter name
    when it is not the setting's (``dp_epsilon``); ``parse`` from the typed value to the
    setting's; ``range``, the command line's range of a number (default: the setting's
    constraint when it is a :class:`~bioanon.anonymize.params.Param`); ``omit``, a typed
    value that passes nothing, so that the library's default applies."""

    flag: str
    kind: Any
    default: Any
    help: str
    param: str = ""
    parse: Callable[[Any], Any] | None = None
    range: Param | None = None
    omit: Any = _NEVER


@dataclass(frozen=True)
class Setting:
    """One option of a certified release, declared once.

    Attributes
    ----------
    name : str
        The keyword of the front doors (:func:`bioanon.certify`, ...).
    default : Any
    constraint : Param, Parsed or None
        Checked by :meth:`ReleaseSettings.check`, before any work.
    help : str
        What it does, in words (the front doors' documentation).
    paths : tuple of str
        The release paths that take it (:data:`PATHS`); another path refuses it as Python
        refuses an unknown keyword.
    search : bool
        The search reads it: it is passed to :func:`~bioanon.certification.search.search`
        as the keyword of its name.
    flag : Flag or None
        Its flag on ``bioanon release`` (None: the library's only).
    normalize : callable, optional
        The value as the settings hold it (e.g. a sequence of names as a tuple).
    """

    name: str
    default: Any
    constraint: Param | Parsed | None = None
    help: str = ""
    paths: tuple[str, ...] = PATHS
    search: bool = False
    flag: Flag | None = None
    normalize: Callable[[str, Any], Any] | None = None

    @property
    def param(self) -> str:
        """The ``bioanon release`` parameter's name."""
        return (self.flag.param if self.flag is not None else "") or self.name

    def cli_range(self) -> Param | None:
        """The command line's range of its flag's number (its message's words)."""
        if self.flag is None:
            return None
        if self.flag.range is not None:
            return self.flag.range
        return self.constraint if isinstance(self.constraint, Param) else None

    def from_cli(self, value: Any) -> Any:
        """The typed value as the setting takes it, or :data:`_NEVER`: pass nothing."""
        assert self.flag is not None
        if self.flag.omit is not _NEVER and value == self.flag.omit:
            return _NEVER
        return value if self.flag.parse is None else self.flag.parse(value)


def source_for(*, dask: bool = False, scheduler: str | None = None,
               epsilon: float | None = None) -> str:
    """The release path (:data:`PATHS`, the :mod:`.run` source) for a call: ``"memory"``
    (:func:`bioanon.certify`), or on dask (``dask``, or a ``scheduler`` named)
    ``"bucketed"`` (:func:`~bioanon.certification.parquet.certify_parquet`) or, with a
    declared budget, ``"streamed"`` (:func:`~bioanon.certification.streamed.certify_streamed`).

    >>> source_for(), source_for(dask=True), source_for(scheduler="tcp://h:1", epsilon=1.0)
    ('memory', 'bucketed', 'streamed')
    """
    if not dask and scheduler is None:
        return "memory"
    return "bucketed" if epsilon is None else "streamed"


def omitted(value: Any) -> bool:
    """Whether :meth:`Setting.from_cli` said: pass nothing."""
    return value is _NEVER


def _declared(*settings: Setting) -> dict[str, Setting]:
    return {s.name: s for s in settings}


#: every release setting, in the order of the front doors' documentation
SETTINGS: dict[str, Setting] = _declared(
    # ---- the search
    Setting("methods", None, Parsed(_methods, "names of registered methods", none=True),
            "methods to search (default: every method the path can release)",
            normalize=_sequence, flag=Flag(
                "--methods", str | None, None,
                "Methods to search, comma-separated (default: every registered method that "
                "applies to the table; bioanon methods lists them).", parse=_method_list)),
    Setting("budget_minutes", 10.0, Parsed(_budget_minutes, "minutes > 0", none=True),
            "wall-clock minutes of the recognition panel's stage", search=True, flag=Flag(
                "--budget-minutes", float, 10.0,
                "Wall-clock minutes for the recognition panel's stage (every setting is "
                "judged at stage 1 first, whatever the time): once they have passed the "
                "panel judges no further settings, and a search cut short before a choice "
                "certifies nothing (exit 1, naming what it left).",
                range=Param("float", low=0, low_open=True, help="minutes, e.g. 10"))),
    Setting("exhaustive", False, None, "judge every setting with the full panel",
            search=True, flag=Flag(
                "--exhaustive/--no-exhaustive", bool, False,
                "Judge every setting with the full recognition panel (slower). By default "
                "the panel judges only the settings that pass utility, membership and "
                "inference, most useful first, until one meets every target: the same "
                "choice.")),
    Setting("min_utility", DEFAULT_MIN_UTILITY, Parsed(
        check_min_utility, "a fraction of the clear accuracy in [0, 1]", none=True),
            "the utility floor, a fraction of the clear CAS (0: none)", search=True,
            flag=Flag("--min-utility", float | None, None,
                      "Utility floor: certify only a setting whose CAS reaches this fraction "
                      "of the clear accuracy (default 0.8; 0: no floor).", omit=None,
                      range=Param("float", low=0, high=1, none=True,
                                  help="a fraction of the clear accuracy, e.g. 0.9; 0 sets "
                                       "no floor"))),
    Setting("tradeoff_panels", 1, Parsed(_tradeoff_panels, "a whole number >= 0"),
            "more settings the recognition panel may judge for the trade-off table",
            search=True),
    Setting("report_closest", False, None, "report the closest setting (every attacker, on "
            "the tuning split that decided) when nothing is certified", search=True),
    Setting("decoupler", None, None, "a trained decoupler, for the sanitizer to be searched",
            paths=MEMORY),
    # ---- the release policy
    Setting("keep_sensitive", False, None, "keep the sensitive column (unfit for a real "
            "release)", flag=Flag(
                "--keep-sensitive", bool, False,
                "Keep the sensitive column in the release so that an outside auditor can "
                "attack it. UNFIT for a real release: the judge's attackers read who is in "
                "it off that column.")),
    Setting("random_state", None, Parsed(_random_state, "a whole number from 0 to 2**32 - 1",
                                         none=True),
            "a secret key making the search and the release "
            "reproducible, never written", search=True, flag=Flag(
                "--seed", int | None, None,
                "Make the search and the release reproducible. A secret key: never written "
                "(the release's own seed is derived from it one way).", param="seed")),
    Setting("force", False, None, "release despite a failed join check", paths=MEMORY),
    Setting("keep_as_feature", None, None, "metadata-looking columns kept as features",
            normalize=_sequence),
    Setting("input_name", None, None, "the input's name (provenance)", paths=MEMORY),
    Setting("input_sha256", None, None, "the input's digest (provenance)", paths=MEMORY),
    # ---- a declared differential-privacy budget
    Setting("epsilon", None, None, "a declared DP budget", paths=BUDGET_PATHS, flag=Flag(
        "--epsilon", float | None, None,
        "Declare a differential-privacy budget: search only the DP methods (bioanon methods "
        "lists them; with --dask those that stream), every setting at exactly this epsilon; "
        "the manifest and report state it (strict only with --public-data). Every risk must "
        "still be met.", param="dp_epsilon",
        range=Param("float", low=EPSILON_RANGE[0], high=EPSILON_RANGE[1], none=True,
                    help="a privacy budget, e.g. 1"))),
    Setting("delta", None, None, "delta of the budget", paths=BUDGET_PATHS, flag=Flag(
        "--delta", float | None, None,
        "delta of the --epsilon budget (default 1/n^2, n the records, or the identities "
        "with --privacy-unit identity).", param="dp_delta",
        range=Param("float", low=0, high=1, low_open=True, high_open=True, none=True,
                    help="e.g. 1e-6"))),
    Setting("public", None, None, "records of people not in the release (a budget's bounds; "
            "without epsilon the source of a public basis, at no privacy cost)",
            paths=BUDGET_PATHS),
    Setting("privacy_unit", None, None, "what epsilon protects", paths=BUDGET_PATHS,
            flag=Flag("--privacy-unit", str | None, None,
                      "What --epsilon protects: record (default) or identity (every record "
                      "of one --sensitive value; in memory only; bioanon methods names the "
                      "DP methods that cover each).")),
    Setting("max_records_per_identity", None, None, "records per identity the statistics "
            "use", paths=BUDGET_PATHS, flag=Flag(
                "--max-records-per-identity", int | None, None,
                "Records of one identity the DP statistics use (--privacy-unit identity; "
                "default 10).", range=Param("int", low=1, none=True,
                                            help="records, e.g. 10"))),
    Setting("public_name", None, None, "the public table's name (the manifest)",
            paths=BUDGET_PATHS),
    # ---- what the caller is told
    Setting("progress", None, None, "called with (done, total, text)", search=True),
    Setting("on_plan", None, None, "called with the plan before any setting is judged"),
)


def declare(setting: Setting) -> None:
    """Add (or replace) a release setting: every front door, the checks and, with a flag,
    ``bioanon release`` take it from here (declare before the command line is imported)."""
    SETTINGS[setting.name] = setting


class ReleaseSettings:
    """Every option of a certified release that is not the judge's: the values of the
    declared :data:`SETTINGS` (each read as an attribute), their defaults where not given.

    Examples
    --------
    >>> s = ReleaseSettings(methods="noise", budget_minutes=5)
    >>> s.methods, s.budget_minutes, s.exhaustive
    (('noise',), 5, False)
    >>> sorted(ReleaseSettings.taken_by("bucketed"))[:3]
    ['budget_minutes', 'exhaustive', 'keep_as_feature']
    """

    __slots__ = ("_values",)

    def __init__(self, **values: Any) -> None:
        unknown = [k for k in values if k not in SETTINGS]
        if unknown:
            raise TypeError(f"unknown release setting '{unknown[0]}'")
        out = {}
        for name, setting in SETTINGS.items():
            value = values.get(name, setting.default)
            if setting.normalize is not None and name in values:
                value = setting.normalize(name, value)
            out[name] = value
        object.__setattr__(self, "_values", out)

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(f"no release setting '{name}'") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("release settings are frozen")

    def __getstate__(self) -> dict[str, Any]:
        return dict(self._values)

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(state))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self._values.items())

    def __repr__(self) -> str:
        given = {k: v for k, v in self if v is not SETTINGS[k].default}
        return f"ReleaseSettings({', '.join(f'{k}={v!r}' for k, v in given.items())})"

    @classmethod
    def names(cls) -> list[str]:
        """The settings' names."""
        return list(SETTINGS)

    @classmethod
    def taken_by(cls, path: str) -> frozenset[str]:
        """The settings release path ``path`` (one of :data:`PATHS`) takes."""
        return frozenset(n for n, s in SETTINGS.items() if path in s.paths)

    def search_keywords(self) -> dict[str, Any]:
        """The settings the search reads, as its keywords."""
        return {n: self._values[n] for n, s in SETTINGS.items() if s.search}

    def check(self, judge: EvaluationOptions) -> None:
        """Refuse bad settings (one line each, naming the parameter) before any work: every
        declared constraint, then the budget's settings without a budget."""
        for name, setting in SETTINGS.items():
            if setting.constraint is not None:
                setting.constraint.check(name, self._values[name])
        if self.epsilon is None:
            given = [name for name in ("delta", "privacy_unit", "max_records_per_identity")
                     if self._values[name] is not None]
            if given:
                many = len(given) > 1
                raise BioanonError(f"{', '.join(g + '=' for g in given)} "
                                   f"{'belong' if many else 'belongs'} to a declared privacy "
                                   "budget; add epsilon=E or drop "
                                   f"{'them' if many else 'it'}", parameter=(*given, "epsilon"))


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
    return ReleaseSettings(**own), judge


__all__ = ["PATHS", "SETTINGS", "Flag", "ReleaseSettings", "Setting", "declare", "omitted",
           "refuse_layout_no_method_reads", "settings_of", "source_for"]
