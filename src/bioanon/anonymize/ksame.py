"""k-Same and k-Same-Select (Gross, Airoldi, Malin & Sweeney 2005, Alg. 4.1 and 4.2).

k-Same replaces each group of k similar records by their average, so any recognizer links a
released record to the right one of the k originals at most once: re-identification ≤ 1/k on
a person-specific set (one record per person). k-Same-Select first partitions the records by
the utility attribute (the interest column) and runs k-Same inside each part, so the average
keeps that attribute. Both work in any feature space: pixels, eigenfaces (``n_components``
clusters on principal components), embeddings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .cluster_release import CLUSTER_PARAMS, ClusterReleaseBase
from .params import Param
from .registration import register

_PROTECTS = "record linkage: each released vector is the mean of k to 2k-1 records, so a " \
            "recognizer links it to the right one at most 1/k of the time"
_NOT = "identity when a person has several records (unless distinct=identity); attributes " \
       "shared by the whole group"


@register("ksame", required=("k",))
class KSameAnonymizer(ClusterReleaseBase):
    """k-Same: groups of k to 2k−1 similar records, each released as the group's mean.

    Parameters
    ----------
    k : int, default 5
    clusterer : {"knn", "mdav", "kmember", "hierarchical"}, default "knn"
        ``"knn"`` is the paper's grouping (first remaining record and its k−1 nearest).
    linkage : str, default "ward"
        Linkage of the hierarchical clusterer.
    n_components : int, optional
        Group on the first principal components instead of the raw features.
    distinct : str, optional
        Label column (usually the identity) whose values must all differ within a group, so
        that identity recognition, not only record linkage, stays at most 1/k when a person
        has several records (``clusterer`` is then not used).
    random_state : int or None
        Seeds the clusterers that draw (k-member, PCA). Never published.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.], [1.], [10.], [11.]])
    >>> KSameAnonymizer(k=2).fit_transform(X).ravel().tolist()
    [0.5, 0.5, 10.5, 10.5]
    """

    params: ClassVar[dict[str, Param]] = CLUSTER_PARAMS
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"k": 10},)
    protects = _PROTECTS
    does_not_protect = _NOT

    def __init__(self, k: int = 5, clusterer: str = "knn", linkage: str = "ward",
                 n_components: int | None = None, distinct: str | None = None,
                 random_state: int | None = None) -> None:
        self.k = k
        self.clusterer = clusterer
        self.linkage = linkage
        self.n_components = n_components
        self.distinct = distinct
        self.random_state = random_state


@register("ksame-select", required=("interest", "k"))
class KSameSelectAnonymizer(KSameAnonymizer):
    """k-Same-Select: k-Same within each class of the utility (interest) attribute.

    Every interest class needs at least k records (otherwise a clear error says which).

    Parameters
    ----------
    interest : str
        Label column of the utility attribute (e.g. expression).
    k, clusterer, linkage, n_components, distinct, random_state
        As :class:`KSameAnonymizer`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> lab = pd.DataFrame({"smile": ["y", "n", "y", "n"]})
    >>> KSameSelectAnonymizer("smile", k=2).fit_transform(X, lab).ravel().tolist()
    [1.0, 2.0, 1.0, 2.0]
    """

    params: ClassVar[dict[str, Param]] = {
        "interest": Param("column", role="interest", help="k-Same within each class of it"),
        **CLUSTER_PARAMS}
    search_space: ClassVar[tuple[dict[str, Any], ...]] = ({"k": 5}, {"k": 10})
    needs_labels = True
    protects = _PROTECTS
    does_not_protect = _NOT

    def __init__(self, interest: str = "interest", k: int = 5, clusterer: str = "knn",
                 linkage: str = "ward", n_components: int | None = None,
                 distinct: str | None = None, random_state: int | None = None) -> None:
        self.interest = interest
        super().__init__(k=k, clusterer=clusterer, linkage=linkage, n_components=n_components,
                         distinct=distinct, random_state=random_state)
