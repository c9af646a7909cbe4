"""The control attacker: guesses the sensitive value from the released label columns alone.

A release carries useful labels on purpose (the interest, additional attributes, kept
columns). An attacker who reads only those already beats chance when they narrow the
candidates (gender halves them). The control attacker is the best label-only guess learnt on
the training split: for each combination of released label values, the commonest sensitive
value among training records with that combination (the commonest overall when the
combination was never seen). The stronger of chance and this control is the floor every
privacy figure is compared with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..metrics.results import Rate


def _keys(labels: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """One string per record joining its values of ``columns`` (whole-column operations: a
    join per record took seconds on 50,000 records); a missing value reads ``nan``.

    >>> keys = _keys(pd.DataFrame({"a": [1, 2], "b": ["x", None]}), ["a", "b"])
    >>> [k.replace(chr(31), "|") for k in keys]
    ['1|x', '2|nan']
    """
    if not columns:
        return pd.Series(["∅"] * len(labels), index=labels.index)
    parts = labels[list(columns)].astype(str).fillna("nan")
    out = parts[columns[0]]
    for c in columns[1:]:  # a loop over the columns, not the records
        out = out + "\x1f" + parts[c]
    return out


def control_predict(train_labels: pd.DataFrame, y_train: np.ndarray,
                    test_labels: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Label-only predictions of the sensitive value of each test record.

    Ties between equally common values are broken by the sorted value (deterministic).

    Examples
    --------
    >>> tr = pd.DataFrame({"g": ["m", "m", "f", "f"]})
    >>> control_predict(tr, np.array(["a", "a", "b", "c"]), pd.DataFrame({"g": ["m", "f"]}),
    ...                 ["g"]).tolist()
    ['a', 'b']
    """
    y_train = np.asarray(y_train).astype(str)
    df = pd.DataFrame({"key": _keys(train_labels, columns).to_numpy(), "y": y_train})
    counts = df.groupby(["key", "y"]).size().reset_index(name="n")
    counts = counts.sort_values(["key", "n", "y"], ascending=[True, False, True])
    best = counts.drop_duplicates("key").set_index("key")["y"]
    overall = pd.Series(y_train).value_counts()
    fallback = sorted(overall.index[overall == overall.max()])[0]
    keys = _keys(test_labels, columns).to_numpy()
    return best.reindex(keys).fillna(fallback).to_numpy().astype(str)


def control_rate(train_labels: pd.DataFrame, y_train: np.ndarray,
                 test_labels: pd.DataFrame, y_test: np.ndarray,
                 columns: Sequence[str]) -> Rate:
    """Accuracy (with its Wilson interval) of the control attacker on the test records."""
    pred = control_predict(train_labels, y_train, test_labels, columns)
    hits = int(np.sum(pred == np.asarray(y_test).astype(str)))
    return Rate.from_counts(hits, len(pred))
