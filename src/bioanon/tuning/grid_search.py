"""Parameter sweeps: evaluate a method over a grid, keep the Pareto front, recommend a setting.

Every setting is judged by the same protocol as :func:`bioanon.evaluation.evaluate` and the same
rule as its verdict (:func:`bioanon.evaluation.verdict`): privacy is the **worst case** over the
attack panel (never the naive attacker alone), and a setting meets the target when the upper end
of the 95% interval of its advantage over max(chance, control) is at most ``target_advantage``.
The recommended setting is the one with the highest CAS among those that meet it; it is then
re-evaluated on a fresh split and seed (:func:`bioanon.certification.search.confirm`) and
both figures are reported.

A sweep tunes the recognition risk only (``met`` is the recognition rule; membership and
inference are not run by default, so ``met_all_risks`` is then False): it recommends, it does
not certify. ``bioanon release`` (:func:`bioanon.certification.search.search`) certifies, and judges
every risk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from ..certification.search import confirm
from ..errors import BioanonError, suggest
from ..evaluation import verdict
from ..evaluation.options import check_option
from ..metrics.pareto import pareto_front
from ..progress import stages
from ..report.build import evaluate
from ..table import FeatureTable

Progress = Callable[[int, int, str], None]


@dataclass
class SweepResult:
    """Rows of a sweep (one per setting), its Pareto front and the recommendation."""

    rows: list[dict[str, Any]]
    front: list[int]
    recommended: int | None
    target_advantage: float
    chance: float | None
    skipped: list[dict[str, Any]] = field(default_factory=list)
    baseline: float | None = None
    confirmation: dict[str, Any] | None = None
    #: what ranked the points (:func:`~bioanon.certification.search.ranking.ranking_options`:
    #: ``ranks_by`` and the clear records' cross-validated accuracies), None when the user
    #: named the consumer panel's mode
    ranking: dict[str, Any] | None = None

    def ranked_by(self) -> str:
        """Which consumer the points' CAS is: the ranking panel's pick or the forest (the
        search's tuning split ranks its settings the same way).

        >>> SweepResult([], [], None, 0.05, None).ranked_by()
        'the utility model'
        >>> SweepResult([], [], None, 0.05, None, ranking={"ranks_by": "forest panel"}
        ...             ).ranked_by()  # doctest: +NORMALIZE_WHITESPACE
        "a forest or a linear consumer: the consumer's pick among a forest of half the
        consumer's trees, shrunk LDA and logistic regression (3-fold on the release, the
        forest out of bag; the linear consumers alone fall short on clear records)"
        """
        by = (self.ranking or {}).get("ranks_by")
        if by == "ranking panel":
            return ("the consumer's pick between shrunk LDA and logistic regression (3-fold "
                    "on the release; the ranking panel)")
        if by == "forest panel":
            why = ("the panel asked for" if (self.ranking or {}).get("asked")
                   else "the linear consumers alone fall short on clear records")
            return ("a forest or a linear consumer: the consumer's pick among a forest of "
                    "half the consumer's trees, shrunk LDA and logistic regression (3-fold on "
                    f"the release, the forest out of bag; {why})")
        return "the utility model"

    def summary(self, method: str | None = None) -> dict[str, Any]:
        """The headline figures: the terminal table, ``tune --json`` and ``tune.json``'s
        ``summary`` (figures and settings only; no seed).

        Keys: ``method``, ``chance``, ``baseline``, ``target_advantage``, ``settings`` (one
        per setting: ``params``, ``cas``, ``cas_ci``, ``worst_case``, ``worst_case_ci``,
        ``worst_attacker``, ``advantage``, ``advantage_ci``, ``met``, ``front``,
        ``recommended``), ``recommended`` (its params or None), ``skipped``, ``confirmation``
        (``met`` and ``sentence`` of the re-evaluation, or None).
        """
        keys = ("params", "cas", "cas_ci", "worst_case", "worst_case_ci", "worst_attacker",
                "advantage", "advantage_ci", "met")
        settings = [{**{k: row.get(k) for k in keys}, "front": j in self.front,
                     "recommended": j == self.recommended} for j, row in enumerate(self.rows)]
        c = self.confirmation
        return {"method": method, "chance": self.chance, "baseline": self.baseline,
                "target_advantage": self.target_advantage, "cas_by": self.ranked_by(),
                "settings": settings,
                "recommended": None if self.recommended is None
                else self.rows[self.recommended]["params"],
                "skipped": self.skipped,
                "confirmation": None if c is None else {k: c.get(k) for k in ("met",
                                                                             "sentence")}}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"target_advantage": self.target_advantage, "chance": self.chance,
                "rows": self.rows, "pareto_front": self.front,
                "recommended": None if self.recommended is None
                else self.rows[self.recommended], "skipped": self.skipped,
                "baseline": self.baseline, "confirmation": self.confirmation,
                "cas_by": self.ranked_by(), "ranking": self.ranking,
                "rule": "met when the upper 95% bound of worst − max(chance, control) <= "
                        "target_advantage; recommended: the highest CAS among those met, "
                        "confirmed on a fresh split and seed"}


def parse_grid(items: Sequence[str], method: Any = None) -> dict[str, list[Any]]:
    """Parse ``KEY=V1,V2,...`` items.

    With ``method`` (an anonymizer class), each value is converted and checked by the
    parameter's declared constraint (one ``BioanonError`` line naming the range); a
    composition instance (``vp-mix+leace``) routes ``KEY`` to its method (``method__KEY``) and
    ``leace.KEY`` to its post-step; without, values become bool, int, float or str.

    Examples
    --------
    >>> parse_grid(["g=16,32", "t=0.8", "relevance=forest", "include_self=true,false"])
    {'g': [16, 32], 't': [0.8], 'relevance': ['forest'], 'include_self': [True, False]}
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not key or not sep or not raw:
            raise BioanonError(f"grid='{item}' must look like KEY=V1,V2 (e.g. g=16,32,64)",
                               parameter="grid")
        key = key.strip()
        if any(not v.strip() for v in raw.split(",")):  # 'g=8,,16' or 'g=8,': a value lost
            raise BioanonError(f"grid='{item}' has an empty value (two commas in a row, or "
                               "one at an end); give each value once, e.g. g=8,16",
                               parameter="grid")
        if method is not None and not isinstance(method, type) and hasattr(method,
                                                                             "parse_param"):
            pairs = [method.parse_param(key, v) for v in raw.split(",")]
            grid[pairs[0][0] if pairs else key] = [v for _, v in pairs]
            continue
        if method is not None and hasattr(method, "params"):
            from ..anonymize.registry import parse_value

            values = [parse_value(method, key, v) for v in raw.split(",")]
        else:
            values = [_value(v.strip()) for v in raw.split(",")]
        grid[key] = values
    return grid


def _value(raw: str) -> Any:
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def sweep(table: FeatureTable, anonymizer: Any, grid: Mapping[str, Sequence[Any]],
          interest: str, sensitive: str, additional: Mapping[str, float] | None = None,
          target_advantage: float = 0.05, progress: Progress | None = None,
          confirm_best: bool = True, **evaluate_kwargs: Any) -> SweepResult:
    """Evaluate ``anonymizer`` at every point of ``grid``.

    Parameters
    ----------
    table : FeatureTable
    anonymizer : estimator
        The base method; each setting is ``clone(anonymizer).set_params(**point)``.
    grid : mapping {parameter: values}
        Parameter names of the anonymizer (e.g. ``{"g": [16, 32], "r_p": [0.01, 0.1]}``).
    interest, sensitive, additional
        As for :func:`bioanon.evaluation.evaluate`.
    target_advantage : float
        The verdict's target: the upper 95% bound of the worst attack's advantage over
        max(chance, control) must be at most this (default 0.05).
    progress : callable (done, total, description), optional
    confirm_best : bool
        Re-evaluate the recommended setting on a fresh split and seed (``confirmation``).
    **evaluate_kwargs
        Passed to :func:`~bioanon.evaluation.evaluate` (models, attackers, random_state, ...).

    Returns
    -------
    SweepResult
        A setting the data cannot support (e.g. a class too small for g) is listed in
        ``skipped`` with the reason instead of stopping the sweep.

    Examples
    --------
    >>> from bioanon.anonymize import SelectiveMeanAnonymizer
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=30, n_features=32)
    >>> res = sweep(t, SelectiveMeanAnonymizer("expression", r_p=0.1), {"g": [4, 8]},
    ...             "expression", "identity", models=["knn"], attackers=["naive", "parrot"])
    >>> len(res.rows)
    2
    """
    check_option("target_advantage", target_advantage)
    known = anonymizer.get_params(deep=True)  # nested keys (method__g) for compositions
    for key in grid:
        if key not in known:
            raise BioanonError(f"{type(anonymizer).__name__} has no parameter '{key}'"
                               f"{suggest(key, known)}; it has {', '.join(sorted(known))}")
        if not grid[key]:
            raise BioanonError(f"grid[{key!r}] has no values; give it at least one")
    # a role's column with an empty or missing value is refused before any setting runs,
    # not once per setting and then as "no setting of the grid could be evaluated"
    for col in (interest, sensitive, evaluate_kwargs.get("group"), *(additional or {})):
        if col is not None:
            table.label(str(col), target=col == interest or col in (additional or {}))
    points = list(ParameterGrid({k: list(v) for k, v in grid.items()}))
    progress = stages(progress, "sweeping", "bioanon.sweep")
    for point in points:  # refuse a bad setting before any work
        check = getattr(clone(anonymizer).set_params(**point), "check_params", None)
        if check is not None:
            check()
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    chance = baseline = None
    evaluate_kwargs.setdefault("membership", False)  # the verdict needs the panel only
    evaluate_kwargs.setdefault("verification", False)
    points_kwargs, ranking = _points_options(table, interest, evaluate_kwargs)
    for i, point in enumerate(points):
        if progress is not None:
            progress(i, len(points), ", ".join(f"{k}={v}" for k, v in point.items()))
        try:
            report = evaluate(table, interest, sensitive, additional=additional,
                              anonymizer=clone(anonymizer).set_params(**point),
                              progress=progress.nested(progress.stage or ""),
                              **points_kwargs)
        except BioanonError as exc:
            skipped.append({"params": point, "reason": str(exc),
                            **({"parameter": exc.parameter} if exc.parameter else {})})
            continue
        p, u = report["privacy"], report["utility"]
        chance, baseline = p["chance"], p["baseline"]["value"]
        worst = p["worst_case"]
        v = verdict(report, target_advantage)
        rows.append({
            "params": point, "U": u["U"], "U_clear": u["U_clear"],
            "cas": u["cas"]["value"], "cas_ci": u["cas"].get("ci"),
            "cas_clear": u["interest"]["clear"],
            "interest_anonymized": u["interest"]["anonymized"],
            "worst_case": worst["accuracy"], "worst_case_ci": worst.get("ci"),
            "worst_attacker": f"{worst['mode']} / "
                                                               f"{worst['model']}",
            "advantage": v.advantage, "advantage_ci": list(v.advantage_ci),
            "control": v.control, "met": v.recognition_met, "met_all_risks": v.met,
        })
    if progress is not None:
        progress(len(points), len(points), "done")
    if not rows:
        first = skipped[0]["reason"] if skipped else "empty grid"
        raise BioanonError(f"no setting of the grid could be evaluated (first: {first})",
                           parameter=skipped[0].get("parameter") if skipped else None)
    front = [int(j) for j in pareto_front([1 - r["worst_case"] for r in rows],
                                          [r["U"] for r in rows])]
    ok = [j for j, r in enumerate(rows) if r["met"]]
    recommended = (max(ok, key=lambda j: (rows[j]["cas"], -rows[j]["worst_case"]))
                   if ok else None)
    confirmation = None
    if recommended is not None and confirm_best:
        if progress is not None:
            progress(len(points), len(points), "confirming on a fresh split and seed")
        confirmation = confirm(table, clone(anonymizer).set_params(**rows[recommended]["params"]),
                               interest, sensitive, additional, target_advantage,
                               random_state=evaluate_kwargs.pop("random_state", 0),
                               **evaluate_kwargs)
    return SweepResult(rows, front, recommended, target_advantage, chance, skipped, baseline,
                       confirmation, ranking)


def _points_options(table: FeatureTable, interest: str, evaluate_kwargs: dict[str, Any]
                    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The evaluation keywords of a sweep's points, and what the ranking check measured: the
    points rank as a search's tuning split ranks its settings — under ``final`` (the
    default) by the ranking panel where the linear consumers learn the interest on clear
    records, else by the pick among the forest and them
    (:func:`~bioanon.certification.search.ranking.ranking_options`); ``ranking`` ranks every
    point by the ranking panel and ``forest-ranking`` by the pick among the forest of half the
    trees and the linear consumers, with no check (the confirmation then judges by the same
    panel); ``always`` runs the whole panel on every point, ``off`` none.

    The other utility views of a point take the model whose fits that panel makes (LDA, or
    the forest of half the trees), as the tuning split's do, unless one of the user's own
    was given.

    >>> _points_options(None, "y", {"consumer_panel": "ranking"})[0]["utility_model"]
    'lda'
    >>> opts, why = _points_options(None, "y", {"consumer_panel": "forest-ranking"})
    >>> opts["utility_model"], why
    ('ranking_forest', {'ranks_by': 'forest panel', 'asked': True})
    """
    panel = evaluate_kwargs.get("consumer_panel", "final")
    if panel in ("ranking", "forest-ranking"):  # as asked, on every point
        from ..evaluation.panel_modes import RANKING_FOREST, RANKING_VIEW_MODEL

        view = evaluate_kwargs.get("utility_model", "forest")
        if view == "forest":
            view = RANKING_VIEW_MODEL if panel == "ranking" else RANKING_FOREST
        by = "ranking panel" if panel == "ranking" else "forest panel"
        return {**evaluate_kwargs, "utility_model": view}, {"ranks_by": by, "asked": True}
    if panel != "final":
        return {**evaluate_kwargs,
                "consumer_panel": "always" if panel == "always" else "off"}, None
    from ..certification.search.ranking import ranking_options
    from ..evaluation.options import EvaluationOptions

    opts, ranking = ranking_options(
        table, interest, EvaluationOptions.of(
            consumer_panel="final",
            utility_model=evaluate_kwargs.get("utility_model", "forest")),
        _seed_of(evaluate_kwargs.get("random_state")))
    return {**evaluate_kwargs, "consumer_panel": opts.consumer_panel,
            "utility_model": opts.utility_model}, ranking


def _seed_of(random_state: Any) -> int:
    """The ranking check's seed: the sweep's seed when it is a number, else 0.

    >>> _seed_of(7), _seed_of(None)
    (7, 0)
    """
    return int(random_state) if isinstance(random_state, (int, np.integer)) else 0


def setting_label(params: Mapping[str, Any]) -> str:
    """Short text of one setting for a chart (``g=16, r_p=0.1``)."""
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def sweep_figure(result: SweepResult, sensitive: str) -> Any:
    """Worst-case attack accuracy against utility, every point labelled with its setting.

    The axes show the whole meaningful range, not a zoom on the points: accuracy from 0 to
    1, utility from 0 to the clear data's utility (and above any point), so that settings
    that differ by 0.001 look as close as they are.
    """
    from ..report.charts import new_figure

    acc = np.array([r["worst_case"] for r in result.rows])
    util = np.array([r["U"] for r in result.rows])
    u_clear = max((r.get("U_clear", 0.0) for r in result.rows), default=0.0)
    fig = new_figure(figsize=(7.2, 4.6))
    ax = fig.subplots()
    raw_cis = [r.get("worst_case_ci") for r in result.rows]
    if all(c is not None for c in raw_cis):  # the worst attack's 95% interval, horizontally
        cis: list[Any] = [c for c in raw_cis if c is not None]
        ax.errorbar(acc, util, xerr=[[a - c[0] for a, c in zip(acc, cis, strict=True)],
                                     [c[1] - a for a, c in zip(acc, cis, strict=True)]],
                    fmt="none", ecolor="#bbbbbb", elinewidth=1, capsize=2, zorder=2,
                    label="95% CI of the worst attack")
    ax.scatter(acc, util, color="#999999", label="setting", zorder=3)
    front = sorted(result.front, key=lambda j: acc[j])
    ax.plot(acc[front], util[front], "o-", color="#d9534f", label="Pareto front", zorder=4)
    # each point carries its number; the key beside the chart names the setting (numbers
    # of settings at the same place are joined: "3,4")
    y_top = 1.05 * max(1.0, u_clear, float(util.max()) if len(util) else 0.0)
    spots: list[tuple[float, float, list[str]]] = []
    for j in range(len(result.rows)):
        for x, y, nums in spots:  # points closer than 3% of either axis share a label
            if abs(x - acc[j]) < 0.03 and abs(y - util[j]) < 0.03 * y_top:
                nums.append(str(j + 1))
                break
        else:
            spots.append((float(acc[j]), float(util[j]), [str(j + 1)]))
    for x, y, nums in spots:
        ax.annotate(",".join(nums), (x, y), fontsize=8, xytext=(4, 4),
                    textcoords="offset points", color="#333333")
    key = "\n".join(f"{j + 1}: {setting_label(r['params'])}" for j, r in enumerate(result.rows))
    ax.text(1.03, 0.0, "settings\n" + key, transform=ax.transAxes, fontsize=7, va="bottom",
            ha="left", family="monospace")
    if u_clear:
        ax.axhline(u_clear, color="#5cb85c", linestyle="-.", linewidth=1,
                   label=f"clear data (U = {u_clear:.3f})")
    if result.chance is not None:
        ax.axvline(result.chance, color="black", linestyle="--", linewidth=1, label="chance")
        base = result.baseline if result.baseline is not None else result.chance
        limit = base + result.target_advantage
        ax.axvline(limit, color="#5cb85c", linestyle=":", linewidth=1.5,
                   label=f"target (max(chance, control) + {result.target_advantage:g})")
    if result.recommended is not None:
        j = result.recommended
        ax.scatter([acc[j]], [util[j]], s=160, facecolors="none", edgecolors="#337ab7",
                   linewidths=2, label="recommended", zorder=5)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, y_top)
    ax.set_xlabel(f"worst-case attack accuracy on '{sensitive}' (lower is better)")
    ax.set_ylabel("utility U (higher is better)")
    ax.set_title("Privacy–utility sweep")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    fig.tight_layout()
    return fig
