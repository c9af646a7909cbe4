"""The registered membership and inference attackers: the certificate judges all of them.

Adding an attacker is one module (a function ``Game -> {name: score or guess per unit}`` and an
:class:`~bioanon.attack.game.Attacker` naming it and saying what it knows), one line in
:data:`MEMBERSHIP` or :data:`INFERENCE` below, and one test. The evaluation's membership and
inference risks (:mod:`bioanon.evaluation.risks`) run every attacker listed here on every
game and let the cross-fitted advantage choose among them on one half of the candidates (and
score the choice on the other), so a new attacker can only raise the judged figure, never
bias it. ``docs/attackers.md`` describes each (the threat model).

Examples
--------
>>> [a.name for a in MEMBERSHIP][:3]
['tracing', 'density ratio', 'nearest released']
>>> sorted({a.risk for a in MEMBERSHIP + INFERENCE})
['inference', 'membership']
"""

from __future__ import annotations

from . import parametric, pooled, released_person, shadow
from .density import density_scores_multi
from .game import Attacker, Game, Scores, run_attackers
from .inference_labels import centroid_labels, nearest_labels
from .membership import membership_scores
from .tracing import traced_labels, tracing_scores


def _tracing(game: Game) -> Scores:
    lab = game.candidate_labels.get(game.interest)
    return {(f"tracing, best {top}" if top == 1 else f"tracing, best g={top}"):
            tracing_scores(game.candidates, game.released, game.released_labels[game.interest],
                           lab, top=top, groups=game.groups) for top in game.tops}


def _density(game: Game) -> Scores:
    dens = density_scores_multi(game.candidates, game.released, game.reference, ks=(1, 5),
                                candidate_in_reference=game.in_reference,
                                reference_cache=game.cache.setdefault("density", {}))
    return {f"density ratio (DOMIAS-style, k={k})": game.per_unit(v) for k, v in dens.items()}


def _nearest(game: Game) -> Scores:
    return {k.replace("_", " "): game.per_unit(v)
            for k, v in membership_scores(game.candidates, game.released).items()}


def _nearest_labels(game: Game) -> Scores:
    out: Scores = {}
    for col in game.targets:
        out[f"nearest released, '{col}'"] = nearest_labels(
            game.candidates, game.released, game.released_labels[col])
        out[f"nearest released class mean, '{col}'"] = centroid_labels(
            game.candidates, game.released, game.released_labels[col])
    return out


def _traced_labels(game: Game) -> Scores:
    out: Scores = {}
    for col in game.targets:
        for top in game.tops:
            out[f"tracing, best {top if top == 1 else f'g={top}'}, '{col}'"] = traced_labels(
                game.candidates, game.released, game.released_labels[col], top=top)
    return out


#: every membership attacker, in the order they run (the shadow attacker last: it learns a
#: score from the others' scores on releases the attacker makes itself)
MEMBERSHIP: list[Attacker] = [
    Attacker("tracing", "membership",
             "knows the method and its set size g; centres released records and the "
             "candidate on their class means and averages the best 1 (and g) matches",
             _tracing),
    Attacker("density ratio", "membership",
             "holds a clear reference population; compares the release's density at the "
             "candidate with the reference's (k-th nearest neighbour distances, k = 1, 5)",
             _density),
    Attacker("nearest released", "membership",
             "compares the candidate with its nearest released record (cosine, calibrated "
             "by its nearest other candidate, Euclidean)", _nearest),
    parametric.MEMBERSHIP,
    released_person.MEMBERSHIP,
    pooled.MEMBERSHIP,
    shadow.MEMBERSHIP,
]
#: the cheap membership attackers a search's stage 1 screens every setting with first:
#: tracing and the density ratio (each one pass of candidates × released records; the density
#: ratio's reference side is shared by every setting) and the model-aware likelihood ratio
#: (class models refitted on the release and on the reference: a few tenths of a second, and
#: the one that reads a Gaussian synthesizer's members, which the other two miss — the demo's
#: ``synthetic`` settings, record membership 0.2–0.65). A setting they already put far above
#: every target is decided without the others
#: (:data:`bioanon.evaluation.risks.base.SCREEN_RULE`)
SCREEN: list[Attacker] = [*MEMBERSHIP[:2], parametric.MEMBERSHIP]
#: every inference attacker (each guess read as a membership test: right on members more
#: often than on non-members)
INFERENCE: list[Attacker] = [
    Attacker("nearest released labels", "inference",
             "reads the label of the nearest released record and of the nearest released "
             "class mean", _nearest_labels),
    Attacker("traced labels", "inference",
             "infers the class through the released records the candidate traces best to",
             _traced_labels),
    parametric.INFERENCE,
    released_person.INFERENCE,
    pooled.INFERENCE,
]


__all__ = ["INFERENCE", "MEMBERSHIP", "SCREEN", "run_attackers"]
