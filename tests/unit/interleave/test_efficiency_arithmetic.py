"""The arithmetic of benchmarks/interleaving_efficiency.py (the relative efficiency quoted in the
docs/interleaving.md), checked against the same quantities computed another way: every (query,
sample) value expanded into a list of weighted observations and summed with plain Python."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.interleaving_efficiency import Population, _arm_moments, efficiencies

NAN = math.nan


def _weighted(values: list[list[float]], weight: list[float]) -> list[tuple[float, float]]:
    """(weight, value) of every list that has a value."""
    return [(w, x) for w, row in zip(weight, values, strict=True) for x in row if not math.isnan(x)]


def _moments(values: list[list[float]], weight: list[float]) -> tuple[float, float, float]:
    obs = _weighted(values, weight)
    total = sum(w for w, _ in obs)
    served = sum(w * len(row) for w, row in zip(weight, values, strict=True))
    mean = sum(w * x for w, x in obs) / total
    var = sum(w * (x - mean) ** 2 for w, x in obs) / total
    return total / served, mean, var


def _within(values: list[list[float]], weight: list[float]) -> float:
    """Each query's unbiased sample variance, averaged over its lists' weights."""
    num = den = 0.0
    for w, row in zip(weight, values, strict=True):
        xs = [x for x in row if not math.isnan(x)]
        if len(xs) > 1:
            mu = sum(xs) / len(xs)
            num += w * sum((x - mu) ** 2 for x in xs) * len(xs) / (len(xs) - 1)
        den += w * len(xs)
    return num / den


CASES = [
    ([[1.0, 0.0, NAN], [0.5, 0.5, 0.5]], [0.25, 0.75]),
    ([[0.2, 0.9, 0.4, NAN], [NAN, NAN, 1.0, 0.0], [0.3, 0.3, 0.6, 0.1]], [0.5, 0.3, 0.2]),
]


@pytest.mark.parametrize(("values", "weight"), CASES)
def test_arm_moments_match_the_weighted_observations(
    values: list[list[float]], weight: list[float]
) -> None:
    share, mean, var = _arm_moments(np.array(values), np.array(weight), centred=False)
    assert (share, mean, var) == pytest.approx(_moments(values, weight))
    _, centred_mean, within = _arm_moments(np.array(values), np.array(weight), centred=True)
    assert centred_mean == pytest.approx(mean)
    assert within == pytest.approx(_within(values, weight))


def test_the_first_case_by_hand() -> None:
    # lists 1, 0 (weight 0.25 each) and 0.5 three times (0.75 each): mean 1.375 / 2.75 = 0.5,
    # variance (2 * 0.25 * 0.25) / 2.75; within queries only query 0 varies: 0.5 / (2 - 1)
    # per list, for 2 of the lists' 2.75 weight
    share, mean, var = _arm_moments(np.array(CASES[0][0]), np.array(CASES[0][1]), centred=False)
    assert share == pytest.approx(2.75 / 3)
    assert mean == pytest.approx(0.5)
    assert var == pytest.approx(0.125 / 2.75)
    within = _arm_moments(np.array(CASES[0][0]), np.array(CASES[0][1]), centred=True)[2]
    assert within == pytest.approx(0.25 * 2 * 0.5 / 2.75)


def test_efficiencies_are_the_ratio_of_informations() -> None:
    control = [[0.5, 0.7, NAN, 0.6], [0.2, 0.4, 0.3, NAN]]
    treatment = [[0.6, 0.6, NAN, 0.8], [0.3, NAN, 0.3, 0.3]]
    regressed = [[0.4, 0.6, NAN, 0.7], [0.3, NAN, 0.1, 0.3]]
    unregressed_outcome = [[1, 0, -1, 0], [0, 1, 0, 0]]
    regressed_outcome = [[1, -1, -1, 0], [-1, 1, 0, -1]]
    popularity = [0.6, 0.4]
    arrays = {"control": control, "treatment": treatment, "treatment_regressed": regressed}
    pop = Population(
        popularity=np.array(popularity),
        judged={k: np.array(v) for k, v in arrays.items()},
        implicit={k: np.array(v) for k, v in arrays.items()},
        outcome={
            "interleaved": np.array(unregressed_outcome, dtype=float),
            "interleaved_regressed": np.array(regressed_outcome, dtype=float),
        },
    )
    got = efficiencies([pop], [np.arange(4)])

    # interleaving: the paired mean of X1 - X0 per impression, and the share of decisive X1
    cells = [
        (w / 4, x1, x0)
        for w, r1, r0 in zip(popularity, regressed_outcome, unregressed_outcome, strict=True)
        for x1, x0 in zip(r1, r0, strict=True)
    ]
    effect = sum(w * (x1 - x0) for w, x1, x0 in cells)
    decisive = sum(w * abs(x1) for w, x1, _ in cells)
    assert got["preference"] == pytest.approx(effect)
    assert effect == pytest.approx(0.15 * -1 + 0.1 * -2)  # X1 - X0: one -1 in q0, two in q1
    assert got["decisive_share"] == pytest.approx(decisive)
    il_info = effect**2 / decisive

    # the A/B split: the treatment's drop from its paired pages, the arms' variances
    delta = _moments(treatment, popularity)[1] - _moments(regressed, popularity)[1]
    s_c, _, var_c = _moments(control, popularity)
    s_t, _, var_t = _moments(regressed, popularity)
    expected = delta**2 / (2 * var_c / s_c + 2 * var_t / s_t) / il_info
    assert got["judged"] == pytest.approx(expected)
    assert got["implicit"] == pytest.approx(expected)
    centred = (
        delta**2
        / (2 * _within(control, popularity) / s_c + 2 * _within(regressed, popularity) / s_t)
        / il_info
    )
    assert got["judged_centred"] == pytest.approx(centred)
    assert got["judged_drop"] == pytest.approx(delta / _moments(treatment, popularity)[1])


def test_resampled_columns_select_those_samples() -> None:
    """The bootstrap's columns: choosing sample 0 twice weighs it as two samples."""
    pop = Population(
        popularity=np.array([1.0]),
        judged={k: np.array([[0.5, 0.9]]) for k in ("control", "treatment")}
        | {"treatment_regressed": np.array([[0.4, 0.9]])},
        implicit={k: np.array([[0.5, 0.9]]) for k in ("control", "treatment")}
        | {"treatment_regressed": np.array([[0.4, 0.9]])},
        outcome={
            "interleaved": np.array([[0.0, 0.0]]),
            "interleaved_regressed": np.array([[-1.0, 1.0]]),
        },
    )
    assert efficiencies([pop], [np.array([0, 1])])["preference"] == pytest.approx(0.0)
    assert efficiencies([pop], [np.array([0, 0])])["preference"] == pytest.approx(-1.0)
    assert efficiencies([pop], [np.array([0, 0])])["judged_drop"] == pytest.approx(0.2)
    # no spread in either arm: the A/B test would need no impressions at all
    assert efficiencies([pop], [np.array([0, 0])])["judged"] == math.inf
