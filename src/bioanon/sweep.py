"""Parameter sweeps: evaluate a method over a grid, keep the Pareto front, recommend a setting.

Every setting is judged by the same protocol as :func:`bioanon.evaluation.evaluate`: privacy is
the **worst case** over the attack panel (never the naive attacker alone) and utility is
U = P + Σ alpha_i Q_i. The recommended setting is the one with the highest utility among those
whose worst-case advantage over chance stays within the owner's target.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from .errors import BioanonError, suggest
from .evaluation import evaluate
from .metrics.pareto import pareto_front
from .table import FeatureTable

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"target_advantage": self.target_advantage, "chance": self.chance,
                "rows": self.rows, "pareto_front": self.front,
                "recommended": None if self.recommended is None
                else self.rows[self.recommended], "skipped": self.skipped}


def parse_grid(items: Sequence[str]) -> dict[str, list[Any]]:
    """Parse ``KEY=V1,V2,...`` items; values become int, float or str.

    Examples
    --------
    >>> parse_grid(["g=16,32", "t=0.8", "relevance=forest", "include_self=true,false"])
    {'g': [16, 32], 't': [0.8], 'relevance': ['forest'], 'include_self': [True, False]}
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not key or not sep or not raw:
            raise BioanonError(f"--grid '{item}' must look like KEY=V1,V2 (e.g. g=16,32,64)")
        grid[key.strip()] = [_value(v.strip()) for v in raw.split(",") if v.strip()]
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
          target_advantage: float = 0.1, progress: Progress | None = None,
          **evaluate_kwargs: Any) -> SweepResult:
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
        Largest acceptable worst-case advantage over chance, (acc − chance)/(1 − chance).
    progress : callable (done, total, description), optional
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
    if not 0.0 <= target_advantage <= 1.0:
        raise BioanonError(f"target advantage {target_advantage} must lie in [0, 1]")
    known = anonymizer.get_params(deep=True)  # nested keys (method__g) for compositions
    for key in grid:
        if key not in known:
            raise BioanonError(f"{type(anonymizer).__name__} has no parameter '{key}'"
                               f"{suggest(key, known)}; it has {', '.join(sorted(known))}")
        if not grid[key]:
            raise BioanonError(f"--grid {key} has no values")
    points = list(ParameterGrid({k: list(v) for k, v in grid.items()}))
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    chance = None
    for i, point in enumerate(points):
        if progress is not None:
            progress(i, len(points), ", ".join(f"{k}={v}" for k, v in point.items()))
        try:
            report = evaluate(table, interest, sensitive, additional=additional,
                              anonymizer=clone(anonymizer).set_params(**point),
                              **evaluate_kwargs)
        except BioanonError as exc:
            skipped.append({"params": point, "reason": str(exc)})
            continue
        p, u = report["privacy"], report["utility"]
        chance = p["chance"]
        worst = p["worst_case"]
        rows.append({
            "params": point, "U": u["U"], "U_clear": u["U_clear"],
            "interest_anonymized": u["interest"]["anonymized"],
            "worst_case": worst["accuracy"], "worst_attacker": f"{worst['mode']} / "
                                                               f"{worst['model']}",
            "advantage": (worst["accuracy"] - chance) / (1 - chance) if chance < 1 else 0.0,
        })
    if progress is not None:
        progress(len(points), len(points), "done")
    if not rows:
        first = skipped[0]["reason"] if skipped else "empty grid"
        raise BioanonError(f"no setting of the grid could be evaluated (first: {first})")
    front = [int(j) for j in pareto_front([1 - r["worst_case"] for r in rows],
                                          [r["U"] for r in rows])]
    ok = [j for j, r in enumerate(rows) if r["advantage"] <= target_advantage]
    recommended = (max(ok, key=lambda j: (rows[j]["U"], -rows[j]["worst_case"]))
                   if ok else None)
    return SweepResult(rows, front, recommended, target_advantage, chance, skipped)


def sweep_figure(result: SweepResult, sensitive: str) -> Any:
    """Scatter of worst-case attack accuracy against utility, with the front and the target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    acc = np.array([r["worst_case"] for r in result.rows])
    util = np.array([r["U"] for r in result.rows])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter(acc, util, color="#999999", label="setting")
    front = sorted(result.front, key=lambda j: acc[j])
    ax.plot(acc[front], util[front], "o-", color="#d9534f", label="Pareto front")
    if result.chance is not None:
        ax.axvline(result.chance, color="black", linestyle="--", linewidth=1, label="chance")
        limit = result.chance + result.target_advantage * (1 - result.chance)
        ax.axvline(limit, color="#5cb85c", linestyle=":", linewidth=1.5,
                   label=f"target (advantage ≤ {result.target_advantage:g})")
    if result.recommended is not None:
        j = result.recommended
        ax.scatter([acc[j]], [util[j]], s=160, facecolors="none", edgecolors="#337ab7",
                   linewidths=2, label="recommended")
    ax.set_xlabel(f"worst-case attack accuracy on '{sensitive}' (lower is better)")
    ax.set_ylabel("utility U (higher is better)")
    ax.set_title("Privacy–utility sweep")
    ax.legend(fontsize=8)
    return fig
