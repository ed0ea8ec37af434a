"""The generated weighted prefix sums against the loop they replace, and against the definition."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.score.cutoff_sums import (
    UNROLL_LIMIT,
    cutoff_sums,
    looped_cutoff_sums,
)

_values = st.lists(
    st.floats(min_value=-1000, max_value=1000, allow_nan=False) | st.integers(-3, 3), max_size=80
)
_ks = st.lists(st.integers(1, 70), min_size=1, max_size=6, unique=True).map(sorted)


@given(_values, _ks)
@settings(max_examples=300, deadline=None)
def test_generated_sums_equal_the_loop_bit_for_bit(values: list[float], ks: list[int]) -> None:
    weights = [1.0 / math.log2(i + 2) for i in range(max(ks))]
    fast = cutoff_sums(weights, ks)(values)
    loop = looped_cutoff_sums(weights, ks)(values)
    assert fast == loop  # same additions in the same order: equal, not approximately
    # and the definition: Σ_{i<k} v_i · w_i, zero beyond the values
    for k, got in zip(ks, fast, strict=True):
        want = math.fsum(v * w for v, w in zip(values[:k], weights, strict=False))
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_worked_example() -> None:
    # grades 3, 2, 3, 0, 1 with log2 discounts: DCG@1 = 3, DCG@3 = 3 + 2/log2(3) + 3/2,
    # DCG@6 (padded with a zero) = DCG@3 + 0 + 1/log2(6)
    weights = [1.0 / math.log2(i + 2) for i in range(6)]
    d1, d3, d6 = cutoff_sums(weights, [1, 3, 6])([3, 2, 3, 0, 1])
    assert d1 == 3.0
    assert d3 == pytest.approx(3 + 2 / math.log2(3) + 1.5)
    assert d6 == pytest.approx(d3 + 1 / math.log2(6))


def test_beyond_the_unroll_limit_the_loop_is_used() -> None:
    weights = [1.0] * (UNROLL_LIMIT + 1)
    sums = cutoff_sums(weights, [1, UNROLL_LIMIT + 1])
    assert sums([1.0] * 100) == (1.0, float(UNROLL_LIMIT + 1))


@pytest.mark.parametrize(
    ("weights", "ks"),
    [
        ([1.0, 0.5], []),
        ([1.0, 0.5], [2, 1]),
        ([1.0, 0.5], [0, 1]),
        ([1.0], [1, 2]),
        ([1.0], [1, 1]),
    ],
)
def test_bad_cutoffs_are_refused(weights: list[float], ks: list[int]) -> None:
    with pytest.raises(ValueError, match=r"cutoffs|weights"):
        cutoff_sums(weights, ks)
