"""``bioanon.certify``'s inputs: a DataFrame and a mapping of roles are taken as the command
line takes a CSV file and its role flags; anything else, and a seed that is no seed, is one
``BioanonError`` naming the fix, before any work."""

from __future__ import annotations

import json

import pytest

import bioanon
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.plan import PlanRefused
from bioanon.release import Roles

ROLES = Roles(sensitive="identity", interest="expression", other=["gender", "environment"])


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=8, records_per_identity=10, n_features=32,
                          random_state=0)


def test_a_dataframe_and_a_mapping_of_roles_reach_the_plan(table):
    """A 80-record table cannot show the default level: the plan refuses it, so reaching
    that refusal shows the DataFrame was read as the table (the same plan as the table's)."""
    with pytest.raises(PlanRefused) as as_table:
        bioanon.certify(table, ROLES)
    frame = table.to_frame()
    with pytest.raises(PlanRefused) as as_frame:
        bioanon.certify(frame, {"sensitive": "identity", "interest": "expression",
                                "other": ["gender", "environment"]})
    assert str(as_frame.value) == str(as_table.value)


@pytest.mark.parametrize(("table_of", "roles", "options", "says"), [
    (lambda t: t.X, ROLES, {}, "table must be a bioanon FeatureTable or a pandas DataFrame, "
                               "not ndarray"),
    (lambda t: t, {"sensitve": "identity"}, {}, "roles has no field 'sensitve' (did you mean "
                                                "'sensitive'?)"),
    (lambda t: t, ["identity"], {}, "roles must be a bioanon.release.Roles or a mapping"),
    (lambda t: t, {"interest": "expression"}, {}, "roles needs the sensitive column"),
    (lambda t: t, ROLES, {"random_state": "a"}, "random_state='a' is out of range"),
    (lambda t: t, ROLES, {"random_state": -1}, "random_state=-1 is out of range"),
    (lambda t: t, ROLES, {"random_state": 2**32}, "use a whole number from 0 to 4294967295"),
])
def test_what_is_no_table_roles_or_seed_is_one_line(table, table_of, roles, options, says):
    with pytest.raises(BioanonError) as err:
        bioanon.certify(table_of(table), roles, **options)
    assert says in str(err.value) and "\n" not in str(err.value)
    assert not isinstance(err.value, PlanRefused)  # refused before the plan


def test_a_dataframe_s_numeric_metadata_is_refused_as_a_csv_file_s(table):
    """A DataFrame records no label columns: a numeric column that looks like metadata (a
    take counter) would be released as a feature, so it is refused by name, as the command
    line refuses it in a CSV file, until it has a role or is kept knowingly."""
    frame = table.to_frame()
    frame["take"] = [i % 4 for i in range(len(frame))]
    roles = {"sensitive": "identity", "interest": "expression",
             "other": ["gender", "environment"]}
    with pytest.raises(BioanonError) as err:
        bioanon.certify(frame, roles)
    assert "the DataFrame does not say which columns are labels" in str(err.value)
    assert "'take'" in str(err.value) and not isinstance(err.value, PlanRefused)
    with pytest.raises(PlanRefused):  # named, it is read as a label and dropped
        bioanon.certify(frame, {**roles, "identifying": ["take"]})
    with pytest.raises(PlanRefused):  # kept knowingly as a feature
        bioanon.certify(frame, roles, keep_as_feature=["take"])


def test_evaluate_takes_a_dataframe_as_its_table():
    """``bioanon.evaluate`` reads a DataFrame as its table (the same report), and refuses an
    array in one line."""
    from bioanon.anonymize import SelectiveMeanAnonymizer

    t = make_biometric(n_identities=6, records_per_identity=30, n_features=32, random_state=0)
    kw = {"models": ["knn"], "n_jobs": 1, "attackers": "naive,parrot"}

    def run(table):
        return bioanon.evaluate(table, "expression", "identity", random_state=0,
                                anonymizer=SelectiveMeanAnonymizer("expression", g=8,
                                                                   r_p=0.1, random_state=0),
                                **kw)

    a, b = run(t), run(t.to_frame())
    assert a["utility"]["cas"] == b["utility"]["cas"]
    # as JSON, where a risk not measured (NaN) equals itself
    assert (json.dumps([[r["name"], r["value"], r["ci"]] for r in a["risks"]])
            == json.dumps([[r["name"], r["value"], r["ci"]] for r in b["risks"]]))
    with pytest.raises(BioanonError, match="not ndarray"):
        bioanon.evaluate(t.X, "expression", "identity")
