"""Krippendorff's interval alpha: the published worked example, and agreement with the
``krippendorff`` package (an independent implementation) on random data."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable

import krippendorff
import pytest

from streameval.judges import PairSums, alpha_interval

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", §C: 4 coders, 12 units,
# missing values (None). Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
CODERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def units_of(coders: list[list[float | None]]) -> list[list[float]]:
    return [[v for v in unit if v is not None] for unit in zip(*coders, strict=True)]


def reliability(coders: list[list[float | None]], level: str) -> float:
    data = [[math.nan if v is None else v for v in row] for row in coders]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_published_example_interval() -> None:
    got = alpha_interval(units_of(CODERS))
    assert got is not None
    assert round(got, 3) == 0.849  # as published
    assert got == pytest.approx(reliability(CODERS, "interval"), abs=1e-12)
    # the package reproduces the other published figures too (it is the independent check)
    assert round(reliability(CODERS, "nominal"), 3) == 0.743
    assert round(reliability(CODERS, "ordinal"), 3) == 0.815


def coincidence_alpha(units: list[list[float]], delta: Callable[[float, float], float]) -> float:
    """Krippendorff 2011's own recipe, step by step: the coincidence matrix o_ck (each ordered
    pair of values within a unit counts 1 / (m_u - 1)), its marginals n_c, then
    alpha = 1 - (n - 1) * sum o_ck delta_ck / sum n_c n_k delta_ck."""
    o: dict[tuple[float, float], float] = defaultdict(float)
    for unit in units:
        m = len(unit)
        for i, c in enumerate(unit):
            for j, k in enumerate(unit):
                if i != j:
                    o[c, k] += 1 / (m - 1)
    n_c: dict[float, float] = defaultdict(float)
    for (c, _), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    observed = sum(v * delta(c, k) for (c, k), v in o.items())
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in n_c for k in n_c)
    return 1 - (n - 1) * observed / expected


def test_published_example_by_the_coincidence_matrix() -> None:
    units = units_of(CODERS)
    assert sum(len(u) for u in units if len(u) > 1) == 40  # pairable values, as published
    assert round(coincidence_alpha(units, lambda c, k: float(c != k)), 3) == 0.743
    interval = coincidence_alpha(units, lambda c, k: (c - k) ** 2)
    assert round(interval, 3) == 0.849
    assert alpha_interval(units) == pytest.approx(interval, abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_random_two_coder_data_matches_package_and_pair_sums(seed: int) -> None:
    rng = random.Random(seed)
    units = rng.randrange(2, 40)
    a = [rng.choice([0, 1, 2, 3, 2.5]) for _ in range(units)]
    b = [min(3.0, max(0.0, x + rng.choice([-1, 0, 0, 1]))) for x in a]
    sums = PairSums()
    for x, y in zip(a, b, strict=True):
        sums.add(x, y)
    general = alpha_interval([[x, y] for x, y in zip(a, b, strict=True)])
    if len(set(a + b)) == 1:
        assert general is None and sums.alpha is None
        return
    expected = reliability([list(a), list(b)], "interval")
    assert general == pytest.approx(expected, abs=1e-9)
    assert sums.alpha == pytest.approx(expected, abs=1e-9)
    assert sums.units == units


def test_undefined_and_extremes() -> None:
    assert alpha_interval([]) is None
    assert alpha_interval([[1.0]]) is None  # nothing pairable
    assert alpha_interval([[2.0, 2.0], [2.0, 2.0]]) is None  # no variation
    assert alpha_interval([[0.0, 0.0], [3.0, 3.0]]) == 1.0  # perfect
    # systematic disagreement: (0, 3) and (3, 0): D_o = 9, D_e = 2*4*18-2*36 = 72 -> /(n-1)=3
    # alpha = 1 - 3 * (2*9*2) / 72 = -0.5
    assert alpha_interval([[0.0, 3.0], [3.0, 0.0]]) == pytest.approx(-0.5)
    assert PairSums().alpha is None
