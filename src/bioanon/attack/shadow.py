"""The shadow-model attacker: run the method itself on records whose membership it knows.

For a method without a closed form (mixing, selective mean, k-Same, the sanitizer, the peers:
``release_model()`` is None) the attacker cannot refit a model. It knows the method and its
parameters, though, so it plays the game itself (Shokri et al. 2017; Stadler, Oprisanu &
Troncoso, "Synthetic data – anonymisation groundhog day", USENIX Security 2022; the TAPAS
toolbox): it splits its own clear reference population into shadow members and shadow
non-members the way the real game splits the table, releases the shadow members with a clone
of the method (its declared parameters, a fresh seed), computes every other registered
membership attacker's score of each shadow candidate against that shadow release, and learns
a logistic regression from those scores to shadow membership. The learnt score is then
applied to the same attackers' scores on the real release.

Scores enter as their rank within their release (a release of another size or scale gives
comparable features), so what is learnt is which attackers to trust and how to combine them.
Every weight is kept non-negative (a score keeps its attacker's direction, higher: member):
a reversed score reads how the game is built — a non-member is a record missing from its
own reference, which then holds one fewer of its person's records — not the release.

Cost (stated): :data:`SHADOWS` shadow releases per game, each of the method on about as many
records as the real release, and one run of the other attackers per shadow on about as many
candidates as the real game (capped at :data:`MAX_SHADOW_CANDIDATES` per side). So the
attacker costs about ``SHADOWS`` × (one release + one run of the other attackers): linear in
the method's own cost and, through the nearest-neighbour attackers, in candidates × released
records (quadratic in the table's size). The identity level's K releases share one learnt
score (one set of shadows per evaluation level). Methods that declare a release model are left
to the parametric attacker (no shadows).

"""

from __future__ import annotations

from typing import Any

import numpy as np

from .game import Attacker, Game, Scores, run_attackers

#: shadow releases per game (the stated cost)
SHADOWS = 2
#: shadow candidates per side at most
MAX_SHADOW_CANDIDATES = 2000
#: the name of the learnt score
NAME = "shadow model (logistic regression on the other attackers' scores)"


def _declared(anonymizer: Any) -> bool:
    get = getattr(anonymizer, "release_model", None)
    try:
        return callable(get) and get() is not None
    except Exception:  # noqa: BLE001 - a declaration that fails is no declaration
        return False


def _ranks(scores: dict[str, np.ndarray], names: list[str]) -> np.ndarray:
    """Each score as its rank within the release, in [0, 1] (columns in ``names`` order)."""
    from scipy.stats import rankdata  # not at import: scipy.stats costs seconds at start-up

    cols = []
    for k in names:
        s = np.nan_to_num(np.asarray(scores[k], np.float64), nan=-np.inf)
        cols.append((rankdata(s) - 0.5) / s.size)
    return np.stack(cols, axis=1)


def _within(codes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each record's rank among its group's records in a random order, and its group size."""
    order = rng.permutation(codes.size)
    order = order[np.argsort(codes[order], kind="stable")]
    sc = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sc)) + 1]
    counts = np.diff(np.r_[starts, sc.size])
    rank = np.empty(codes.size, np.int64)
    rank[order] = np.arange(sc.size) - np.repeat(starts, counts)
    size = np.empty(codes.size, np.int64)
    size[order] = np.repeat(counts, counts)
    return rank, size


def _fresh(anonymizer: Any, rng: np.random.Generator) -> Any:
    from sklearn.base import clone

    est = clone(anonymizer)
    params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
    if "random_state" in params:
        est.set_params(random_state=int(rng.integers(2**31 - 1)))
    return est


def _release(anonymizer: Any, inside: Any, outside: Any, rng: np.random.Generator
             ) -> np.ndarray:
    """The method applied to ``inside`` as the evaluation applies it (fitted on ``outside``
    first when it learns from auxiliary data)."""
    from ..table import FeatureTable

    est = _fresh(anonymizer, rng)
    if getattr(anonymizer, "fit_on_auxiliary", False):
        est.fit(outside, outside.labels)
        release = getattr(est, "release", None) or est.transform
        out = release(inside, inside.labels)
    else:
        out = est.fit_transform(inside, inside.labels)
    return np.asarray(out.X if isinstance(out, FeatureTable) else out, dtype=np.float32)


def _labels(table: Any, columns: Any) -> dict[str, np.ndarray]:
    return {c: table.labels[c].astype(str).to_numpy() for c in columns
            if c in table.labels.columns}


def _shadow_game(game: Game, rng: np.random.Generator) -> tuple[Game, np.ndarray] | None:
    """One shadow game on the reference and the shadow membership of its units."""
    table, sens = game.reference_table, game.sensitive
    if table is None or sens is None or sens not in table.labels.columns:
        return None
    n = table.n_records
    ids = table.labels[sens].astype(str).to_numpy()
    people, codes = np.unique(ids, return_inverse=True)
    rank, size = _within(codes, rng)
    cols = list(game.reference_labels)
    if game.level == "identity":
        # the real game: a share q of each person's records released for about 2/3 of the
        # people; the candidates are their other records, the reference those same records
        q = min(0.5, game.n_released / max(n, 1))
        part = rank < np.maximum(1, np.round(q * size)).astype(np.int64)
        person_in = rng.permutation(people.size) < int(round(people.size * 2 / 3))
        rel_rows = np.flatnonzero(part & person_in[codes])
        cand = np.flatnonzero(~part)
        if rel_rows.size < 4 or cand.size < 4:
            return None
        inside = table.subset(rel_rows)
        outside = table.subset(cand)
        X = _release(game.anonymizer, inside, outside, rng)
        member = person_in[codes[cand]]
        g = Game(table.X[cand], _labels(outside, game.candidate_labels), X,
                 _labels(inside, game.released_labels), table.X[cand], _labels(outside, cols),
                 ids[cand], ids[cand], np.arange(cand.size), game.interest, groups=ids[cand],
                 anonymizer=game.anonymizer, n_released=rel_rows.size, tops=game.tops,
                 seed=int(rng.integers(2**31 - 1)), level="identity", sensitive=sens)
        _, gcodes = np.unique(ids[cand], return_inverse=True)
        unit_member = np.bincount(gcodes, weights=member) > 0
        return g, unit_member
    # record level: a share of each person's records released (as the closed-set split)
    q = min(0.5, game.n_released / max(n, 1))
    inside_mask = rank < np.maximum(1, np.round(q * size)).astype(np.int64)
    rel_rows, out_rows = np.flatnonzero(inside_mask), np.flatnonzero(~inside_mask)
    if rel_rows.size < 4 or out_rows.size < 4:
        return None
    inside, outside = table.subset(rel_rows), table.subset(out_rows)
    X = _release(game.anonymizer, inside, outside, rng)
    cap = MAX_SHADOW_CANDIDATES
    mem = rel_rows if rel_rows.size <= cap else np.sort(rng.choice(rel_rows, cap, False))
    non_pos = np.arange(out_rows.size)
    if non_pos.size > cap:
        non_pos = np.sort(rng.choice(non_pos, cap, False))
    cand = np.r_[mem, out_rows[non_pos]]
    cand_table = table.subset(cand)
    g = Game(table.X[cand], _labels(cand_table, game.candidate_labels), X,
             _labels(inside, game.released_labels), outside.X, _labels(outside, cols),
             ids[out_rows], ids[cand], np.r_[-np.ones(mem.size, np.int64), non_pos],
             game.interest, anonymizer=game.anonymizer, n_released=rel_rows.size,
             tops=game.tops, seed=int(rng.integers(2**31 - 1)), level="record",
             sensitive=sens)
    return g, np.r_[np.ones(mem.size, bool), np.zeros(non_pos.size, bool)]


def _learn(game: Game) -> tuple[Any, list[str]] | None:
    """The logistic regression learnt on :data:`SHADOWS` shadow games (or None)."""
    from sklearn.linear_model import LogisticRegression

    from ..errors import BioanonError

    others = [a for a in game.cache.get("panel") or [] if a.run is not shadow_scores]
    if not others:
        return None
    feats, ys = [], []
    names: list[str] | None = None
    for i in range(SHADOWS):
        rng = game.rng(f"shadow/{game.level}/{i}")
        try:
            made = _shadow_game(game, rng)
        except (BioanonError, ValueError, np.linalg.LinAlgError):
            made = None  # a shadow the method refuses (too few records of a class...)
        if made is None:
            continue
        g, member = made
        s = run_attackers(others, g)
        keys = sorted(k for k, v in s.items() if np.asarray(v).shape == member.shape)
        names = keys if names is None else [k for k in names if k in keys]
        feats.append(s)
        ys.append(member)
    if not feats or not names:
        return None
    X = np.vstack([_ranks(f, names) for f in feats])
    y = np.concatenate(ys)
    if y.all() or not y.any():
        return None
    # every attacker's score keeps its own direction (higher: member), as the cross-fitted
    # advantage reads them: a negative weight would read how the game is built (a
    # non-member is its own reference's missing record, one fewer of its person's records
    # there) rather than the release, so such features are dropped and the rest refitted
    keep = list(range(len(names)))
    while keep:
        model = LogisticRegression(C=1.0, max_iter=500).fit(X[:, keep], y)
        neg = [k for k, w in zip(keep, model.coef_[0], strict=True) if w < 0]
        if not neg:
            return model, [names[k] for k in keep]
        keep = [k for k in keep if k not in neg]
    return None


def shadow_scores(game: Game) -> Scores:
    """The learnt shadow score of each unit of the real game (empty for a method that
    declares a release model, or when no shadow game could be played)."""
    if game.anonymizer is None or _declared(game.anonymizer) or game.level == "group" \
            or not hasattr(game.anonymizer, "get_params"):
        return {}
    key = f"shadow/model/{game.level}"
    if key not in game.cache:
        game.cache[key] = _learn(game)
    learnt = game.cache[key]
    if learnt is None:
        return {}
    model, names = learnt
    real = game.cache.get("scores so far") or {}
    if not all(k in real for k in names):
        return {}
    return {NAME: model.decision_function(_ranks(real, names))}


MEMBERSHIP = Attacker(
    "shadow model", "membership",
    "knows the method and its parameters but no closed form of its model; runs the method "
    f"itself ({SHADOWS} shadow releases, fresh seeds) on its reference records, whose "
    "membership it knows, and learns a logistic regression from the other attackers' scores "
    "to membership, then applies it to the real release",
    shadow_scores)

__all__ = ["MAX_SHADOW_CANDIDATES", "MEMBERSHIP", "SHADOWS", "shadow_scores"]
