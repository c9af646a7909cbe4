"""Shared by the tests of public records (a declared DP budget's bounds, a public basis): a
small table split into people to release and other people as public records, and the fast,
loose search options those tests run with (their subject is the statement, not the risks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from bioanon.datasets import make_biometric
from bioanon.release import Roles
from bioanon.table import FeatureTable

#: one setting evaluated (the time budget stops the search after the first), then confirmed
FAST: dict[str, Any] = {"models": ["knn"], "attackers": "naive,parrot", "n_jobs": 1,
                        "budget_minutes": 1e-6, "target": 0.5}
FAST_CLI = ["--models", "knn", "--attackers", "naive,parrot", "--jobs", "1",
            "--budget-minutes", "0.000001", "--target-advantage", "0.5"]
ROLES = Roles(sensitive="identity", interest="expression")
PUBLIC_PEOPLE = ["person00", "person01"]


def loose(why: str) -> dict[str, Any]:
    """A level every small release meets, no utility floor, the identity level accepted."""
    return {"level": 0.99, "min_utility": 0,
            "accept_risks": {"identity-membership": why, "identity-inference": why}}


def loose_cli(why: str) -> list[str]:
    """:func:`loose` as ``bioanon release`` flags."""
    return ["--level", "0.99", "--min-utility", "0",
            "--accept-risk", "identity-membership", "--reason", why,
            "--accept-risk", "identity-inference", "--reason", why]


def private_and_public() -> tuple[FeatureTable, FeatureTable]:
    """(private, public): 10 people to release, 2 other people as public records."""
    t = make_biometric(n_identities=12, records_per_identity=30, n_features=32,
                       random_state=0)
    public = np.isin(t.labels["identity"].to_numpy(), PUBLIC_PEOPLE)
    return t.subset(np.flatnonzero(~public)), t.subset(np.flatnonzero(public))
