"""A fast version of benchmarks/propensity.py (few pages, few runs), so that its figures cannot
rot: the estimate against the simulator's examination curve, the ordering of rankers of known
quality, and the change under a regression, each against judged NDCG."""

from __future__ import annotations

from benchmarks.propensity import (
    RANKERS,
    accuracy,
    distance,
    ordering,
    regression,
)
from streameval.values import IMPLICIT, IMPLICIT_DEBIASED


def test_propensities_within_ten_per_cent_of_the_simulators() -> None:
    acc = accuracy(150_000, seed=3)
    assert acc.estimate.complete
    assert acc.worst <= 0.10, acc.errors


def test_implicit_debiased_orders_rankers_as_judged_does_more_often_than_implicit() -> None:
    counts = ordering(runs=1, pages=15_000, seed=5)
    pairs = len(RANKERS) * (len(RANKERS) - 1) // 2
    assert counts[IMPLICIT][1] == counts[IMPLICIT_DEBIASED][1] == pairs
    assert counts[IMPLICIT_DEBIASED][0] > counts[IMPLICIT][0]
    assert counts[IMPLICIT_DEBIASED][0] >= pairs - 3


def test_a_regression_shows_in_implicit_debiased_as_in_judged() -> None:
    changes = regression(runs=3, pages=8_000, seed=9)
    assert distance(changes, IMPLICIT_DEBIASED) < distance(changes, IMPLICIT)
    assert all(c < -0.05 for c in changes[IMPLICIT_DEBIASED])  # a drop it shows every time
