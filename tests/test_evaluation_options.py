"""The evaluation's options are declared once (EvaluationOptions) and reach every front end."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from bioanon import evaluate
from bioanon.anonymize import GaussianNoiseAnonymizer
from bioanon.certification.search import search
from bioanon.cli.common import cli_message
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation import Evaluation, EvaluationOptions


def test_unknown_option_is_refused_with_the_closest_name() -> None:
    with pytest.raises(TypeError, match="did you mean 'max_records'"):
        EvaluationOptions.of(max_record=10)
    with pytest.raises(TypeError, match="unknown evaluation option"):
        Evaluation(make_biometric(n_identities=4, records_per_identity=8, n_features=32),
                   "expression", "identity", modles=["knn"])


def test_options_are_frozen_and_replaced_not_mutated() -> None:
    base = EvaluationOptions.of(models=["knn"])
    changed = EvaluationOptions.of(base, n_jobs=1)
    assert base.n_jobs == -1 and changed.n_jobs == 1 and changed.models == ["knn"]
    with pytest.raises(AttributeError):
        base.n_jobs = 2  # type: ignore[misc]


def test_no_front_end_repeats_an_option_in_its_signature() -> None:
    """A new option is one field: the front ends take **option_values, never a copy."""
    names = {f.name for f in fields(EvaluationOptions)}
    for func in (Evaluation.__init__, evaluate, search):
        params = inspect.signature(func).parameters
        assert not names & set(params), (func, names & set(params))
        assert any(p.kind is p.VAR_KEYWORD for p in params.values())


def test_evaluate_takes_max_records_and_inference_again() -> None:
    t = make_biometric(n_identities=6, records_per_identity=20, n_features=32, random_state=0)
    rep = evaluate(t, "expression", "identity", anonymizer=GaussianNoiseAnonymizer(sigma=1.0),
                   models=["knn"], attackers=["naive"], n_jobs=1, verification=False,
                   max_records=60, inference=False)
    sample = rep["dataset"]["panel_sample"]
    assert sample["sampled"] and sample["n_records"] <= 60 < sample["total_records"]
    inference = [r for r in rep["risks"] if r["risk"] == "inference"]
    assert inference and all(r["status"] == "inconclusive at this size"
                             and "inference=False" in r["reason"]
                             for r in inference)


def test_the_cli_translates_a_named_parameter_to_its_flag() -> None:
    exc = BioanonError("target_advantage=2.0 must lie in [0, 1]; e.g. 0.05",
                       parameter="target_advantage")
    assert cli_message(exc) == "--target-advantage 2.0 must lie in [0, 1]; e.g. 0.05"
    assert cli_message(BioanonError("plain")) == "plain"
