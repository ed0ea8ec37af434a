"""The Space-Saving sketch against exact counts (Metwally et al. 2005's guarantees)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from streameval.judges import SpaceSaving


def test_exact_while_the_items_fit() -> None:
    sketch = SpaceSaving(5)
    for item in "abacabad":
        sketch.add(item)
    assert sketch.count("a") == (4, 0)
    assert sketch.top(2) == ["a", "b"]
    assert sketch.top(4) == ["a", "b", "c", "d"]  # c and d tie at 1: c was held first


def test_replacement_takes_the_smallest_count_plus_one() -> None:
    sketch = SpaceSaving(2)
    for item in "aab":
        sketch.add(item)
    sketch.add("c")  # b (1) goes: c takes 1 + 1, error 1
    assert sketch.count("b") == (0, 0)
    assert sketch.count("c") == (2, 1)
    assert len(sketch) == 2


@pytest.mark.parametrize("seed", range(5))
def test_bounds_on_a_zipf_stream(seed: int) -> None:
    rng = random.Random(seed)
    capacity = 50
    weights = [1 / (i + 1) for i in range(2000)]
    stream = [f"q{i}" for i in rng.choices(range(2000), weights, k=20_000)]
    sketch = SpaceSaving(capacity)
    for item in stream:
        sketch.add(item)
    exact = Counter(stream)
    bound = len(stream) / capacity
    for item, true in exact.items():
        count, error = sketch.count(item)
        if true > bound:
            assert count >= true  # every item above total / capacity is held
        if count:
            assert true <= count <= true + error
            assert error <= bound
    # the head of a Zipf stream is found exactly
    assert sketch.top(5) == [item for item, _ in exact.most_common(5)]
