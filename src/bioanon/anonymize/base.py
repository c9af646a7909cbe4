"""Shared plumbing for anonymizers: label access and publishable parameters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError, missing_column
from ..table import FeatureTable, as_feature_matrix


def split_input(X: Any, labels: Any) -> tuple[np.ndarray, Any]:
    """Accept a FeatureTable or an array plus labels; return (checked array, labels)."""
    if isinstance(X, FeatureTable):
        return X.X, X.labels if labels is None else labels
    return as_feature_matrix(X), labels


def label_values(labels: Any, column: str, n: int) -> np.ndarray:
    """One label column as an array, checked for presence, length and empty values.

    ``labels`` may be a DataFrame, a mapping of arrays, or a bare array standing for
    ``column``.
    """
    if labels is None:
        raise BioanonError(f"labels are required: pass a DataFrame with column '{column}'")
    if isinstance(labels, pd.DataFrame):
        if column not in labels.columns:
            raise missing_column(column, labels.columns)
        values = labels[column].to_numpy()
    elif isinstance(labels, Mapping):
        if column not in labels:
            raise missing_column(column, list(labels))
        values = np.asarray(labels[column])
    else:
        values = np.asarray(labels)
    if values.shape[0] != n:
        raise BioanonError(
            f"label column '{column}' has {values.shape[0]} values for {n} records; "
            "pass one label per record"
        )
    if pd.isna(values).any():
        raise BioanonError(f"label column '{column}' has empty values; fill or drop them")
    return values


class AnonymizerMixin:
    """Mixin for bioanon anonymizers (scikit-learn estimators).

    ``fit_on_auxiliary``: when True, the evaluation fits the anonymizer once on the training
    split and transforms the release with it; when False (the default), each split is
    anonymized on its own, as the data owner would do with the data to release.
    """

    fit_on_auxiliary = False

    def public_params(self) -> dict[str, Any]:
        """Parameters safe to publish: everything but the random state, as plain values."""
        params = self.get_params(deep=False)  # type: ignore[attr-defined]
        params.pop("random_state", None)
        return {k: (v if v is None or isinstance(v, str | int | float | bool | list | dict)
                    else type(v).__name__) for k, v in params.items()}
