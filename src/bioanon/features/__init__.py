"""Feature extractors: raw biometric records in, FeatureTable out."""

from __future__ import annotations

import numpy as np

NONFINITE = "non-finite features (NaN or inf in the input samples); clean the recording"


def nonfinite_reason(vec: np.ndarray) -> str | None:
    """The skip reason for a feature vector with NaN or inf values, else None."""
    bad = int(np.size(vec) - np.isfinite(vec).sum())
    return f"{bad} {NONFINITE}" if bad else None
