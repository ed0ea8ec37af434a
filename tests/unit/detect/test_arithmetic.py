"""The detectors' arithmetic against values computed another way (by hand, or from the normal
density through statistics.NormalDist)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from streameval.detect.arithmetic import (
    cusum_step,
    decay,
    gaussian_llr,
    precision_mean,
    residual_sums,
    threshold,
)


def test_threshold_is_the_log_of_the_false_alarm_period_in_buckets() -> None:
    # 30 days of 10 s buckets: 30 * 86400 / 10 = 259,200 buckets;
    # ln(259200) = ln(2.592) + 5 ln(10) = 0.95243 + 11.51293 = 12.46536
    assert threshold(30 * 86_400_000, 10_000) == pytest.approx(12.46536, abs=1e-5)
    # one false alarm per 100 buckets: ln(100) = 4.60517
    assert threshold(1_000_000, 10_000) == pytest.approx(4.60517, abs=1e-5)
    with pytest.raises(ValueError):
        threshold(10_000, 10_000)


@pytest.mark.parametrize(
    ("d", "v", "delta"),
    [(0.0, 1.0, 0.5), (-0.02, 0.0004, 0.01), (0.03, 2.5e-5, 0.0114), (-1.0, 0.3, 0.2)],
)
def test_llr_is_the_log_ratio_of_two_normal_densities(d: float, v: float, delta: float) -> None:
    sd = math.sqrt(v)
    expected = math.log(NormalDist(-delta, sd).pdf(d) / NormalDist(0.0, sd).pdf(d))
    assert gaussian_llr(d, v, delta) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_llr_by_hand() -> None:
    # d = -0.2, v = 0.025, delta = 0.07: -0.07 * (-0.2 + 0.035) / 0.025 = 0.462
    assert gaussian_llr(-0.2, 0.025, 0.07) == pytest.approx(0.462)
    # no shift at all: the expected evidence is against the drop, -delta^2 / (2 v)
    assert gaussian_llr(0.0, 0.025, 0.07) == pytest.approx(-0.0049 / 0.05)


@pytest.mark.parametrize(
    ("w", "llr", "cap", "expected"),
    [(0.0, -1.0, 10.0, 0.0), (1.0, 0.5, 10.0, 1.5), (9.0, 3.0, 10.0, 10.0), (2.0, -1.5, 10.0, 0.5)],
)
def test_cusum_step_stays_within_zero_and_the_cap(
    w: float, llr: float, cap: float, expected: float
) -> None:
    assert cusum_step(w, llr, cap) == pytest.approx(expected)


def test_decay_halves_per_half_life() -> None:
    assert decay(0, 1000) == 1.0
    assert decay(-5, 1000) == 1.0  # never grows
    assert decay(1000, 1000) == pytest.approx(0.5)
    assert decay(3000, 1000) == pytest.approx(0.125)


def test_precision_mean_weights_strata_by_lists_over_variance() -> None:
    # stratum A: 3 lists, residual sum -0.3 (mean -0.1), variance 0.04 -> weight 3/0.04 = 75
    # stratum B: 1 list, residual sum 0.2 (mean 0.2), variance 0.01 -> weight 1/0.01 = 100
    # d = (75 * -0.1 + 100 * 0.2) / 175 = 12.5 / 175 = 0.0714286; v = 1/175
    d, v = precision_mean([(3, -0.3, 0.04), (1, 0.2, 0.01)]) or (None, None)
    assert d == pytest.approx(12.5 / 175)
    assert v == pytest.approx(1 / 175)
    # a stratum without lists or without a variance is left out
    assert precision_mean([(0, 0.0, 0.04), (2, 0.1, 0.0)]) is None
    assert precision_mean([]) is None


def test_residual_sums_from_group_moments() -> None:
    # values 0.9, 0.5 against 0.7: residuals 0.2, -0.2 -> sum 0, squares 0.08
    s, ss = residual_sums(2, 1.4, 0.81 + 0.25, 0.7)
    assert s == pytest.approx(0.0, abs=1e-12)
    assert ss == pytest.approx(0.08)
