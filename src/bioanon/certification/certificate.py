"""The certificate, written once for every release path (in memory, bucketed, streamed).

The result types (:class:`CertifiedRelease`, one for the three paths, and
:class:`NotCertified`), the manifest's certification block (:func:`certification_block`),
the release seed (:func:`release_seed`), the report of a certified release
(:func:`certified_report`, the confirmation's report plus the search and its chart) and
where the report goes (:func:`report_dir`)."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BioanonError
from ..evaluation.seeds import derive_seed
from ..io import atomic_path, refuse_folder_name
from ..release import write_release
from ..release_unit import write_unit
from ..table import FeatureTable
from .chart import figure_html, search_figure
from .deciding import FIGURES_OF, deciding
from .tradeoff import public as public_table

if TYPE_CHECKING:
    from .search import SearchResult

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

    def __init__(self, result: Any, sensitive: str | None = None,
                 interest: str | None = None) -> None:
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
        #: what decided the refusal (:func:`.deciding.deciding`): the split, the risk, its
        #: value and 95% interval against its target; None when no setting was judged
        self.deciding: dict[str, Any] | None = _public_deciding(deciding(result))
        #: the trade-off a refusal names, as data (:func:`.tradeoff.refusal_facts` and the
        #: line): None when no setting was judged
        self.refusal: dict[str, Any] | None = None
        if any(r.get("clear_useful", True) for r in result.rows):
            from .tradeoff import refusal_facts, tradeoff_line

            table = result.tradeoff or result.tradeoff_table()
            self.refusal = {**refusal_facts(table, result.rows),
                            "line": tradeoff_line(table, result.rows, result.min_utility),
                            "deciding": self.deciding}
        #: the report of what fell short, once :meth:`write_report` wrote it
        self.report: Any = None
        self._roles = (sensitive, interest)
        line = result.refusal_line()
        if self.deciding is not None and result.cut_short() is None:  # the figure first
            line = f"{self.deciding['text']}; {line}"
        super().__init__(line)

    def report_and_chart(self) -> tuple[Any, bytes]:
        """The report of what fell short (the failed confirmation, or the closest setting
        on the tuning split that decided) and the search chart as PNG bytes.
        Raises BioanonError when the search judged no setting on a fresh split."""
        sensitive, interest = self._roles
        return report_and_chart(self.search, str(sensitive), str(interest))

    def write_report(self, path: str | os.PathLike) -> Path | None:
        """Write the report of what fell short, marked NOT certified and naming the setting,
        as a release unit without table and manifest
        (:func:`bioanon.release_unit.write_unit`): to ``PATH.report/``, or to
        ``PATH.refused-report/`` when a release is at ``path`` already (it stays until a new
        one replaces it).

        Returns the report's folder, or None when no setting was judged on a fresh split
        (nothing to report; nothing is written then).
        """
        try:
            report, png = self.report_and_chart()
        except BioanonError:
            return None
        outcome = {"certified": False, "written": False, "setting": self.setting,
                   "short_of": self.short_of, "reason": str(self),
                   "note": "NOT certified: this is the report of the setting that came "
                           "closest; no table and no manifest were written"}
        report = report.amended(lambda data: data.update(release=outcome))
        unit = write_unit(path, table=None, manifest=None,
                          report=lambda folder: write_report(report, png, folder))
        self.report = report
        return unit.report


@dataclass
class CertifiedRelease:
    """A certified release, whichever path made it: the certificate (manifest, verdict,
    report, search) and what was released.

    In memory (:func:`bioanon.certify`) the released table is returned and
    :meth:`write` writes it; on dask (``certify_parquet``, ``certify_streamed``) the release
    is already written at ``output`` and the table stays on disk.

    Attributes
    ----------
    manifest : dict
        ``certified: true``, the verdict, the method and public parameters, every column's
        role, the search's summary (and on dask the sample's and table's sizes and the
        rule the judge evaluated). No seed.
    verdict : dict
        The confirmation's verdict (``met``, ``sentence``, the figures it judged).
    rows : list of dict
        One row per evaluated setting (public parameters only).
    report : Report
        The confirmation's report with the search (``report.json``'s content).
    search : SearchResult
    table : FeatureTable or None
        In memory: the released table (shuffled; only the columns with a released role).
    dropped : list of str
        Label columns left out of the release.
    search_png : bytes
        The search chart.
    output : Path or None
        On dask: the folder of Parquet parts written (``OUTPUT.manifest.json`` and
        ``OUTPUT.report/`` beside it).
    sample : dict or None
        On dask: the panel sample's and the table's sizes (no indices).
    written : BucketedResult or StreamedResult or None
        On dask: the release's sizes (records, parts or buckets, passes).
    """

    manifest: dict[str, Any]
    verdict: dict[str, Any]
    rows: list[dict[str, Any]]
    report: Any
    search: Any
    table: FeatureTable | None = None
    dropped: list[str] = field(default_factory=list)
    search_png: bytes = field(default=b"", repr=False)
    output: Path | None = None
    sample: dict[str, Any] | None = None
    written: Any = None

    @property
    def setting(self) -> str:
        """The certified setting's label, e.g. ``selective-mean(g=32, t=0.8)``."""
        return str(self.manifest["certification"]["search"]["chosen"])

    @property
    def skipped(self) -> list[dict[str, Any]]:
        """The settings or methods left out of the search, each with its reason."""
        return list(self.search.skipped)

    @property
    def n_records(self) -> int:
        """Records released."""
        if self.table is not None:
            return int(self.table.n_records)
        return int(self.manifest["output"]["n_records"])

    def write(self, path: str | os.PathLike) -> tuple[Path, Path, Path]:
        """Write ``PATH``, ``PATH.manifest.json`` and ``PATH.report/`` (as ``bioanon release``)
        as one unit (:func:`bioanon.release_unit.write_unit`): replaced together or not at
        all, the manifest naming the table's and the report's hashes appearing last.
        Returns the three paths. In memory only: a dask release is written already.
        """
        if self.table is None:
            raise BioanonError(f"this release is written already, at '{self.output}'")
        refuse_folder_name(path)  # before the report is amended with the name
        out = Path(path)
        outcome = {"certified": True, "written": True, "setting": self.setting,
                   "table": out.name, "manifest": out.name + ".manifest.json",
                   "n_records": self.table.n_records}
        report = self.report.amended(lambda data: data.update(release=outcome))
        table, man = write_release(self.table, self.manifest, out,
                                   report=lambda d: write_report(report, self.search_png, d))
        return table, man, report_dir(out)


def release_seed(random_state: int | None) -> int | None:
    """The seed of a certified release: derived one way from the user's ``random_state``
    (a reproducible release; never written), or None for fresh OS entropy."""
    return None if random_state is None else derive_seed(int(random_state), "release") % 2**32


def certification_block(result: SearchResult, **judged: Any) -> dict[str, Any]:
    """The manifest's certification fields of a certified search: ``certified``, the
    confirmation's ``verdict``, the ``accepted_risks`` and ``certification`` (the choice rule,
    the search's summary, and ``judged`` — e.g. the panel sample and bucket rule of the
    Parquet path)."""
    c = result.candidate
    if not result.certified or c is None:
        raise BioanonError(result.failure_line())
    return {"certified": True,
            "verdict": dict(result.confirmation["verdict"]),
            "accepted_risks": dict(result.accept_risks),
            "certification": {
                "rule": result.rule(),
                "min_utility": result.min_utility,
                "search": {"settings_evaluated": len(result.rows), "chosen": c.label(),
                           "wall_s": round(result.wall_s, 1)},
                # what was judged: a second run of the same command can be checked against it
                "evaluation": dict(getattr(result, "judged", {}) or {}),
                **judged}}


def certified_report(result: SearchResult, sensitive: str, interest: str) -> tuple[Any, Any]:
    """The release's report (the confirmation's, plus the search) and the search figure.

    When nothing met every target and the search kept the closest setting's report
    (``report_closest=True``), that report is used: it says which risk fell short."""
    conf = result.confirmation if result.confirmation is not None else result.closest_report
    if conf is None:
        raise BioanonError(result.failure_line())
    fig = search_figure(result, sensitive, interest)

    def add(data: dict[str, Any]) -> None:
        # report.json opens with the plan and the setting it judged, then the rest
        plan = result.plan.to_dict() if getattr(result, "plan", None) is not None else None
        chosen = result.candidate
        near, _ = result.closest() if chosen is None else (None, "")
        setting = {"setting": chosen.label() if chosen is not None else
                   (near or {}).get("setting"), "certified": bool(result.certified),
                   "judged": "the confirmation (a fresh split)" if chosen is not None else
                   "the closest setting on the tuning split (NOT certified)"}
        rest = dict(data)
        data.clear()
        decided = None if result.certified else _public_deciding(deciding(result))
        data.update({"plan": plan, "setting": setting,
                     **({"deciding": decided} if decided is not None else {}),
                     "tradeoff": public_table(getattr(result, "tradeoff", None) or []),
                     **rest, "search": result.to_dict()})
        if decided is not None and data.get("verdict"):
            refused_verdict(data["verdict"], decided)
        data.pop("summary", None)  # drawn again from what was added (plan, setting, deciding)

    report = conf.amended(add, {"Search: CAS against each risk":
                                figure_html(fig, "search Pareto chart")})
    return report, fig


def _public_deciding(d: dict[str, Any] | None) -> dict[str, Any] | None:
    """The deciding object as written (a copy; nothing in it is secret)."""
    if d is None:
        return None
    return {**d, "figures_of": FIGURES_OF.get(d["split"], "the closest setting"),
            "risks": [dict(r) for r in d.get("risks") or []]}


def refused_verdict(verdict: dict[str, Any], decided: dict[str, Any]) -> None:
    """The verdict of a refused run's report, in place: ``refused`` (what decided and what the
    report's figures are) and a sentence that opens with NOT certified and the deciding
    figure. The figures below may all pass (the closest setting short of margin only, or a
    confirmation below the utility floor): they are labelled as such, never said to be
    within their targets. ``met`` is the run's verdict, False; whether the figures below
    pass on their own is ``figures_pass``, and ``risk_sentence`` says it in those words."""
    figures_of = str(decided.get("figures_of") or FIGURES_OF.get(decided["split"], ""))
    verdict["refused"] = {"decided": decided["text"], "split": decided["split"],
                          "figures_of": figures_of}
    lead = str(verdict.get("risk_sentence") or "")
    sentence = str(verdict.get("sentence") or "")
    rest = sentence[len(lead):].strip() if lead and sentence.startswith(lead) else ""
    own = lead
    passing = bool(verdict.get("met"))
    if passing:
        own = ("its risks pass; its utility fell short (above)."
               if str(decided.get("risk", "")).startswith("utility") else
               "on their own they would pass, but they did not decide.")
    verdict["met"], verdict["figures_pass"] = False, passing
    verdict["risk_sentence"] = f"The figures below are {figures_of}: {own}"
    verdict["sentence"] = (f"NOT certified — {decided['text']}. {verdict['risk_sentence']}"
                           + (f" {rest}" if rest else ""))


def write_report(report: Any, search_png: bytes, folder: Path) -> None:
    """Write ``report.json``, ``report.html`` and ``search.png`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    report.write(folder)
    with atomic_path(folder / "search.png") as tmp:
        Path(tmp).write_bytes(search_png)


def report_and_chart(result: Any, sensitive: str, interest: str) -> tuple[Any, bytes]:
    """The certified report (confirmation + search) and the search chart as PNG bytes."""
    report, fig = certified_report(result, sensitive, interest)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")  # a figure outside pyplot
    return report, buf.getvalue()


def state_budget(manifest: dict[str, Any], report: Any, budget: Any, result: Any,
                 table: FeatureTable, sensitive: str | None) -> Any:
    """Write the budget's statement (ε, δ, unit, strict or not) into the manifest and the
    report; the parameters taken from public data read ``public`` (their values are not
    written). Returns the report with the statement."""
    chosen = result.candidate
    statement = budget.statement(table, sensitive, None if chosen is None else chosen.method)
    manifest["differential_privacy"] = statement
    params = manifest.get("params", {})
    for key in (chosen.hidden if chosen is not None else {}):
        params[key] = "public (from the public table; values not written)"
    return report.amended(lambda data: data.update(differential_privacy=statement))


__all__ = ["REPORT_FILES", "CertifiedRelease", "NotCertified", "certification_block",
           "certified_report", "public_rows", "refused_verdict", "release_seed",
           "report_and_chart", "report_dir", "state_budget", "write_report"]
