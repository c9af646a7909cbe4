"""The in-memory adapter, the front door: :func:`certify` searches, confirms and releases.

``certify(table, roles)`` is the library behind ``bioanon release`` and ``bioanon demo``:

1. :func:`~bioanon.certification.search.search`: every applicable method's settings judged on
   a tuning split; the most useful setting meeting the target is confirmed on a fresh split
   with a fresh seed;
2. :func:`certified_release`: only if the confirmation meets the target too, the whole table
   is anonymized with a fresh release seed through the release policy
   (:func:`bioanon.release.release`), and the manifest is marked certified;
3. :func:`~bioanon.certification.certificate.certified_report`: the confirmation's report
   plus the search.

It returns a :class:`CertifiedRelease` (the released table, manifest, verdict, search rows;
``.write(path)`` writes what the command line writes) or raises :class:`NotCertified`, which
carries the setting that came closest and what fell short. Not being certified is an outcome,
not a user error: :class:`NotCertified` is no :class:`~bioanon.errors.BioanonError` (the
command line exits 1 for it, 2 for a user error).

Keyword arguments :func:`certify` does not name are the evaluation's options (the fields of
:class:`~bioanon.evaluation.options.EvaluationOptions`), passed to the search.

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

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import BioanonError
from ..evaluation.options import EvaluationOptions
from ..plan import Plan, PlanRefused, make_plan
from ..release import join_check, release, resolve_roles
from ..table import FeatureTable
from .certificate import (
    CertifiedRelease,
    NotCertified,
    certification_block,
    public_rows,
    release_seed,
    report_and_chart,
    state_budget,
)
from .dp_budget import DPBudget
from .search import (
    SearchResult,
    build_candidate,
    check_min_utility,
    judge_options,
    run_search,
    weights,
)

Progress = Callable[[int, int, str], None]


def certify(table: FeatureTable, roles: Any, *, methods: Sequence[str] | None = None,
            random_state: int | None = None, budget_minutes: float | None = 10.0,
            keep_sensitive: bool = False, force: bool = False, decoupler: Any = None,
            input_name: str | None = None, input_sha256: str | None = None,
            progress: Progress | None = None, epsilon: float | None = None,
            delta: float | None = None, public: Any = None, privacy_unit: str | None = None,
            max_records_per_identity: int | None = None, public_name: str | None = None,
            report_closest: bool = False, target: float | None = None,
            exhaustive: bool = False, min_utility: float | None = None,
            options: EvaluationOptions | None = None,
            **option_values: Any) -> CertifiedRelease:
    """Search methods and settings, certify one against the privacy target, and release.

    Parameters
    ----------
    table : FeatureTable
    roles : bioanon.release.Roles
        Every label column's role (interest required; ``additional`` may map columns to
        their weights alpha). Label columns without a role are dropped from the release.
    methods : sequence of str, optional
        Methods to search (default: every registered method that applies to the table).
    target : float, optional
        Short for ``target_advantage``, the recognition target: the upper 95% bound of the
        cross-fitted worst attack's advantage over max(chance, control) must not exceed it
        (default 0.05).
    random_state : int, optional
        Makes the search and the release reproducible; a secret key, never written (the
        evaluation and release seeds derive from it one way). None: fresh OS entropy.
    budget_minutes : float or None
        Stop evaluating settings after this long (the confirmation follows).
    exhaustive : bool
        Judge every setting with the full recognition panel (slower; the same choice as the
        default staged search, :func:`bioanon.certification.search.search`).
    min_utility : float in (0, 1], optional
        The utility floor: a setting is certified only when its CAS reaches ``min_utility`` ×
        the clear accuracy on the tuning split and on the confirmation (e.g. 0.95). None
        (default): CAS above the interest's chance.
    keep_sensitive, force
        As for :func:`bioanon.release.release` (keeping the sensitive column is unfit for a
        real release; ``force`` releases despite a failed join check).
    decoupler : optional
        A trained decoupler, for the sanitizer to be searched.
    input_name, input_sha256 : str, optional
        Provenance for the manifest.
    progress : callable (done, total, text), optional
    epsilon : float, optional
        A declared differential-privacy budget: only the DP methods (dp-synthetic, dp-mix)
        are searched, every setting at exactly this ε (never searched upwards); the
        manifest and report state ε, δ, the privacy unit and whether the guarantee is
        strict (:mod:`bioanon.certification.dp_budget`). Every risk of the certificate must still be
        met: the guarantee is stated beside the empirical figures, not instead.
    delta : float, optional
        δ of the budget (default 1/n², n the records, or identities for the identity unit).
    public : FeatureTable or array-like, optional
        Records of people not in the release with the same feature columns: the clipping
        box, centre, clip radius and scale come from them, so the guarantee is strict.
        Without them it is stated as not strict (bounds from the data).
    privacy_unit : {"record", "identity"}, optional
        What ε protects (default record); identity: every record of one ``sensitive`` value.
    max_records_per_identity : int, optional
        Records per person the statistics use (identity unit; default 10).
    public_name : str, optional
        The public table's file name, for the manifest.
    report_closest : bool
        When nothing is certified, judge the closest setting on a fresh split too, so that
        :meth:`NotCertified.report_and_chart` can show what fell short (the demo does).
    options : EvaluationOptions, optional
        How every setting is judged (:class:`~bioanon.evaluation.options.EvaluationOptions`:
        the attack panel, ``group``, ``n_jobs``, the targets, ``accept_risks``).
    **option_values
        Any field of :class:`~bioanon.evaluation.options.EvaluationOptions` (``models=``,
        ``attackers=``, ``level=``, ...), replacing the one in ``options``.

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
    """
    roles.of()  # one role per column, before any work
    check_min_utility(min_utility)
    for column in (roles.sensitive, roles.interest, *roles.additional):
        if column is not None:
            table.label(column)  # an empty or single-class label refused before the search
    budget = declared_budget(table, roles.sensitive, epsilon=epsilon, delta=delta, public=public,
                             privacy_unit=privacy_unit,
                             max_records_per_identity=max_records_per_identity,
                             public_name=public_name)
    check = join_check(table.labels, resolve_roles(table.labels.columns, roles, keep_sensitive),
                       roles.sensitive, force=force)  # run once; a refusal costs no search
    if budget is not None:
        budget.candidates(table, methods, roles.sensitive)  # a refusal costs no search
    opts = judge_options(options, target, option_values)
    guarantee = budget.guarantee(table, roles.sensitive) if budget is not None else None
    plan = certification_plan(table, roles, opts, guarantee)
    if not plan.can_proceed:  # known from the table's shape: said in seconds, not at the end
        raise PlanRefused(plan)
    result = run_search(table, roles, options=replace(opts, guarantee=guarantee),
                        methods=methods, random_state=random_state,
                        budget_minutes=budget_minutes, decoupler=decoupler,
                        progress=progress, report_closest=report_closest, budget=budget,
                        exhaustive=exhaustive, min_utility=min_utility)
    result.plan = plan
    if not result.certified:
        raise NotCertified(result, roles.sensitive, roles.interest)
    out = certified_release(table, result, roles, keep_sensitive=keep_sensitive, force=force,
                            random_state=random_state, input_name=input_name,
                            input_sha256=input_sha256, progress=progress, checked=check)
    report, png = report_and_chart(result, roles.sensitive, roles.interest)
    if budget is not None:
        report = state_budget(out.manifest, report, budget, result, table, roles.sensitive)
    return CertifiedRelease(out.table, out.manifest, dict(out.manifest["verdict"]),
                            public_rows(result), report, result, list(out.dropped), png)


def certification_plan(table: FeatureTable, roles: Any, options: EvaluationOptions,
                       guarantee: Any = None) -> Plan:
    """The plan of a certification of ``table`` with these roles and options (from the
    table's shape alone: :func:`bioanon.plan.make_plan`)."""
    return make_plan(table, roles.interest, roles.sensitive, level=options.level,
                     group=options.group, test_size=options.test_size,
                     label_columns=[roles.interest, *weights(roles), *roles.quasi,
                                    *roles.keep],
                     target_recognition=options.target_advantage, guarantee=guarantee,
                     accept=options.accept_risks)


def declared_budget(table: FeatureTable, sensitive: str | None, *, epsilon: float | None,
                    delta: float | None = None, public: Any = None,
                    privacy_unit: str | None = None,
                    max_records_per_identity: int | None = None,
                    public_name: str | None = None) -> DPBudget | None:
    """The checked :class:`~bioanon.certification.dp_budget.DPBudget` (None without
    ``epsilon``).

    The options of a budget without ``epsilon`` are refused: a DP statement is never implied.
    """
    if epsilon is None:
        given = [name for name, v in (("delta", delta), ("public", public),
                                      ("privacy_unit", privacy_unit),
                                      ("max_records_per_identity", max_records_per_identity))
                 if v is not None]
        if given:
            many = len(given) > 1
            raise BioanonError(f"{', '.join(g + '=' for g in given)} "
                               f"{'belong' if many else 'belongs'} to a declared privacy "
                               "budget; add epsilon=E or drop "
                               f"{'them' if many else 'it'}", parameter=(*given, "epsilon"))
        return None
    budget = DPBudget(epsilon=epsilon, delta=delta, privacy_unit=privacy_unit or "record",
                      max_records_per_identity=max_records_per_identity, public=public,
                      public_name=None if public_name is None else Path(public_name).name)
    budget.check(table, sensitive)
    return budget


def certified_release(table: FeatureTable, result: SearchResult, roles: Any, *,
                      keep_sensitive: bool = False, force: bool = False,
                      random_state: int | None = None, input_name: str | None = None,
                      input_sha256: str | None = None,
                      progress: Progress | None = None, checked: Any = None) -> Any:
    """Anonymize the whole table with the certified setting and apply the release policy.

    Refuses (``BioanonError``) when ``result`` is not certified. The release seed is fresh
    (derived one way from ``random_state`` when given, for a reproducible release; OS entropy
    otherwise) and is never written. Returns the :class:`~bioanon.release.ReleaseResult`
    with its manifest marked ``certified`` and holding the confirmation's verdict.
    """
    c = result.candidate
    if not result.certified or c is None:
        raise BioanonError(result.failure_line())
    block = certification_block(result)
    seed = release_seed(random_state)
    additional = list(roles.additional)
    anon = build_candidate(c, roles.interest, roles.sensitive, additional, seed)
    out = release(table, anon, roles, keep_sensitive=keep_sensitive, force=force,
                  method=c.method, input_name=input_name, input_sha256=input_sha256,
                  progress=progress, join_checked=checked)
    out.manifest.pop("note", None)
    out.manifest.update(block)
    return out


__all__ = ["certification_plan", "certified_release", "certify", "declared_budget"]
