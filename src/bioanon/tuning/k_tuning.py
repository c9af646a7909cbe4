"""Tuning k of the k-anonymity methods (AnonFACES 3.5 and 4.4).

For each k the records are clustered into groups of k..2k−1 and released as group means;
the sweep records the information loss, the re-identification rates and (optionally) the
share of attribute-homogeneous clusters, then recommends the k where the loss curve flattens
(the knee: the point furthest above the chord joining the first and last points, after
scaling both axes to [0, 1], as in Kneedle).

Nothing here writes files: the command line saves the figures this module builds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..anonymize.cluster_release import cluster_means, pairwise_percentile
from ..anonymize.clustering import CLUSTERERS, LINKAGES, fixed_size_clusters
from ..errors import BioanonError
from ..metrics.disclosure import homogeneity
from ..progress import stages

Progress = Callable[[int, int, str], None]


def knee(x: Sequence[float], y: Sequence[float]) -> int:
    """Index of the knee of an increasing, flattening curve (Kneedle on scaled axes).

    Examples
    --------
    >>> knee([1, 2, 3, 4, 5, 6], [0, 5, 8, 9, 9.5, 10])
    2
    """
    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.size < 3 or np.ptp(ya) == 0:
        return 0
    xn = (xa - xa.min()) / np.ptp(xa)
    yn = (ya - ya.min()) / np.ptp(ya)
    return int(np.argmax(yn - xn))


@dataclass
class KTuning:
    """Result of :func:`tune_k`: one entry per k, plus the recommendation."""

    ks: list[int]
    information_loss: list[float]
    record_linkage: list[float]
    at_risk: list[float]
    identity_rank1: list[float] | None
    homogeneity: dict[str, list[float]]
    recommended_k: int
    clusterer: str
    threshold: float | None
    n_records: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON (no cluster assignments: they are secrets)."""
        return {
            "n_records": self.n_records, "clusterer": self.clusterer, "ks": self.ks,
            "information_loss": self.information_loss,
            "record_linkage_rate": self.record_linkage,
            "bound_1_over_k": [1.0 / k for k in self.ks],
            "at_risk_rate": self.at_risk, "risk_threshold": self.threshold,
            "identity_rank1_naive": self.identity_rank1,
            "homogeneity": self.homogeneity, "recommended_k": self.recommended_k,
            "attackers": {
                "record_linkage_rate": "nearest clear record to each released vector "
                                       "(Euclidean); a hit when it is the record itself",
                "identity_rank1_naive": "nearest clear record to each released vector; a hit "
                                        "when its identity is the record's identity",
                "at_risk_rate": "share of records closer to their released vector than the "
                                "risk threshold",
            },
            "notes": self.notes,
        }

    def summary(self) -> dict[str, Any]:
        """The headline figures: the terminal table, ``tune-k --json`` and ``tune-k.json``'s
        ``summary``. Keys: ``clusterer``, ``n_records``, ``recommended_k``, ``per_k`` (one
        entry per k: ``k``, ``information_loss``, ``record_linkage_rate``,
        ``bound_1_over_k``, ``at_risk_rate``, ``identity_rank1_naive``, and each rate's
        95% Wilson interval over the records, ``record_linkage_ci``, ``at_risk_ci``,
        ``identity_rank1_ci``: None where the rate is not measured), ``notes``."""
        from ..metrics.intervals import rate_interval

        def ci(rate: float | None) -> list[float] | None:
            got = rate_interval(rate, self.n_records)
            return None if got is None else [float(got[0]), float(got[1])]

        per_k = [{"k": k, "information_loss": self.information_loss[i],
                  "record_linkage_rate": self.record_linkage[i], "bound_1_over_k": 1.0 / k,
                  "at_risk_rate": self.at_risk[i],
                  "identity_rank1_naive": None if self.identity_rank1 is None
                  else self.identity_rank1[i],
                  "record_linkage_ci": ci(self.record_linkage[i]),
                  "at_risk_ci": ci(self.at_risk[i]),
                  "identity_rank1_ci": None if self.identity_rank1 is None
                  else ci(self.identity_rank1[i])} for i, k in enumerate(self.ks)]
        return {"clusterer": self.clusterer, "n_records": self.n_records,
                "recommended_k": self.recommended_k, "per_k": per_k, "notes": self.notes}

    def rows(self) -> list[tuple[str, ...]]:
        """One printable row per k (from :meth:`summary`)."""
        from ..metrics.intervals import rate_words as rate

        out: list[tuple[str, ...]] = []
        for r in self.summary()["per_k"]:
            out.append((str(r["k"]), f"{r['information_loss']:.4g}",
                        rate(r["record_linkage_rate"], r["record_linkage_ci"]),
                        f"{r['bound_1_over_k']:.3f}",
                        rate(r["at_risk_rate"], r["at_risk_ci"]),
                        rate(r["identity_rank1_naive"], r["identity_rank1_ci"])))
        return out


def _k_values(ks: Sequence[int], n: int) -> list[int]:
    """The distinct k values, sorted; a range's bounds are checked before it is listed (a
    largest k of a billion once built a billion-element set and ran out of memory; one past
    2**63 was Python's OverflowError from ``len``: a range's truth does not count it)."""
    if isinstance(ks, range) and ks and max(ks[0], ks[-1]) > n:
        raise BioanonError(f"k={max(ks[0], ks[-1])} exceeds the {n} records; lower the "
                           f"largest k to at most {n}")
    values = sorted({int(k) for k in ks})
    if not values or values[0] < 2:
        raise BioanonError("k values must be at least 2; e.g. ks=range(2, 21)")
    if values[-1] > n:
        raise BioanonError(f"k={values[-1]} exceeds the {n} records; lower the largest k to "
                           f"at most {n}")
    return values


def tune_k(X: np.ndarray, ks: Sequence[int] = range(2, 21), clusterer: str = "mdav",
           linkage: str = "ward", identity: np.ndarray | None = None,
           attributes: pd.DataFrame | None = None,
           attribute_sets: Sequence[Sequence[str]] = (),
           risk_threshold: float | str | None = "auto", threshold_percentile: float = 5.0,
           random_state: int = 0, progress: Progress | None = None) -> KTuning:
    """Sweep k: information loss, re-identification rates and homogeneity per k.

    Parameters
    ----------
    X : array (n, d)
    ks : the k values to try (each at least 2 and at most n)
    clusterer, linkage : see :func:`bioanon.anonymize.fixed_size_clusters`
    identity : array (n,), optional
        Identity of each record: enables the identity rank-1 attacker and the
        same-identity risk threshold.
    attributes : DataFrame, optional
        Attributes whose cluster homogeneity (entropy 0) is tracked per k.
    attribute_sets : sets of attribute columns tracked jointly
    risk_threshold : float, "auto" or None
        Distance under which a record counts as at risk (see
        :class:`bioanon.anonymize.ClusterMixAnonymizer`).
    random_state : int

    Returns
    -------
    KTuning
    """
    progress = stages(progress, "tuning k", "bioanon.tune")
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    ks = _k_values(ks, n)
    if clusterer not in CLUSTERERS:
        raise BioanonError(f"clusterer '{clusterer}' is unknown; choose from "
                           f"{', '.join(CLUSTERERS)}")
    if linkage not in LINKAGES:
        raise BioanonError(f"linkage '{linkage}' is unknown; choose from {', '.join(LINKAGES)}")
    if attributes is not None and attributes.columns.duplicated().any():
        twice = sorted({str(c) for c in attributes.columns[attributes.columns.duplicated()]})
        raise BioanonError(f"attributes name {twice} more than once; name each column once")
    rng = np.random.default_rng(random_state)
    if risk_threshold == "auto":
        thr: float | None = pairwise_percentile(X, identity, threshold_percentile, rng)
    else:
        thr = None if risk_threshold is None else float(risk_threshold)
    xsq = np.einsum("ij,ij->i", X, X)
    loss, link, risk, ident = [], [], [], []
    homo: dict[str, list[float]] = {}
    for i, k in enumerate(ks):  # one step per k
        if progress is not None:
            progress(i, len(ks), f"k={k}")
        labels = fixed_size_clusters(X, k, clusterer, linkage, random_state)
        means = cluster_means(X, labels)
        released = means[labels]
        dist = np.linalg.norm(X - released, axis=1)
        loss.append(float(dist.mean()))
        risk.append(float("nan") if thr is None else float(np.mean(dist < thr)))
        # nearest clear record to each distinct released vector (one per cluster)
        D = xsq[None, :] - 2.0 * means @ X.T
        nearest = np.argmin(D, axis=1)[labels]
        link.append(float(np.mean(nearest == np.arange(n))))
        if identity is not None:
            ident.append(float(np.mean(np.asarray(identity)[nearest] == np.asarray(identity))))
        if attributes is not None:
            for name, v in homogeneity(labels, attributes,
                                       attribute_sets=attribute_sets).items():
                homo.setdefault(name, []).append(v)
    if progress is not None:
        progress(len(ks), len(ks), "done")
    notes = []
    if identity is not None and len(np.unique(identity)) < n:
        notes.append("several records per identity: k-anonymity bounds record linkage by 1/k, "
                     "not identity recognition, since a cluster may hold one person twice")
    return KTuning(ks, loss, link, risk, ident if identity is not None else None, homo,
                   ks[knee(ks, loss)], clusterer, thr, n, notes)


def tuning_figure(result: KTuning) -> Any:
    """Figure: information loss per k (recommended k marked) and re-identification per k."""
    from ..report.charts import new_figure

    fig = new_figure(figsize=(10, 4))
    a, b = fig.subplots(1, 2)
    a.plot(result.ks, result.information_loss, "o-")
    a.axvline(result.recommended_k, color="tab:red", ls="--",
              label=f"recommended k={result.recommended_k}")
    a.set_xlabel("k")
    a.set_ylabel("information loss (mean distance)")
    a.legend()
    b.plot(result.ks, result.record_linkage, "o-", label="record linkage (nearest record)")
    if result.identity_rank1 is not None:
        b.plot(result.ks, result.identity_rank1, "s-", label="identity rank-1 (naive)")
    if not np.all(np.isnan(result.at_risk)):
        b.plot(result.ks, result.at_risk, "^-", label="at risk (under threshold)")
    b.plot(result.ks, [1.0 / k for k in result.ks], "k:", label="1/k")
    b.set_xlabel("k")
    b.set_ylabel("rate")
    b.set_ylim(0, 1.05)
    b.legend(fontsize=8)
    fig.suptitle(f"tuning k ({result.clusterer}, {result.n_records} records)")
    fig.tight_layout()
    return fig


def dendrogram_figure(X: np.ndarray, linkage: str = "ward", max_records: int = 500) -> Any:
    """Dendrogram of a small dataset, to read good k bounds off its cuts (AnonFACES 4.4)."""
    from scipy.cluster.hierarchy import dendrogram
    from scipy.cluster.hierarchy import linkage as scipy_linkage

    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] > max_records:
        raise BioanonError(f"a dendrogram of {X.shape[0]} records is unreadable; it is drawn "
                           f"for at most {max_records}")
    from ..report.charts import new_figure

    fig = new_figure(figsize=(10, 4))
    ax = fig.subplots()
    dendrogram(scipy_linkage(X, method=linkage), ax=ax, no_labels=True,
               color_threshold=None)
    ax.set_xlabel("records")
    ax.set_ylabel(f"{linkage} linkage distance")
    fig.tight_layout()
    return fig
