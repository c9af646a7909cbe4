"""Identity selection: smaller, harder evaluation sets (section 4.3.3 of the methodology paper).

Fewer identities make anonymization harder to get right: chance rises, and well-chosen
identities stay distinguishable. The strategies, each returning the identities to keep:

- ``random``: a random subset, repeated (mean and spread are reported);
- ``classification``: the identities a recognizer identifies best on anonymized data
  (per-identity recall from 3-fold cross-validated predictions on the anonymized training split);
- ``metadata``: identities far apart in their per-identity attributes (age, gender, accent...),
  each normalized to [0, 1] (categories one-hot), chosen farthest-first;
- ``distinctive``: identities with a small genuine score (largest distance of one of their
  records to their own mean) and a large imposter score (smallest distance of their mean to a
  record of another identity), ranked by the mean of the two ranks;
- ``center``: identities whose mean feature vectors lie far apart, chosen farthest-first.

Feature-space strategies work on the anonymized training records, standardized and projected
on their first principal components.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import BioanonError, suggest
from ..metrics import accuracy, chance_level, wilson_interval
from .parallel import is_parallel, parallel_map
from .recognizers import make_recognizer, single_threaded

STRATEGIES = ("random", "classification", "metadata", "distinctive", "center")


def parse_strategies(strategies: str | Sequence[str] | None) -> tuple[list[str], bool]:
    """Strategy names and whether they were asked for explicitly.

    ``"auto"`` (every strategy that applies; metadata is skipped when the table has no
    per-identity attribute), ``"all"`` (every strategy, strictly), ``"none"``/``None`` (no
    selection), or a comma-separated list.
    """
    if strategies is None:
        return [], False
    items = ([s.strip() for s in strategies.split(",") if s.strip()]
             if isinstance(strategies, str) else list(strategies))
    if not items and isinstance(strategies, str):  # '' or ',' (an unset variable) turned
        raise BioanonError(  # the selection off without a word
            f"selection={strategies!r} names no strategy; give auto, all, none or strategies "
            f"among {', '.join(STRATEGIES)}", parameter="selection")
    if items in ([], ["none"]):
        return [], False
    if items == ["auto"]:
        return list(STRATEGIES), False
    if items == ["all"]:
        return list(STRATEGIES), True
    for s in items:
        if s not in STRATEGIES:
            raise BioanonError(f"unknown selection strategy '{s}'{suggest(s, STRATEGIES)}; "
                               f"choose from {', '.join(STRATEGIES)}, auto or none")
    return [s for s in STRATEGIES if s in items], True


def parse_identity_counts(requested: Sequence[int] | str | None) -> Sequence[int] | None:
    """The identity counts asked for, their form checked (whole numbers, each at least 2);
    the table's size is :func:`identity_counts`' to check. The form was once checked against
    a table of 2**31 identities, so a count past it was refused as "there are only
    2147483648" for a table of 8.

    >>> parse_identity_counts("3,6")
    [3, 6]
    """
    if isinstance(requested, str):
        typed = requested
        try:
            requested = [int(v) for v in requested.split(",") if v.strip()]
        except ValueError:
            raise BioanonError(f"identities='{typed}' must be whole numbers, e.g. "
                               "identities=3,6,12", parameter="identities") from None
        if not requested:  # ',' or '': the default was taken without a word
            raise BioanonError(f"identities='{typed}' names no identity count; give whole numbers, "
                               "e.g. identities=3,6,12 (or leave it out for 50%, 25%, ... of "
                               "the identities)", parameter="identities")
    bad = [c for c in requested or () if c < 2]
    if bad:
        raise BioanonError(f"identity count {bad[0]} is too small; ask for at least 2")
    return requested


def identity_counts(n_identities: int, requested: Sequence[int] | str | None = None) -> list[int]:
    """Numbers of identities to evaluate: 50%, 25%, 12.5%, ... of them, down to 3.

    Examples
    --------
    >>> identity_counts(23)
    [11, 5, 3]
    >>> identity_counts(6)
    [3]
    >>> identity_counts(23, "3,6")
    [6, 3]
    """
    requested = parse_identity_counts(requested)
    if requested:
        big = [c for c in requested if c > n_identities]
        if big:
            raise BioanonError(f"asked for {max(big)} identities but there are only "
                               f"{n_identities}; lower identities= to at most {n_identities}",
                               parameter="identities")
        return sorted(set(int(c) for c in requested), reverse=True)
    if n_identities <= 3:
        return []
    out, m = [], n_identities // 2
    while m >= 3:
        out.append(m)
        m //= 2
    if not out or out[-1] > 3:
        out.append(3)
    return out


def metadata_columns(labels: pd.DataFrame, identity: str,
                     exclude: Sequence[str] = ()) -> list[str]:
    """Label columns with one value per identity (its attributes), minus ``exclude``."""
    cols = [c for c in labels.columns if c != identity and c not in exclude]
    if not cols:
        return []
    per_id = labels.groupby(identity, sort=False)[cols].nunique(dropna=False)
    return [c for c in cols if (per_id[c] == 1).all() and labels[c].nunique() > 1]


def _identity_matrix(labels: pd.DataFrame, identity: str, columns: Sequence[str],
                     ids: np.ndarray) -> np.ndarray:
    """Per-identity attribute vectors in [0, 1]: numbers min-max scaled, categories one-hot."""
    first = labels.groupby(identity, sort=False)[list(columns)].first().loc[ids]
    parts = []
    for c in columns:
        v = first[c]
        if pd.api.types.is_numeric_dtype(v):
            x = v.to_numpy(np.float64)
            span = x.max() - x.min()
            parts.append(((x - x.min()) / span if span > 0 else np.zeros_like(x))[:, None])
        else:
            parts.append(pd.get_dummies(v.astype(str)).to_numpy(np.float64))
    return np.hstack(parts)


def farthest_first(points: np.ndarray, n: int) -> np.ndarray:
    """Indices of ``n`` points: the farthest pair, then repeatedly the point farthest from the
    mean of those chosen (ties broken by position)."""
    d = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    i, j = np.unravel_index(np.argmax(d), d.shape)
    chosen = [int(min(i, j)), int(max(i, j))]
    while len(chosen) < n:
        centre = points[chosen].mean(axis=0)
        dist = np.linalg.norm(points - centre, axis=1)
        dist[chosen] = -np.inf
        chosen.append(int(np.argmax(dist)))
    return np.asarray(chosen[:n])


def embed(X: np.ndarray, n_components: int = 10, seed: int = 0) -> np.ndarray:
    """Standardized records projected on their first principal components."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    Z = StandardScaler().fit_transform(np.asarray(X, dtype=np.float64))
    k = max(1, min(n_components, Z.shape[0] - 1, Z.shape[1]))
    return PCA(n_components=k, random_state=seed).fit_transform(Z)


def _means(F: np.ndarray, y: np.ndarray, ids: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(ids, y)
    sums = np.zeros((ids.size, F.shape[1]))
    np.add.at(sums, codes, F)
    return sums / np.bincount(codes, minlength=ids.size)[:, None]


def distinctive_scores(F: np.ndarray, y: np.ndarray,
                       ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Genuine (intra-class, lower is better) and imposter (inter-class, higher is better)
    scores per identity in ``ids`` order."""
    codes = np.searchsorted(ids, y)
    means = _means(F, y, ids)
    own = np.linalg.norm(F - means[codes], axis=1)
    genuine = np.full(ids.size, -np.inf)
    np.maximum.at(genuine, codes, own)
    to_all = np.linalg.norm(means[:, None, :] - F[None, :, :], axis=2)  # ids × records
    to_all[codes, np.arange(F.shape[0])] = np.inf
    return genuine, to_all.min(axis=1)


def select_identities(strategy: str, n: int, ids: np.ndarray, *, rng: np.random.Generator,
                      features: np.ndarray | None = None, y: np.ndarray | None = None,
                      per_identity_accuracy: np.ndarray | None = None,
                      metadata: np.ndarray | None = None) -> np.ndarray:
    """The ``n`` identities (from sorted ``ids``) one strategy keeps."""
    if strategy == "random":
        return np.sort(rng.choice(ids, size=n, replace=False))
    if strategy == "classification":
        assert per_identity_accuracy is not None
        return ids[np.argsort(-per_identity_accuracy, kind="stable")[:n]]
    if strategy == "metadata":
        assert metadata is not None
        return ids[farthest_first(metadata, n)]
    if strategy == "center":
        assert features is not None and y is not None
        return ids[farthest_first(_means(features, y, ids), n)]
    if strategy == "distinctive":
        assert features is not None and y is not None
        genuine, imposter = distinctive_scores(features, y, ids)
        rank = (np.argsort(np.argsort(genuine, kind="stable"), kind="stable")
                + np.argsort(np.argsort(-imposter, kind="stable"), kind="stable"))
        return ids[np.argsort(rank / 2.0, kind="stable")[:n]]
    raise BioanonError(f"unknown selection strategy '{strategy}'; choose from "
                       f"{', '.join(STRATEGIES)}")


def per_identity_accuracy(model: Any, X: np.ndarray, y: np.ndarray, ids: np.ndarray,
                          seed: int, n_jobs: int | None = None) -> np.ndarray:
    """Recall of each identity under 3-fold cross-validated predictions of ``model``.

    The folds are fitted as parallel tasks (each single-threaded) when ``n_jobs`` allows it.
    """
    folds = int(min(3, np.unique(y, return_counts=True)[1].min()))
    if folds < 2:
        raise BioanonError("the classification strategy needs at least 2 training records per "
                           "identity; drop rare identities")
    from sklearn.model_selection import StratifiedKFold

    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    splits = list(cv.split(X, y))
    single = is_parallel(n_jobs, len(splits))
    pred = np.empty_like(y)
    outs = parallel_map(_fold_predict, [(model, seed, X, y, tr, te, single)
                                        for tr, te in splits], n_jobs, len(splits))
    for (_, te), p in zip(splits, outs, strict=True):
        pred[te] = p
    codes = np.searchsorted(ids, y)
    return np.bincount(codes, weights=(pred == y), minlength=ids.size) / np.bincount(
        codes, minlength=ids.size)


def _fold_predict(model: Any, seed: int, X: np.ndarray, y: np.ndarray, tr: np.ndarray,
                  te: np.ndarray, single: bool) -> np.ndarray:
    est = make_recognizer(model, seed)
    if single:
        single_threaded(est)
    return est.fit(X[tr], y[tr]).predict(X[te])


def _score_subset(model: Any, seed: int, X_fit: np.ndarray, y_fit: np.ndarray,
                  X_probe: np.ndarray, y_probe: np.ndarray, keep: np.ndarray,
                  single: bool) -> dict[str, Any]:
    tr, te = np.isin(y_fit, keep), np.isin(y_probe, keep)
    est = make_recognizer(model, seed)
    if single:
        single_threaded(est)
    est.fit(X_fit[tr], y_fit[tr])
    pred = est.predict(X_probe[te])
    hits = int(np.sum(pred == y_probe[te]))
    return {"accuracy": accuracy(y_probe[te], pred), "hits": hits, "n": int(te.sum()),
            "chance": chance_level(y_probe[te])}


def selection_curves(X_fit: np.ndarray, y_fit: np.ndarray, X_probe: np.ndarray,
                     y_probe: np.ndarray, *, model: Any, strategies: Sequence[str],
                     counts: Sequence[int], anon_train: np.ndarray,
                     metadata: np.ndarray | None = None, n_random: int = 10, seed: int = 0,
                     n_jobs: int | None = -1) -> dict[str, Any]:
    """Accuracy of one attacker against the number of identities, per strategy.

    Parameters
    ----------
    X_fit, y_fit : the attacker's training records (its mode's training set) and identities
    X_probe, y_probe : the records it is scored on and their identities
    model : recognizer name or estimator
    strategies, counts : which strategies, and how many identities each keeps
    anon_train : anonymized training records (features of the feature-space strategies and
        of the classification strategy's recognizer)
    metadata : (n_identities, m) per-identity attributes in [0, 1], sorted like the identities
    n_random : repeats of the random strategy
    seed : seed of the random draws and the recognizers

    Returns
    -------
    dict ``{strategy: [points]}``; each point has ``n_identities``, ``accuracy``, ``chance``
    and, for random, ``std``, ``min``, ``max`` and ``runs``; otherwise ``ci`` and
    ``identities``.
    """
    y_fit, y_probe = np.asarray(y_fit), np.asarray(y_probe)
    ids = np.unique(y_fit)
    rng = np.random.default_rng(seed)
    feats = embed(anon_train, seed=seed) if {"center", "distinctive"} & set(strategies) else None
    acc_id = (per_identity_accuracy(model, anon_train, y_fit, ids, seed, n_jobs)
              if "classification" in strategies else None)
    tasks: list[tuple[str, int, np.ndarray]] = []
    for s in strategies:
        for n in counts:
            for _ in range(n_random if s == "random" else 1):
                keep = select_identities(s, n, ids, rng=rng, features=feats, y=y_fit,
                                         per_identity_accuracy=acc_id, metadata=metadata)
                tasks.append((s, n, keep))
    # a subset drawn twice (random repeats of few identities, or a strategy that picks what a
    # random draw picked) is fitted once: same records, same seed, the same attacker
    distinct = list(dict.fromkeys(tuple(np.sort(keep)) for _, _, keep in tasks))
    single = is_parallel(n_jobs, len(distinct))
    scored = dict(zip(distinct, parallel_map(
        _score_subset, [(model, seed, X_fit, y_fit, X_probe, y_probe, np.asarray(keep), single)
                        for keep in distinct], n_jobs, len(distinct)), strict=True))
    outs = [scored[tuple(np.sort(keep))] for _, _, keep in tasks]
    curves: dict[str, list[dict[str, Any]]] = {s: [] for s in strategies}
    for s in strategies:
        for n in counts:
            runs = [(t, o) for t, o in zip(tasks, outs, strict=True) if t[0] == s and t[1] == n]
            accs = np.array([o["accuracy"] for _, o in runs])
            point: dict[str, Any] = {"n_identities": int(n), "accuracy": float(accs.mean()),
                                     "chance": float(np.mean([o["chance"] for _, o in runs]))}
            if s == "random":
                point.update(std=float(accs.std()), min=float(accs.min()),
                             max=float(accs.max()), runs=[float(a) for a in accs])
            else:
                (_, _, keep), o = runs[0]
                point.update(ci=list(wilson_interval(o["hits"], o["n"])),
                             identities=[str(i) for i in keep])
            curves[s].append(point)
    return curves
