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


@pytest.mark.parametrize(("name", "value", "words"), [
    ("test_size", 1.5, "test_size=1.5 is out of range; use a number in (0, 1)"),
    ("top_k", 0, "top_k=0 is out of range; use an integer >= 1"),
    ("target_advantage", 2.0, "target_advantage=2.0 is out of range; use a number in [0, 1]"),
    ("max_candidates", 1, "max_candidates=1 is out of range; use an integer >= 2 or none"),
    ("max_records", 0, "max_records=0 is out of range; use an integer >= 2 or none"),
    ("n_jobs", 0, "n_jobs=0 is out of range; use a nonzero integer"),
    ("level", "loose", "level='loose' is not a level; name one of strict, standard, basic"),
    ("models", "knx", "models='knx': unknown recognizer 'knx'"),
    ("attackers", "nosuch", "attackers='nosuch': unknown attacker mode"),
    ("identities", [1], "identities=[1]: identity count 1 is too small"),
    ("accept_risks", {"record-magic": "x"}, "cannot accept unknown risk 'record-magic'"),
    ("accept_risks", {"record-membership": " "}, "needs a reason"),
    ("membership", "no", "membership='no' is out of range; use true or false"),
    ("released_labels", "age", "must be a list of label column names"),
])
def test_each_fault_is_one_message_naming_the_parameter(name, value, words) -> None:
    with pytest.raises(BioanonError) as info:
        EvaluationOptions.of(**{name: value})
    assert words in str(info.value) and info.value.parameter == name
    assert "\n" not in str(info.value) and "--" not in str(info.value)


def test_every_option_declares_its_constraint_beside_it() -> None:
    defaults = EvaluationOptions()  # the defaults pass their own constraints
    for f in fields(EvaluationOptions):
        assert "constraint" in f.metadata, f.name
        assert EvaluationOptions.constraint_text(f.name), f.name
    assert defaults.level_.name == "standard" and defaults.accepted == {}


def test_the_options_are_checked_on_every_construction_and_replace() -> None:
    from dataclasses import replace

    base = EvaluationOptions.of(models=["knn"])
    with pytest.raises(BioanonError, match="top_k=0"):
        replace(base, top_k=0)
    with pytest.raises(BioanonError, match="top_k=0"):
        Evaluation(make_biometric(n_identities=4, records_per_identity=8, n_features=32),
                   "expression", "identity", top_k=0)


def test_one_target_check_one_message() -> None:
    """target_advantage is checked in one place: the options, the verdict and the search
    say the same words."""
    from bioanon.evaluation.verdict import verdict

    with pytest.raises(BioanonError) as opts:
        EvaluationOptions.of(target_advantage=1.5)
    with pytest.raises(BioanonError) as judged:
        verdict({}, 1.5)
    with pytest.raises(BioanonError) as searched:
        search(make_biometric(n_identities=4, records_per_identity=8, n_features=32),
               "expression", "identity", methods=["noise"], target_advantage=1.5)
    assert str(opts.value) == str(judged.value) == str(searched.value)


def test_the_judge_reads_its_options_not_copies() -> None:
    t = make_biometric(n_identities=4, records_per_identity=8, n_features=32)
    ev = Evaluation(t, "expression", "identity", models=["knn"], level="basic", n_jobs=1)
    assert ev.options.models == ["knn"] and ev.options.level == "basic"
    assert ev.options.target("level").name == "basic"
    for name in EvaluationOptions.names():  # no field copied onto the evaluation
        assert name not in vars(ev), name
