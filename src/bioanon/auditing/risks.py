"""The audit's risks: the certificate's evaluators, played on a release made by anything.

The judge's own pieces are reused as they are: the membership and inference attackers of the
registry (:data:`bioanon.attack.registry.MEMBERSHIP`, :data:`~bioanon.attack.registry.INFERENCE`:
tracing, density ratio, nearest released, the model-aware likelihood ratio in all features and
in principal directions, the shadow model when the method can be re-run), the cross-fitted
advantage (:func:`bioanon.metrics.advantage.crossfit_advantage`, through the membership and
inference evaluators), the recognition evaluator's cross-fitted worst case over recognizers
with its label-only control, and the release's label-join rule. What differs is the game:

- **members** are INPUT's records (the release's clear originals), **non-members** HOLDOUT's
  candidate half, and the attacker's **reference population** HOLDOUT's other half
  (:func:`~.inputs.split_holdout`): no candidate is ever in the reference;
- **identity membership** compares INPUT's people with HOLDOUT candidates' people absent from
  INPUT (a person's score: the mean over the records the attacker holds);
- **recognition** trains each recognizer on RELEASED with its sensitive labels and probes
  HOLDOUT's records of the people the release carries (the clear level, the same recognizers
  trained on INPUT, stands beside it); a release of codes instead of names has its codes
  named by the attacker's clear records first (:mod:`.linkage`);
- **utility** is CAS as a consumer meets it: trained on RELEASED, scored on HOLDOUT, against
  the same model trained on INPUT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..attack.control import control_rate
from ..attack.recognizers import DEFAULT_MODELS, make_recognizer, model_name
from ..evaluation.caps import capped_rows
from ..evaluation.risks.base import MIN_IDENTITY_LEVEL, RiskContext, not_covered
from ..evaluation.risks.inference import BASELINE_NAME as INFERENCE_BASELINE
from ..evaluation.risks.inference import InferenceRisk, _hits
from ..evaluation.risks.membership import BASELINE_NAME, MembershipRisk, _by_group, attack_scores
from ..evaluation.risks.recognition import RecognitionRisk
from ..evaluation.units import in_units, unit_scale
from ..levels import Level
from ..metrics import chance_level
from ..metrics.advantage import crossfit_advantage, inference_advantage
from ..metrics.results import INCONCLUSIVE, Rate, RiskResult
from ..metrics.scores import wilson_interval
from ..release import JOIN_FACTOR, join_rate
from ..table import FeatureTable
from .inputs import AuditTables, HoldoutSplit
from .isometry import turned_release
from .linear_map import linear_release
from .linkage import linkage_probes, linkages
from .plan import MIN_PROBES, identity_sides, recognition_probes

#: candidates per side the membership and inference attackers score at most (stratified by
#: the sensitive column; the same records for every attacker)
MAX_CANDIDATES = 2000


def reference_records(tables: AuditTables, split: HoldoutSplit) -> FeatureTable:
    """The attacker's reference population: HOLDOUT's reference half; split by identity,
    without INPUT's people (so that neither side's people are in it: a member whose person
    sits in the reference would look less like a member to a density attacker, a bias the
    non-members, whole people on the other side, never get). Split by record, every person
    is on both sides alike."""
    ref = split.reference
    if split.by == "identity":
        s = tables.sensitive
        ids = tables.holdout.labels[s].to_numpy(str)[ref]
        other = ~np.isin(ids, tables.members.labels[s].to_numpy(str))
        if other.sum() >= 2:
            ref = ref[other]
    return tables.holdout.subset(ref)


#: a release whose features sit on another scale than the population's (the median over
#: features of |log(sd ratio)|, or of the mean's shift in the reference's sds, above this) is
#: attacked twice: as it is, and rescaled feature by feature to the reference's mean and sd
ALIGN_TOLERANCE = 0.05
#: the prefix of the attacks played on the rescaled release
ALIGNED = "release rescaled to the population: "
#: the prefix of the attacks played with each record's values sorted, released and clear
#: alike: a release whose columns are the population's in another order (a shuffled or
#: renamed export of the records) is read through it, whatever the order
SORTED = "each record's values sorted (any column order): "
#: the prefix of the attacks played on the release with its columns matched to the
#: population's by their means and sds (:func:`matched_columns`)
MATCHED = "release with its columns matched to the population's: "
#: the prefix of the attacks played on the release mapped back by the distance-preserving
#: map (a rotation, reflections, a reordering) that carries it onto INPUT's records
#: (:func:`~.isometry.turned_release`)
TURNED = "release turned back onto INPUT's axes (PCA attack): "
#: the prefix of the attacks played on the release mapped back by the invertible linear map
#: that carries it onto INPUT's records (:func:`~.linear_map.linear_release`)
LINEAR = "release mapped back onto INPUT's features (linear-map attack): "
#: the widest release whose columns are matched (the cost matrix is features²)
MAX_MATCHED_FEATURES = 4096
#: a release is attacked with each record's values sorted where its features, column by
#: column, differ from the reference's by more than twice what their sorted lists differ
#: (:func:`reordered_release`) plus this
REORDER_MARGIN = 0.1


def aligned_release(released: np.ndarray, reference: np.ndarray) -> np.ndarray | None:
    """RELEASED rescaled feature by feature to the reference's mean and sd, or None when
    its scale is the reference's already (:data:`ALIGN_TOLERANCE`). A public per-feature
    transform (a standardized or rescaled export of the records) hides nothing from an
    attacker who matches the release's marginals to the population's first.

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(200, 3))
    >>> aligned_release(ref[:100] * 3 + 7, ref).std(axis=0).round(1).tolist()
    [1.0, 1.0, 1.0]
    >>> aligned_release(ref[:100], ref) is None
    True
    """
    R, F = np.asarray(released, np.float64), np.asarray(reference, np.float64)
    mr, sr, mf, sf = R.mean(axis=0), R.std(axis=0), F.mean(axis=0), F.std(axis=0)
    sf, sr = np.where(sf > 0, sf, 1.0), np.where(sr > 0, sr, 1.0)
    if (np.median(np.abs(np.log(sr / sf))) <= ALIGN_TOLERANCE
            and np.median(np.abs(mr - mf) / sf) <= ALIGN_TOLERANCE):
        return None
    return (R - mr) / sr * sf + mf


def _marginals(released: np.ndarray, reference: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Each feature's mean and log sd, released and reference (a constant feature's log sd
    is 0), and the reference's median sd: the unit means are compared in."""
    R, F = np.asarray(released, np.float64), np.asarray(reference, np.float64)
    sr, sf = (np.log(np.where(A.std(axis=0) > 0, A.std(axis=0), 1.0)) for A in (R, F))
    return R.mean(axis=0), sr, F.mean(axis=0), sf, float(np.exp(np.median(sf)))


def reordered_release(released: np.ndarray, reference: np.ndarray) -> bool:
    """Whether RELEASED's columns look like the reference's in another order: each
    feature's mean and sd, compared column by column with the reference's, differ far more
    than the two lists of means and of sds compared sorted (by more than twice that, plus
    :data:`REORDER_MARGIN`; in the reference's median sd and in log sd). A release drawn
    feature by feature from the population's marginals differs about as much either way; a
    release whose columns were shuffled differs column by column alone.

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(400, 6)) * np.arange(1, 7) + np.arange(6)
    >>> reordered_release(ref[:200], ref[200:]), reordered_release(ref[:200, ::-1], ref[200:])
    (False, True)
    """
    if np.shape(released)[1] < 2 or np.shape(released)[1] != np.shape(reference)[1]:
        return False
    mr, sr, mf, sf, unit = _marginals(released, reference)
    in_order = float(np.mean(np.abs(sr - sf) + np.abs(mr - mf) / unit))
    sorted_ = float(np.mean(np.abs(np.sort(sr) - np.sort(sf))
                            + np.abs(np.sort(mr) - np.sort(mf)) / unit))
    return in_order > 2.0 * sorted_ + REORDER_MARGIN


def matched_columns(released: np.ndarray, reference: np.ndarray) -> np.ndarray | None:
    """The order of RELEASED's columns that best matches the reference's, feature by
    feature, by mean and sd (a linear assignment: ``released[:, order]`` holds in column k
    what matches the reference's column k), or None where the release is wider than
    :data:`MAX_MATCHED_FEATURES` or the order found is its own.

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.normal(size=(400, 4)) * np.arange(1, 5) + np.arange(4)
    >>> matched_columns(ref[:200, [2, 0, 3, 1]], ref[200:]).tolist()
    [1, 3, 0, 2]
    """
    from scipy.optimize import linear_sum_assignment

    d = np.shape(released)[1]
    if d > MAX_MATCHED_FEATURES or d != np.shape(reference)[1]:
        return None
    mr, sr, mf, sf, unit = _marginals(released, reference)
    cost = np.abs(mr[:, None] - mf[None, :]) / unit + np.abs(sr[:, None] - sf[None, :])
    rows, cols = linear_sum_assignment(cost)
    order = np.empty(d, np.int64)
    order[cols] = rows
    return None if np.array_equal(order, np.arange(d)) else order


def _merged(scores: dict[str, np.ndarray], prefix: str, got: dict[str, np.ndarray]) -> None:
    """Add one view's attacks to ``scores``; on a view other than the release as it is
    (``prefix``), an attack whose scores the view left unchanged (one that reads no feature)
    is not counted twice."""
    for k, v in got.items():
        if prefix and k in scores and np.array_equal(scores[k], v):
            continue
        scores[prefix + k] = v


def _unchanged(X: np.ndarray) -> np.ndarray:
    return X


def _rows_sorted(X: np.ndarray) -> np.ndarray:
    """Each record's values in increasing order: the same for any order of the columns.

    >>> _rows_sorted(np.array([[3.0, 1.0, 2.0]])).tolist()
    [[1.0, 2.0, 3.0]]
    """
    return np.sort(np.asarray(X), axis=1)


#: how an attack sees the records: (prefix of its name, the released features, the
#: transform of the clear records, the suffix of its cache)
View = tuple[str, np.ndarray, Callable[[np.ndarray], np.ndarray], str]


def _views(g: AuditGame) -> list[View]:
    """The release as it is; rescaled, where its scale is not the population's
    (:func:`aligned_release`); and, where its columns look like the population's in another
    order (:func:`reordered_release`), with its columns matched to the population's by mean
    and sd (:func:`matched_columns`: exact where the features' marginals differ) and with
    each record's values sorted, released and clear alike (:data:`SORTED`: any order);
    and, where it is INPUT's records turned (rotated, reflected, reordered: a
    distance-preserving map), mapped back (:data:`TURNED`); where it is not, but is an
    invertible linear map of them, mapped back by that (:data:`LINEAR`)."""
    if "views" not in g.cache:
        rel = g.tables.released.X
        aligned = aligned_release(rel, g.reference.X)
        views: list[View] = [("", rel, _unchanged, "")]
        if aligned is not None:
            views.append((ALIGNED, aligned, _unchanged, ""))
        if reordered_release(rel, g.reference.X):
            order = matched_columns(rel, g.reference.X)
            if order is not None:
                views.append((MATCHED, rel[:, order], _unchanged, ""))
            views.append((SORTED, _rows_sorted(rel), _rows_sorted, "/sorted"))
        turned = turned_release(rel, g.tables.members.X, g.reference.X)
        if turned is not None:
            views.append((TURNED, turned.astype(rel.dtype), _unchanged, ""))
        else:  # read from the rescaled release where there is one: a rescaling is linear
            linear = _linear(g, rel if aligned is None else aligned)
            if linear is not None:
                views.append((LINEAR, linear.astype(rel.dtype), _unchanged, ""))
        g.cache["views"] = views
    return list(g.cache["views"])


def _linear(g: AuditGame, released: np.ndarray) -> np.ndarray | None:
    """``released`` (RELEASED, or its rescaled view) mapped back where it is an invertible
    linear map of INPUT (:func:`~.linear_map.linear_release`, its coordinates read per
    interest class); None where it is not, or already sits on INPUT's records (a rescaled
    copy: the rescaled view reads it)."""
    t = g.tables
    return linear_release(released, t.released.labels[t.interest].to_numpy(str),
                          t.members.X, t.members.labels[t.interest].to_numpy(str),
                          g.reference.X)


def _played(g: AuditGame,
            attack: Callable[[np.ndarray, Callable[[np.ndarray], np.ndarray], str],
                             dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """``attack`` (released features, the transform of the clear records, its cache's
    suffix -> scores or hits by attack) on every view of the release (:func:`_views`),
    merged by :func:`_merged`."""
    out: dict[str, np.ndarray] = {}
    for prefix, X, clear, suffix in _views(g):
        _merged(out, prefix, attack(X, clear, suffix))
    return out


@dataclass
class AuditGame:
    """What every risk of one audit reads (in process only)."""

    tables: AuditTables
    split: HoldoutSplit
    #: INPUT's and HOLDOUT's candidate rows (:func:`~.inputs.candidate_rows`)
    rows: tuple[np.ndarray, np.ndarray]
    level: Level
    seed: int
    method: Any = None
    max_candidates: int | None = MAX_CANDIDATES
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        t = self.tables
        self.reference = reference_records(t, self.split)
        members, nonmembers = t.members.subset(self.rows[0]), t.holdout.subset(self.rows[1])
        s = t.sensitive
        mem = capped_rows(members.labels[s].to_numpy(str), self.max_candidates, self.seed,
                          "audit/members")
        non = capped_rows(nonmembers.labels[s].to_numpy(str), self.max_candidates,
                          self.seed, "audit/non-members")
        self.mem = members if mem is None else members.subset(mem)
        self.non = nonmembers if non is None else nonmembers.subset(non)
        #: the evaluators' shared context: the reference as the "training split" (the
        #: attacker's population), INPUT as the records behind the release
        self.ctx = RiskContext(self.reference, t.members, t.released.X, self.method,
                               t.interest, s, list(t.kept), None, self.seed,
                               max_candidates=self.max_candidates,
                               released_sensitive=t.released_has_sensitive,
                               linking=tuple(t.linking))

    def candidates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(features, member flag, person) of the record-level candidates."""
        s = self.tables.sensitive
        X = np.vstack([self.mem.X, self.non.X])
        member = np.r_[np.ones(self.mem.n_records, bool), np.zeros(self.non.n_records, bool)]
        people = np.r_[self.mem.labels[s].to_numpy(str), self.non.labels[s].to_numpy(str)]
        return X, member, people

    def labels_of(self, column: str) -> np.ndarray:
        return np.r_[self.mem.labels[column].to_numpy(str),
                     self.non.labels[column].to_numpy(str)]


def record_membership(g: AuditGame) -> RiskResult:
    """Record membership: every registered membership attacker, cross-fitted."""
    X, member, people = g.candidates()
    t = g.tables
    scores = _played(g, lambda rel, view, key: attack_scores(
        g.ctx, view(X), g.labels_of(t.interest), rel, t.released.labels,
        view(g.reference.X), -np.ones(member.size, np.int64), None,
        g.ctx.attack_cache.setdefault("record" + key, {}), cand_ids=people, level="record"))
    risk = MembershipRisk(g.ctx, g.level)
    risk.people_ = people  # folds and interval by identity where 20 or more people
    units = people if np.unique(people).size >= MIN_IDENTITY_LEVEL else None
    return risk._judge(scores, member, "record", risk.people_ if units is not None else None)


def identity_membership(g: AuditGame) -> RiskResult:
    """Identity membership: INPUT's people against HOLDOUT candidates' people absent from
    INPUT, each scored by the mean of its records' scores (20 or more on each side)."""
    t = g.tables
    mem_ids, non_ids = identity_sides(t, g.split)
    target = g.level.identity
    if mem_ids.size < 20 or non_ids.size < 20:
        return not_covered("membership", "identity", "advantage", target,
                           f"{mem_ids.size} people in INPUT, {non_ids.size} non-member "
                           "people in HOLDOUT: who is in the release needs 20 or more on each "
                           "side (HOLDOUT records of other people)", 0.0, BASELINE_NAME)
    X, member, people = g.candidates()
    keep = member | np.isin(people, non_ids)
    X, member, people = X[keep], member[keep], people[keep]
    lab = g.labels_of(t.interest)[keep]
    scores = _played(g, lambda rel, view, key: attack_scores(
        g.ctx, view(X), lab, rel, t.released.labels, view(g.reference.X),
        -np.ones(member.size, np.int64), people,
        g.ctx.attack_cache.setdefault("identity" + key, {}), cand_ids=people, level="group"))
    uniq, codes = np.unique(people, return_inverse=True)
    unit_member = _by_group(member.astype(float), codes, uniq.size) > 0.5
    rng = g.ctx.rng("membership/identity")
    adv = crossfit_advantage(scores, unit_member, None, None, rng, "identities")
    r = MembershipRisk(g.ctx, g.level)._result(adv, "identity", scores, unit_member, None)
    r.extras.update({"n_identities": int(uniq.size),
                     "method": "each person scored by the mean of its records' scores; "
                               "INPUT's people against HOLDOUT's people absent from INPUT; "
                               + str(r.extras.get("method", ""))})
    return r


def record_inference(g: AuditGame) -> RiskResult:
    """Inference on members: every registered inference attacker on the kept labels."""
    X, member, people = g.candidates()
    t = g.tables
    truth = {c: g.labels_of(c) for c in t.kept}
    hits = _played(g, lambda rel, view, key: _hits(
        g.ctx, view(X), truth, rel, t.released.labels, people, -np.ones(member.size, np.int64),
        g.ctx.attack_cache.setdefault("record" + key, {}), "record"))
    return InferenceRisk(g.ctx, g.level)._judge(hits, member, None, "record", people)


def identity_inference(g: AuditGame) -> RiskResult:
    """Inference on members at the identity level: the same attackers as
    :func:`record_inference`, on INPUT's people against HOLDOUT candidates' people absent
    from INPUT (20 or more on each side, as identity membership), the person the unit of the
    halves and of the interval."""
    t = g.tables
    mem_ids, non_ids = identity_sides(t, g.split)
    target = g.level.identity
    if mem_ids.size < 20 or non_ids.size < 20:
        return not_covered("inference", "identity", "advantage", target,
                           f"{mem_ids.size} people in INPUT, {non_ids.size} non-member "
                           "people in HOLDOUT: what the release tells about a person needs "
                           "20 or more on each side (HOLDOUT records of other people)",
                           float("nan"), INFERENCE_BASELINE)
    X, member, people = g.candidates()
    keep = member | np.isin(people, non_ids)
    X, member, people = X[keep], member[keep], people[keep]
    truth = {c: g.labels_of(c)[keep] for c in t.kept}
    hits = _played(g, lambda rel, view, key: _hits(
        g.ctx, view(X), truth, rel, t.released.labels, people, -np.ones(member.size, np.int64),
        g.ctx.attack_cache.setdefault("identity" + key, {}), "identity"))
    _, units = np.unique(people, return_inverse=True)
    risk = InferenceRisk(g.ctx, g.level)
    adv = inference_advantage(hits, member, None, units, g.ctx.rng("inference/identity"),
                              "identities")
    r = risk._result(adv, "identity", hits, member)
    r.extras.update({"n_identities": int(units.max()) + 1,
                     "method": "INPUT's people against HOLDOUT's people absent from INPUT, "
                               "the person the unit; " + str(r.extras.get("method", ""))})
    return r


def recognition(g: AuditGame, target: float, models: tuple[str, ...] = DEFAULT_MODELS
                ) -> tuple[RiskResult, dict[str, Any]]:
    """Recognition of the sensitive attribute: recognizers trained on RELEASED with its
    sensitive labels, probing HOLDOUT's records; the same trained on INPUT give the clear
    level beside it. Where the release carries codes rather than names (pseudonyms, a subject
    code, a file name) and HOLDOUT holds INPUT's people, its records are labelled with the
    names the attacker reads into the codes from its clear records (:mod:`.linkage`), and the
    recognizers probe HOLDOUT's candidate half. Not measured (said) otherwise."""
    t = g.tables
    s = t.sensitive
    probes = recognition_probes(t)
    y_all = t.holdout.labels[s].to_numpy(str)[probes]
    readings: list[tuple[str, np.ndarray]] = []
    if probes.size >= MIN_PROBES and np.unique(y_all).size >= 2:
        readings.append(("", t.released.labels[s].to_numpy(str)))
    else:  # codes the attacker names by its clear records, where the split allows
        linked = linkage_probes(t, g.split)
        y_linked = t.holdout.labels[s].to_numpy(str)[linked]
        if linked.size >= MIN_PROBES and np.unique(y_linked).size >= 2:
            readings = [(f"{k.key} named by the clear records: ", k.names)
                        for k in linkages(t, g.split)]
            if readings:
                probes, y_all = linked, y_linked
    if not readings:
        why = (f"RELEASED carries no '{s}' column: no recognizer can be trained on released "
               f"records labelled with it (the risk cannot be measured on this release; "
               f"where the release process judged it, accept it by name on that word)"
               if not t.released_has_sensitive else
               f"too few HOLDOUT records ({probes.size}) of the '{s}' values the release "
               f"carries (recognition needs {MIN_PROBES} or more, of 2 values or more)")
        return not_covered("recognition", "record", "advantage", target, why), {}
    P = t.holdout.subset(probes)
    y = P.labels[s].to_numpy(str)
    preds, clear = {}, {}
    released, y_rel = t.released, readings[0][1]
    for n, (reading, y_all_rel) in enumerate(readings):
        values, counts = np.unique(y_all_rel, return_counts=True)
        trained = np.isin(y_all_rel, values[counts >= 2])  # values on 2 or more records
        if n == 0:  # the label-only control reads the first reading's labels
            released = t.released if trained.all() else t.released.subset(
                np.flatnonzero(trained))
            y_rel = y_all_rel[trained]
        for prefix, X_rel, view, _ in _views(g):  # as it is; rescaled or sorted where it needs
            X_fit, probe = (X_rel if trained.all() else X_rel[trained]), view(P.X)
            for m in models:
                preds[f"{reading}{prefix}trained on RELEASED / {model_name(m)}"] = np.asarray(
                    make_recognizer(m, g.seed).fit(X_fit, y_all_rel[trained]).predict(probe)
                ).astype(str)
    y_in = t.members.labels[s].to_numpy(str)
    for m in models:
        clear[model_name(m)] = float(np.mean(
            np.asarray(make_recognizer(m, g.seed).fit(t.members.X, y_in).predict(P.X))
            .astype(str) == y))
    ctrl = control_rate(released.labels, y_rel, P.labels, y, list(t.kept))
    ctx = RiskContext(None, None, None, None, t.interest, s,  # type: ignore[arg-type]
                      list(t.kept), None, g.seed, predictions=preds, truth=y,
                      chance=chance_level(y), control=ctrl)
    res = RecognitionRisk(ctx, target).evaluate().results()[0]
    res.extras.update({"clear_accuracy": clear, "n_probes": int(probes.size),
                       "released_records_trained": int(len(y_rel)),
                       "control": ctrl.to_dict(),
                       "probes": f"HOLDOUT records whose '{s}' the release carries"
                       if readings[0][0] == "" else
                       f"HOLDOUT's candidate half's records of INPUT's people (the release's "
                       f"codes named by the reference half's clear records: "
                       f"{', '.join(r[0].split(' named by')[0] for r in readings)})"})
    return res, {"accuracy": res.extras.get("accuracy"), "clear": clear}


def label_join(g: AuditGame) -> RiskResult:
    """The release's join check on the kept labels: the share of INPUT's records whose
    sensitive value a join of their kept label values on INPUT's labels names (commonest
    value per combination), against the larger of chance and the interest alone, times
    :data:`bioanon.release.JOIN_FACTOR`."""
    t = g.tables
    labels = t.members.labels
    rate = join_rate(labels, list(t.kept), t.sensitive)
    reference = max(join_rate(labels, [], t.sensitive),
                    join_rate(labels, [t.interest], t.sensitive))
    limit = min(1.0, JOIN_FACTOR * reference)
    n = int(len(labels))
    ci = wilson_interval(int(round(rate * n)), n)
    ok = rate <= limit + 1e-12
    return RiskResult(
        "label-join", "record", "rate", rate, (float(ci[0]), float(ci[1])),
        f"join of the kept labels {list(t.kept)} on INPUT's labels", reference,
        "the interest alone or chance", limit, "met" if ok else "not met",
        f"rate {rate:.3f} {'≤' if ok else '>'} limit {limit:.3f} ({JOIN_FACTOR} × "
        f"{reference:.3f})", {"columns": list(t.kept), "n": n})


def utility(g: AuditGame, model: str = "forest") -> dict[str, Any]:
    """CAS of the interest: a model trained on RELEASED scored on HOLDOUT, beside the same
    trained on INPUT (the clear level) and chance."""
    t = g.tables
    col = t.interest
    y = t.holdout.labels[col].to_numpy(str)
    unit = unit_scale(t.members.X)  # the units the models read (1: as it is)

    def rate(train: FeatureTable) -> Rate:
        est = make_recognizer(model, g.seed).fit(in_units(train.X, unit),
                                                 train.labels[col].to_numpy(str))
        hits = int(np.sum(np.asarray(est.predict(in_units(t.holdout.X, unit))).astype(str)
                          == y))
        return Rate.from_counts(hits, y.size)

    cas, clear = rate(t.released), rate(t.members)
    return {"column": col, "model": model_name(model), "cas": cas.to_dict(),
            "clear": clear.to_dict(), "chance": chance_level(y), "n": int(y.size),
            "ratio": cas.value / clear.value if clear.value else float("nan"),
            "method": "trained on RELEASED, scored on every HOLDOUT record (CAS); the same "
                      "model trained on INPUT beside it (clear)"}


def named_people(t: AuditTables) -> dict[str, Any]:
    """The finding of a release that carries the sensitive column: how many of INPUT's people
    its values name (``named_people``), and that in words (``named_note``, None when the
    release carries no such column). The membership and inference attackers read it
    (:mod:`bioanon.attack.released_person`): this says why their figures are what they are.

    >>> from bioanon.datasets import make_biometric
    >>> m = make_biometric(n_identities=4, records_per_identity=3, n_features=32)
    >>> t = AuditTables(m, m, m, "expression", "identity", [], [], 0, True)
    >>> named_people(t)["named_people"]
    4
    """
    s = t.sensitive
    if not t.released_has_sensitive:
        return {"named_people": 0, "named_note": None}
    from ..attack.released_person import form_words, name_forms, name_keys

    values = name_keys(t.released.labels[s].to_numpy())
    mem_forms = name_forms(np.unique(t.members.labels[s].to_numpy(str)))
    people = np.unique(mem_forms[""])
    hold = np.unique(t.holdout.labels[s].to_numpy(str))
    hold = hold[~np.isin(name_keys(hold), people)]
    hold_forms = name_forms(hold)
    others = np.unique(hold_forms[""])
    # each person named by its name or by a digest of it (the form naming the most)
    form = max(mem_forms, key=lambda f: (np.isin(mem_forms[f], values).sum(), f == ""))
    named = int(np.unique(mem_forms[""][np.isin(mem_forms[form], values)]).size)
    named_others = int(np.unique(hold_forms[""][np.isin(hold_forms[form], values)]).size)
    head = (f"RELEASED carries the sensitive column '{s}': its values{form_words(form)} "
            "name ")
    note = (f"{head}{named} of INPUT's {people.size} people (and {named_others} of HOLDOUT's "
            f"{others.size} other people), so a released record may be read back to its "
            "person without any feature (the membership and inference attackers read that "
            "column)" if named or named_others else
            f"{head}none of INPUT's or HOLDOUT's people (pseudonyms): no attacker reads a "
            "person off it, and the pooled attacker reads it as a link between a person's "
            "released records (their mean compared with the candidates)")
    return {"named_people": named, "named_holdout_people": named_others, "named_note": note}


def verdict_status(r: RiskResult) -> str:
    """A risk's status in the audit's verdict words: met / not met / not showable /
    accepted (by name, its estimate within the target)."""
    if r.status == INCONCLUSIVE:
        return "not showable at this size"
    if r.status == "accepted":
        return "accepted"
    return "met" if r.passes else "not met"


def above_target(risks: list[RiskResult]) -> list[dict[str, Any]]:
    """The risks this audit cannot show whose estimate is above the target anyway: the
    verdict says "not showable", and it must not hide that the figure read is already over
    the line (only the interval is too wide to decide). One ``{name, value, ci, target}``
    each, in the order given.

    Examples
    --------
    >>> r = RiskResult("membership", "identity", "advantage", 0.30, (0.13, 0.47), "nearest",
    ...                0.0, "no signal", 0.14, INCONCLUSIVE)
    >>> [x["name"] for x in above_target([r])]
    ['identity-membership']
    """
    return [{"name": r.name, "value": float(r.value), "ci": [float(c) for c in r.ci],
             "target": float(r.target)}
            for r in risks if r.status == INCONCLUSIVE and np.isfinite(r.value)
            and r.value > r.target]


def above_target_words(above: list[dict[str, Any]]) -> str:
    """:func:`above_target` in one clause ("" when there is none).

    >>> above_target_words([{"name": "identity-membership", "value": 0.298,
    ...                      "ci": [0.128, 0.469], "target": 0.14}]).split(": ")[1]
    'identity-membership +0.298 [+0.128, +0.469] > 0.14'
    """
    if not above:
        return ""
    head = ("estimate above its target, the interval too wide to decide" if len(above) == 1
            else f"{len(above)} estimates above their targets, the intervals too wide to "
                 "decide")
    return head + ": " + ", ".join(
        f"{x['name']} {x['value']:+.3f} [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}] > "
        f"{x['target']:g}" for x in above)


__all__ = ["ALIGNED", "ALIGN_TOLERANCE", "MATCHED", "MAX_CANDIDATES", "MAX_MATCHED_FEATURES",
           "REORDER_MARGIN", "SORTED", "AuditGame", "above_target", "above_target_words",
           "aligned_release", "matched_columns",
           "reordered_release",
           "identity_inference", "identity_membership", "label_join", "named_people",
           "recognition", "record_inference", "record_membership", "utility",
           "verdict_status"]
