"""k-nearest neighbours that asks for no more neighbours than it was fitted on.

scikit-learn's ``KNeighborsClassifier(n_neighbors=5)`` fitted on fewer than 5 records fails
when it predicts ("Expected n_neighbors <= n_samples_fit"): on a small table, a fold of the
consumer's cross-validation (8 training records, 2 folds) made ``bioanon evaluate`` an
internal error. :class:`CappedKNeighbors` votes among all the records it holds then, as a
k-NN of that many neighbours would; with 5 or more records it is scikit-learn's, unchanged.
"""

from __future__ import annotations

from typing import Any

from sklearn.neighbors import KNeighborsClassifier


class CappedKNeighbors(KNeighborsClassifier):
    """``KNeighborsClassifier`` whose default neighbour count is capped at the records it
    was fitted on.

    >>> import numpy as np
    >>> knn = CappedKNeighbors(n_neighbors=5).fit(np.arange(3.0)[:, None], [0, 1, 1])
    >>> knn.predict([[2.0]]).tolist(), knn.kneighbors([[2.0]])[1].shape
    ([1], (1, 3))
    """

    def kneighbors(self, X: Any = None, n_neighbors: int | None = None,
                   return_distance: bool = True) -> Any:
        if n_neighbors is None:  # a query of the training records leaves each one out
            n_neighbors = min(self.n_neighbors, self.n_samples_fit_ - (X is None))
        return super().kneighbors(X, n_neighbors, return_distance)
