"""Pareto front and the area under it."""

from __future__ import annotations

import numpy as np
import pytest

from bioanon.errors import BioanonError
from bioanon.metrics import pareto_auc, pareto_front


def test_front_drops_dominated_points_and_sorts_by_privacy() -> None:
    privacy = [0.2, 0.4, 0.3, 0.8, 0.5, 0.8]
    utility = [0.9, 0.7, 0.6, 0.3, 0.7, 0.1]
    front = pareto_front(privacy, utility)
    assert front.tolist() == [0, 4, 3]  # (0.4, 0.7) is dominated by (0.5, 0.7)
    for i in set(range(6)) - set(front.tolist()):
        assert any(privacy[j] >= privacy[i] and utility[j] >= utility[i] for j in front)


def test_random_points_front_is_mutually_non_dominated() -> None:
    rng = np.random.default_rng(0)
    p, u = rng.random(200), rng.random(200)
    front = pareto_front(p, u)
    for i in front:
        others = np.delete(np.arange(200), i)
        dominated = (p[others] >= p[i]) & (u[others] >= u[i]) & (
            (p[others] > p[i]) | (u[others] > u[i]))
        assert not dominated.any()


def test_auc_of_a_single_point_is_its_rectangle() -> None:
    assert pareto_auc([0.6], [0.5]) == pytest.approx(0.3)
    assert pareto_auc([0.6], [0.5], privacy_range=(0.4, 0.8)) == pytest.approx(0.25)


def test_dominating_front_has_larger_auc_and_extra_dominated_points_change_nothing() -> None:
    p, u = [0.2, 0.5, 0.9], [0.8, 0.6, 0.2]
    better = pareto_auc(p, [x + 0.1 for x in u])
    base = pareto_auc(p, u)
    assert better > base
    assert pareto_auc([*p, 0.3, 0.1], [*u, 0.1, 0.5]) == pytest.approx(base)
    assert 0.0 <= base <= max(u)


def test_bad_inputs_are_user_errors() -> None:
    with pytest.raises(BioanonError, match="pair them"):
        pareto_front([0.1, 0.2], [0.3])
    with pytest.raises(BioanonError, match="at least one"):
        pareto_auc([], [])
    with pytest.raises(BioanonError, match="increasing"):
        pareto_auc([0.5], [0.5], privacy_range=(1.0, 0.0))
