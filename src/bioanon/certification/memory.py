"""The in-memory path, the front door: :func:`certify` checks, plans, searches, confirms and
releases a table held in memory.

``certify(table, roles)`` is the library behind ``bioanon release`` and ``bioanon demo``. It
runs the one skeleton (:func:`~bioanon.certification.run.certify_source`) with the
:class:`InMemory` source: the table is the judge's sample, candidates are judged as they are,
the join check is its own refusal, and :func:`certified_release` anonymizes the whole table
with a fresh release seed through the release policy (:func:`bioanon.release.release`).

It returns a :class:`CertifiedRelease` (the released table, manifest, verdict, search rows;
``.write(path)`` writes what the command line writes) or raises :class:`NotCertified`, which
carries the setting that came closest and what fell short. Not being certified is an outcome,
not a user error: :class:`NotCertified` is no :class:`~bioanon.errors.BioanonError` (the
command line exits 1 for it, 2 for a user error).

Its keywords are checked in one place (:mod:`bioanon.certification.settings`): the release's
settings, and the evaluation's options (the fields of
:class:`~bioanon.evaluation.options.EvaluationOptions`).

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> from bioanon.release import Roles
>>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
>>> roles = Roles(sensitive="identity", interest="expression")
>>> try:                              # 180 records of 6 people: the plan refuses at once
...     certify(t, roles, methods=["noise"], models=["knn"], n_jobs=1)
... except PlanRefused as exc:
...     print(str(exc)[:60])
level 'standard' cannot be shown on this table, inconclusive
>>> why = "a doctest"                 # a looser level, the identity level accepted
>>> try:
...     out = certify(t, roles, methods=["noise"], target=0.5, models=["knn"],
...                   attackers="naive,parrot", random_state=0, n_jobs=1, level=0.5,
...                   accept_risks={"identity-membership": why, "identity-inference": why})
... except NotCertified as exc:
...     out = exc
>>> isinstance(out, (CertifiedRelease, NotCertified)), len(out.rows)
(True, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..plan import PlanRefused  # noqa: F401  (raised by certify; the examples above)
from ..release import join_check, release, resolve_roles
from ..table import FeatureTable
from .certificate import (
    CertifiedRelease,
    NotCertified,  # noqa: F401  (raised by certify; the examples above)
    certification_block,
    public_rows,
    release_seed,
    report_and_chart,
    state_budget,
)
from .dp_budget import DPBudget
from .public_basis import public_records, state_public
from .run import Shape, certification_plan, front_door
from .settings import ReleaseSettings

if TYPE_CHECKING:
    from .search import SearchResult

Progress = Callable[[int, int, str], None]


def certify(table: FeatureTable, roles: Any, **options: Any) -> CertifiedRelease:
    """Search methods and settings, certify one against every risk, and release.

    Parameters
    ----------
    table : FeatureTable
    roles : bioanon.release.Roles
        Every label column's role (interest required; ``additional`` may map columns to
        their weights alpha). Label columns without a role are dropped from the release.
    **options
        Checked in one place (:func:`~bioanon.certification.settings.settings_of`):

        methods : sequence of str, optional
            Methods to search (default: every registered method that applies to the table).
        target : float, optional
            Short for ``target_advantage``, the recognition target: the upper 95% bound of
            the cross-fitted worst attack's advantage over max(chance, control) must not
            exceed it (default 0.05).
        random_state : int, optional
            Makes the search and the release reproducible; a secret key, never written (the
            evaluation and release seeds derive from it one way). None: the judge's seed is a
            keyed digest of the table and the options (the same verdict and setting on every
            run, :mod:`~bioanon.certification.judge_seed`), the release's own draw fresh OS
            entropy.
        budget_minutes : float or None
            Wall-clock minutes for the recognition panel's stage (stage 1 judges every
            setting first, whatever the time): after them the panel judges no further
            settings, and a search cut short before a choice raises :class:`NotCertified`
            naming what it left.
        exhaustive : bool
            Judge every setting with the full recognition panel (slower; the same choice as
            the default staged search, :func:`bioanon.certification.search.search`).
        min_utility : float in [0, 1], optional
            The utility floor: a setting is certified only when its CAS reaches
            ``min_utility`` × the clear accuracy on the tuning split and on the confirmation.
            Default :data:`~bioanon.levels.DEFAULT_MIN_UTILITY` (0.80: below it a consumer
            does better on a small clear sample; docs/levels-and-floor.md); 0 or None: no
            floor (CAS above the interest's chance is enough).
        tradeoff_panels : int
            How many more settings the recognition panel judges after the choice, for the
            trade-off table (per level, the most useful setting meeting its targets); default
            1 (the most useful row above the utility floor first; FSDD's second panel changed
            no row it shows), 0: rows judged at stage 1 only say "stage 1: recognition not
            judged"; a stage-1 row is shown only if its margin holds with recognition at its
            best.
        keep_sensitive, force
            As for :func:`bioanon.release.release` (keeping the sensitive column is unfit for
            a real release; ``force`` releases despite a failed join check).
        keep_as_feature : sequence of str, optional
            Feature columns (or patterns) kept knowingly although they look like metadata;
            each must name a feature column.
        decoupler : optional
            A trained decoupler, for the sanitizer to be searched.
        input_name, input_sha256 : str, optional
            Provenance for the manifest.
        progress : callable (done, total, text), optional
        on_plan : callable (plan), optional
            Told the plan (:class:`~bioanon.plan.Plan`) before any setting is judged.
        epsilon : float, optional
            A declared differential-privacy budget: only the DP methods (those whose class
            declares ``dp``) are searched, every setting at exactly this ε (never searched
            upwards); the manifest and report state ε, δ, the privacy unit and whether the
            guarantee is strict (:mod:`bioanon.certification.dp_budget`). Every risk of the
            certificate must still be met: the guarantee is stated beside the empirical
            figures, not instead.
        delta : float, optional
            δ of the budget (default 1/n², n the records, or identities for the identity
            unit).
        public : FeatureTable or array-like, optional
            Records of people not in the release with the same feature columns. With
            ``epsilon``: the clipping box, centre, clip radius and scale come from them, so
            the guarantee is strict (without them it is stated as not strict: bounds from the
            data). Without ``epsilon``: the source of a public basis — the search also tries
            the settings in the public records' principal directions (``dp-cells``,
            ``dp-basis``: :mod:`~bioanon.certification.public_basis`), at no privacy cost;
            the manifest names the table and what it was used for, never its values.
        privacy_unit : {"record", "identity"}, optional
            What ε protects (default record); identity: every record of one ``sensitive``
            value.
        max_records_per_identity : int, optional
            Records per person the statistics use (identity unit; default 10).
        public_name : str, optional
            The public table's file name, for the manifest.
        report_closest : bool
            When nothing is certified, report the closest setting (judged on the tuning split
            that decided, with every attacker and the consumer's panel), so that
            :meth:`NotCertified.report_and_chart` can show what fell short (the demo and
            ``bioanon release`` do).
        options : EvaluationOptions, optional
            How every setting is judged (the attack panel, ``group``, ``n_jobs``, the
            targets, ``accept_risks``); any of its fields (``models=``, ``attackers=``,
            ``level=``, ...) may be given as a keyword too, replacing the one in
            ``options``.
        layout : str, optional
            The table's feature layout (:mod:`bioanon.layout`, e.g. ``"20x16+80"``: which
            columns form which trajectories), checked against the features: methods with a
            temporal basis (``dp-cells``) use it, and the manifest states it.

    Returns
    -------
    CertifiedRelease

    Raises
    ------
    NotCertified
        When no setting meets the target (nothing is released).
    bioanon.plan.PlanRefused
        Before any search, when the plan (from the table's shape alone) says the privacy
        level cannot be shown on this table and nothing accepted or covers it (a
        :class:`~bioanon.errors.BioanonError`: one line naming the ways forward).
    BioanonError
        On bad input (a role naming no column, a refused join check, an unknown method).
    TypeError
        For a keyword that is no option.
    """
    from ..layout import with_layout

    source = InMemory(with_layout(as_table(table, roles), options.pop("layout", None)))
    return front_door(source, roles, options)


#: the ``meta["source"]`` of a table :func:`as_table` read from a DataFrame: its numeric
#: columns are checked for metadata as a CSV file's are (nothing records its label columns)
FROM_FRAME = "a DataFrame"


def as_table(table: Any, roles: Any) -> FeatureTable:
    """``table`` as a :class:`~bioanon.table.FeatureTable` (:func:`~bioanon.table.table_of`:
    a DataFrame is read as a CSV file is, the columns ``roles`` name being labels), marked
    :data:`FROM_FRAME` when it was a DataFrame.

    >>> import pandas as pd
    >>> from bioanon.release import Roles
    >>> df = pd.DataFrame({"f0": [0.1, 0.2], "f1": [1.0, 2.0], "who": ["a", "b"],
    ...                    "take": [0, 1]})
    >>> t = as_table(df, Roles(sensitive="who", identifying=["take"]))
    >>> t.feature_names, list(t.labels.columns), t.meta["source"] == FROM_FRAME
    (['f0', 'f1'], ['who', 'take'], True)
    """
    from ..release import as_roles
    from ..table import table_of

    if isinstance(table, FeatureTable):
        return table
    return table_of(table, list(as_roles(roles).of()), FROM_FRAME)


class InMemory:
    """The in-memory source of :func:`~bioanon.certification.run.certify_source`: the table
    is the sample, candidates are judged as they are, every method applies, the join check
    is its refusal, and the release is the table anonymized in memory (written by
    :meth:`CertifiedRelease.write`)."""

    function = "certify"
    kind = "memory"

    def __init__(self, table: FeatureTable) -> None:
        self.data = table
        self.checked: Any = None

    def refuse(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> None:
        """A layout the table declares that no method of the search reads (the table is
        read already)."""
        from ..layout import META_KEY
        from .settings import refuse_layout_no_method_reads

        refuse_layout_no_method_reads(settings.methods, (self.data.meta or {}).get(META_KEY))

    def shape(self, roles: Any, settings: ReleaseSettings, judge: EvaluationOptions) -> Shape:
        """The table itself (its labels are declared: only ``keep_as_feature`` is checked;
        a table read from a DataFrame, :func:`as_table`, is checked as a CSV file is)."""
        frame = self.data.meta.get("source") == FROM_FRAME
        return Shape(self.data, self.data.X, list(self.data.feature_names or []),
                     declared=not frame, name="the DataFrame" if frame else "the table")

    def prepare(self, shape: Shape, roles: Any, settings: ReleaseSettings) -> DPBudget | None:
        """The join check of the kept and quasi-identifying columns (run once, kept for the
        release), then the declared budget, checked, and its candidates built once (a
        refusal costs no search)."""
        plan = resolve_roles(self.data.labels.columns, roles, settings.keep_sensitive)
        self.checked = join_check(self.data.labels, plan, roles.sensitive,
                                  force=settings.force)
        budget = declared_budget(self.data, roles.sensitive, settings)
        if budget is not None:
            budget.candidates(self.data, settings.methods, roles.sensitive)
        public = public_records(settings, budget)
        if public is not None:  # the public table checked, its settings built (no search)
            public.candidates(self.data, settings.methods, roles.sensitive)
        return budget

    def methods(self, shape: Shape, settings: ReleaseSettings, budget: Any
                ) -> tuple[list[str] | None, list[dict[str, Any]]]:
        """The methods named (None: every one that applies; the search says which)."""
        return (None if settings.methods is None else list(settings.methods)), []

    def table(self, shape: Shape, roles: Any, budget: Any) -> FeatureTable:
        return self.data

    def judge_as(self, anonymizer: Any) -> Any:
        return anonymizer

    def release(self, result: SearchResult, roles: Any, settings: ReleaseSettings,
                budget: Any) -> CertifiedRelease:
        """The whole table anonymized with the certified setting, in memory."""
        out = certified_release(self.data, result, roles, settings, checked=self.checked)
        report, png = report_and_chart(result, roles.sensitive, roles.interest)
        if budget is not None:
            report = state_budget(out.manifest, report, budget, result, self.data,
                                  roles.sensitive)
        public = public_records(settings, budget)
        if public is not None:
            report = state_public(out.manifest, report, public, result, self.data)
        return CertifiedRelease(out.manifest, dict(out.manifest["verdict"]),
                                public_rows(result), report, result, table=out.table,
                                dropped=list(out.dropped), search_png=png)


def declared_budget(table: FeatureTable, sensitive: str | None,
                    settings: ReleaseSettings) -> DPBudget | None:
    """The checked :class:`~bioanon.certification.dp_budget.DPBudget` of ``settings`` (None
    without ``epsilon``; the budget's other options without it are refused by
    :meth:`~bioanon.certification.settings.ReleaseSettings.check`)."""
    if settings.epsilon is None:
        return None
    name = settings.public_name
    budget = DPBudget(epsilon=settings.epsilon, delta=settings.delta,
                      privacy_unit=settings.privacy_unit or "record",
                      max_records_per_identity=settings.max_records_per_identity,
                      public=settings.public,
                      public_name=None if name is None else Path(name).name)
    budget.check(table, sensitive)
    return budget


def certified_release(table: FeatureTable, result: SearchResult, roles: Any,
                      settings: ReleaseSettings | None = None, *, checked: Any = None,
                      **policy: Any) -> Any:
    """Anonymize the whole table with the certified setting and apply the release policy.

    ``settings`` (or ``policy``: ``keep_sensitive``, ``force``, ``random_state``,
    ``input_name``, ``input_sha256``, ``progress``) give the release policy; ``checked`` is
    the join check already run. Refuses (``BioanonError``) when ``result`` is not certified.
    The release seed is fresh (derived one way from ``random_state`` when given, for a
    reproducible release; OS entropy otherwise) and is never written. Returns the
    :class:`~bioanon.release.ReleaseResult` with its manifest marked ``certified`` and
    holding the confirmation's verdict.
    """
    from .search import build_candidate

    s = settings if settings is not None else ReleaseSettings(**policy)
    c = result.candidate
    if not result.certified or c is None:
        raise BioanonError(result.failure_line())
    block = certification_block(result)
    anon = build_candidate(c, roles.interest, roles.sensitive, list(roles.additional),
                           release_seed(s.random_state))
    out = release(table, anon, roles, keep_sensitive=s.keep_sensitive, force=s.force,
                  method=c.method, input_name=s.input_name, input_sha256=s.input_sha256,
                  progress=s.progress, join_checked=checked)
    out.manifest.pop("note", None)
    out.manifest.update(block)
    return out


__all__ = ["InMemory", "certification_plan", "certified_release", "certify",
           "declared_budget"]
