"""The one certification skeleton: check → plan → search → confirm → release, written once.

:func:`certify_source` runs every certified release, whatever the path; the three public
front doors wrap it thinly, each with a small *source* (:class:`Source`) carrying only what
differs between them:

========================  ===================  ========================  =====================
                          in memory            bucketed on dask          streamed (DP, dask)
========================  ===================  ========================  =====================
module                    :mod:`.memory`       :mod:`.parquet`           :mod:`.streamed`
the sample the judge sees the table            a panel sample            a panel sample
how a candidate is judged as it is             bucket by bucket          streamed over blocks
the methods allowed       every one            ``bucketable``            ``streamable`` DP
its own refusals          join check           no kept/quasi columns     public bounds, record
the writer                the table in memory  :mod:`bioanon.scale`      the partition stream
========================  ===================  ========================  =====================

The steps, each said once here:

1. **check**, before any work: the roles, the settings (:mod:`.settings`), every method
   named (an unknown name is said before the plan), the path's own refusals, the table's
   columns (:func:`bioanon.release.check_columns`: metadata-looking features,
   ``keep_as_feature`` naming no feature), its labels, the path's checks of the table (in
   memory: the join check), a declared budget and the methods the path can release;
2. **plan**, from the labels alone (:func:`certification_plan`): the caller is told it
   through ``on_plan`` (when it proceeds, with the search's expected time,
   :mod:`.estimate`); a level the table cannot show stops the run
   (:class:`~bioanon.plan.PlanRefused`);
3. **search** every setting on a tuning split, then **confirm** the chosen one on a fresh
   split and seed (:func:`~bioanon.certification.search.run_search`); nothing certified
   raises :class:`~bioanon.certification.certificate.NotCertified`;
4. **release**: the source's writer, with the certificate
   (:class:`~bioanon.certification.certificate.CertifiedRelease`, one class for the three).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..plan import Plan, PlanRefused, make_plan
from ..privacy import leak_warnings_silenced
from ..release import check_columns
from ..table import FeatureTable, refuse_group_role, refuse_revealing_roles
from .certificate import CertifiedRelease, NotCertified
from .settings import ReleaseSettings

if TYPE_CHECKING:
    from .search import SearchResult


@dataclass
class Shape:
    """What the checks and the plan read before any work.

    Attributes
    ----------
    labels : FeatureTable
        The records the judge will see, for their labels (in memory: the table; on dask:
        the panel sample's labels, with a stand-in feature).
    head : array (m, d)
        Records of every feature column, for the column checks (in memory: the table's; on
        dask: the first records of the input).
    features : list of str
        The feature columns' names.
    declared : bool
        The input records which columns are labels (a table in memory, a Parquet file
        bioanon wrote); otherwise its numeric columns are checked for metadata.
    name : str
        How messages name the input.
    """

    labels: FeatureTable
    head: np.ndarray
    features: list[str]
    declared: bool = True
    name: str = "the table"


class Source(Protocol):
    """What differs between the release paths (see the module's table)."""

    #: the front door's name, for messages
    function: str
    #: the release path (:data:`~.settings.PATHS`): it names the settings the path takes
    #: (:meth:`~.settings.ReleaseSettings.taken_by`)
    kind: str

    def refuse(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> None:
        """The path's own refusals, from the arguments alone (one line each)."""

    def shape(self, roles: Any, settings: ReleaseSettings,
              judge: EvaluationOptions) -> Shape:
        """Read what the checks and the plan need (labels, the first records)."""

    def prepare(self, shape: Shape, roles: Any, settings: ReleaseSettings) -> Any:
        """The path's checks that read the table (in memory: the join check), and the
        declared DP budget, checked (None without one)."""

    def methods(self, shape: Shape, settings: ReleaseSettings, budget: Any
                ) -> tuple[list[str] | None, list[dict[str, Any]]]:
        """The methods the path can release (None: every one that applies) and those left
        out, each with its reason."""

    def table(self, shape: Shape, roles: Any, budget: Any) -> FeatureTable:
        """The records the search judges (the panel sample's rows on dask)."""

    def judge_as(self, anonymizer: Any) -> Any:
        """The estimator the judge evaluates for a candidate: what the path writes."""

    def release(self, result: SearchResult, roles: Any, settings: ReleaseSettings,
                budget: Any) -> CertifiedRelease:
        """Write (or, in memory, build) the certified release."""


def certification_plan(table: Any, roles: Any, options: EvaluationOptions,
                       guarantee: Any = None) -> Plan:
    """The plan of a certification of ``table`` (a FeatureTable or its labels) with these
    roles and options, from the labels alone (:func:`bioanon.plan.make_plan`)."""
    return make_plan(table, roles.interest, roles.sensitive, level=options.level,
                     group=options.group, test_size=options.test_size,
                     label_columns=[roles.interest, *map(str, roles.additional), *roles.quasi,
                                    *roles.keep],
                     target_recognition=options.target_advantage, guarantee=guarantee,
                     accept=options.accept_risks)


def check_method_names(methods: Sequence[str] | None) -> None:
    """Refuse an unknown method name (one line, with a suggestion) before the plan."""
    from ..anonymize.registry import get_method

    for name in methods or ():
        get_method(name)


def check_labels(shape: Shape, roles: Any, judge: EvaluationOptions) -> None:
    """The judged label columns: present, no empty value, two classes at least (the group:
    one)."""
    if not roles.interest:
        raise BioanonError("a certified release needs the attribute of interest; pass "
                           "interest=COL", parameter="interest")
    for column in dict.fromkeys([roles.interest, roles.sensitive, *roles.additional]):
        if column is not None:
            shape.labels.label(column, target=column != roles.sensitive)
    if judge.group is not None:
        shape.labels.label(judge.group, min_classes=1)
    refuse_group_role(judge.group, roles.sensitive, [roles.interest, *roles.additional])
    refuse_revealing_roles(shape.labels.labels, [roles.interest, *map(str, roles.additional)],
                           roles.sensitive)


def expected_line(table: FeatureTable, methods: Sequence[str] | None,
                  settings: ReleaseSettings, judge: EvaluationOptions) -> str | None:
    """The expected time of the search of ``table`` (:mod:`.estimate`) as the line said after
    the plan; None when the settings cannot be counted (the search says why)."""
    from .estimate import estimate
    from .public_basis import public_records
    from .search import candidates

    try:
        n_settings = len(candidates(table, methods, settings.decoupler)[0])
        public = public_records(settings)
        if public is not None:
            n_settings += len(public.candidates(table, methods, None))
    except BioanonError:
        return None
    n = table.n_records if judge.max_records is None else min(table.n_records,
                                                              judge.max_records)
    return estimate(n, table.n_features, n_settings, judge.n_jobs).line()


def certify_source(source: Source, roles: Any, settings: ReleaseSettings,
                   judge: EvaluationOptions) -> CertifiedRelease:
    """Certify and release through ``source`` (see the module): check, plan, search and
    confirm, release.

    Raises
    ------
    BioanonError
        A user error, before any work (one line).
    bioanon.plan.PlanRefused
        The level cannot be shown on this table and nothing accepts or covers it.
    NotCertified
        No setting meets every target (nothing is written).
    """
    # 1. check: every refusal the arguments and the table's shape allow, before any work
    roles.of()
    settings.check(judge)
    check_method_names(settings.methods)
    source.refuse(roles, settings, judge)
    shape = source.shape(roles, settings, judge)
    check_columns(shape.head, shape.features, settings.keep_as_feature,
                  declared=shape.declared, source=shape.name)
    check_labels(shape, roles, judge)
    budget = source.prepare(shape, roles, settings)
    methods, left_out = source.methods(shape, settings, budget)
    # 2. plan, from the labels alone: said to the caller, refused in seconds
    guarantee = None if budget is None else budget.guarantee(shape.labels, roles.sensitive)
    plan = certification_plan(shape.labels, roles, judge, guarantee)
    if not plan.can_proceed:
        if settings.on_plan is not None:
            settings.on_plan(plan)
        raise PlanRefused(plan)
    # 3. search every setting on a tuning split, then confirm the choice on a fresh one
    #    (without the DP candidates' leak warnings: a declared budget's statement says strict
    #    or not once; without one no epsilon is claimed)
    table = source.table(shape, roles, budget)
    del shape
    plan = replace(plan, expected=expected_line(table, methods, settings, judge))
    if settings.on_plan is not None:  # the plan, with the expected time of the search
        settings.on_plan(plan)
    with leak_warnings_silenced():
        result = _search(source, table, roles, settings, judge, guarantee, budget, methods)
    result.plan = plan
    result.skipped[:0] = [s for s in left_out if s not in result.skipped]
    del table
    if not result.certified:
        raise NotCertified(result, roles.sensitive, roles.interest)
    # 4. release: the path's writer, with the certificate; a declared budget that is not
    #    strict is said once (the search's candidates each would have warned)
    with leak_warnings_silenced():
        released = source.release(result, roles, settings, budget)
    if budget is not None and not getattr(budget, "strict", True):
        import warnings

        from ..privacy import PrivacyLeakWarning
        from .dp_budget import NOT_STRICT_TEXT

        warnings.warn(NOT_STRICT_TEXT, PrivacyLeakWarning, stacklevel=4)
    return released


def _search(source: Source, table: FeatureTable, roles: Any, settings: ReleaseSettings,
            judge: EvaluationOptions, guarantee: Any, budget: Any,
            methods: Any) -> Any:
    """The search of :func:`certify_source`'s step 3 (its module imported here, after the
    plan: a refused plan never loads it)."""
    from .public_basis import public_records
    from .search import SearchSpace, run_search

    return run_search(table, roles, options=replace(judge, guarantee=guarantee,
                                                    sensitive_released=settings.keep_sensitive),
                      methods=methods, **settings.search_keywords(),
                      space=SearchSpace(settings.decoupler, budget, source.judge_as,
                                        public_records(settings, budget)))


def front_door(source: Source, roles: Any, values: Mapping[str, Any]) -> CertifiedRelease:
    """A public front door's body: its keywords checked (:func:`~.settings.settings_of`),
    then :func:`certify_source`."""
    from ..release import as_roles
    from .settings import settings_of

    roles = as_roles(roles)
    settings, judge = settings_of(source.function, values,
                                  ReleaseSettings.taken_by(source.kind))
    return certify_source(source, roles, settings, judge)


#: a callable the CLI passes as ``on_plan``
PlanCallback = Callable[[Plan], None]

__all__ = ["PlanCallback", "Shape", "Source", "certification_plan", "certify_source",
           "check_labels", "check_method_names", "front_door"]
