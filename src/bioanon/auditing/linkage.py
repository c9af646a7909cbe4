"""Pseudonyms named: the attacker links each released code to a person by their clear records.

A release that replaces its people's names with codes (pseudonyms in the sensitive column, a
subject code, a file name whose first part is a code; :func:`bioanon.attack.pooled.link_keys`)
still tells which released records are one person's. The threat model gives the attacker clear
records of the people, with their names. Where HOLDOUT holds records of INPUT's people (the
audit's split by record, :func:`~.inputs.split_holdout`), the attacker takes HOLDOUT's
reference half as those records, pools the release by each code (the mean of its records, in
the release's standardized units) and names each code by the reference person whose mean
record is nearest (one code per person, by the assignment of least total distance, where there
are no more codes than people; else each code its nearest person). The release, its records
labelled with the names so read, trains the audit's recognizers, which probe HOLDOUT's other
half: recognition of a pseudonymised release, measured as of a release that carries names.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..attack.pooled import link_keys, linked_means, nearest_rows
from .inputs import AuditTables, HoldoutSplit

#: codes × people above which each code is named by its nearest person alone (the
#: assignment's cost grows with the cube of the side)
MAX_ASSIGNED = 4_000_000


@dataclass(frozen=True)
class Linkage:
    """One way the release links its records, and the names the attacker reads into it.

    Attributes
    ----------
    key : str
        The linking key in words (``"'subject'"``, ``"'file', part 1"``).
    names : (m,) str array
        Each released record's person as the attacker names it (its code's person).
    """

    key: str
    names: np.ndarray


def linking_keys(tables: AuditTables) -> list[tuple[str, np.ndarray]]:
    """The keys by which RELEASED links its records (the sensitive column's values where it
    carries it, then each linking column's, :func:`~bioanon.attack.pooled.link_keys`)."""
    r = tables.released.labels
    cols = [*([tables.sensitive] if tables.released_has_sensitive else []), *tables.linking]
    return [kv for c in dict.fromkeys(cols) if c in r.columns
            for kv in link_keys(c, r[c].to_numpy(str))]


def linkage_probes(tables: AuditTables, split: HoldoutSplit) -> np.ndarray:
    """HOLDOUT's rows the linked recognizers probe: the candidate half's records of INPUT's
    people, where HOLDOUT was split by record and RELEASED links its records (else none)."""
    if split.by != "record" or not linking_keys(tables):
        return np.zeros(0, np.int64)
    s = tables.sensitive
    ids = tables.holdout.labels[s].to_numpy(str)
    members = np.unique(tables.members.labels[s].to_numpy(str))
    rows = np.asarray(split.candidates, np.int64)
    return rows[np.isin(ids[rows], members)]


def _assign(codes: np.ndarray, people: np.ndarray) -> np.ndarray:
    """Each code's person (rows of ``codes`` and ``people``: mean records): the assignment of
    least total squared distance where there are no more codes than people (and the size
    allows, :data:`MAX_ASSIGNED`), else each code's nearest person.

    >>> people = np.array([[0.0], [1.0], [9.0]])
    >>> _assign(np.array([[1.0], [0.9]]), people).tolist()  # both nearest the second
    [1, 0]
    >>> _assign(np.array([[1.0], [0.9], [0.2], [8.0]]), people).tolist()  # more codes
    [1, 1, 0, 2]
    """
    from scipy.optimize import linear_sum_assignment

    n, k = len(codes), len(people)
    if n > k or n * k > MAX_ASSIGNED:
        return nearest_rows(codes, people)
    cost = ((codes * codes).sum(1)[:, None] - 2 * codes @ people.T
            + (people * people).sum(1)[None, :])
    _, cols = linear_sum_assignment(cost)
    return np.asarray(cols, np.int64)


def linkages(tables: AuditTables, split: HoldoutSplit) -> list[Linkage]:
    """Each linking key with its codes named by HOLDOUT's reference half (see the module's
    text); none where HOLDOUT was split by identity (its people are not INPUT's)."""
    if split.by != "record":
        return []
    s = tables.sensitive
    ref = tables.holdout.subset(split.reference)
    ref_ids = ref.labels[s].to_numpy(str)
    people, codes = np.unique(ref_ids, return_inverse=True)
    counts = np.bincount(codes, minlength=people.size).astype(np.float64)
    out = []
    for key, values in linking_keys(tables):
        pooled = linked_means(tables.released.X, values)
        if pooled is None:
            continue
        means, groups, (mu, sd) = pooled
        Z = (np.asarray(ref.X, np.float64) - mu) / sd
        sums = np.zeros((people.size, Z.shape[1]))
        np.add.at(sums, codes, Z)
        named = people[_assign(means, sums / counts[:, None])]
        out.append(Linkage(key, named[groups]))
    return out


__all__ = ["MAX_ASSIGNED", "Linkage", "linkage_probes", "linkages", "linking_keys"]
