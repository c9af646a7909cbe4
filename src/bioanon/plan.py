"""The plan: from the table's shape alone, which risks at which level this table can show.

Before any setting is judged, the plan counts the candidates each risk's test will have (the
split of :mod:`bioanon.evaluation.split`: per identity, ``round(test_size·n)`` records are
released (at least 1, at most n − 1) and the rest are the attacker's non-members; at the
identity level, K = 3 releases each leave a third of the identities out, so every identity
is a member and a non-member) and says, for each risk and level:

- the **smallest advantage the sample can rule out**: the target a leak-free release passes
  with probability ≥ 95% (:func:`~bioanon.metrics.advantage.smallest_showable`, about
  2.2·√(1/n₁ + 1/n₀) for the cross-fitted membership advantage; for recognition,
  (1.96 + 1.645)·√(p(1 − p)/n) with p the chance rate and n the released records; below 20
  identities the row says how much wider the identity-permutation interval may be, without
  refusing: how much the records cluster depends on the release);
- whether the chosen target can be **shown** by the sample, or is **covered by a DP
  guarantee** whose unit covers the level and whose bound is within the target, or was
  **accepted** by name;
- what would change that: how many identities or records would make the target showable, the
  DP budget (ε at δ = 1/n², identity unit, for bioanon's Gaussian-mechanism methods:
  :func:`~bioanon.privacy_bounds.gaussian_epsilon_for_advantage`) whose bound covers it, or
  ``accept=`` by name.

The rows derive from the risk registry (:data:`bioanon.evaluation.risks.registry.REGISTRY`):
one per registered risk and level it is measured at, counted by what its test counts (the
released records, or members against non-members), covered by a DP guarantee where the risk
declares it bounded. Nothing here looks at feature values: the plan costs milliseconds.

Examples
--------
>>> from bioanon.datasets import make_biometric
>>> t = make_biometric(n_identities=24, records_per_identity=12, n_features=32)
>>> p = make_plan(t, "expression", "identity")
>>> [(r.name, r.status) for r in p.rows]      # doctest: +NORMALIZE_WHITESPACE
[('record-recognition', 'inconclusive at this size'),
 ('record-membership', 'inconclusive at this size'),
 ('record-inference', 'inconclusive at this size'),
 ('identity-membership', 'inconclusive at this size'),
 ('identity-inference', 'inconclusive at this size')]
>>> p.can_proceed
False
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .errors import BioanonError
from .evaluation.risks import registry
from .evaluation.risks.base import record_game_counts, target_at
from .levels import CONFIRM_PROBABILITY, MIN_IDENTITIES, Level, identities_needed, resolve_level
from .metrics.advantage import (
    NULL_EST_FACTOR,
    NULL_SE_FACTOR,
    Z95,
    Z_PASS,
    margin_chance,
    smallest_showable,
)
from .metrics.normal import cdf
from .privacy import EPSILON_RANGE
from .privacy_bounds import Guarantee, gaussian_epsilon_for_advantage

#: the words of a plan row's status (the same everywhere: terminal, report, JSON)
SHOWABLE = "showable"
COVERED = "covered by the guarantee"
ACCEPTED = "accepted"
#: from this chance that a release leaking nothing is refused on an accepted risk's estimate,
#: the plan says so in a line of its own (:meth:`Plan.accepted_line`)
ACCEPTED_NOTE = 0.05
INCONCLUSIVE = "inconclusive at this size"
#: the parameters a refusal line names (``NAME=VALUE``; the command line writes their flags)
PARAMETERS = ("epsilon", "privacy_unit", "public", "accept_risks")
#: below this chance that a release leaking nothing is chosen with margin, the plan says so
#: (the margin's own probability: the table then denies a leak-free release what the search
#: asks of every chosen setting)
MARGIN_NOTE = CONFIRM_PROBABILITY
IDENTITY_FOLDS = 3


@dataclass(frozen=True)
class PlanRow:
    """One risk at one level: what the sample can show against the target."""

    risk: str
    level: str
    target: float
    smallest: float
    status: str
    n_members: int
    n_nonmembers: int
    unit: str
    why: str
    ways_forward: tuple[str, ...] = ()
    needed: dict[str, Any] = field(default_factory=dict)
    #: showable rows: the chance that a release leaking nothing is chosen with the search's
    #: margin on this shape (:func:`~bioanon.metrics.advantage.margin_chance`); 1 otherwise
    margin: float = 1.0
    #: accepted rows measured on their estimate: the chance that a release leaking nothing
    #: reads an estimate above the target at this size (an accepted risk whose estimate is
    #: above its target is not met: :func:`_accepted_chance`); None otherwise
    leak_free_over: float | None = None

    @property
    def name(self) -> str:
        return f"{self.level}-{self.risk}"

    @property
    def ok(self) -> bool:
        return self.status in (SHOWABLE, COVERED, ACCEPTED)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "risk": self.risk, "level": self.level,
                "target": self.target, "smallest_showable": _showable(self.smallest),
                "status": self.status, "ok": self.ok, "n_members": self.n_members,
                "n_nonmembers": self.n_nonmembers, "unit": self.unit, "why": self.why,
                "ways_forward": list(self.ways_forward), "needed": self.needed,
                "margin_chance": self.margin, "leak_free_over_target": self.leak_free_over}


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Plan:
    """The plan of one certification: the level, and one :class:`PlanRow` per risk × level."""

    level: Level
    rows: tuple[PlanRow, ...]
    n_records: int
    n_identities: int
    guarantee: Guarantee | None = None
    #: the expected time of the search, said after the plan when it proceeds
    #: (:mod:`bioanon.certification.estimate`)
    expected: str | None = None
    #: why the utility (CAS against chance) cannot be measured at this size, or "" (no
    #: guarantee covers and no acceptance accepts it: a release must be useful)
    utility: str = ""
    #: the released label classes of fewer than :data:`SMALL_CLASS` records, in words, or ""
    #: (:func:`small_classes_line`): said before the search, never a refusal
    small_classes: str = ""

    @property
    def blocked(self) -> list[PlanRow]:
        """The rows the sample cannot show, no guarantee covers and nobody accepted."""
        return [r for r in self.rows if not r.ok]

    @property
    def can_proceed(self) -> bool:
        return not self.blocked and not self.utility

    def row(self, name: str) -> PlanRow | None:
        return next((r for r in self.rows if r.name == name), None)

    @property
    def margin_chance(self) -> float:
        """The chance that a release leaking nothing is chosen with the search's margin (a
        chance ≥ :data:`~bioanon.levels.CONFIRM_PROBABILITY` of passing a fresh evaluation)
        on this table's shape: the product over the showable rows (an approximation: the
        risks' figures are taken as independent)."""
        return float(np.prod([r.margin for r in self.rows if r.status == SHOWABLE]))

    def margin_line(self) -> str:
        """One line when :attr:`margin_chance` is under :data:`MARGIN_NOTE` (else ""): the
        table can show its targets, but only just, so the verdict may differ by seed.

        >>> from bioanon.datasets import make_biometric
        >>> t = make_biometric(n_identities=6, records_per_identity=500, n_features=32)
        >>> make_plan(t, "expression", "identity").margin_line()[:40]
        'margin: a release leaking nothing is cho'
        """
        p = self.margin_chance
        if p >= MARGIN_NOTE:
            return ""
        low = sorted((r for r in self.rows if r.status == SHOWABLE and r.margin < 0.99),
                     key=lambda r: r.margin)
        which = ", ".join(f"{r.name} {r.margin:.2f}" for r in low)
        odds = ("so another seed may refuse where this one certifies" if p >= 0.5 else
                "so even a release leaking nothing is more likely refused than certified, "
                "at any seed")
        return (f"margin: a release leaking nothing is chosen with the search's margin (a "
                f"chance of at least {CONFIRM_PROBABILITY:g} that a fresh evaluation passes) "
                f"with chance about {p:.2f} on this table's shape ({which}): the targets "
                f"can be shown, only just, {odds}; more records or identities widen the "
                "margin (or accept the risk by name)")

    @property
    def accepted_over(self) -> float:
        """The chance, at most about, that a release leaking nothing is refused on the
        estimate of a risk the user accepted (each measured accepted row's
        ``leak_free_over``, as if independent: positively related figures refuse less often
        together); 0 when no accepted row is measured."""
        over = [r.leak_free_over for r in self.rows if r.leak_free_over is not None]
        return float(1.0 - np.prod([1.0 - p for p in over])) if over else 0.0

    def accepted_line(self) -> str:
        """One line when :attr:`accepted_over` is at least :data:`ACCEPTED_NOTE` (else ""):
        accepting a risk waives its interval, not its estimate."""
        p = self.accepted_over
        if p < ACCEPTED_NOTE:
            return ""
        which = ", ".join(f"{r.name} {r.leak_free_over:.2f}" for r in self.rows
                          if r.leak_free_over is not None and r.leak_free_over >= 0.005)
        return (f"accepted risks are judged on their estimates: a release leaking nothing is "
                f"refused on one of them with chance up to about {p:.2f} here ({which}); more "
                "records or identities, or a DP guarantee covering them, lower it")

    def refusal_line(self) -> str:
        """One line: what cannot be shown and the ways forward (empty when nothing blocks),
        in the library's parameters (``NAME=VALUE``: the command line writes each as its
        flag, :data:`PARAMETERS`).

        >>> from bioanon.datasets import make_biometric
        >>> line = make_plan(make_biometric(n_identities=24, records_per_identity=12,
        ...                                n_features=32), "expression", "identity"
        ...                  ).refusal_line()
        >>> "accept_risks={'record-recognition': '...', 'record-membership': '...'," in line
        True
        """
        b = self.blocked
        if not b:
            return self.utility
        what = ", ".join(f"{r.name} (can rule out {_fmt(r.smallest)}, target {r.target:g})"
                         for r in b)
        ways = []
        ids = max((r.needed.get("identities", 0) for r in b), default=0)
        recs = max((r.needed.get("records", 0) for r in b), default=0)
        more = [f"about {ids} identities (now {self.n_identities})"] if ids else []
        more += [f"about {recs} records (now {self.n_records})"] if recs else []
        if more:
            ways.append("more data: " + " / ".join(more))
        eps = [r.needed["epsilon_identity"] for r in b if "epsilon_identity" in r.needed]
        if eps:
            covered = list(dict.fromkeys(r.risk for r in b if "epsilon_identity" in r.needed))
            ways.append(f"a strict DP budget whose bound covers {' and '.join(covered)} "
                        f"(epsilon={min(eps):.3g}, privacy_unit='identity', public=TABLE)")
        names = ", ".join(f"'{r.name}': '...'" for r in b)
        ways.append(f"accept by name (accept_risks={{{names}}})")
        return (f"level '{self.level.name}' cannot be shown on this table, "
                f"{INCONCLUSIVE}: {what}; ways forward: {'; or '.join(ways)}"
                + (f"; and {self.utility}" if self.utility else ""))

    def render(self) -> str:
        """The plan as plain text (what ``release`` prints first)."""
        lines = [f"plan (from the table's shape: {self.n_records} records, "
                 f"{self.n_identities} identities) at level '{self.level.name}' "
                 f"(record {self.level.record:g}, identity {self.level.identity:g}):"]
        for r in self.rows:
            lines.append(f"  {r.name:<22} target {r.target:<5g} can rule out "
                         f"{_fmt(r.smallest):<6} -> {r.status}"
                         + (f" ({r.why})" if r.why else ""))
        if self.small_classes:  # said whether or not the plan proceeds (an audit's does)
            lines.append(f"  {self.small_classes}")
        if self.utility:
            lines.append(f"  {self.utility}")
        if self.margin_line() and self.can_proceed:
            lines.append(f"  {self.margin_line()}")
        if self.accepted_line() and self.can_proceed:
            lines.append(f"  {self.accepted_line()}")
        if self.expected:
            lines.append(self.expected)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level.to_dict(), "n_records": self.n_records,
                "n_identities": self.n_identities, "can_proceed": self.can_proceed,
                "guarantee": self.guarantee.to_dict() if self.guarantee else None,
                "rows": [r.to_dict() for r in self.rows],
                "utility": self.utility or None,
                "margin_chance": self.margin_chance,
                "margin": self.margin_line() or None,
                "accepted_over": self.accepted_over,
                "accepted": self.accepted_line() or None,
                "small_classes": self.small_classes or None,
                "refusal": self.refusal_line() or None}


def _showable(x: float) -> float | None:
    """The smallest advantage a sample rules out, or None where it rules out nothing (an
    advantage is at most 1: a bound of 1 or more rules nothing out).

    >>> _showable(0.093), _showable(2.558), _showable(math.inf)
    (0.093, None, None)
    """
    return float(x) if math.isfinite(x) and x < 1.0 else None


def _fmt(x: float) -> str:
    shown = _showable(x)
    return "nothing" if shown is None else f"{shown:.3f}"


class PlanRefused(BioanonError):
    """The plan says the level cannot be shown on this table (and nothing accepted it): the
    run stops before the search, with one line naming the ways forward."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan.refusal_line(), parameter=PARAMETERS)
        self.plan = plan


# ---------------------------------------------------------------------- counting
def released_counts(per_identity: np.ndarray, test_size: float) -> np.ndarray:
    """Released records per identity under the closed-set split (:func:`split_table`).

    >>> released_counts(np.array([12, 4, 2]), 0.25).tolist()
    [3, 1, 1]
    """
    n = np.asarray(per_identity, dtype=np.int64)
    out = np.array([min(max(round(test_size * k), 1), k - 1) for k in n.tolist()],
                   dtype=np.int64)
    return np.where(n >= 2, out, 0)


def _group_counts(labels: pd.DataFrame, group: str, sensitive: str,
                  test_size: float) -> tuple[int, int]:
    """(test groups, train groups) of :func:`group_split`."""
    sens_of = labels.groupby(group)[sensitive].first()
    n_test = 0
    for _, groups in sens_of.groupby(sens_of, sort=True):
        k = groups.size
        n_test += int(min(max(round(test_size * k), 1), k - 1)) if k >= 2 else 0
    return n_test, int(sens_of.size) - n_test


# ---------------------------------------------------------------------- the plan
def make_plan(table: Any, interest: str, sensitive: str, level: str | float | Level | None = None,
              group: str | None = None, test_size: float = 0.25,
              label_columns: Sequence[str] | None = None,
              target_recognition: float = 0.05, guarantee: Guarantee | None = None,
              accept: Mapping[str, str] | None = None,
              identity_level: bool = True) -> Plan:
    """The plan of a certification of ``table`` (a FeatureTable or a labels DataFrame).

    Parameters
    ----------
    table : FeatureTable or pandas.DataFrame (its labels)
    interest, sensitive : the kept label and the identity column
    level : a named level, a number, or None (the default level)
    group : the column whose whole groups the split keeps apart (group level), or None
    test_size : the share of each identity's records released in the evaluation
    label_columns : the label columns the release carries (inference needs one; default:
        the interest)
    target_recognition : the ``target_advantage`` option: the target of the risks judged by a
        target of their own (recognition: advantage over chance); the others take the level's
    guarantee : a declared DP guarantee (covers a level when its unit does and its bound is
        within the target)
    accept : {"LEVEL-RISK": reason} the user accepted
    identity_level : False when the method cannot be refitted without some identities (fitted
        on auxiliary data): the identity level is not measured

    Returns
    -------
    Plan
    """
    lv = resolve_level(level)
    labels = table.labels if hasattr(table, "labels") else table
    ids = labels[sensitive].astype(str)
    per_id = ids.value_counts().to_numpy()
    n_rec, n_id = int(len(labels)), int(per_id.size)
    shape = _Shape(n_rec, n_id, int(released_counts(per_id, test_size).sum()),
                   float(per_id.max() / per_id.sum()) if n_id else 1.0)
    if group is None:
        members = (*record_game_counts(shape.released, n_rec, test_size), "records")
    else:
        n1, n0 = _group_counts(labels, group, sensitive, test_size)
        members = (n1, n0, "groups")
    cols = list(label_columns) if label_columns is not None else [interest]
    targets = {"target_advantage": target_recognition, "level": lv}
    not_measured = {"identity": (
        f"the split keeps whole '{group}' groups apart (group level instead)"
        if group is not None else "" if identity_level else
        "the method is fitted on auxiliary data; no release without some identities")}
    rows: list[PlanRow] = []
    for level_name in ("record", "identity"):  # the record level's rows first
        for spec in registry.REGISTRY:
            if level_name not in spec.levels:
                continue
            lvl = level_name if level_name != "record" or group is None else "group"
            target = target_at(targets[spec.target_option], lvl)
            why = not_measured.get(level_name, "")
            if spec.needs_labels and not cols:
                why = "the release carries no label column"
            if why:
                rows.append(_fixed(spec.name, lvl, target, why, dict(accept or {})))
                continue
            rows.append(_spec_row(spec, lvl, target, shape, members,
                                  guarantee if spec.dp_bounded else None, dict(accept or {})))
    return Plan(lv, tuple(rows), n_rec, n_id, guarantee,
                utility=utility_unmeasurable(labels, interest, shape.released),
                small_classes=small_classes_line(labels, cols))


#: a released label class of fewer records than this is named before the search
SMALL_CLASS = 5


def small_classes_line(labels: pd.DataFrame, columns: Sequence[str],
                       released: pd.DataFrame | None = None) -> str:
    """One line naming the classes of the released label ``columns`` that hold fewer than
    :data:`SMALL_CLASS` records of ``labels``, or "". ``released``: the labels of a release
    made elsewhere (an audit), whose classes alone are named (a class ``labels`` holds and
    the release does not carry tells nothing).

    A release carries its label columns and class sizes as they are (no method hides them:
    each states so among what it does not protect), so a class of one record tells anyone
    who knows its only member that this person is in the data, with that label. The judge's
    risks are averages over many records and do not see it; the plan says it before the
    search, as a note, not a refusal.

    >>> df = pd.DataFrame({"y": ["a"] * 9 + ["rare"], "g": ["m", "f"] * 5})
    >>> small_classes_line(df, ["y", "g"])[:62]
    "note: released label 'y' has 1 class of fewer than 5 records ("
    >>> small_classes_line(df, ["g"])
    ''
    >>> small_classes_line(df, ["y"], released=pd.DataFrame({"y": ["a", "a"]}))
    ''
    """
    parts, counted = [], 0
    for col in dict.fromkeys(map(str, columns)):
        if col not in labels.columns:
            continue
        counts = labels[col].astype(str).value_counts()
        small = counts[counts < SMALL_CLASS]
        if released is not None:
            carried = (set(released[col].astype(str)) if col in released.columns else set())
            small = small[[k in carried for k in small.index]]
        if small.empty:
            continue
        counted += int(small.size)
        shown = ", ".join(f"'{k}' {v}" for k, v in small.sort_values().head(3).items())
        more = f", {small.size - 3} more" if small.size > 3 else ""
        parts.append(f"'{col}' has {small.size} class{'es' if small.size > 1 else ''} of "
                     f"fewer than {SMALL_CLASS} records ({shown}{more})")
    if not parts:
        return ""
    return (f"note: released label {'; '.join(parts)}: the release carries such a class, "
            "which tells anyone who knows its few members that they are in the data (bioanon's "
            "methods release labels and class sizes as they are); merge or drop those classes "
            "to hide it (the judge's risks are averages over records and do not show it)")


def utility_unmeasurable(labels: pd.DataFrame, interest: str, held_out: int) -> str:
    """Why no setting's utility can be told from chance at this size, or "".

    The search keeps a setting only when its CAS (on the ``held_out`` records the evaluation
    releases, the same closed-set split the risks count) reads above the chance of the
    interest ``p`` (its majority share). As for recognition, a rate can be told from ``p``
    with probability ≥ 95% only about (1.96 + 1.645)·√(p(1 − p)/n) above it: when that lies
    above 1, not even a model that predicts every record right can pass, and the search
    would end "utility cannot be measured at this size" after judging every setting.

    >>> frame = pd.DataFrame({"y": ["a", "a", "a", "a", "b", "b", "c", "c", "d", "d"]})
    >>> utility_unmeasurable(frame, "y", 5).split(":")[0]
    'utility cannot be measured at this size'
    >>> utility_unmeasurable(pd.concat([frame] * 10), "y", 50)
    ''
    """
    if interest not in labels or held_out < 1:
        return ""
    p = float(labels[interest].astype(str).value_counts(normalize=True).max())
    if p >= 1.0:  # one class: refused by the label checks
        return ""
    z = Z95 + Z_PASS
    above = p + z * math.sqrt(p * (1.0 - p) / held_out)
    if above < 1.0:
        return ""
    need = math.floor(z * z * p / (1.0 - p)) + 1  # held-out records where p + margin < 1
    records = math.ceil(need * len(labels) / held_out)
    return (f"utility cannot be measured at this size: on the {held_out} records the "
            f"evaluation holds out, a CAS can be told from the chance of '{interest}' "
            f"({p:.3f}) only above {min(above, 9.99):.3f}, which not even a perfect model "
            f"reaches; more data: about {records} records (now {len(labels)}), or an "
            "attribute of interest with fewer records in its largest class")


@dataclass(frozen=True)
class _Shape:
    """What the plan reads of the table: records, identities, the records the evaluation
    releases and the majority identity's share (the chance rate)."""

    n_records: int
    n_identities: int
    released: int
    chance: float


def _spec_row(spec: Any, level: str, target: float, shape: _Shape,
              members: tuple[int, int, str], guarantee: Guarantee | None,
              accept: Mapping[str, str]) -> PlanRow:
    """The plan row of one registered risk at one level, by what its test counts: the
    released records (a rate against chance) or members against non-members."""
    n_rec, n_id = shape.n_records, shape.n_identities
    if spec.counts == "released":
        p, rel = shape.chance, shape.released
        se = math.sqrt(p * (1 - p) / max(rel, 1))
        row = _with_margin(_row(spec.name, level, target, (Z95 + Z_PASS) * se,
                                rel, 0, "records", guarantee, accept, n_rec, n_id,
                                guarantee_applies=spec.dp_bounded), se, se)
        if n_id >= MIN_IDENTITIES:
            return row
        # records cluster by person: if a recognizer maps each person's records to one label,
        # the figure moves in steps of 1/k and the identity-permutation interval (which the
        # evaluation then takes) is as wide as over k units; said, not refused (it depends
        # on the release, which the shape does not know)
        worst = (Z95 + Z_PASS) * math.sqrt(p * (1 - p) / max(n_id, 1))
        return replace(row, why=(row.why + "; " if row.why else "") +
                       f"only {n_id} identities: records cluster by person, so the interval "
                       f"may widen up to ±{worst / (Z95 + Z_PASS) * Z95:.2f} (identity-"
                       "permutation null) and read inconclusive",
                       needed={**row.needed, "smallest_if_clustered": worst})
    if level == "identity":
        s_id = smallest_showable(n_id, n_id) if n_id >= MIN_IDENTITIES else math.inf
        return _advantage_margin(_row(spec.name, level, target, s_id, n_id, n_id,
                                      "identities", guarantee, accept, n_rec, n_id,
                                      guarantee_applies=spec.dp_bounded))
    n1, n0, unit = members
    return _advantage_margin(_row(spec.name, level, target, smallest_showable(n1, n0), n1, n0,
                                  unit, guarantee, accept, n_rec, n_id,
                                  guarantee_applies=spec.dp_bounded))


def _with_margin(row: PlanRow, se: float, sd: float) -> PlanRow:
    """A showable row with its :func:`~bioanon.metrics.advantage.margin_chance` (the
    standard error ``se`` its interval will use, its estimate's spread ``sd``); an accepted
    row, its :func:`_accepted_chance`."""
    if row.status == ACCEPTED:
        return _accepted_chance(row, sd)
    if row.status != SHOWABLE:
        return row
    return replace(row, margin=margin_chance(row.target, se, sd, CONFIRM_PROBABILITY))


def _advantage_margin(row: PlanRow) -> PlanRow:
    """:func:`_with_margin` of a cross-fitted advantage, its null standard error and spread
    read back from its smallest showable target (both proportional to √(1/n₁ + 1/n₀))."""
    if not math.isfinite(row.smallest):
        return row
    root = row.smallest / (Z95 * NULL_SE_FACTOR + Z_PASS * NULL_EST_FACTOR)
    return _with_margin(row, NULL_SE_FACTOR * root, NULL_EST_FACTOR * root)


def _accepted_chance(row: PlanRow, sd: float) -> PlanRow:
    """An accepted row that is still measured, with the chance that a release leaking
    nothing reads an estimate above its target here (its estimate about normal around 0,
    standard deviation ``sd``): accepting a risk the table cannot show waives its interval,
    not its estimate, so the search can still refuse on it; said before the search.

    >>> r = PlanRow("membership", "group", 0.10, 0.33, ACCEPTED, 100, 100, "groups",
    ...             "accepted: few executions")
    >>> out = _accepted_chance(r, 0.10)
    >>> round(out.leak_free_over, 2), out.why.split("; ")[1].startswith("judged on its estimate")
    (0.16, True)
    """
    if not (math.isfinite(sd) and sd > 0 and math.isfinite(row.target)):
        return row
    over = 1.0 - float(cdf(row.target / sd))
    chance = f"{over:.2f}" if over >= 0.005 else "below 0.01"
    return replace(row, leak_free_over=over,
                   why=(f"{row.why}; judged on its estimate: a release leaking nothing reads "
                        f"an estimate above {row.target:g} with chance {chance} here, and "
                        "the search refuses on it"))


def _fixed(risk: str, level: str, target: float, why: str,
           accept: Mapping[str, str]) -> PlanRow:
    """A level the evaluation does not measure at all (said, never counted as shown)."""
    name = f"{level}-{risk}"
    status = ACCEPTED if name in accept else INCONCLUSIVE
    return PlanRow(risk, level, target, math.inf, status, 0, 0, "", why,
                   (f"accept {name}",))


def _squared_ratio(smallest: float, target: float) -> float:
    """``(smallest / target) ** 2``, infinite when it leaves the floats: ``--level 1e-300``
    was Python's OverflowError, an internal error.

    >>> _squared_ratio(0.2, 0.1), _squared_ratio(0.5, 1e-300)
    (4.0, inf)
    """
    if not (math.isfinite(smallest) and target > 0):
        return math.inf
    try:
        return (smallest / target) ** 2
    except OverflowError:
        return math.inf


def _row(risk: str, level: str, target: float, smallest: float, n1: int, n0: int, unit: str,
         guarantee: Guarantee | None, accept: Mapping[str, str], n_rec: int, n_id: int,
         guarantee_applies: bool = True) -> PlanRow:
    name = f"{level}-{risk}"
    needed: dict[str, Any] = {}
    ways: list[str] = []
    covered = (guarantee_applies and guarantee is not None and guarantee.covers(level)
               and guarantee.advantage_bound() <= target)
    if smallest <= target:
        status, why = SHOWABLE, ""
    elif covered:
        assert guarantee is not None
        status = COVERED
        why = (f"bound {guarantee.advantage_bound():.3f} ≤ {target:g} of the guarantee "
               f"{guarantee.words()}")
    elif name in accept:
        status, why = ACCEPTED, f"accepted: {accept[name]}"
    else:
        status = INCONCLUSIVE
        why = (f"even a leak-free release would read an upper bound above {target:g} in more "
               "than 5% of evaluations")
    if status != SHOWABLE:
        scale = _squared_ratio(smallest, target)
        if level == "identity" or unit.startswith("identities"):
            if target > 0 and (level == "identity" or math.isfinite(scale)):
                need = (identities_needed(target) if level == "identity"
                        else math.ceil(n_id * scale))
                needed["identities"] = int(need)
                ways.append(f"about {need} identities (now {n_id})")
        else:
            if math.isfinite(scale):
                need_r = math.ceil(n_rec * scale)
                needed["records"] = int(need_r)
                ways.append(f"about {need_r} records (now {n_rec})")
        delta = 1.0 / max(n_id, 2) ** 2
        eps = gaussian_epsilon_for_advantage(target, delta) if guarantee_applies \
            and target > 0 else 0.0
        if eps >= EPSILON_RANGE[0]:  # none below: a target under what the table's δ allows
            needed["epsilon_identity"] = eps  # was suggested as --epsilon 0, refused
            needed["delta"] = delta
            ways.append(f"epsilon {eps:.3g} at the identity unit (a strict DP budget "
                        "whose bound covers it)")
        ways.append(f"accept {name}")
    return PlanRow(risk, level, target, smallest, status, int(n1), int(n0), unit, why,
                   tuple(ways), needed)
