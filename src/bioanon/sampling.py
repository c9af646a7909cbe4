"""A bounded, stratified sample of identities and records for tables too large to judge whole.

The evaluation panel (and relevance fitting) costs grow faster than linearly with the number of
records. :func:`panel_sample` picks at most ``max_identities`` identities at random and, within
each, at most an equal share of ``max_records`` records by systematic sampling over the records
sorted by the stratum label (the interest value), so every identity keeps its classes in
proportion. The returned :class:`PanelSample` says what was sampled (sizes only, no indices)
for the report or manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import BioanonError, missing_column


@dataclass(frozen=True)
class PanelSample:
    """Rows chosen for the panel and the sizes to report.

    Attributes
    ----------
    index : int64 array
        Positions of the sampled records in the table, sorted (a private detail: not for reports).
    n_records, n_identities : int
        Sample sizes.
    total_records, total_identities : int
        Sizes of the whole table.
    """

    index: np.ndarray
    n_records: int
    n_identities: int
    total_records: int
    total_identities: int

    @property
    def sampled(self) -> bool:
        """True when the sample is smaller than the table."""
        return self.n_records < self.total_records

    def describe(self) -> dict[str, Any]:
        """Sizes for a report or manifest (no indices)."""
        return {"sampled": self.sampled, "n_records": self.n_records,
                "n_identities": self.n_identities, "total_records": self.total_records,
                "total_identities": self.total_identities}


def stratified_positions(strata: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` positions drawn by systematic sampling over the records sorted by stratum.

    Each stratum receives ``floor`` or ``ceil`` of its proportional share. Returns sorted int64.
    """
    n = strata.shape[0]
    if size >= n:
        return np.arange(n)
    perm = rng.permutation(n)
    order = perm[np.argsort(strata[perm], kind="stable")]
    picks = np.floor((np.arange(size) + rng.random()) * (n / size)).astype(np.int64)
    return np.sort(order[np.minimum(picks, n - 1)])


def panel_sample(labels: pd.DataFrame, sensitive: str | None = None,
                 stratify: str | None = None, max_records: int = 50_000,
                 max_identities: int | None = 1_000,
                 random_state: int | np.random.Generator | None = None) -> PanelSample:
    """Draw a stratified sample of identities and records, bounded in size.

    Parameters
    ----------
    labels : DataFrame
        The table's label columns.
    sensitive : str, optional
        Identity column: identities are sampled first (at most ``max_identities``), then
        records within each identity (an equal share of ``max_records`` each, at least 2).
        Without it, records are sampled directly.
    stratify : str, optional
        Column whose classes keep their proportions (the interest), within each identity.
    max_records : int
        Upper bound on the sample's records.
    max_identities : int or None
        Upper bound on the sample's identities (None: no bound).
    random_state : int, Generator or None

    Returns
    -------
    PanelSample

    Examples
    --------
    >>> import pandas as pd
    >>> lab = pd.DataFrame({"id": np.repeat(np.arange(50), 40),
    ...                     "p": np.tile([0, 1, 1, 1], 500)})
    >>> s = panel_sample(lab, "id", "p", max_records=400, max_identities=20, random_state=0)
    >>> (s.n_identities, s.n_records, s.sampled)
    (20, 400, True)
    """
    if int(max_records) != max_records or max_records < 2:
        raise BioanonError(f"max_records={max_records} must be an integer of at least 2")
    if max_identities is not None and (int(max_identities) != max_identities
                                       or max_identities < 1):
        raise BioanonError(f"max_identities={max_identities} must be a positive integer")
    for col in (sensitive, stratify):
        if col is not None and col not in labels.columns:
            raise missing_column(col, labels.columns)
    rng = np.random.default_rng(random_state)
    n = len(labels)
    strata = (pd.factorize(labels[stratify])[0] if stratify is not None
              else np.zeros(n, dtype=np.int64))
    if sensitive is None:
        index = stratified_positions(strata, int(max_records), rng)
        return PanelSample(index, int(index.size), 0, n, 0)
    ids = pd.factorize(labels[sensitive])[0]
    n_ids = int(ids.max()) + 1 if n else 0
    keep_ids = np.arange(n_ids)
    if max_identities is not None and n_ids > max_identities:
        keep_ids = np.sort(rng.choice(n_ids, int(max_identities), replace=False))
    chosen = np.isin(ids, keep_ids)
    rows = np.flatnonzero(chosen)
    share = max(2, int(max_records) // max(1, keep_ids.size))
    # records of the chosen identities, grouped by identity then stratum (shuffled within)
    perm = rows[rng.permutation(rows.size)]
    order = perm[np.lexsort((strata[perm], ids[perm]))]
    gid = ids[order]
    starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
    sizes = np.diff(np.r_[starts, gid.size])
    take = np.minimum(sizes, share)
    # systematic sampling inside each identity: positions floor((j + u) · size / take)
    owner = np.repeat(np.arange(starts.size), take)
    j = np.arange(take.sum()) - np.repeat(np.cumsum(take) - take, take)
    u = rng.random(starts.size)
    pos = np.floor((j + u[owner]) * sizes[owner] / take[owner]).astype(np.int64)
    index = np.sort(order[starts[owner] + np.minimum(pos, sizes[owner] - 1)])
    return PanelSample(index, int(index.size), int(keep_ids.size), n, n_ids)
