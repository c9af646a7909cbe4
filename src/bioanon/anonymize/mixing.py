"""Weighted cluster mixing (AnonFACES 3.4); the machinery it shares with the k-Same family is
in :mod:`.cluster_release`.

Records are clustered into groups of k to 2k−1 (see :mod:`.clustering`); every member of a
cluster is released as the same weighted mean of the members::

    v_C = Σ_i w_i x_i / Σ_i w_i

With equal weights this is k-Same. AnonFACES adds two things, both here:

- randomized weights, uniform in ``w_mean ± delta`` (``w_mean = 1/k``), so the release is not
  a deterministic function of the input;
- the re-identification risk loop: a member whose distance to ``v_C`` is below a threshold is
  at risk; at-risk members' weights are multiplied by ``1 − beta`` and ``v_C`` recomputed,
  until no member is at risk or ``max_rounds`` is reached. The per-cluster re-identification
  rate ``u/k`` (u members at risk) is recorded before and after.

Cluster assignments, weights and the seed are secrets and are never written anywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import BioanonError
from .cluster_release import CLUSTER_PARAMS, ClusterReleaseBase
from .params import Param
from .registration import register

#: the most rounds of the risk loop
MAX_ROUNDS = 1000


@register("cluster-mix", required=("k",))
class ClusterMixAnonymizer(ClusterReleaseBase):
    """Fixed-size clustering with weighted mixing and the re-identification risk loop.

    Parameters
    ----------
    k : int, default 5
        Minimum cluster size; every released vector is shared by k to 2k−1 records.
    clusterer : {"mdav", "kmember", "knn", "hierarchical"}, default "mdav"
    linkage : {"average", "complete", "ward", "single"}, default "ward"
        Linkage of the hierarchical clusterer.
    interest : str, optional
        When given, cluster within each class of this column (as k-Same-Select).
    sensitive : str, optional
        Identity column used only for the data-derived risk threshold.
    n_components : int, optional
        Cluster on the first principal components (eigenface space) instead of the raw
        features; the mixing is always done on the features.
    distinct : str, optional
        Label column (usually the identity) whose values must all differ within a cluster:
        then identity recognition, not only record linkage, is bounded by 1/k (see
        :func:`bioanon.anonymize.clustering.distinct_grouping`; ``clusterer`` is not used).
    delta : float, default 0
        Radius of the random weights, uniform in ``1/k ± delta`` (must be below 1/k).
    risk_threshold : float, "auto" or None, default "auto"
        Distance under which a member is at risk. "auto": the ``threshold_percentile``-th
        percentile of same-identity distances (with ``sensitive``) or of nearest-neighbour
        distances. None turns the risk loop off.
    threshold_percentile : float, default 5
    beta : float, default 0.2
        At-risk members' weights are multiplied by ``1 − beta`` each round.
    max_rounds : int, default 20
    random_state : int or None
        ``None`` draws fresh OS entropy per release. A secret: never published.

    Examples
    --------
    >>> import numpy as np
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=6, records_per_identity=20, n_features=32)
    >>> anon = ClusterMixAnonymizer(k=4, sensitive="identity", random_state=0)
    >>> out = anon.fit_transform(t.X, t.labels)
    >>> int(np.unique(out, axis=0, return_counts=True)[1].min()) >= 4
    True
    """

    params: ClassVar[dict[str, Param]] = {
        **CLUSTER_PARAMS,
        "interest": Param("column", none=True, help="cluster within each class of this column"),
        "sensitive": Param("column", none=True, role="sensitive",
                           help="identity column of the data-derived risk threshold"),
        "delta": Param("float", low=0, help="radius of the random weights, below 1/k"),
        "risk_threshold": Param("float", low=0, options=("auto",), none=True,
                                help="distance under which a member is at risk"),
        "threshold_percentile": Param("float", low=0, high=100,
                                      help="percentile of the auto threshold"),
        "beta": Param("float", low=0, high=1, low_open=True, high_open=True,
                      help="weight cut of at-risk members per round"),
        # bounded: each round is a pass over the table (a typo of a billion rounds ran for
        # hours); past a thousand rounds of beta >= 0.01 an at-risk weight is below 5e-5
        "max_rounds": Param("int", low=0, high=MAX_ROUNDS, help="rounds of the risk loop"),
    }
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"k": 10},)
    protects = "record linkage: every released vector is shared by k to 2k-1 records " \
               "(identity too with distinct=identity)"
    does_not_protect = "identity when a person has several records and distinct is not set; " \
                       "attributes shared by a whole cluster"

    def __init__(self, k: int = 5, clusterer: str = "mdav", linkage: str = "ward",
                 interest: str | None = None, sensitive: str | None = None,
                 n_components: int | None = None, distinct: str | None = None,
                 delta: float = 0.0,
                 risk_threshold: float | str | None = "auto",
                 threshold_percentile: float = 5.0, beta: float = 0.2, max_rounds: int = 20,
                 random_state: int | None = None) -> None:
        self.k = k
        self.clusterer = clusterer
        self.linkage = linkage
        self.interest = interest
        self.sensitive = sensitive
        self.n_components = n_components
        self.distinct = distinct
        self.delta = delta
        self.risk_threshold = risk_threshold
        self.threshold_percentile = threshold_percentile
        self.beta = beta
        self.max_rounds = max_rounds
        self.random_state = random_state

    def _check_relations(self) -> None:
        super()._check_relations()
        if not self.delta < 1.0 / self.k:
            raise BioanonError(f"delta={self.delta} is out of range; use a number in "
                               f"[0, 1/k) = [0, {1 / self.k:.3g}) so every weight stays positive")
