"""The verification view (VoicePrivacy convention): EER of a same/different verifier.

Each identity is enrolled as the mean of its standardized enrolment records; every released
test record is a trial against every enrolled identity, scored by cosine similarity (target
trials: the record's own identity). The equal error rate is reported with a bootstrap interval
over trials' probes. Modes: ``naive`` enrols on clear records (VoicePrivacy's *ignorant*
attacker); ``parrot`` enrols on records released the same way (*semi-informed*). An EER near
0.5 means the verifier cannot tell; lower is worse for privacy.
"""

from __future__ import annotations

import numpy as np

from ..metrics.intervals import bootstrap_eer
from ..metrics.results import VerificationResult

VOICEPRIVACY = {"naive": "ignorant", "parrot": "semi-informed", "parrot25": "semi-informed",
                "parrot50": "semi-informed", "parrot75": "semi-informed",
                "reverse": "semi-informed (pseudonymous release)",
                "linkage": "informed of the originals"}


def _templates(E: np.ndarray, y: np.ndarray, ids: np.ndarray) -> np.ndarray:
    codes = np.searchsorted(ids, y)
    sums = np.zeros((ids.size, E.shape[1]))
    np.add.at(sums, codes, E)
    return sums / np.maximum(np.bincount(codes, minlength=ids.size), 1)[:, None]


def _unit(X: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n == 0, 1.0, n)


#: above this many trials the bootstrap works on binned scores (:func:`binned_bootstrap_eer`)
EXACT_TRIALS = 100_000
#: at most this many trials are scored (probes × enrolled identities): a larger table's
#: probes are a seeded random sample of ``MAX_TRIALS // identities`` of them, each against
#: every identity (the view's cost stops growing as probes × identities, i.e. as the square
#: of the records); its interval is then the bootstrap over the sampled probes, and
#: ``trials`` says how many of how many were scored
MAX_TRIALS = 20_000_000


def _binned_rates(t_hist: np.ndarray, n_hist: np.ndarray) -> np.ndarray:
    """EER per row of (resamples × bins) target / non-target counts, thresholds at bin edges."""
    t_tot = t_hist.sum(axis=1, keepdims=True)
    n_tot = n_hist.sum(axis=1, keepdims=True)
    zero = np.zeros((t_hist.shape[0], 1))
    frr = np.hstack([zero, np.cumsum(t_hist, axis=1)]) / np.maximum(t_tot, 1)
    far = 1.0 - np.hstack([zero, np.cumsum(n_hist, axis=1)]) / np.maximum(n_tot, 1)
    i = np.argmin(np.abs(frr - far), axis=1)
    rows = np.arange(frr.shape[0])
    return (frr[rows, i] + far[rows, i]) / 2


def sorted_eer(target: np.ndarray, nontarget: np.ndarray) -> float:
    """:func:`~bioanon.metrics.intervals.equal_error_rate`, the same value from one sort.

    Thresholds are every distinct score; at each, FRR = targets below it and FAR = non-targets
    at or above it; the first threshold of smallest ``|FRR - FAR|`` gives ``(FRR + FAR) / 2``.
    The non-target scores are sorted once and never merged with the targets (no ``unique`` of
    millions of trials).

    Examples
    --------
    >>> round(sorted_eer(np.array([0.9, 0.8, 0.3]), np.array([0.1, 0.2, 0.85])), 4)
    0.3333
    """
    t = np.sort(np.asarray(target, dtype=np.float64))
    nt = np.sort(np.asarray(nontarget, dtype=np.float64))
    if t.size == 0 or nt.size == 0:
        return float("nan")
    best: tuple[float, float, float] | None = None
    for thr, first_nt in ((t, np.searchsorted(nt, t, side="left")), (nt, _first_index(nt))):
        frr = np.searchsorted(t, thr, side="left") / t.size
        far = 1.0 - first_nt / nt.size
        gap = np.abs(frr - far)
        i = int(np.argmin(gap))
        cand = (float(gap[i]), float(thr[i]), float((frr[i] + far[i]) / 2))
        if best is None or cand[:2] < best[:2]:
            best = cand
    assert best is not None
    return best[2]


def _first_index(v: np.ndarray) -> np.ndarray:
    """Index of the first occurrence of each value of a sorted array."""
    new = np.r_[True, v[1:] != v[:-1]]
    return np.maximum.accumulate(np.where(new, np.arange(v.size), 0))


def _quantiles(v: np.ndarray, q: np.ndarray, rng: np.random.Generator,
               most: int = 1_000_000) -> np.ndarray:
    """Quantiles of ``v``, from a random sample of ``most`` values when it has more."""
    if v.size > most:
        v = v[rng.integers(0, v.size, most)]
    return np.quantile(v, q)


def binned_bootstrap_eer(scores: np.ndarray, same: np.ndarray, n_boot: int = 200,
                         seed: int = 0, n_bins: int = 2048,
                         confidence: float = 0.95) -> tuple[float, float, float]:
    """EER of a (probes × identities) score matrix, exact, with a binned bootstrap interval.

    The point estimate is exact (:func:`sorted_eer`, the value of
    :func:`~bioanon.metrics.intervals.equal_error_rate`, on every trial).
    For the interval each probe's trials are counted once into bins (edges at quantiles of the
    target and of the non-target scores, ``n_bins`` in all); a resample of probes is then a
    weighted sum of those counts, so 200 resamples cost one matrix product instead of 200
    sorts of every trial. Thresholds fall on bin edges: the bounds move by at most a bin's
    share of trials (about 1/``n_bins``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> same = np.eye(40, 8, dtype=bool)[:, :8] | (np.arange(40)[:, None] % 8 == np.arange(8))
    >>> scores = rng.normal(size=(40, 8)) + 2 * same
    >>> eer, lo, hi = binned_bootstrap_eer(scores, same, n_boot=50)
    >>> 0 <= lo <= eer <= hi <= 1
    True
    """
    scores, same = np.asarray(scores, dtype=np.float64), np.asarray(same, dtype=bool)
    eer = sorted_eer(scores[same], scores[~same])
    q = np.linspace(0, 1, n_bins // 2 + 1)[1:-1]
    rng = np.random.default_rng(seed)
    edges = np.unique(np.r_[_quantiles(scores[same], q, rng), _quantiles(scores[~same], q, rng)])
    n_probes, width = scores.shape[0], edges.size + 1
    cell = np.searchsorted(edges, scores, side="right")
    cell += (np.arange(n_probes) * width)[:, None]
    t_counts = np.bincount(cell[same], minlength=n_probes * width).reshape(n_probes, width)
    all_counts = np.bincount(cell.ravel(), minlength=n_probes * width).reshape(n_probes, width)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_probes, (n_boot, n_probes))
    picks += (np.arange(n_boot) * n_probes)[:, None]
    weights = np.bincount(picks.ravel(), minlength=n_boot * n_probes).reshape(n_boot, n_probes)
    weights = weights.astype(np.float64)
    boots = _binned_rates(weights @ t_counts, weights @ (all_counts - t_counts))
    alpha = (1 - confidence) / 2
    lo, hi = np.nanquantile(boots, [alpha, 1 - alpha])
    return (eer, float(lo), float(hi))


def verification(enrol: np.ndarray, y_enrol: np.ndarray, trials: np.ndarray,
                 y_trials: np.ndarray, mode: str, seed: int = 0,
                 n_boot: int = 200) -> VerificationResult:
    """EER of the cosine verifier enrolled on ``enrol`` and tested on ``trials``."""
    y_enrol = np.asarray(y_enrol).astype(str)
    y_trials = np.asarray(y_trials).astype(str)
    ids = np.unique(y_enrol)
    E = np.asarray(enrol, dtype=np.float64)
    mean, scale = E.mean(axis=0), E.std(axis=0)
    scale = np.where(scale == 0, 1.0, scale)
    T = _unit(_templates((E - mean) / scale, y_enrol, ids))
    trials, y_trials, scored = probe_sample(np.asarray(trials), y_trials, ids.size, seed)
    P = _unit((np.asarray(trials, dtype=np.float64) - mean) / scale)
    scores = P @ T.T
    same = y_trials[:, None] == ids[None, :]
    if scores.size > EXACT_TRIALS:
        eer, lo, hi = binned_bootstrap_eer(scores, same, n_boot=n_boot, seed=seed)
    else:
        eer, lo, hi = bootstrap_eer(scores, same, n_boot=n_boot, seed=seed)
    return VerificationResult(mode, VOICEPRIVACY.get(mode, mode), eer, (lo, hi),
                              "clear" if mode == "naive" else "released the same way",
                              f"released{scored}", int(same.sum()), int((~same).sum()))


def probe_sample(trials: np.ndarray, y_trials: np.ndarray, n_ids: int, seed: int,
                 max_trials: int | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """The probes scored: all of them, or a seeded random sample when every probe against
    every identity would exceed ``max_trials`` trials (None: :data:`MAX_TRIALS` as it is
    now); and the words that say so.

    >>> X, y = np.zeros((50, 2)), np.arange(50).astype(str)
    >>> probe_sample(X, y, 10, 0)[2]
    ''
    >>> Xs, ys, words = probe_sample(X, y, 10, 0, max_trials=100)
    >>> Xs.shape, words
    ((10, 2), ' (a seeded random sample of 10 of 50 probes, each against every identity)')
    """
    n = trials.shape[0]
    rows = bounded_rows(n, n_ids, [seed, n, n_ids], max_trials)
    if rows is None:
        return trials, y_trials, ""
    return (trials[rows], y_trials[rows],
            f" (a seeded random sample of {rows.size:,} of {n:,} probes, each against every "
            "identity)")


def bounded_rows(n: int, n_ids: int, key: list[int], max_trials: int | None = None
                 ) -> np.ndarray | None:
    """None when ``n`` probes against ``n_ids`` identities stay within ``max_trials`` scores
    (None: :data:`MAX_TRIALS` as it is now); else a sorted random sample of
    ``max_trials // n_ids`` of the ``n`` rows, drawn by a generator seeded with ``key``.

    >>> bounded_rows(50, 10, [0]) is None, bounded_rows(50, 10, [0], max_trials=100).size
    (True, 10)
    """
    most = max(1, (MAX_TRIALS if max_trials is None else max_trials) // max(n_ids, 1))
    if n <= most:
        return None
    return np.sort(np.random.default_rng(key).choice(n, most, replace=False))
