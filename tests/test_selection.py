"""Identity selection: counts, strategies on constructed data, curves, grouped splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from panel_helpers import IdentityTransform, ShuffleWithinInterest

from bioanon import evaluate
from bioanon.attack.selection import (
    distinctive_scores,
    farthest_first,
    identity_counts,
    metadata_columns,
    parse_strategies,
    select_identities,
)
from bioanon.datasets import make_biometric
from bioanon.errors import BioanonError
from bioanon.evaluation import group_split


def test_identity_counts_halve_down_to_three():
    assert identity_counts(23) == [11, 5, 3]
    assert identity_counts(24) == [12, 6, 3]
    assert identity_counts(6) == [3]
    assert identity_counts(3) == []
    assert identity_counts(10, [3, 6, 3]) == [6, 3]
    assert identity_counts(10, "4,2") == [4, 2]
    with pytest.raises(BioanonError, match="asked for 12 identities but there are only 10"):
        identity_counts(10, [3, 12])
    with pytest.raises(BioanonError, match="at least 2"):
        identity_counts(10, [1])
    with pytest.raises(BioanonError, match="whole numbers"):
        identity_counts(10, "3,x")


def test_parse_strategies():
    assert parse_strategies("auto") == (["random", "classification", "metadata", "distinctive",
                                         "center"], False)
    assert parse_strategies("center,random") == (["random", "center"], True)
    assert parse_strategies("none") == ([], False)
    with pytest.raises(BioanonError, match="did you mean 'center'"):
        parse_strategies("centre")


def test_farthest_first_and_center_pick_the_spread_out_identities():
    # four corners of a square and two points near its centre: the corners come first
    pts = np.array([[0.0, 0], [10, 0], [0, 10], [10, 10], [5, 5], [5, 6]])
    assert list(farthest_first(pts, 4)) == [0, 3, 1, 2]
    ids = np.array(["a", "b", "c", "d", "e", "f"])
    y = np.repeat(ids, 4)
    jitter = np.tile([[-0.1, 0], [0.1, 0], [0, 0.1], [0, -0.1]], (6, 1))
    feats = pts[np.repeat(np.arange(6), 4)] + jitter
    keep = select_identities("center", 4, ids, rng=np.random.default_rng(0), features=feats, y=y)
    assert sorted(keep) == ["a", "b", "c", "d"]


def test_distinctive_prefers_tight_isolated_identities():
    rng = np.random.default_rng(0)
    ids = np.array(["tight_far", "loose", "tight_near1", "tight_near2"])
    centres = np.array([[50.0, 0], [0, 30], [0, 0], [1.0, 0]])
    spread = np.array([0.1, 8.0, 0.1, 0.1])
    y = np.repeat(ids, 10)
    code = np.repeat(np.arange(4), 10)
    feats = centres[code] + rng.normal(size=(40, 2)) * spread[code, None]
    order = np.argsort(ids)
    ids_sorted = ids[order]
    genuine, imposter = distinctive_scores(feats, y, ids_sorted)
    g = dict(zip(ids_sorted, genuine, strict=True))
    imp = dict(zip(ids_sorted, imposter, strict=True))
    assert g["loose"] > 5 * g["tight_far"]
    assert imp["tight_far"] > 10 * imp["tight_near1"]
    keep = select_identities("distinctive", 1, ids_sorted, rng=rng, features=feats, y=y)
    assert list(keep) == ["tight_far"]


def test_classification_and_metadata_strategies():
    ids = np.array(["a", "b", "c", "d"])
    keep = select_identities("classification", 2, ids, rng=np.random.default_rng(0),
                             per_identity_accuracy=np.array([0.2, 0.9, 0.5, 0.95]))
    assert list(keep) == ["d", "b"]
    labels = pd.DataFrame({"who": list("aabbccdd"), "age": [20, 20, 60, 60, 21, 21, 40, 40],
                           "take": range(8), "sex": list("FFMMFFMM")})
    assert metadata_columns(labels, "who") == ["age", "sex"]
    assert metadata_columns(labels, "who", exclude=["sex"]) == ["age"]


def test_selection_curves_in_the_report():
    t = make_biometric(n_identities=12, records_per_identity=20, n_features=32,
                       random_state=4)
    r = evaluate(t, "expression", "identity", models=["logreg", "knn"],
                 attackers="naive,parrot", anonymizer=IdentityTransform(), selection="auto",
                 n_random=10, random_state=0)
    sel = r["privacy"]["selection"]
    assert sel["counts"] == [6, 3]
    assert set(sel["strategies"]) == {"random", "classification", "metadata", "distinctive",
                                      "center"}
    assert sel["metadata_columns"] == ["gender"]
    assert sel["full"]["n_identities"] == 12
    for name, points in sel["strategies"].items():
        assert [p["n_identities"] for p in points] == [6, 3]
        for p in points:
            assert p["chance"] == pytest.approx(1 / p["n_identities"], abs=0.05)
            assert p["accuracy"] >= p["chance"]
            if name == "random":
                assert len(p["runs"]) == 10 and p["min"] <= p["accuracy"] <= p["max"]
                assert p["std"] == pytest.approx(np.std(p["runs"]))
            else:
                assert len(p["identities"]) == p["n_identities"]
    # the random draws differ between repeats
    assert len(set(sel["strategies"]["random"][0]["runs"])) > 1 or \
        sel["strategies"]["random"][0]["std"] == 0.0


def test_fewer_identities_raise_the_attack_on_a_weak_anonymizer():
    t = make_biometric(n_identities=16, records_per_identity=20, n_features=32,
                       identity_strength=0.35, random_state=6)
    r = evaluate(t, "expression", "identity", models=["logreg"], attackers="parrot",
                 anonymizer=IdentityTransform(), selection="random,classification",
                 identities=[4], random_state=0)
    sel = r["privacy"]["selection"]
    full = sel["full"]["accuracy"]
    assert sel["strategies"]["random"][0]["accuracy"] > full
    assert sel["strategies"]["classification"][0]["accuracy"] >= \
        sel["strategies"]["random"][0]["accuracy"] - 0.05


def test_selection_bad_input():
    t = make_biometric(n_identities=6, records_per_identity=12, n_features=32, random_state=0)
    kw = dict(models=["knn"], attackers="naive", anonymizer=IdentityTransform())
    with pytest.raises(BioanonError, match="asked for 9 identities but there are only 6"):
        evaluate(t, "expression", "identity", selection="random", identities=[9], **kw)
    with pytest.raises(BioanonError, match="unknown selection strategy 'rand'"):
        evaluate(t, "expression", "identity", selection="rand", **kw)
    bare = t.drop_labels(["gender"])
    with pytest.raises(BioanonError, match="metadata strategy needs label columns"):
        evaluate(bare, "expression", "identity", selection="metadata", **kw)
    r = evaluate(bare, "expression", "identity", selection="auto", **kw)
    assert "metadata" in r["privacy"]["selection"]["skipped"]


def test_grouped_split_keeps_identities_disjoint_for_gender():
    t = make_biometric(n_identities=10, records_per_identity=12, n_features=32, random_state=0)
    tr, te = group_split(t, "identity", "gender", 0.3, random_state=0)
    ids, sex = t.labels["identity"].to_numpy(), t.labels["gender"].to_numpy()
    assert not set(ids[tr]) & set(ids[te])
    assert set(sex[tr]) == set(sex[te]) == {"F", "M"}
    r = evaluate(t, "expression", "gender", group="identity", models=["logreg"],
                 attackers="naive,parrot", anonymizer=ShuffleWithinInterest("expression"),
                 selection="auto", random_state=0)
    assert r["params"]["evaluation"]["group"] == "identity"
    assert "only 2 values" in r["privacy"]["selection"]["skipped"]["random"]
    with pytest.raises(BioanonError, match="needs at least 4"):
        evaluate(t, "expression", "gender", group="identity", selection="random",
                 models=["knn"], anonymizer=ShuffleWithinInterest("expression"))
    with pytest.raises(BioanonError, match="several 'identity' values|several"):
        group_split(t, "expression", "identity", 0.3, 0)
