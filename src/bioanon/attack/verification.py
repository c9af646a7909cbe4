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
    P = _unit((np.asarray(trials, dtype=np.float64) - mean) / scale)
    scores = P @ T.T
    same = y_trials[:, None] == ids[None, :]
    eer, lo, hi = bootstrap_eer(scores, same, n_boot=n_boot, seed=seed)
    return VerificationResult(mode, VOICEPRIVACY.get(mode, mode), eer, (lo, hi),
                              "clear" if mode == "naive" else "released the same way",
                              "released", int(same.sum()), int((~same).sum()))
