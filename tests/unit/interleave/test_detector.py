"""The interleaving detector: its closed form against numerical integration, its guarantee
against a seeded simulation, and its power on a real difference."""

from __future__ import annotations

import math
import random

import pytest

from streameval.interleave.detector import PairTest, log_mixture_ratio, log_normal_cdf


def _integrated(wins: int, losses: int, scale: float) -> float:
    """log of ∫_{λ<=0} exp(λS − λ²n/2) · 2·N(λ; 0, τ²) dλ by the midpoint rule (independent of
    the closed form)."""
    n, s = wins + losses, wins - losses
    step = scale / 2000.0
    total = 0.0
    for i in range(40 * 2000):  # λ from 0 down to −40τ
        lam = -(i + 0.5) * step
        prior = 2.0 * math.exp(-lam * lam / (2 * scale * scale)) / (scale * math.sqrt(2 * math.pi))
        total += math.exp(lam * s - lam * lam * n / 2.0) * prior * step
    return math.log(total)


@pytest.mark.parametrize(
    ("wins", "losses", "scale"), [(0, 0, 0.1), (10, 30, 0.1), (30, 10, 0.1), (120, 160, 0.05)]
)
def test_closed_form_equals_the_mixture_integral(wins: int, losses: int, scale: float) -> None:
    assert log_mixture_ratio(wins, losses, scale) == pytest.approx(
        _integrated(wins, losses, scale), abs=1e-6
    )


def test_no_evidence_is_ratio_one() -> None:
    # n = 0: a = 1/τ², Λ = 2/(τ·(1/τ))·exp(0)·Φ(0) = 2 · 1/2 = 1
    assert log_mixture_ratio(0, 0, 0.1) == pytest.approx(0.0, abs=1e-12)


def test_losses_raise_the_statistic_and_wins_lower_it() -> None:
    assert log_mixture_ratio(40, 60, 0.1) > log_mixture_ratio(50, 50, 0.1)
    assert log_mixture_ratio(60, 40, 0.1) < log_mixture_ratio(50, 50, 0.1)


def test_log_normal_cdf_is_finite_deep_in_the_tail() -> None:
    # Φ(−40) ≈ φ(40)/40 = exp(−800)/(40·sqrt(2π)): log = −800 − log 40 − 0.5 log 2π ≈ −804.608
    assert log_normal_cdf(-40.0) == pytest.approx(
        -800 - math.log(40) - 0.5 * math.log(2 * math.pi), abs=1e-3
    )
    assert log_normal_cdf(0.0) == pytest.approx(math.log(0.5))


def test_first_alarm_is_the_bucket_where_it_first_held() -> None:
    threshold = math.log(1 / 0.01)
    test = PairTest()
    for i in range(100):
        test.update(2, 8, 0.1, threshold, i * 10_000)  # a clear loser: 20 % wins
        if test.first_alarm_ms is not None:
            break
    assert test.first_alarm_ms is not None
    alarm_at = test.first_alarm_ms
    # the statistic of the bucket before the alarm was below the threshold
    before = log_mixture_ratio(2 * (alarm_at // 10_000), 8 * (alarm_at // 10_000), 0.1)
    assert before < threshold <= test.statistic
    test.update(50, 0, 0.1, threshold, alarm_at + 10_000)  # wins after: first alarm stays
    assert test.first_alarm_ms == alarm_at


def _alarm_after(p_win: float, alpha: float, lists: int, rng: random.Random) -> int | None:
    """Decisive lists until the mixture test alarms (looked at after every list), or None."""
    threshold = math.log(1 / alpha)
    wins = losses = 0
    for n in range(1, lists + 1):
        if rng.random() < p_win:
            wins += 1
        else:
            losses += 1
        # (with losses <= wins, Λ <= 1/(τ√a) <= 1 < 1/α: skipping the formula is exact)
        if losses > wins and log_mixture_ratio(wins, losses, 0.1) >= threshold:
            return n
    return None


def test_false_alarms_stay_below_alpha_under_the_null() -> None:
    """Ville: P(ever alarm) <= α when the ranker is not worse. 400 seeded runs of 5 000 decisive
    lists at P(win) = 1/2, looked at after every list: the share that alarmed is the measured
    type-I error; with α = 0.05 it must stay below α (binomial sd at 0.05 is 0.011)."""
    rng = random.Random(20251126)
    runs = 400
    alarmed = sum(_alarm_after(0.5, 0.05, 5_000, rng) is not None for _ in range(runs))
    assert alarmed / runs < 0.05


def test_a_worse_ranker_is_caught() -> None:
    """P(win) = 0.45 (preference −0.1): every one of 50 seeded runs alarms within 5 000 lists."""
    rng = random.Random(7)
    assert all(_alarm_after(0.45, 0.01, 5_000, rng) is not None for _ in range(50))
