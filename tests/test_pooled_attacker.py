"""A release that links a person's records (pseudonyms, a subject code, a file name, a numeric
id column) lets the attacker pool them: the noise added to each record averages out. The
pooled attacker (:mod:`bioanon.attack.pooled`) reads every such column ``bioanon audit`` meets;
a column whose codes link no person's records reads nothing more than the features alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bioanon
from bioanon.attack.game import Game
from bioanon.attack.pooled import inference, link_keys, membership
from bioanon.datasets import make_biometric
from bioanon.table import FeatureTable

ROLES = {"interest": "expression", "sensitive": "identity", "random_state": 0}


@pytest.fixture(scope="module")
def noisy():
    """180 people × 8 records × 64 features; INPUT a third of the people, HOLDOUT another;
    the release INPUT's records plus noise 4 times the features' spread: alone, it does not
    show who is in it; its person codes (pseudonyms, none of INPUT's names) beside it."""
    t = make_biometric(n_identities=180, records_per_identity=8, n_features=64,
                       random_state=0)
    _, codes = np.unique(t.labels["identity"].astype(str), return_inverse=True)
    part = np.random.default_rng(0).permutation(codes.max() + 1)[codes] % 3
    m, h = t.subset(np.flatnonzero(part == 0)), t.subset(np.flatnonzero(part == 1))
    X, code = _noisy_with_codes(m, 4.0)
    return m, h, X, np.array([f"s{c}" for c in code]), code.astype(np.float32)


def _noisy_with_codes(m: FeatureTable, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """INPUT's records plus noise ``spread`` times the features' spread, and each record's
    person code (a number from 1000, drawn per person)."""
    rng = np.random.default_rng(0)
    X = m.X + rng.standard_normal(m.X.shape).astype(np.float32) * m.X.std(0) * spread
    people, codes = np.unique(m.labels["identity"].to_numpy(str), return_inverse=True)
    return X, (rng.permutation(people.size) + 1000)[codes]


def _release(m: FeatureTable, X: np.ndarray, **labels: object) -> FeatureTable:
    lab = m.labels[["expression"]].copy()
    for c, v in labels.items():
        lab[c] = v
    return FeatureTable(X, lab, list(m.feature_names))


def _risks(res: object) -> dict[str, object]:
    return {r.name: r for r in res.risks}  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def plain(noisy):
    m, h, X, _, _ = noisy
    return _risks(bioanon.audit(m, _release(m, X), h, **ROLES))


@pytest.mark.parametrize("how", ["subject", "sensitive pseudonyms", "file names", "numeric id"])
def test_codes_that_link_a_person_s_records_are_pooled_and_read(noisy, plain, how):
    m, h, X, pseudonyms, numeric = noisy
    if how == "subject":
        rel, key = _release(m, X, subject=pseudonyms), "'subject'"
    elif how == "sensitive pseudonyms":
        rel, key = _release(m, X, identity=pseudonyms), "'identity'"
    elif how == "file names":
        names = [f"{p}_{k}.wav" for k, p in enumerate(pseudonyms)]
        rel, key = _release(m, X, file=names), "'file', part 1"
    else:  # a numeric column INPUT lacks: a feature of RELEASED alone
        rel = FeatureTable(np.c_[X, numeric], m.labels[["expression"]].copy(),
                           [*m.feature_names, "pid"])
        key = "'pid'"
    res = bioanon.audit(m, rel, h, **ROLES)
    got = _risks(res)
    for name in ("record-membership", "identity-membership"):
        before, after = plain[name], got[name]
        assert before.status != "not met", (name, before.value, before.ci)
        assert f"pooled by {key}" in after.attacker, after.attacker
        assert after.status == "not met" and after.ci[0] > before.value + 0.1, \
            (name, before.value, after.value, after.ci)
    assert res.verdict.status == "not met"
    assert res.attackers["linking"] == [key]  # said in the report's threat model
    from bioanon.auditing.report import render

    assert "pooled by the pooled release attackers: " + key.replace("'", "&#x27;") in \
        render(res.to_dict())


def test_codes_that_link_no_person_read_nothing_more(noisy, plain):
    """Batch codes drawn at random (12 records each, of many people) link no person: the
    verdict and the membership figures stay those of the features alone."""
    m, h, X, _, _ = noisy
    batches = np.random.default_rng(5).integers(0, m.n_records // 12, m.n_records)
    got = _risks(bioanon.audit(m, _release(m, X, batch=[f"b{b}" for b in batches]), h,
                               **ROLES))
    for name in ("record-membership", "identity-membership"):
        assert got[name].status == plain[name].status
        assert abs(got[name].value - plain[name].value) < 0.1, (got[name].value,
                                                               plain[name].value)


def test_a_column_that_links_nothing_is_not_played():
    ids = np.array(["a", "b", "c", "d"])
    assert link_keys("record", ids) == []  # one value per record, no parts to split
    assert link_keys("kind", np.array(["x"] * 4)) == []  # one value on every record
    X = np.eye(4)
    game = Game(X, {"y": ids}, X, {"y": ids, "record": ids}, X, {}, ids, ids,
                -np.ones(4, np.int64), "y", linking=("record",), targets=("y",))
    assert membership(game) == {} and inference(game) == {}
    # bioanon's own releases carry no linking column: the attacker does not play
    own = Game(X, {"y": ids}, X, {"y": ids}, X, {}, ids, ids, -np.ones(4, np.int64), "y",
               sensitive="identity")
    assert membership(own) == {}


def test_names_are_digested_only_where_a_column_beside_the_sensitive_one_links(monkeypatch):
    """The candidates' names in every form (three digests each) are computed only where a
    key beside the sensitive column could hold them: bioanon's own releases, and a release
    whose only link is its sensitive column (the released person reads it), never pay for
    them (they were most of this attacker's time in every game of a search)."""
    from bioanon.attack import released_person

    calls = []
    real = released_person.name_forms
    monkeypatch.setattr(released_person, "name_forms", lambda ids: calls.append(1) or real(ids))
    ids = np.repeat(np.array(["a", "b", "c", "d"]), 2)
    X = np.random.default_rng(0).normal(size=(8, 3))
    own = Game(X, {"y": ids}, X, {"y": ids}, X, {}, ids, ids, -np.ones(8, np.int64), "y",
               sensitive="identity", targets=("y",))
    named = Game(X, {"y": ids}, X, {"y": ids, "identity": ids}, X, {}, ids, ids,
                 -np.ones(8, np.int64), "y", sensitive="identity", targets=("y",))
    assert membership(own) == {} and inference(own) == {}
    assert membership(named) and inference(named)  # its records pooled by the names
    assert calls == []
    coded = Game(X, {"y": ids}, X, {"y": ids, "subject": ids}, X, {}, ids, ids,
                 -np.ones(8, np.int64), "y", linking=("subject",), targets=("y",))
    assert "'subject' names the person" in membership(coded) and len(calls) == 1


def test_a_key_holding_the_candidates_names_reads_the_person():
    """A file name that starts with the person's name names the person: the candidate whose
    name a released key holds is read as a member, without any feature."""
    X = np.random.default_rng(0).normal(size=(8, 3))
    cand = np.array(["ann", "ann", "bob", "bob", "cy", "cy", "dee", "dee"])
    files = pd.Series([f"{p}_{k}.wav" for k, p in enumerate(cand[:4])]).to_numpy()
    game = Game(X, {"y": cand}, X[:4], {"y": cand[:4], "file": files}, X, {}, cand, cand,
                -np.ones(8, np.int64), "y", linking=("file",))
    scores = membership(game)["'file', part 1 names the person"]
    assert (scores[:4] > 0).all() and (scores[4:] == 0).all()


@pytest.fixture(scope="module")
def closed():
    """24 people × 60 records, INPUT and HOLDOUT a third of each person's records (HOLDOUT
    holds INPUT's people); the release INPUT plus noise 3 times the features' spread."""
    t = make_biometric(n_identities=24, records_per_identity=60, n_features=32,
                       random_state=1)
    part = np.arange(t.n_records) % 3
    m, h = t.subset(np.flatnonzero(part == 0)), t.subset(np.flatnonzero(part == 1))
    X, code = _noisy_with_codes(m, 3.0)
    return m, h, X, m.labels["identity"].to_numpy(str), np.array([f"s{c}" for c in code])


def _recognition(m, h, X, **labels):
    res = bioanon.audit(m, _release(m, X, **labels), h, **ROLES)
    return res, _risks(res)["record-recognition"]


@pytest.mark.parametrize("column", ["identity", "subject"])
def test_pseudonyms_are_named_by_the_clear_records_and_recognised(closed, column):
    """The attacker holds clear records of the people: it names each code by the person
    whose records the code's pooled record is nearest, then recognizes as it would a release
    carrying the names; the figure is near the named release's, and the plan showed it."""
    m, h, X, ids, pseudonyms = closed
    _, named = _recognition(m, h, X, identity=ids)
    res, coded = _recognition(m, h, X, **{column: pseudonyms})
    assert f"'{column}' named by the clear records: trained on RELEASED" in coded.attacker
    assert coded.status == "not met" and named.status == "not met"
    assert coded.extras["accuracy"] > named.extras["accuracy"] - 0.05, \
        (coded.extras["accuracy"], named.extras["accuracy"])
    assert "candidate half" in coded.extras["probes"]
    row = next(r for r in res.plan.rows if r.risk == "recognition")
    assert np.isfinite(row.smallest), row
    _, plain = _recognition(m, h, X)  # no codes: nothing to name, recognition not measured
    assert plain.status == "inconclusive at this size" and "no recognizer" in plain.reason


def test_codes_are_assigned_one_person_each_where_they_can_be():
    from bioanon.auditing.linkage import _assign

    people = np.array([[0.0, 0.0], [1.0, 0.0], [9.0, 9.0]])
    codes = np.array([[0.9, 0.0], [0.6, 0.0]])  # both nearest the second person
    assert _assign(codes, people).tolist() == [1, 0]
    more = np.array([[0.9, 0.0], [0.6, 0.0], [0.1, 0.0], [8.0, 9.0]])  # more codes than people
    assert _assign(more, people).tolist() == [1, 1, 0, 2]  # each its nearest
