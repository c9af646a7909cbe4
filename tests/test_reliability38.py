"""Issue 38 (reliability, round five): each defect as a test that failed before its fix."""

from __future__ import annotations

from typer.testing import CliRunner

from bioanon.cli import app
from bioanon.datasets import make_biometric


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_setting_out_of_memory_is_skipped_with_its_reason(monkeypatch):
    """A setting whose model does not fit in memory (features × features on a wide table)
    is skipped by the search and named; the other settings are still judged."""
    from bioanon.anonymize.baselines import GaussianNoiseAnonymizer
    from bioanon.certification.search import search

    apply = GaussianNoiseAnonymizer._apply

    def heavy(self, X, rng):
        if float(self.sigma) == 3.0:
            raise MemoryError
        return apply(self, X, rng)

    monkeypatch.setattr(GaussianNoiseAnonymizer, "_apply", heavy)
    t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
    res = search(t, "expression", "identity", methods=["noise"], target_advantage=0.5,
                 models=["knn"], attackers="naive,parrot", random_state=0, n_jobs=1)
    assert [r["setting"] for r in res.rows] == ["noise(sigma=1, scale=std)"]
    skipped = [s for s in res.skipped if s.get("setting") == "noise(sigma=3, scale=std)"]
    assert skipped and "out of memory on 32 features" in skipped[0]["reason"]
