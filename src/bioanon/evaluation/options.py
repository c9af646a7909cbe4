"""The evaluation's options, declared once and validated once: :class:`EvaluationOptions`.

:class:`~bioanon.evaluation.Evaluation`, :func:`bioanon.evaluate`,
:func:`bioanon.certification.search.search`, :func:`bioanon.certify` and the command line all
take their evaluation options from this one frozen dataclass. Their keyword arguments are a
convenience derived from its fields (:meth:`EvaluationOptions.of`), so an option is added in
one place and no signature can lose one.

Each field carries its constraint beside it (scikit-learn's ``_parameter_constraints``, here
the :class:`~bioanon.anonymize.params.Param` declarations the anonymizers use, or the
library's own parser of that option): every construction (and every ``replace``) checks
every field in one place, :meth:`EvaluationOptions.validate`, which raises one
:class:`~bioanon.errors.BioanonError` per fault naming the parameter (``NAME=VALUE``, which
the command line turns into its flag) and its valid range. Nothing downstream checks an
option again.

Examples
--------
>>> opts = EvaluationOptions.of(models=["knn"], n_jobs=1)
>>> opts.models, opts.n_jobs, opts.test_size
(['knn'], 1, 0.25)
>>> EvaluationOptions.of(opts, n_jobs=2).n_jobs
2
>>> EvaluationOptions.of(modles=["knn"])
Traceback (most recent call last):
...
TypeError: unknown evaluation option 'modles' (did you mean 'models'?); the options are ...
>>> EvaluationOptions.of(test_size=1.5)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bioanon.errors.BioanonError: test_size=1.5 is out of range; use a number in (0, 1) (share ...
>>> EvaluationOptions.constraint_text("target_advantage")
'number in [0, 1]'
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..anonymize.params import Param
from ..attack.recognizers import DEFAULT_MODELS, check_recognizer, parse_models
from ..attack.selection import parse_identity_counts, parse_strategies
from ..attack.threat import parse_modes
from ..errors import BioanonError
from ..levels import Level, resolve_level
from .panel_modes import PANEL_MODES

#: the default recognition target (``target_advantage``)
DEFAULT_TARGET = 0.05

#: options of earlier versions, refused with the way forward
REMOVED = {
    "target_membership": "an AUC bound", "target_inference": "an advantage bound"}


def refuse_removed(values: Mapping[str, Any]) -> None:
    """Refuse the former per-risk targets in one line naming ``level``."""
    for name in values:
        if name in REMOVED:
            raise BioanonError(
                f"{name} ({REMOVED[name]}) was removed: membership and inference on members "
                "are now both judged by the membership advantage (TPR − FPR) against one "
                "target per level; pass level=NAME or a number instead, e.g. "
                "level='standard' or level=0.1", parameter="level")


@dataclass(frozen=True)
class Parsed:
    """A constraint checked by the library's own parser of an option (its message names the
    fault); ``range`` says the valid values in words."""

    parse: Callable[[Any], Any]
    range: str
    none: bool = False

    def check(self, name: str, value: Any) -> None:
        if value is None and self.none:
            return
        self.parse(value)

    def range_text(self) -> str:
        return self.range + (" or none" if self.none else "")


#: the most parallel fits asked for that is not a typo (one thread each; ``--jobs 100000``
#: ran out of threads, an internal error): the same on every machine, so that a command
#: valid on one is valid on all (the cores change only the time)
MAX_JOBS = 1024


def max_jobs() -> int:
    """:data:`MAX_JOBS`."""
    return MAX_JOBS


def _n_jobs(value: Any) -> None:
    if (isinstance(value, bool) or not isinstance(value, int) or value == 0
            or value > max_jobs()):
        raise BioanonError(f"n_jobs={value!r} is out of range; use a nonzero integer up to "
                           f"{max_jobs()} (-1: all cores) or none")


def _accepted(value: Any) -> None:
    from .risks import check_accepted

    check_accepted(value)  # a mapping {LEVEL-RISK: reason}, checked there


def _identities(value: Any) -> None:
    if not isinstance(value, str | Sequence):
        raise BioanonError(f"identities={value!r} must be identity counts, e.g. [3, 6, 12] "
                           "or '3,6,12'", parameter="identities")
    parse_identity_counts(value)  # the form; the table's size is checked by the evaluation


def _columns(value: Any) -> None:
    if (isinstance(value, str) or not isinstance(value, Sequence)
            or not all(isinstance(c, str) for c in value)):
        raise BioanonError("must be a list of label column names, e.g. ['age']")


def _level(value: Any) -> None:
    resolve_level(value)


def option(default: Any, constraint: Param | Parsed) -> Any:
    """A field of :class:`EvaluationOptions` with its constraint beside it."""
    return field(default=default, metadata={"constraint": constraint})


def _named(name: str, value: Any, exc: BioanonError) -> BioanonError:
    """The fault of one option, its message naming the parameter (``NAME=VALUE``)."""
    text = str(exc)
    if not re.search(rf"(?<![\w-]){re.escape(name)}\b", text):
        shown = repr(value) if isinstance(value, str) else str(value)
        text = f"{name}={shown}: {text}"
    return BioanonError(text, parameter=name)


def check_option(name: str, value: Any) -> None:
    """Check one option's value against its declared constraint, for a function that takes
    it alone (e.g. :func:`~bioanon.evaluation.verdict.verdict`'s ``target_advantage``): the
    same check and message as :class:`EvaluationOptions`.

    >>> check_option("target_advantage", 2.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bioanon.errors.BioanonError: target_advantage=2.0 is out of range; use a number in [0, 1] ...
    """
    try:
        EvaluationOptions.constraint(name).check(name, value)
    except BioanonError as exc:
        raise _named(name, value, exc) from None


@dataclass(frozen=True)
class EvaluationOptions:
    """How a release is judged: the attack panel, the split, the risks and their targets.

    Attributes
    ----------
    models : str or sequence
        Attack recognizers (names, estimators, or ``"all"``).
    utility_model : str or estimator
        The model of the utility views (the paper's view, release → release) and of the CAS
        where the consumer's panel does not run.
    consumer_panel : {"final", "ranking", "forest-ranking", "always", "off"}
        Where the consumer's panel (:mod:`bioanon.evaluation.consumer`) makes the headline
        CAS of the interest — its pick by cross-validation on the release alone, against the
        clear data's own pick: ``final`` (default) in every single evaluation and a search's
        confirmation, the search's tuning split ranking its settings by the ranking panel
        (:data:`~bioanon.evaluation.panel_modes.RANKING_MODELS`: the pick among the cheap
        linear consumers); ``ranking`` that ranking panel alone; ``forest-ranking`` a
        forest of half the trees (``ranking_forest``) and that panel, the pick among them (a
        search's tuning split where the linear consumers fall short on clear records);
        ``always`` the whole panel on the tuning split too; ``off`` never
        (``utility_model``'s CAS).
    test_size : float
        Share of each identity's records held out (closed set).
    top_k : int
        k of the top-k recognition rate.
    attackers : str or sequence of str
        Attacker modes (naive, parrot, parrot25, parrot50, parrot75, reverse, linkage; "all").
    selection : str, sequence of str or None
        Identity-selection strategies ("auto", "all", "none"/None or names).
    identities : sequence of int, str or None
        Identity counts of the selection curves.
    n_random : int
        Repeats of the random selection.
    metadata : sequence of str or None
        Per-identity columns of the metadata selection.
    group : str or None
        Column of groups kept whole on one side of the split.
    n_jobs : int or None
        Parallel fits (-1: all cores).
    released_labels : sequence of str or None
        Label columns the release carries (default: the interest and additional ones).
    sensitive_released : bool
        Whether the release carries the sensitive column too (``keep_sensitive``): the
        membership and inference attackers then read each released record's person off it.
    membership, verification, inference : bool
        Run the membership, verification and inference-on-members risks.
    target_advantage : float
        Recognition target (upper 95% bound of the worst attack's advantage).
    level : str, float, Level or None
        The privacy level membership and inference on members are judged at (both as a
        membership advantage TPR − FPR): a name of :data:`bioanon.levels.LEVELS`, a number
        (the same target at the record and identity levels) or None (the default level).
    guarantee : bioanon.privacy_bounds.Guarantee or None
        A declared DP guarantee: membership and inference at a level it covers, with its
        proven bound within the target, are "covered by the guarantee"
        (:func:`bioanon.evaluation.risks.base.cover`).
    accept_risks : mapping {"LEVEL-RISK": reason} or None
        Risks accepted explicitly, with the reason.
    preview : bool
        Keep a contact sheet of held-out originals and releases (pixel tables).
    max_records : int or None
        Judge a larger table on a stratified sample of this many records (None: never).
    max_fit_records : int or None
        Records each utility model is trained on: a sample of the training split stratified
        by the column it predicts (None: all). The test records are never sampled, so the
        intervals keep their width; the report names the sizes. The default (10,000) leaves
        tables of up to 13,333 records (at ``test_size`` 0.25) exactly as without it.
    max_candidates : int or None
        Candidate records per side (members, non-members) the membership and inference
        attackers score, and clear records per release at the identity level: a sample
        stratified by identity, every identity kept (None: all). The release and the
        attacker's reference population are never sampled; the report names the sizes beside
        the intervals.
    """

    models: str | Sequence[Any] = option(DEFAULT_MODELS, Parsed(
        parse_models, "recognizer names (comma-separated), estimators or 'all'"))
    utility_model: Any = option("forest", Parsed(
        check_recognizer, "a recognizer name or a scikit-learn classifier"))
    consumer_panel: str = option("final", Param(
        "str", options=PANEL_MODES,
        help="where the consumer's panel makes the headline CAS: final (an evaluation, a "
             "search's confirmation; the tuning split ranks by the linear consumers), "
             "ranking (the linear consumers only), forest-ranking (a forest of half the trees "
             "and the linear consumers), always (the whole panel on the tuning split too) or off"))
    test_size: float = option(0.25, Param(
        "float", low=0, high=1, low_open=True, high_open=True,
        help="share of each identity's records held out"))
    top_k: int = option(5, Param("int", low=1, help="k of the top-k recognition rate"))
    attackers: str | Sequence[str] = option("all", Parsed(
        parse_modes, "attacker modes (comma-separated) or 'all'"))
    selection: str | Sequence[str] | None = option(None, Parsed(
        parse_strategies, "selection strategies (comma-separated), 'auto', 'all' or 'none'"))
    identities: Sequence[int] | str | None = option(None, Parsed(
        _identities, "identity counts of at least 2, e.g. 3,6,12", none=True))
    # at most 1000: each repeat fits an attacker; --n-random 1000000000000 listed a
    # trillion draws before any fit (a hang, then out of memory)
    n_random: int = option(10, Param("int", low=1, high=1000,
                                     help="repeats of the random selection"))
    metadata: Sequence[str] | None = option(None, Parsed(
        _columns, "per-identity label columns of the metadata selection", none=True))
    group: str | None = option(None, Param(
        "column", none=True, help="column of groups kept whole on one side of the split"))
    n_jobs: int | None = option(-1, Parsed(_n_jobs, "a nonzero integer (-1: all cores)",
                                           none=True))
    released_labels: Sequence[str] | None = option(None, Parsed(
        _columns, "label columns the release carries", none=True))
    sensitive_released: bool = option(False, Param(
        "bool", help="the release carries the sensitive column too"))
    membership: bool = option(True, Param("bool", help="run the membership risk"))
    verification: bool = option(True, Param("bool", help="run the verification view (EER)"))
    inference: bool = option(True, Param("bool", help="run the inference risk"))
    target_advantage: float = option(DEFAULT_TARGET, Param(
        "float", low=0, high=1, help="recognition target: upper 95% bound of the worst "
                                     "attack's advantage"))
    level: str | float | Level | None = option(None, Parsed(
        _level, "strict, standard, basic or a target advantage in (0, 1)", none=True))
    guarantee: Any = option(None, Param("object", none=True))
    accept_risks: Mapping[str, str] | None = option(None, Parsed(
        _accepted, "{LEVEL-RISK: reason}", none=True))
    preview: bool = option(False, Param("bool", help="keep a contact sheet"))
    max_records: int | None = option(50_000, Param(
        "int", low=2, none=True, help="records the judge samples from a larger table"))
    max_fit_records: int | None = option(10_000, Param(
        "int", low=2, none=True, help="records each utility model is trained on"))
    max_candidates: int | None = option(10_000, Param(
        "int", low=2, none=True, help="candidate records per side the membership and "
                                      "inference attackers score"))

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every option against its declared constraint (the one place options are
        checked): one :class:`~bioanon.errors.BioanonError` per fault, naming the parameter
        and its valid range."""
        for f in fields(self):
            check_option(f.name, getattr(self, f.name))

    @classmethod
    def constraint(cls, name: str) -> Param | Parsed:
        """The constraint option ``name`` declares."""
        (f,) = (f for f in fields(cls) if f.name == name)
        return f.metadata["constraint"]  # type: ignore[no-any-return]

    @classmethod
    def constraint_text(cls, name: str) -> str:
        """The valid values of option ``name`` in words (for help texts)."""
        return cls.constraint(name).range_text()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (the dataclass's fields), in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, options: EvaluationOptions | None = None, /,
           **values: Any) -> EvaluationOptions:
        """``options`` (default: every default) with ``values`` replaced, checked.

        Raises TypeError naming the closest option for a keyword that is not one, and
        :class:`~bioanon.errors.BioanonError` for a value outside its option's range.
        """
        names = cls.names()
        refuse_removed(values)
        for key in values:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise TypeError(f"unknown evaluation option '{key}'{hint}; the options are "
                                f"{', '.join(names)}")
        return replace(options if options is not None else cls(), **values)

    def split(self, values: Mapping[str, Any]) -> tuple[EvaluationOptions, dict[str, Any]]:
        """These options with the evaluation options among ``values`` replaced, and the
        remaining (non-option) keywords."""
        names = self.names()
        mine = {k: v for k, v in values.items() if k in names}
        rest = {k: v for k, v in values.items() if k not in names}
        return replace(self, **mine), rest

    # ------------------------------------------------------------------ derived values
    @property
    def level_(self) -> Level:
        """The privacy level (:class:`~bioanon.levels.Level`) ``level`` names."""
        return resolve_level(self.level)

    @property
    def accepted(self) -> dict[str, str]:
        """The accepted risks, normalized (``{"LEVEL-RISK": reason}``)."""
        from .risks import check_accepted

        return check_accepted(self.accept_risks)

    def runs_consumer_panel(self) -> bool:
        """Whether the consumer's panel (whole or ranking) makes the headline CAS (a
        search's tuning split runs :meth:`for_tuning`'s options)."""
        return self.consumer_panel != "off"

    def consumer_models(self) -> tuple[str, ...]:
        """The consumers the panel tries under these options: the ranking panel under
        ``ranking``, the forest and it under ``forest-ranking``, the whole panel otherwise."""
        from .panel_modes import FOREST_RANKING_MODELS, RANKING_MODELS

        if self.consumer_panel == "ranking":
            return RANKING_MODELS
        if self.consumer_panel == "forest-ranking":
            return FOREST_RANKING_MODELS
        from .consumer import CONSUMER_MODELS

        return CONSUMER_MODELS

    def for_tuning(self) -> EvaluationOptions:
        """These options as a search's tuning split runs them: ``final`` ranks by the
        ranking panel (its other views by
        :data:`~bioanon.evaluation.panel_modes.RANKING_VIEW_MODEL`, whose fits the panel
        reuses, unless a model of the user's own was given); the confirmation keeps
        ``final``."""
        from .panel_modes import RANKING_VIEW_MODEL

        if self.consumer_panel != "final":
            return self
        view = RANKING_VIEW_MODEL if self.utility_model == "forest" else self.utility_model
        return replace(self, consumer_panel="ranking", utility_model=view)

    def target(self, option: str) -> Any:
        """The target an option holds for the risks that name it (a registered risk's
        ``target_option``): the resolved :class:`~bioanon.levels.Level` for ``level``, the
        number otherwise."""
        return self.level_ if option == "level" else getattr(self, option)


def additional_weights(additional: Any) -> dict[str, float]:
    """The additional attributes as ``{column: weight}``: a mapping as it is, a list of names
    (or one name) at weight 1.0 each, as :class:`~bioanon.release.Roles` takes them.

    >>> additional_weights(["gender"]), additional_weights({"gender": 0.5})
    ({'gender': 1.0}, {'gender': 0.5})
    """
    if additional is None:
        return {}
    if isinstance(additional, Mapping):
        items = list(additional.items())
    elif isinstance(additional, str):
        items = [(additional, 1.0)]
    elif isinstance(additional, Sequence | set | frozenset):
        items = [(c, 1.0) for c in additional]
    else:
        raise BioanonError(f"additional={additional!r} is not a column list; name the columns "
                           "to keep, e.g. additional=['gender'] or {'gender': 0.5}",
                           parameter="additional")
    out: dict[str, float] = {}
    for col, weight in items:
        try:
            out[str(col)] = float(weight)
        except (TypeError, ValueError):
            raise BioanonError(f"additional weight of '{col}' is {weight!r}, not a number; "
                               "e.g. additional={'gender': 0.5}",
                               parameter="additional") from None
    return out


__all__ = ["DEFAULT_TARGET", "EvaluationOptions", "additional_weights", "check_option"]
