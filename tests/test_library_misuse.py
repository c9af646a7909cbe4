"""The library's front doors given the wrong kind of argument: one BioanonError naming the
parameter and the fix, never a TypeError or ValueError from deep inside (found by calling
them as a newcomer might: the roles' list form, a method's name, a number of models)."""

from __future__ import annotations

import pytest

from bioanon import BioanonError, Roles, SelectiveMeanAnonymizer, certify
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation
from bioanon.evaluation.options import additional_weights


@pytest.fixture(scope="module")
def table():
    return make_biometric(n_identities=8, records_per_identity=30, n_features=32,
                          random_state=0)


def test_additional_columns_may_be_listed_as_roles_take_them(table):
    """``additional=['gender']`` (the form ``Roles`` takes) weighs each column 1.0, as a
    mapping would; it once failed inside ``dict()`` with a ValueError."""
    listed = Evaluation(table, "expression", "identity", ["gender"],
                        SelectiveMeanAnonymizer(g=4, t=0.5))
    mapped = Evaluation(table, "expression", "identity", {"gender": 1.0},
                        SelectiveMeanAnonymizer(g=4, t=0.5))
    assert listed.additional == mapped.additional == {"gender": 1.0}
    with pytest.raises(BioanonError, match="additional weight of 'gender' is 'x'") as exc:
        additional_weights({"gender": "x"})
    assert exc.value.parameter == "additional"
    with pytest.raises(BioanonError, match="additional=3 is not a column list"):
        additional_weights(3)


def test_an_anonymizer_that_is_no_estimator_is_named(table):
    for wrong in ("selective-mean", object()):
        with pytest.raises(BioanonError, match="is not a method to judge") as exc:
            Evaluation(table, "expression", "identity", anonymizer=wrong).evaluate()
        assert exc.value.parameter == "anonymizer"


def test_models_that_are_not_a_list_are_named(table):
    with pytest.raises(BioanonError, match="models=3 names no recognizer") as exc:
        certify(table, Roles(sensitive="identity", interest="expression"), models=3)
    assert exc.value.parameter == "models"


def test_an_anonymizer_class_without_its_parentheses_is_named(table):
    """The class where an estimator belongs has ``fit`` and ``get_params`` too: it failed
    inside them ("get_params() missing 1 required positional argument: 'self'")."""
    from bioanon import evaluate
    from bioanon.release import release

    says = (r"^anonymizer=SelectiveMeanAnonymizer is a class, not an estimator; pass one made "
            r"from it, e.g. SelectiveMeanAnonymizer\(...\)")
    with pytest.raises(BioanonError, match=says):
        evaluate(table, "expression", "identity", anonymizer=SelectiveMeanAnonymizer)
    with pytest.raises(BioanonError, match=says):
        release(table, SelectiveMeanAnonymizer, Roles(interest="expression",
                                                      sensitive="identity"))
