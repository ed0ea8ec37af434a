"""The sample-ratio test's arithmetic (Lindon & Malek 2022) against values derived another way:
by hand, by the Pólya urn's product form (the Dirichlet-multinomial marginal of one sequence,
list by list), and the guarantee itself by exact enumeration of every path of a small run."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from streameval.srm.arithmetic import log_bayes_factor, threshold


def _urn(sequence: list[int], shares: list[Fraction], concentration: Fraction) -> Fraction:
    """The Bayes factor of one sequence of arms, exactly: the Pólya urn's probability of it
    (the Dirichlet-multinomial predictive, list by list) over its probability under the null."""
    counts = [0] * len(shares)
    factor = Fraction(1)
    for n, arm in enumerate(sequence):
        factor *= (concentration * shares[arm] + counts[arm]) / (concentration + n)
        factor /= shares[arm]
        counts[arm] += 1
    return factor


@pytest.mark.parametrize(
    ("counts", "shares", "concentration", "expected"),
    [
        # a = (1, 1): one list, Bayes factor (1/2)/(1/2) = 1; two of one arm: (1/2)(2/3)/(1/4)
        ((1, 0), (0.5, 0.5), 2.0, 1.0),
        ((2, 0), (0.5, 0.5), 2.0, 4 / 3),
        # one of each: (1/2)(1/3)/(1/4) = 2/3 (a balanced split is evidence *for* the null)
        ((1, 1), (0.5, 0.5), 2.0, 2 / 3),
        ((0, 0), (0.5, 0.5), 2.0, 1.0),
    ],
)
def test_by_hand(
    counts: tuple[int, int], shares: tuple[float, float], concentration: float, expected: float
) -> None:
    assert math.exp(log_bayes_factor(counts, shares, concentration)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("sequence", "shares", "concentration"),
    [
        ([0, 1, 1, 0, 1, 1, 1], [Fraction(1, 2), Fraction(1, 2)], Fraction(1)),
        ([0, 0, 0, 0, 0, 1], [Fraction(1, 5), Fraction(4, 5)], Fraction(10)),
        ([2, 0, 1, 2, 2, 1, 0, 2], [Fraction(1, 3), Fraction(1, 6), Fraction(1, 2)], Fraction(3)),
        ([1] * 40 + [0] * 3, [Fraction(1, 2), Fraction(1, 2)], Fraction(1000)),
    ],
)
def test_the_closed_form_is_the_urns_product_in_any_order(
    sequence: list[int], shares: list[Fraction], concentration: Fraction
) -> None:
    counts = [sequence.count(i) for i in range(len(shares))]
    got = log_bayes_factor(counts, [float(p) for p in shares], float(concentration))
    for order in (sequence, sorted(sequence), sequence[::-1]):
        assert got == pytest.approx(math.log(_urn(order, shares, concentration)), abs=1e-9)


def test_it_is_a_martingale_under_the_null() -> None:
    """E[BF(x + one list) | x] = BF(x) when the list falls in arm i with the expected share."""
    shares = (0.2, 0.3, 0.5)
    for counts in [(0, 0, 0), (3, 1, 0), (10, 40, 7)]:
        before = math.exp(log_bayes_factor(counts, shares, 5.0))
        after = 0.0
        for i, p in enumerate(shares):
            bumped = list(counts)
            bumped[i] += 1
            after += p * math.exp(log_bayes_factor(bumped, shares, 5.0))
        assert after == pytest.approx(before, rel=1e-12)


def _crossing_probability(n: int, alpha: float, concentration: float) -> float:
    """The exact probability that a 50/50 split's statistic, looked at after each of ``n``
    lists, ever reaches log(1/α): the mass of the paths not yet stopped, carried over the
    states (lists, treatment lists), each path of m lists having probability 2^-m."""
    bar = threshold(alpha) - 1e-12
    alive = {0: Fraction(1)}  # treatment lists -> probability of getting there uncrossed
    crossed = Fraction(0)
    for m in range(1, n + 1):
        nxt: dict[int, Fraction] = {}
        for t, mass in alive.items():
            for arm in (0, 1):
                nxt[t + arm] = nxt.get(t + arm, Fraction(0)) + mass / 2
        alive = {}
        for t, mass in nxt.items():
            if log_bayes_factor((m - t, t), (0.5, 0.5), concentration) >= bar:
                crossed += mass
            else:
                alive[t] = mass
    return float(crossed)


def test_villes_bound_holds_exactly_over_every_path_of_a_small_run() -> None:
    """Every path of 200 lists of a 50/50 split, each looked at after every list: the exact
    probability of ever reaching log(1/α) is at most α (and not trivially 0)."""
    for alpha, concentration in [(0.2, 1.0), (0.1, 10.0), (0.05, 1.0), (0.01, 2.0)]:
        share = _crossing_probability(200, alpha, concentration)
        assert 0 < share <= alpha


def test_threshold_is_log_one_over_alpha() -> None:
    assert threshold(0.001) == pytest.approx(6.907755278982137)
    assert threshold(0.05) == pytest.approx(math.log(20))
