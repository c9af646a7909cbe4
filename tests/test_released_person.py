"""A release that carries its sensitive column names its people: the attacker who reads that
column (:mod:`bioanon.attack.released_person`) judges it, in ``bioanon audit`` (a release made
by anything) and in a release kept with ``keep_sensitive`` (the judge told so). Where the
column is not released, the attacker does not play and the figures are the features' alone."""

from __future__ import annotations

import numpy as np
import pytest

import bioanon
from bioanon.anonymize.registry import build_method
from bioanon.attack.released_person import MEMBERSHIP_NAME
from bioanon.datasets import make_biometric
from bioanon.evaluation import Evaluation

KW = {"interest": "expression", "sensitive": "identity", "random_state": 0}


@pytest.fixture(scope="module")
def people():
    """80 people × 8 records; INPUT the first 40 people's records, HOLDOUT the others'; the
    release INPUT's class means plus noise as large as the features' spread (it tells
    little about any record), with or without INPUT's identity column."""
    t = make_biometric(n_identities=80, records_per_identity=8, n_features=32,
                       random_state=3)
    df = t.to_frame()
    ids = df["identity"].astype(str)
    first = ids.isin(sorted(ids.unique())[:40]).to_numpy()
    members, holdout = df[first].reset_index(drop=True), df[~first].reset_index(drop=True)
    feats = [c for c in df.columns if c.startswith("f")]
    rng = np.random.default_rng(1)
    released = members.drop(columns=["gender", "environment"])
    means = members.groupby("expression")[feats].transform("mean").to_numpy()
    released[feats] = means + rng.normal(size=means.shape) * members[feats].std().to_numpy()
    return members, holdout, released


def _by_name(result):
    return {r.name: r for r in result.risks}


def test_an_audit_reads_who_is_in_a_release_off_its_sensitive_column(people):
    members, holdout, released = people
    named = bioanon.audit(members, released, holdout, **KW)
    plain = bioanon.audit(members, released.drop(columns=["identity"]), holdout, **KW)
    got, base = _by_name(named), _by_name(plain)
    ident = got["identity-membership"]
    assert ident.value > 0.9 and ident.met is False
    assert MEMBERSHIP_NAME in ident.attacker
    # the features alone tell little: the column is what reads the members
    assert base["identity-membership"].value < 0.5
    assert MEMBERSHIP_NAME not in base["identity-membership"].attacker
    assert named.verdict.status == "not met"
    doc = named.to_dict()["findings"]
    assert doc["named_people"] == 40 and "name 40 of INPUT's 40 people" in doc["named_note"]
    assert doc["named_holdout_people"] == 0 and "0 of HOLDOUT's 40 other people" in \
        doc["named_note"]
    assert plain.to_dict()["findings"]["named_note"] is None


def test_pseudonyms_give_the_column_attacker_nothing(people):
    members, holdout, released = people
    renamed = released.assign(identity="p" + released["identity"].astype(str) + "x")
    got = _by_name(bioanon.audit(members, renamed, holdout, **KW))
    assert got["identity-membership"].value < 0.5
    assert MEMBERSHIP_NAME not in got["identity-membership"].attacker


def test_names_written_another_way_still_name_the_people(people):
    """A release that pads its names with spaces, writes them in capitals, or writes a
    number as 7.0 names the same people: the attacker reads names as a person would (it
    read such a release as pseudonyms, and the audit said the column told nothing)."""
    members, holdout, released = people
    ids = released["identity"].astype(str)
    disguised = released.assign(identity=" " + ids.str.upper() + "  ")
    audited = bioanon.audit(members, disguised, holdout, **KW)
    assert MEMBERSHIP_NAME in _by_name(audited)["identity-membership"].attacker
    assert audited.to_dict()["findings"]["named_people"] == 40
    numbered = make_biometric(n_identities=6, records_per_identity=4, n_features=32,
                              random_state=0)
    df = numbered.to_frame()
    df["identity"] = df["identity"].astype("category").cat.codes.astype(int)
    as_float = df.assign(identity=df["identity"].astype(float))  # written 3.0 for 3
    from bioanon.attack.released_person import name_keys, person_counts

    counts = person_counts(name_keys(df["identity"].to_numpy()),
                           name_keys(as_float["identity"].to_numpy()))
    assert counts.tolist() == [4] * len(df)


def test_the_judge_told_the_release_keeps_the_sensitive_column_reads_it():
    t = make_biometric(n_identities=40, records_per_identity=8, n_features=32,
                       random_state=0)
    noise = build_method("noise", {"sigma": 50.0}, interest="expression",
                         sensitive="identity", additional=[], random_state=0)

    def identity_membership(kept: bool):
        ev = Evaluation(t, "expression", "identity", anonymizer=noise, models=["knn"],
                        attackers=["naive"], n_jobs=1, verification=False, inference=False,
                        random_state=0, sensitive_released=kept).evaluate()
        return next(r for r in ev.risks() if r.name == "identity-membership")

    kept, dropped = identity_membership(True), identity_membership(False)
    assert kept.value > 0.9 and MEMBERSHIP_NAME in kept.attacker
    assert dropped.value < 0.5 and MEMBERSHIP_NAME not in dropped.attacker


def test_a_person_on_one_released_record_is_left_out_of_recognition(people):
    """A calibrated recognizer cross-validates within each person: a person the release names
    on one record only is left out of its training (and of the probes), not an internal
    error."""
    members, holdout, released = people
    mixed = released.copy()
    pool = np.r_[members["identity"].unique(), holdout["identity"].unique()]
    mixed["identity"] = np.random.default_rng(0).choice(pool, len(mixed))
    mixed.loc[0, "identity"] = "once"
    res = bioanon.audit(members, mixed, holdout, **KW)
    rec = _by_name(res)["record-recognition"]
    assert np.isfinite(rec.value)
    assert rec.extras["released_records_trained"] < len(mixed)


def test_the_audit_names_the_released_label_columns_no_role_names_and_reads_them(people):
    """A column no role names (here a file name holding the person) is released all the same:
    the audit says so before its figures, and in its report, and the pooled attacker reads
    the person off the file name's first part (:mod:`bioanon.attack.pooled`)."""
    members, holdout, released = people
    with_file = released.drop(columns=["identity"]).assign(
        file=[f"{p}_{k}.wav" for k, p in enumerate(members["identity"])])
    res = bioanon.audit(members, with_file, holdout, **KW)
    notes = " ".join(res.to_dict()["notes"])
    assert "1 label column(s) no role names (['file'])" in notes
    assert "the pooled attacker reads each as a link" in notes
    assert "drop them from the release" in notes
    ident = _by_name(res)["identity-membership"]
    assert ident.value > 0.9 and ident.met is False
    assert "'file', part 1 names the person" in ident.attacker
    plain = bioanon.audit(members, released.drop(columns=["identity"]), holdout, **KW)
    assert "no role names" not in " ".join(plain.to_dict()["notes"])
    assert plain.verdict.status != "not met"


def test_the_audit_names_the_released_feature_columns_input_lacks(people):
    """A numeric column the release adds (a record id) is compared with no clear record: the
    audit says so before its figures, as it does for label columns; one id per record links
    nothing, so the pooled attacker does not play on it."""
    members, holdout, released = people
    plain = released.drop(columns=["identity"])
    res = bioanon.audit(members, plain.assign(record_id=np.arange(len(plain))), holdout, **KW)
    notes = " ".join(res.to_dict()["notes"])
    assert "feature column(s) INPUT does not hold (['record_id']): the pooled attacker" \
        in notes and "may name the people" in notes
    assert "record_id" not in " ".join(r.attacker for r in res.risks)
    assert "does not hold" not in " ".join(bioanon.audit(members, plain, holdout,
                                                          **KW).to_dict()["notes"])


def test_a_rescaled_copy_of_input_is_read_as_a_copy(people):
    """A public per-feature transform hides nothing: INPUT's records standardized, then
    scaled and shifted (an export in other units), are read as members once the attacker
    matches the release's marginals to the population's."""
    from bioanon.auditing.risks import ALIGNED

    members, holdout, _ = people
    feats = [c for c in members.columns if c.startswith("f")]
    rescaled = members.drop(columns=["identity", "gender", "environment"])
    z = (members[feats] - members[feats].mean()) / members[feats].std()
    rescaled[feats] = z.to_numpy() * 3.0 + 7.0
    rec = _by_name(bioanon.audit(members, rescaled, holdout, **KW))["record-membership"]
    assert rec.value > 0.9 and rec.met is False
    assert ALIGNED in rec.attacker


def test_a_copy_of_input_with_its_columns_shuffled_is_read_as_a_copy(people):
    """A near-copy of INPUT whose feature columns hold each other's values (a shuffled or
    renamed export) read as harmless: every attacker compared records column by column
    (record membership "met" at 260 people). The columns' means and sds give the shuffle
    away: with its columns matched to the population's by mean and sd, or each record's
    values sorted, the copy reads as one; a release that keeps the column order is not
    attacked so (its figures are as before)."""
    from bioanon.auditing.risks import MATCHED, SORTED, reordered_release

    members, holdout, released = people
    feats = [c for c in members.columns if c.startswith("f")]
    rng = np.random.default_rng(5)
    shuffled = members.drop(columns=["identity", "gender", "environment"])
    shuffled[feats] = (members[feats].to_numpy()[:, rng.permutation(len(feats))]
                       + rng.normal(scale=0.01, size=(len(members), len(feats))))
    rec = _by_name(bioanon.audit(members, shuffled, holdout, **KW))["record-membership"]
    assert rec.value > 0.9 and rec.met is False
    assert SORTED in rec.attacker or MATCHED in rec.attacker
    ref = holdout[feats].to_numpy()
    assert reordered_release(shuffled[feats].to_numpy(), ref)
    assert not reordered_release(members[feats].to_numpy(), ref)
    assert not reordered_release(released[feats].to_numpy(), ref)  # noise around means


def test_telling_the_judge_re_rolls_nothing_until_the_column_is_kept():
    """The option the judge is told the column with is left out of the judge's seed at its
    default (an option added later does not re-roll earlier verdicts), and enters it when
    set (it changes figures)."""
    from dataclasses import replace

    from bioanon.certification.judge_seed import judged_inputs, root_seed
    from bioanon.evaluation.options import EvaluationOptions

    t = make_biometric(n_identities=6, records_per_identity=10, n_features=32, random_state=0)
    opts = EvaluationOptions.of()

    def seed(o):
        return root_seed(judged_inputs(t, {"options": o}))

    assert b"sensitive_released" not in judged_inputs(t, {"options": opts})
    assert seed(replace(opts, sensitive_released=True)) != seed(opts)


@pytest.mark.parametrize("algo", ["md5", "sha256"])
def test_names_replaced_by_their_unsalted_digests_are_read_as_names(people, algo):
    """A digest of the name without a salt is no pseudonym: the attacker holds the names
    and computes their digests. Hashed names in the sensitive column, or leading a file
    name, read who is in the release as the names do."""
    import hashlib

    members, holdout, released = people

    def digest(v: str) -> str:
        return hashlib.new(algo, v.encode()).hexdigest()

    hashed = released.assign(identity=[digest(str(p)) for p in members["identity"]])
    res = bioanon.audit(members, hashed, holdout, **KW)
    ident = _by_name(res)["identity-membership"]
    words = {"md5": "MD5", "sha256": "SHA-256"}[algo]
    assert ident.value > 0.9 and ident.met is False
    assert f"{MEMBERSHIP_NAME} (as the {words} digest)" in ident.attacker
    doc = res.to_dict()["findings"]
    assert doc["named_people"] == 40 and f"(as the {words} digest) name 40" in doc["named_note"]
    files = released.drop(columns=["identity"]).assign(
        file=[f"{digest(str(p))}_{k}.wav" for k, p in enumerate(members["identity"])])
    ident = _by_name(bioanon.audit(members, files, holdout, **KW))["identity-membership"]
    assert ident.value > 0.9 and f"'file', part 1 names the person (as the {words} digest)" \
        in ident.attacker
    # a salted digest is a pseudonym: nobody reads the person off it
    salted = released.assign(identity=[digest("salt" + str(p)) for p in members["identity"]])
    assert "released names" not in _by_name(bioanon.audit(
        members, salted, holdout, **KW))["identity-membership"].attacker
