"""``bioanon.audit``: judge any release with the certificate's attackers, intervals and level.

:func:`prepare_audit` reads and checks the three tables, splits HOLDOUT and makes the plan
from the sizes alone (no attack has run: the command line prints it first);
:meth:`AuditJob.run` plays every risk and returns an :class:`AuditResult`; :func:`audit` does
both. Nothing is written: the command line writes the report.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import BioanonError
from ..evaluation.risks.registry import apply_accepted, check_accepted
from ..evaluation.seeds import check_seed, derive_seed
from ..levels import Level, resolve_level
from ..metrics.results import RiskResult
from ..plan import Plan
from ..table import names_of
from .inputs import (
    MAX_RECORDS,
    AuditTables,
    HoldoutSplit,
    Source,
    candidate_rows,
    check_tables,
    read_table,
    row_hashes,
    split_holdout,
    table_of,
)
from .linkage import linking_keys
from .plan import audit_plan
from .reproduce import TIMEOUT, ReproducedMethod, check_command
from .risks import (
    MAX_CANDIDATES,
    AuditGame,
    above_target,
    above_target_words,
    identity_inference,
    identity_membership,
    label_join,
    named_people,
    recognition,
    record_inference,
    record_membership,
    utility,
    verdict_status,
)

Progress = Callable[[int, int, str], None]
#: the default target of recognition (advantage over max(chance, control)), as evaluate's
TARGET_RECOGNITION = 0.05
#: how the verdict conjoins the risks (written in the report)
RULE = ("the release meets the level when every risk is met: membership and inference on "
        "members by the upper 95% bound of their cross-fitted membership advantage "
        "TPR − FPR against the level's target (record, identity), recognition by the upper "
        "95% bound of the cross-fitted worst recognizer's advantage over max(chance, "
        "label-only control), the label join by its rate against the release's limit; a "
        "risk this audit cannot show at these sizes is 'not showable', never met, unless "
        "accepted by name with a reason (and its estimate within the target)")
#: what the audit's attacker holds (the threat model, written in the report)
THREAT_MODEL = (
    "The attacker holds the release, clear records of the people it asks about (a member's "
    "own records, as given to the release process; a non-member's held-out records) and a "
    "clear reference population of the same kind (HOLDOUT's other half). It knows the "
    "features' names and, when a way to re-run it is given, the release process itself. "
    "It does not know which records were given to the process.")


def _digest_seed(*arrays: np.ndarray) -> int:
    """The judge's seed when none is given: a keyed digest of the tables (a verdict is not
    a draw: re-running cannot re-roll it)."""
    h = hashlib.blake2b(b"bioanon/audit", digest_size=8)
    for X in arrays:
        h.update(np.asarray(X.shape, np.int64).tobytes())
        h.update(row_hashes(X).tobytes())
    return int.from_bytes(h.digest(), "big") % (2**31)


@dataclass(frozen=True)
class AuditVerdict:
    """The level and, per risk, met / not met / not showable; ``status`` the conjunction."""

    level: Level
    status: str
    per_risk: dict[str, str]
    #: the risks not showable whose estimate is above the target anyway (:func:`above_target`)
    above_target: tuple[dict[str, Any], ...] = ()

    @property
    def met(self) -> bool:
        return self.status == "met"

    def words(self) -> str:
        """The status, and any estimate a "not showable" hides above its target."""
        extra = above_target_words(list(self.above_target))
        return f"{self.status}; {extra}" if extra else self.status

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level.to_dict(), "status": self.status, "met": self.met,
                "risks": dict(self.per_risk), "above_target": list(self.above_target),
                "words": self.words(), "rule": RULE}


@dataclass
class AuditResult:
    """What an audit found (see :func:`audit`).

    Attributes
    ----------
    risks : list of RiskResult
        One per risk and level: value, 95% interval, attacker, baseline, target, status.
    verdict : AuditVerdict
    plan : Plan
        What the sizes could show, made before any attack.
    utility : dict
        CAS (trained on RELEASED, scored on HOLDOUT) beside the clear level.
    findings : dict
        Copied rows and other facts about the release.
    """

    risks: list[RiskResult]
    verdict: AuditVerdict
    plan: Plan
    utility: dict[str, Any]
    findings: dict[str, Any]
    data: dict[str, Any]
    attackers: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        """The audit as plain values (report.json; ``--json``'s one document)."""
        from ..report.document import _clean

        return _clean({
            "kind": "audit", "verdict": self.verdict.to_dict(),
            "risks": [r.to_dict() for r in self.risks], "plan": self.plan.to_dict(),
            "utility": self.utility, "findings": self.findings, "data": self.data,
            "attackers": self.attackers, "threat_model": THREAT_MODEL,
            "notes": list(self.notes), "seconds": self.seconds})


@dataclass
class AuditJob:
    """A checked audit, planned, before any attack (:func:`prepare_audit`)."""

    tables: AuditTables
    split: HoldoutSplit
    plan: Plan
    game: AuditGame
    sources: dict[str, str]
    target_recognition: float
    seed_given: bool
    accepted: dict[str, str] = field(default_factory=dict)
    #: per table sampled (a Parquet table larger than ``max_records``), the sentence
    sampled: dict[str, str] = field(default_factory=dict)

    def run(self, progress: Progress | None = None) -> AuditResult:
        """Play every risk; return the result."""
        t0 = time.perf_counter()
        g, t = self.game, self.tables
        steps = ["recognition", "record membership", "identity membership",
                 "inference on members", "inference on members' people", "label join",
                 "utility"]

        def tick(i: int) -> None:
            if progress is not None:
                progress(i, len(steps), steps[i] if i < len(steps) else "done")

        tick(0)
        rec, _ = recognition(g, self.target_recognition)
        tick(1)
        mem = record_membership(g)
        tick(2)
        ident = identity_membership(g)
        tick(3)
        inf = record_inference(g)
        tick(4)
        ident_inf = identity_inference(g)
        tick(5)
        join = label_join(g)
        tick(6)
        util = utility(g)
        tick(len(steps))
        risks = apply_accepted([rec, mem, inf, ident, ident_inf, join], self.accepted)
        per = {r.name: verdict_status(r) for r in risks}
        status = ("not met" if "not met" in per.values() else
                  "met" if all(v in ("met", "accepted") for v in per.values()) else
                  "not showable at this size")
        n_rel = t.released.n_records
        findings = {
            "copied_rows": t.copied_rows,
            "copied_share": t.copied_rows / n_rel if n_rel else 0.0,
            "copied_note": (f"{t.copied_rows} of RELEASED's {n_rel} rows are byte-identical "
                            "to an INPUT row (on the shared features)")
            if t.copied_rows else "no RELEASED row is byte-identical to an INPUT row",
            **named_people(t)}
        shadow = g.method is not None
        from ..attack import registry

        attackers = {
            "membership": [a.name for a in registry.MEMBERSHIP
                           if shadow or a.name != "shadow model"],
            "inference": [a.name for a in registry.INFERENCE],
            "recognition": "forest, linear SVM and k-NN trained on RELEASED (cross-fitted "
                           "choice)" + (", its codes named by HOLDOUT's reference half's "
                                        "clear records" if "named by the clear records"
                                        in rec.attacker else ""),
            #: the keys by which RELEASED links a person's records (the pooled attackers'
            #: columns, and the parts of a file name)
            "linking": [key for key, _ in linking_keys(t)],
            "not_run": [] if shadow else [
                "shadow model (needs a way to re-run the release process, reproduce: it "
                "releases reference records to learn which attackers separate its members)",
                "the method's declared release model (a release made elsewhere declares "
                "none: the model-aware attacker fits the generic Gaussian families)"],
            "reproduce": "shadow releases of reference records by the given process; a "
                         "logistic regression on the other attackers' scores learnt on them "
                         "and applied to RELEASED" if shadow else None}
        data = {**self.sources, "n_input": t.members.n_records,
                "n_holdout": t.holdout.n_records, "n_released": n_rel,
                "n_features": len(t.features), "interest": t.interest,
                "sensitive": t.sensitive, "kept_labels": list(t.kept),
                "holdout_split": self.split.words(t.sensitive),
                "n_reference": int(self.split.reference.size),
                "n_member_candidates": int(g.mem.n_records),
                "n_nonmember_candidates": int(g.non.n_records),
                "candidates": "INPUT's records against HOLDOUT's candidate half"
                              if self.split.by != "identity" else
                              "INPUT's records against the records of HOLDOUT's candidate "
                              "people absent from INPUT, as many records per person on both "
                              "sides; the reference holds none of INPUT's people",
                "max_candidates": g.max_candidates,
                "sampled": dict(self.sampled) or "no: every table judged whole",
                "seed": "given (not written)" if self.seed_given else
                        "derived from the tables (a keyed digest: re-running gives the same "
                        "figures)"}
        verdict = AuditVerdict(g.level, status, per, tuple(above_target(risks)))
        return AuditResult(risks, verdict, self.plan, util, findings, data, attackers,
                           list(t.notes), time.perf_counter() - t0)



def _check_count(name: str, value: Any, low: int, what: str) -> None:
    """``value`` is None or a whole number of at least ``low``: ``max_candidates=0`` was
    blamed on the tables ("the sizes are too small ... 0 INPUT records"), 1.5 cut to 1, and
    ``max_records='abc'`` was int()'s ValueError."""
    x = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) \
        else math.nan
    ok = value is None or (math.isfinite(x) and x == int(x) and x >= low)
    if not ok:
        raise BioanonError(f"{name}={value!r} must be an integer of at least {low} ({what}) "
                           "or None", parameter=name)


def prepare_audit(input: Source, released: Source, control: Source, *, interest: str,
                  sensitive: str, labels: Sequence[str] = (), level: Any = None,
                  random_state: int | None = None,
                  reproduce: str | Callable[[Any], Any] | None = None,
                  target_recognition: float = TARGET_RECOGNITION,
                  max_candidates: int | None = MAX_CANDIDATES,
                  accept_risks: Mapping[str, str] | None = None,
                  max_records: int | None = MAX_RECORDS,
                  reproduce_timeout: float = TIMEOUT) -> AuditJob:
    """Read and check the tables, split HOLDOUT and make the plan (no attack runs).

    Raises
    ------
    BioanonError
        Bad input (see :mod:`bioanon.auditing.inputs`), sizes too small to show anything,
        a reproduce command without its placeholders.
    """
    lv = resolve_level(level)
    check_seed(random_state)
    labels = names_of(labels) or []  # a bare string is one column, not its letters
    accepted = check_accepted(accept_risks)
    if (isinstance(target_recognition, bool) or not isinstance(target_recognition, int | float)
            or not 0 <= target_recognition <= 1):
        raise BioanonError(f"target_recognition={target_recognition!r} is out of range; use a "
                           "number in [0, 1] (the bound on recognition's advantage), e.g. "
                           "0.05", parameter="target_recognition")
    if isinstance(reproduce, str):
        check_command(reproduce)
    elif reproduce is not None and not callable(reproduce):
        raise BioanonError("reproduce must be a command (str) with {input} and {output}, or "
                           "a callable table -> table", parameter="reproduce")
    if not (isinstance(reproduce_timeout, (int, float)) and 0 < reproduce_timeout < 1e7):
        raise BioanonError(f"reproduce_timeout={reproduce_timeout} must be a number of "
                           "seconds above 0 (at most 1e7), e.g. 600", parameter="reproduce_timeout")
    wanted = list(dict.fromkeys([interest, sensitive, *labels]))
    _check_count("max_records", max_records, 100, "records of a Parquet table judged at most")
    _check_count("max_candidates", max_candidates, 1, "members and non-members attacked at "
                                                      "most a side")

    def read(source: Source, what: str, features: Sequence[str] | None = None) -> Any:
        return read_table(source, wanted, what, max_records, (interest, sensitive),
                          random_state, features)

    members = read(input, "INPUT")
    # RELEASED's columns INPUT does not hold as features are links, never features
    tabs = check_tables(members, read(released, "RELEASED", list(members.feature_names or [])),
                        read(control, "HOLDOUT"), interest, sensitive, labels)
    sampled = {what: t.meta["sampled"]["words"] for what, t in (
        ("INPUT", tabs.members), ("RELEASED", tabs.released), ("HOLDOUT", tabs.holdout))
        if "sampled" in t.meta}
    tabs.notes.extend(sampled.values())
    seed = (_digest_seed(tabs.members.X, tabs.released.X, tabs.holdout.X)
            if random_state is None else int(random_state))
    split = split_holdout(tabs.members.labels[sensitive].to_numpy(str),
                          tabs.holdout.labels[sensitive].to_numpy(str),
                          np.random.default_rng(seed))
    rows = candidate_rows(tabs, split, np.random.default_rng(derive_seed(seed, "audit/rows")
                                                              % (2**31)))
    plan = audit_plan(tabs, split, rows, lv, target_recognition, max_candidates, accepted)
    method = None
    if reproduce is not None:
        method = ReproducedMethod(command=reproduce if isinstance(reproduce, str) else None,
                                  function=None if isinstance(reproduce, str) else reproduce,
                                  features=list(tabs.features),
                                  labels=[*tabs.kept, sensitive],
                                  timeout=float(reproduce_timeout))
    game = AuditGame(tabs, split, rows, lv, seed, method, max_candidates)
    if method is not None:  # tried once on a few reference records, before any attack
        method.fit_transform(game.reference.subset(np.arange(min(50,
                                                                 game.reference.n_records))))
    sources = {"input": table_of(input), "released": table_of(released),
               "holdout": table_of(control)}
    return AuditJob(tabs, split, plan, game, sources, target_recognition,
                    random_state is not None, accepted, sampled)


def audit(input: Source, released: Source, control: Source, *, interest: str,
          sensitive: str, labels: Sequence[str] = (), level: Any = None,
          random_state: int | None = None,
          reproduce: str | Callable[[Any], Any] | None = None,
          target_recognition: float = TARGET_RECOGNITION,
          max_candidates: int | None = MAX_CANDIDATES,
          accept_risks: Mapping[str, str] | None = None,
          max_records: int | None = MAX_RECORDS,
          reproduce_timeout: float = TIMEOUT,
          progress: Progress | None = None) -> AuditResult:
    """Judge a release made by anything with the certificate's attackers, intervals and level.

    Parameters
    ----------
    input : FeatureTable, DataFrame or path
        The records given to the release process (the members).
    released : FeatureTable, DataFrame or path
        The release to judge; features matched by name, with the label columns it keeps.
    control : FeatureTable, DataFrame or path
        HOLDOUT: records of the same population not given to the process (non-members, the
        attacker's reference population, and the clear test set of utility).
    interest : str
        The attribute whose utility is measured (the release must carry it).
    sensitive : str
        The attribute to protect (the identity column for identity membership).
    labels : sequence of str
        Further label columns the release keeps (judged by inference and the label join).
    level : str, float or Level, optional
        The privacy level (default: the standard level).
    random_state : int, optional
        The judge's seed; None: a keyed digest of the tables (the same figures every run).
    reproduce : str or callable, optional
        A way to re-run the release process: a shell command with ``{input}`` and
        ``{output}`` placeholders, or a callable ``table -> table``; enables the shadow-model
        attacker.
    target_recognition : float
        The bound on recognition's advantage over max(chance, control).
    max_candidates : int or None
        Candidates per side the membership and inference attackers score at most.
    accept_risks : mapping {LEVEL-RISK: reason}, optional
        Risks accepted by name, with the reason (as ``release``'s): an accepted risk passes
        only where its estimate is within its target.
    max_records : int or None
        Records of one Parquet table (a file or a folder of parts, e.g. one larger than
        memory) read at most: a larger one is judged on a seeded stratified sample of this
        size (identities first, then records by the interest), said in the report's data
        and notes. None: every table read whole. Other formats are read whole.
    reproduce_timeout : float
        Seconds one run of a reproduce command may take (default 600); past it the command
        and everything it started are stopped and the audit is refused in one line.
    progress : callable (done, total, text), optional

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> from bioanon.datasets import make_biometric
    >>> t = make_biometric(n_identities=8, records_per_identity=40, n_features=32)
    >>> rows = np.arange(t.n_records)
    >>> members, holdout = t.subset(rows % 2 == 0), t.subset(rows % 2 == 1)
    >>> res = audit(members, members, holdout, interest="expression", sensitive="identity",
    ...             random_state=0)
    >>> res.verdict.status, res.findings["copied_rows"]
    ('not met', 160)
    """
    job = prepare_audit(input, released, control, interest=interest, sensitive=sensitive,
                        labels=labels, level=level, random_state=random_state,
                        reproduce=reproduce, target_recognition=target_recognition,
                        max_candidates=max_candidates, accept_risks=accept_risks,
                        max_records=max_records, reproduce_timeout=reproduce_timeout)
    return job.run(progress)


def risk_of(result: AuditResult, name: str) -> RiskResult:
    """The risk named LEVEL-RISK (e.g. ``record-membership``)."""
    for r in result.risks:
        if r.name == name:
            return r
    raise KeyError(name)


__all__ = ["AuditJob", "AuditResult", "AuditVerdict", "audit", "prepare_audit", "risk_of"]
