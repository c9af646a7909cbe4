"""The front door: :func:`certify` searches, confirms and releases in one call.

``certify(table, roles)`` is the library behind ``bioanon release``. It chains the three steps
of :mod:`bioanon.tuning.search` a user would otherwise find and chain by hand:

1. :func:`~bioanon.tuning.search.search`: every applicable method's settings judged on a
   tuning split; the most useful setting meeting the target is confirmed on a fresh split with
   a fresh seed;
2. :func:`~bioanon.tuning.search.certified_release`: only if the confirmation meets the target
   too, the whole table is anonymized with a fresh release seed through the release policy
   (:func:`bioanon.release.release`), and the manifest is marked certified;
3. :func:`~bioanon.tuning.search.certified_report`: the confirmation's report plus the search.

It returns a :class:`CertifiedRelease` (the released table, manifest, verdict, search rows;
``.write(path)`` writes what the command line writes) or raises :class:`NotCertified`, which
carries the setting that came closest and what fell short. Not being certified is an outcome,
not a user error: :class:`NotCertified` is no :class:`~bioanon.errors.BioanonError` (the
command line exits 1 for it, 2 for a user error).

Keyword arguments :func:`certify` does not name (further targets of the verdict, evaluation
options) are passed to the search unchanged.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> from bioanon.release import Roles
>>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
>>> try:
...     out = certify(t, Roles(sensitive="identity", interest="expression"),
...                   methods=["noise"], target=0.5, models=["knn"],
...                   attackers="naive,parrot", random_state=0, n_jobs=1)
... except NotCertified as exc:
...     out = exc
>>> isinstance(out, (CertifiedRelease, NotCertified)), len(out.rows)
(True, 2)
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .evaluation.verdict import DEFAULT_TARGET
from .table import FeatureTable

Progress = Callable[[int, int, str], None]

#: the files of ``OUTPUT.report/``
REPORT_FILES = ("report.json", "report.html", "search.png")


def report_dir(output: str | os.PathLike) -> Path:
    """Where the report of the release ``output`` goes: ``OUTPUT.report/``.

    Examples
    --------
    >>> report_dir("out/release.parquet").name
    'release.parquet.report'
    """
    out = Path(output)
    return out.with_name(out.name + ".report")


def public_rows(result: Any) -> list[dict[str, Any]]:
    """The search's rows without their in-process fields (``_params`` may hold objects)."""
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in result.rows]


class NotCertified(Exception):  # noqa: N818 - an outcome, named as the user reads it
    """No setting met the target (on the tuning split, or on its confirmation).

    Not a :class:`~bioanon.errors.BioanonError`: the input was fine, the data and target
    admit no certified release. The message is one line naming the closest setting and what
    fell short.

    Attributes
    ----------
    closest : dict or None
        The search row of the setting that came closest (public parameters only).
    setting : str or None
        Its label, e.g. ``"noise(sigma=1)"``.
    short_of : str
        What fell short (privacy, utility, both, or the confirmation), in words.
    confirmation : dict or None
        The confirmation's verdict when a setting was confirmed and failed.
    rows, skipped, not_evaluated : list
        The search's rows, the settings or methods left out (with reasons), and those the
        budget left unevaluated.
    search : SearchResult
    """

    def __init__(self, result: Any) -> None:
        near, why = result.closest()
        self.closest: dict[str, Any] | None = (
            None if near is None else {k: v for k, v in near.items() if not k.startswith("_")})
        self.setting: str | None = None if near is None else near["setting"]
        self.short_of: str = why
        self.confirmation: dict[str, Any] | None = (
            None if result.confirmation is None else dict(result.confirmation["verdict"]))
        self.rows = public_rows(result)
        self.skipped = list(result.skipped)
        self.not_evaluated = list(result.not_evaluated)
        self.search = result
        super().__init__(result.failure_line())


@dataclass
class CertifiedRelease:
    """A certified release: the table, its manifest and report, the verdict and the search.

    Attributes
    ----------
    table : FeatureTable
        The released table (shuffled; only the columns with a released role).
    manifest : dict
        ``certified: true``, the verdict, the method and public parameters, every column's
        role, the search's summary. No seed.
    verdict : dict
        The confirmation's verdict (``met``, ``sentence``, the figures it judged).
    rows : list of dict
        One row per evaluated setting (public parameters only).
    report : Report
        The confirmation's report with the search (``report.json``'s content).
    search : SearchResult
    dropped : list of str
        Label columns left out of the release.
    """

    table: FeatureTable
    manifest: dict[str, Any]
    verdict: dict[str, Any]
    rows: list[dict[str, Any]]
    report: Any
    search: Any
    dropped: list[str] = field(default_factory=list)
    search_png: bytes = field(default=b"", repr=False)

    @property
    def setting(self) -> str:
        """The certified setting's label, e.g. ``selective-mean(g=32, t=0.8)``."""
        return str(self.manifest["certification"]["search"]["chosen"])

    def write(self, path: str | os.PathLike) -> tuple[Path, Path, Path]:
        """Write ``PATH``, ``PATH.manifest.json`` and ``PATH.report/`` (as ``bioanon release``)
        as one unit (:func:`bioanon.release_unit.write_unit`): replaced together or not at
        all, the manifest naming the table's and the report's hashes appearing last.
        Returns the three paths.
        """
        from .release import write_release

        out = Path(path)
        table, man = write_release(self.table, self.manifest, out,
                                   report=lambda d: write_report(self.report, self.search_png,
                                                                 d))
        return table, man, report_dir(out)


def write_report(report: Any, search_png: bytes, folder: Path) -> None:
    """Write ``report.json``, ``report.html`` and ``search.png`` into ``folder``."""
    from .io import atomic_path

    folder.mkdir(parents=True, exist_ok=True)
    report.write(folder)
    with atomic_path(folder / "search.png") as tmp:
        Path(tmp).write_bytes(search_png)


def report_and_chart(result: Any, sensitive: str, interest: str) -> tuple[Any, bytes]:
    """The certified report (confirmation + search) and the search chart as PNG bytes."""
    import matplotlib.pyplot as plt

    from .tuning.search import certified_report

    report, fig = certified_report(result, sensitive, interest)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return report, buf.getvalue()


def weights(roles: Any) -> dict[str, float]:
    """The additional attributes' weights alpha (1.0 each when ``roles`` lists names only)."""
    add = roles.additional
    if isinstance(add, Mapping):
        return {str(k): float(v) for k, v in add.items()}
    return {str(c): 1.0 for c in add}


def run_search(table: FeatureTable, roles: Any, *, methods: Sequence[str] | None,
               target: float, random_state: int | None, budget_minutes: float | None,
               models: Any, attackers: Any, group: str | None, n_jobs: int | None,
               decoupler: Any = None, progress: Progress | None = None,
               judge_as: Callable[[Any], Any] | None = None, **judge: Any) -> Any:
    """Run the search for ``roles`` (the released labels are the roles' released ones)."""
    from .errors import BioanonError
    from .tuning.search import search

    if not roles.interest:
        raise BioanonError("a certified release needs the attribute of interest; pass "
                           "interest= in Roles (--interest COL)")
    add = weights(roles)
    released_labels = [roles.interest, *add, *roles.quasi, *roles.keep]
    return search(table, roles.interest, roles.sensitive, add, target_advantage=target,
                  methods=methods, budget_minutes=budget_minutes, progress=progress,
                  random_state=random_state, models=models, attackers=attackers, group=group,
                  decoupler=decoupler, released_labels=released_labels, n_jobs=n_jobs,
                  judge_as=judge_as, **judge)


def certify(table: FeatureTable, roles: Any, *, methods: Sequence[str] | None = None,
            target: float = DEFAULT_TARGET, random_state: int | None = None,
            budget_minutes: float | None = 10.0, models: Any = "forest,linear_svm,knn",
            attackers: Any = "all", group: str | None = None, keep_sensitive: bool = False,
            force: bool = False, n_jobs: int | None = -1, decoupler: Any = None,
            input_name: str | None = None, input_sha256: str | None = None,
            progress: Progress | None = None, epsilon: float | None = None,
            delta: float | None = None, public: Any = None, privacy_unit: str | None = None,
            max_records_per_identity: int | None = None, public_name: str | None = None,
            **judge: Any) -> CertifiedRelease:
    """Search methods and settings, certify one against the privacy target, and release.

    Parameters
    ----------
    table : FeatureTable
    roles : bioanon.release.Roles
        Every label column's role (interest required; ``additional`` may map columns to
        their weights alpha). Label columns without a role are dropped from the release.
    methods : sequence of str, optional
        Methods to search (default: every registered method that applies to the table).
    target : float
        The recognition target: the upper 95% bound of the cross-fitted worst attack's
        advantage over max(chance, control) must not exceed it (default 0.05).
    random_state : int, optional
        Makes the search and the release reproducible; a secret key, never written (the
        evaluation and release seeds derive from it one way). None: fresh OS entropy.
    budget_minutes : float or None
        Stop evaluating settings after this long (the confirmation follows).
    models, attackers, group, n_jobs
        The attack panel (see :class:`~bioanon.evaluation.Evaluation`).
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
        strict (:mod:`bioanon.tuning.budget`). Every risk of the certificate must still be
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
    **judge
        Passed to the search unchanged (further targets of the verdict).

    Returns
    -------
    CertifiedRelease

    Raises
    ------
    NotCertified
        When no setting meets the target (nothing is released).
    BioanonError
        On bad input (a role naming no column, a refused join check, an unknown method).
    """
    from .release import join_check, resolve_roles
    from .tuning.search import certified_release

    roles.of()  # one role per column, before any work
    for column in (roles.sensitive, roles.interest, *roles.additional):
        if column is not None:
            table.label(column)  # an empty or single-class label refused before the search
    budget = dp_budget(table, roles.sensitive, epsilon=epsilon, delta=delta, public=public,
                       privacy_unit=privacy_unit,
                       max_records_per_identity=max_records_per_identity,
                       public_name=public_name)
    join_check(table.labels, resolve_roles(table.labels.columns, roles, keep_sensitive),
               roles.sensitive, force=force)  # a refusal costs no search
    if budget is not None:
        budget.candidates(table, methods, roles.sensitive)  # a refusal costs no search
        judge["budget"] = budget
    result = run_search(table, roles, methods=methods, target=target,
                        random_state=random_state, budget_minutes=budget_minutes,
                        models=models, attackers=attackers, group=group, n_jobs=n_jobs,
                        decoupler=decoupler, progress=progress, **judge)
    if not result.certified:
        raise NotCertified(result)
    out = certified_release(table, result, roles, keep_sensitive=keep_sensitive, force=force,
                            random_state=random_state, input_name=input_name,
                            input_sha256=input_sha256, progress=progress)
    report, png = report_and_chart(result, roles.sensitive, roles.interest)
    if budget is not None:
        report = state_budget(out.manifest, report, budget, result, table, roles.sensitive)
    return CertifiedRelease(out.table, out.manifest, dict(out.manifest["verdict"]),
                            public_rows(result), report, result, list(out.dropped), png)


def dp_budget(table: FeatureTable, sensitive: str | None, *, epsilon: float | None,
              delta: float | None = None, public: Any = None, privacy_unit: str | None = None,
              max_records_per_identity: int | None = None, public_name: str | None = None
              ) -> Any:
    """The checked :class:`~bioanon.tuning.budget.DPBudget` (None without ``epsilon``).

    The options of a budget without ``epsilon`` are refused: a DP statement is never implied.
    """
    from .errors import BioanonError
    from .tuning.budget import DPBudget

    if epsilon is None:
        given = [flag for flag, v in (("--delta", delta), ("--public-data", public),
                                      ("--privacy-unit", privacy_unit),
                                      ("--max-records-per-identity", max_records_per_identity))
                 if v is not None]
        if given:
            many = len(given) > 1
            raise BioanonError(f"{', '.join(given)} {'belong' if many else 'belongs'} to a "
                               "declared privacy budget; add --epsilon E (library: epsilon=) "
                               f"or drop {'them' if many else 'it'}")
        return None
    budget = DPBudget(epsilon=epsilon, delta=delta, privacy_unit=privacy_unit or "record",
                      max_records_per_identity=max_records_per_identity, public=public,
                      public_name=None if public_name is None else Path(public_name).name)
    budget.check(table, sensitive)
    return budget


def state_budget(manifest: dict[str, Any], report: Any, budget: Any, result: Any,
                 table: FeatureTable, sensitive: str | None) -> Any:
    """Write the budget's statement (ε, δ, unit, strict or not) into the manifest and the
    report; the parameters taken from public data read ``public`` (their values are not
    written). Returns the report with the statement."""
    from .report import Report

    statement = budget.statement(table, sensitive)
    manifest["differential_privacy"] = statement
    chosen = result.candidate
    params = manifest.get("params", {})
    for key in (chosen.hidden if chosen is not None else {}):
        params[key] = "public (from the public table; values not written)"
    return Report({**report.to_dict(), "differential_privacy": statement},
                  getattr(report, "figures", {}))


__all__ = ["REPORT_FILES", "CertifiedRelease", "NotCertified", "certify", "dp_budget",
           "public_rows", "report_and_chart", "report_dir", "run_search", "state_budget",
           "weights", "write_report"]
