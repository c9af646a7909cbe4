"""The audit's plan: from the sizes alone, which risks this audit can show at the level.

The same rows and words as ``release``'s plan (:mod:`bioanon.plan`), counted the audit's way:
record membership and inference on members compare INPUT's records (members) with HOLDOUT's
non-member candidates (:func:`~.inputs.candidate_rows`, at most ``max_candidates`` a side);
identity membership and inference compare INPUT's people with the people of HOLDOUT's
candidates who are absent from INPUT (20 or more on each side); recognition counts the
HOLDOUT records whose sensitive value the release carries (the probes of a recognizer
trained on the release). The smallest showable advantage is
:func:`~bioanon.metrics.advantage.smallest_showable` (the cross-fitted membership advantage)
and, for recognition, (1.96 + 1.645)·√(p(1 − p)/n).
Nothing here reads a feature value: it runs before any attack, in milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..levels import Level
from ..metrics.advantage import Z95, Z_PASS, smallest_showable
from ..plan import MIN_IDENTITIES, Plan, PlanRow, _fixed, _row, small_classes_line
from .inputs import AuditTables, HoldoutSplit
from .linkage import linkage_probes

#: fewest HOLDOUT records (of two sensitive values or more) recognition is measured on
MIN_PROBES = 10


def _capped(n: int, cap: int | None) -> int:
    return n if cap is None else min(n, int(cap))


def identity_sides(tables: AuditTables, split: HoldoutSplit) -> tuple[np.ndarray, np.ndarray]:
    """The member people (INPUT's) and the non-member people (HOLDOUT candidates' absent
    from INPUT; none when HOLDOUT was split by record: their other records would then be in
    the attacker's reference, and members' people would not be alike)."""
    s = tables.sensitive
    mem = np.unique(tables.members.labels[s].to_numpy(str))
    if split.by != "identity":  # their other records are in the reference: not alike
        return mem, np.zeros(0, str)
    cand = np.unique(tables.holdout.labels[s].to_numpy(str)[split.candidates])
    return mem, cand[~np.isin(cand, mem)]


def recognized_values(tables: AuditTables) -> np.ndarray:
    """The sensitive values a recognizer is trained on: those the release carries on 2 or
    more records (a calibrated recognizer cross-validates within each value; a value on one
    released record is left out of training and probing alike). Empty without the column."""
    if not tables.released_has_sensitive:
        return np.zeros(0, str)
    values, counts = np.unique(tables.released.labels[tables.sensitive].to_numpy(str),
                               return_counts=True)
    return values[counts >= 2]


def recognition_probes(tables: AuditTables) -> np.ndarray:
    """HOLDOUT rows whose sensitive value the release carries on 2 or more records
    (:func:`recognized_values`; empty without the column)."""
    known = recognized_values(tables)
    if known.size == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.isin(tables.holdout.labels[tables.sensitive].to_numpy(str), known))


def audit_plan(tables: AuditTables, split: HoldoutSplit,
               candidates: tuple[np.ndarray, np.ndarray], level: Level,
               target_recognition: float, max_candidates: int | None,
               accept: Mapping[str, str] | None = None) -> Plan:
    """The plan of one audit (see the module's text).

    Raises
    ------
    BioanonError
        When the sizes can show nothing at all (no risk can rule out any advantage below 1).
    """
    n1 = _capped(int(candidates[0].size), max_candidates)
    n0 = _capped(int(candidates[1].size), max_candidates)
    rows: list[PlanRow] = []
    n_rec = tables.members.n_records + tables.holdout.n_records
    n_id = int(np.unique(np.r_[tables.members.labels[tables.sensitive].to_numpy(str),
                               tables.holdout.labels[tables.sensitive].to_numpy(str)]).size)
    acc = dict(accept or {})
    common: dict[str, Any] = {"guarantee": None, "accept": acc, "n_rec": n_rec, "n_id": n_id,
                              "guarantee_applies": False}
    probes = recognition_probes(tables)
    y = tables.holdout.labels[tables.sensitive].to_numpy(str)[probes]
    counts = np.unique(y, return_counts=True)[1]
    if probes.size < MIN_PROBES or counts.size < 2:  # codes named by the clear records?
        linked = linkage_probes(tables, split)
        y_linked = tables.holdout.labels[tables.sensitive].to_numpy(str)[linked]
        c_linked = np.unique(y_linked, return_counts=True)[1]
        if linked.size >= MIN_PROBES and c_linked.size >= 2:
            probes, y, counts = linked, y_linked, c_linked
    if probes.size >= MIN_PROBES and counts.size >= 2:
        p = float(counts.max() / y.size)
        small = (Z95 + Z_PASS) * math.sqrt(p * (1 - p) / probes.size)
        rows.append(_row("recognition", "record", target_recognition, small,
                         int(probes.size), 0, "records", **common))
    else:
        why = (f"RELEASED carries no '{tables.sensitive}' column: no recognizer can be "
               "trained on it" if not tables.released_has_sensitive else
               f"{probes.size} HOLDOUT records of {counts.size} '{tables.sensitive}' values "
               f"the release carries (recognition needs {MIN_PROBES} or more, of 2 values "
               "or more)")
        rows.append(_fixed("recognition", "record", target_recognition, why, acc))
    rows.append(_row("membership", "record", level.record, smallest_showable(n1, n0), n1, n0,
                     "records", **common))
    rows.append(_row("inference", "record", level.record, smallest_showable(n1, n0), n1, n0,
                     "records", **common))
    mem_ids, non_ids = identity_sides(tables, split)
    for risk in ("membership", "inference"):  # the certificate's identity rows, both
        if mem_ids.size >= MIN_IDENTITIES and non_ids.size >= MIN_IDENTITIES:
            rows.append(_row(risk, "identity", level.identity,
                             smallest_showable(mem_ids.size, non_ids.size),
                             int(mem_ids.size), int(non_ids.size), "identities", **common))
        else:
            rows.append(_fixed(risk, "identity", level.identity,
                               f"{mem_ids.size} people in INPUT and {non_ids.size} HOLDOUT "
                               f"candidates' people absent from INPUT; the identity level "
                               f"needs {MIN_IDENTITIES} or more on each side (a HOLDOUT "
                               "whose records are mostly of other people)", acc))
    plan = Plan(level, tuple(rows), n_rec, n_id, small_classes=small_classes_line(
        tables.members.labels, tables.kept, released=tables.released.labels))
    if all(not math.isfinite(r.smallest) or r.smallest >= 1.0 for r in plan.rows):
        raise BioanonError(
            f"the sizes are too small to show anything: {n1} INPUT records against {n0} "
            "HOLDOUT non-member candidates can rule "
            "out no advantage below 1; pass more records (a few hundred on each side)")
    return plan


__all__ = ["audit_plan", "identity_sides", "recognition_probes", "recognized_values"]
