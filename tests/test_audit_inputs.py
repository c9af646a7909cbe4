"""``bioanon.audit`` takes pandas DataFrames (a peer's synthesizer returns one) as it takes
the same tables written to CSV: the same figures; anything else, and a seed that is no seed,
is one ``BioanonError`` before any attack."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bioanon
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError

KW = {"interest": "expression", "sensitive": "identity", "labels": ["gender"]}


@pytest.fixture(scope="module")
def frames():
    t = make_biometric(n_identities=8, records_per_identity=40, n_features=32,
                       random_state=0)
    rows = np.arange(t.n_records)
    members = t.subset(rows % 2 == 0).to_frame()
    holdout = t.subset(rows % 2 == 1).to_frame()
    rng = np.random.default_rng(0)
    released = members.drop(columns=["identity", "environment"])
    feats = [c for c in released.columns if c.startswith("f")]
    released[feats] = released[feats] + rng.normal(0, 0.5, size=(len(released), len(feats)))
    return members, released, holdout


def test_dataframes_are_judged_as_their_csv_files(frames, tmp_path):
    paths = []
    for name, frame in zip(("in.csv", "rel.csv", "hold.csv"), frames, strict=True):
        frame.to_csv(tmp_path / name, index=False)
        paths.append(tmp_path / name)
    by_frame = bioanon.audit(*frames, **KW)
    by_file = bioanon.audit(*paths, **KW)
    assert by_frame.verdict.status == by_file.verdict.status
    # as JSON, where a risk not measured (NaN) equals itself
    assert (json.dumps([r.to_dict() for r in by_frame.risks])
            == json.dumps([r.to_dict() for r in by_file.risks]))
    assert any(r.met is False and r.value > 0.5 for r in by_frame.risks)  # a real leak read


@pytest.mark.parametrize(("which", "options", "says"), [
    (0, {}, "INPUT must be a bioanon FeatureTable, a pandas DataFrame or a path, not ndarray"),
    (None, {"random_state": "x"}, "random_state='x' is out of range"),
    (None, {"random_state": -2}, "random_state=-2 is out of range"),
])
def test_what_is_no_table_or_seed_is_one_line(frames, which, options, says):
    args = list(frames)
    if which is not None:
        args[which] = args[which].to_numpy()
    with pytest.raises(BioanonError) as err:
        bioanon.audit(*args, **KW, **options)
    assert says in str(err.value)


def test_the_audit_plan_names_a_released_class_of_one_member(frames):
    """A class of one INPUT record that RELEASED carries is named in the audit's plan (the
    judge's averages cannot see it); a small class the release does not carry is not."""
    from bioanon.auditing import prepare_audit

    members, released, holdout = (f.copy() for f in frames)
    members.loc[members.index[0], "expression"] = "rare"
    members.loc[members.index[1], "gender"] = "x"
    released.loc[released.index[0], "expression"] = "rare"
    job = prepare_audit(members, released, holdout, **KW)
    assert "released label 'expression' has 1 class of fewer than 5 records ('rare' 1)" in (
        job.plan.render())
    assert "'gender'" not in job.plan.small_classes  # 'x' is not in the release
    assert job.plan.to_dict()["small_classes"] == job.plan.small_classes


def test_a_boolean_interest_is_judged_on_its_csv_copy_and_an_empty_label_is_named(tmp_path):
    """A boolean interest reads back from a CSV copy as 1 and 0: the copy was refused as
    "values INPUT never has (['0', '1'])". An interest empty in INPUT was judged as the class
    'nan' (utility 0.000); it is refused in one line."""
    t = make_biometric(n_identities=8, records_per_identity=30, n_features=32, random_state=0)
    labels = t.labels.assign(expression=t.labels["expression"] == "expr0")
    t = bioanon.FeatureTable(t.X, labels, t.feature_names)
    rows = np.arange(t.n_records)
    members, holdout = t.subset(rows % 2 == 0), t.subset(rows % 2 == 1)
    members.write(tmp_path / "in.parquet")
    members.drop_labels(["identity"]).to_frame().to_csv(tmp_path / "rel.csv", index=False)
    res = bioanon.audit(tmp_path / "in.parquet", tmp_path / "rel.csv", holdout, **KW,
                        random_state=0)
    assert res.findings["copied_rows"] == members.n_records
    empty = members.labels.assign(expression=members.labels["expression"].astype(object))
    empty.loc[5, "expression"] = None
    with pytest.raises(BioanonError, match=r"^INPUT's 'expression' has 1 empty value\(s\) "
                                           r"\(first at record 5\)"):
        bioanon.audit(bioanon.FeatureTable(members.X, empty, members.feature_names),
                      tmp_path / "rel.csv", holdout, **KW)


@pytest.mark.parametrize("kind", ["frame", "csv", "parquet"])
def test_a_numeric_column_input_lacks_is_a_link_even_with_empty_values(frames, tmp_path, kind):
    """A release made by another tool may carry a numeric column of its own (a quality
    score, a row id) with empty values: INPUT holds no such feature, so no attacker compares
    it with a clear record; it is read as a link between released records, as the same
    column without empty values is, and named in the same note — never refused as a feature
    with missing values. The same empty value in a feature INPUT holds is still refused."""
    members, released, holdout = frames
    with_score = released.copy()
    with_score["quality"] = np.arange(len(with_score)) % 7 / 7
    gaps = with_score.copy()
    gaps.loc[gaps.index[::5], "quality"] = np.nan
    broken = released.copy()
    broken.loc[broken.index[3], "f4"] = np.nan

    def source(frame, name):
        if kind == "frame":
            return frame
        path = tmp_path / f"{name}.{kind}"
        frame.to_csv(path, index=False) if kind == "csv" else frame.to_parquet(path)
        return path

    kw = {**KW, "random_state": 3}
    full = bioanon.audit(members, source(with_score, "full"), holdout, **kw)
    gapped = bioanon.audit(members, source(gaps, "gaps"), holdout, **kw)
    note = [n for n in gapped.notes if "feature column(s) INPUT does not hold" in n]
    assert note and "'quality'" in note[0], gapped.notes
    assert not any("label column(s) no role names" in n and "quality" in n
                   for n in gapped.notes)
    assert [n for n in full.notes if "does not hold" in n] == note
    # judged alike: the same risks, each measured (the link's values differ, and so may the
    # pooled attacker's figure)
    assert [r.name for r in gapped.risks] == [r.name for r in full.risks]
    measured = [[bool(np.isfinite(r.value)) for r in a.risks] for a in (full, gapped)]
    assert measured[0] == measured[1]
    assert any(np.isfinite(r.value) for r in gapped.risks if "membership" in r.name)
    with pytest.raises(BioanonError, match="NaN/inf value.*'f4'"):
        bioanon.audit(members, source(broken, "broken"), holdout, **kw)
