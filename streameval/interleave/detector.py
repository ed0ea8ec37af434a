"""An always-valid sequential test of "this ranker is worse than that one" (DESIGN §10, §9).

Each decisive interleaved list (a win or a loss for the pair; ties and lists without credit
carry no sign) gives ``X = +1`` when the ranker won and ``-1`` when it lost. If the ranker is not
worse (``P(win) >= 1/2`` among decisive lists), ``exp(λ S_n - λ² n / 2)`` is a nonnegative
supermartingale for every ``λ <= 0`` (``S_n = wins - losses``; ``E exp(λX) <= cosh λ <=
exp(λ²/2)``: X is 1-sub-Gaussian), and so is its mixture over a half-normal prior
``λ ~ N(0, τ²)`` restricted to ``λ <= 0`` (Robbins 1970's normal mixture; the mixture SPRT of
Johari, Koomen, Pekelis & Walsh 2022). In closed form, with ``a = n + 1/τ²``:

    Λ_n = 2 / (τ √a) · exp(S_n² / (2a)) · Φ(−S_n / √a)

By Ville's inequality, ``P(Λ_n >= 1/α for some n) <= α`` under the null, whatever the moments at
which it is looked at: the alarm (``log Λ_n >= log(1/α)``) is a test with type-I error at most α
over the whole, unbounded, run of the pair, with no fixed horizon and no multiple-look penalty.
``τ`` (``mixture_scale``) sets the effect the test is quickest for (about |2·P(win) − 1| = τ).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from streameval import alarms
from streameval.snapshot import PairTestRow

#: an ordered pair of teams: (ranker, opponent)
Pair = tuple[str, str]

_LOG2 = math.log(2.0)
_SQRT2 = math.sqrt(2.0)


def log_normal_cdf(x: float) -> float:
    """log Φ(x), accurate far into the lower tail (where Φ underflows)."""
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    # Mills ratio: Φ(x) ≈ φ(x)/|x| · (1 − 1/x² + 3/x⁴)
    return -0.5 * x * x - math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log1p(-1 / (x * x))


def log_mixture_ratio(wins: int, losses: int, scale: float) -> float:
    """log Λ for ``wins`` and ``losses`` of the ranker (see the module doc); 0 when n = 0."""
    return log_mixture_ratio_sum(wins - losses, wins + losses, scale)


def log_mixture_ratio_sum(s: float, n: float, scale: float) -> float:
    """log Λ for the sum ``s`` of ``n`` 1-sub-Gaussian observations whose mean is >= 0 under the
    null (large when the mean is negative): the same closed form for any such sequence."""
    a = n + 1.0 / (scale * scale)
    root = math.sqrt(a)
    return _LOG2 - math.log(scale * root) + s * s / (2.0 * a) + log_normal_cdf(-s / root)


@dataclass(slots=True)
class PairTest:
    """The running test of one ordered pair: is ``ranker`` worse than ``opponent``?"""

    wins: int = 0
    losses: int = 0
    statistic: float = 0.0
    first_alarm_ms: int | None = None

    def update(self, wins: int, losses: int, scale: float, threshold: float, at_ms: int) -> None:
        """Add one closed bucket's decisive lists (the bucket starting at ``at_ms``)."""
        if not wins and not losses:
            return
        self.wins += wins
        self.losses += losses
        self.statistic = log_mixture_ratio(self.wins, self.losses, scale)
        if self.first_alarm_ms is None and self.statistic >= threshold:
            self.first_alarm_ms = at_ms


class PairTests:
    """The running tests of every ordered pair, fed one closed bucket at a time (its decisive
    lists per pair), buckets in event-time order. The same arithmetic whether the buckets come
    from this instance's lists (:class:`~streameval.interleave.store.InterleavingStore`) or from
    the whole group's partitions through the state topic (:mod:`streameval.group.feed`): wins
    and losses are integers, so a bucket's parts summed in any order give the same test."""

    def __init__(self, scale: float, alpha: float) -> None:
        self.scale = scale
        self.threshold = math.log(1.0 / alpha)
        self._tests: dict[Pair, PairTest] = {}

    def close(self, start_ms: int, counts: Iterable[tuple[Pair, Sequence[int]]]) -> None:
        """One closed bucket (starting at ``start_ms``): per pair, its ``(wins, losses, …)``.
        Pairs are taken in sorted order (a test's first list creates it)."""
        threshold = self.threshold
        for pair, acc in sorted(counts):
            test = self._tests.get(pair)
            if test is None:
                test = self._tests[pair] = PairTest()
            was = test.statistic >= threshold
            test.update(acc[0], acc[1], self.scale, threshold, start_ms)
            if (test.statistic >= threshold) != was:
                alarms.pair_changed(
                    alarm=not was,
                    ranker=pair[0],
                    opponent=pair[1],
                    wins=test.wins,
                    losses=test.losses,
                    statistic=test.statistic,
                    threshold=threshold,
                    bucket_ms=start_ms,
                )

    def rows(self) -> tuple[PairTestRow, ...]:
        return tuple(
            PairTestRow(
                ranker,
                opponent,
                test.wins,
                test.losses,
                test.statistic,
                self.threshold,
                test.first_alarm_ms,
            )
            for (ranker, opponent), test in sorted(self._tests.items())
        )

    def dump(self) -> list[list[Any]]:
        """The tests as JSON-able values (the statistic is recomputed from the counts on
        :meth:`load`, so a snapshot holds integers only)."""
        return [
            [ranker, opponent, t.wins, t.losses, t.first_alarm_ms]
            for (ranker, opponent), t in sorted(self._tests.items())
        ]

    def load(self, state: Any) -> None:
        """What :meth:`dump` gave (raises ``ValueError`` if it is not: nothing changes then)."""
        tests: dict[Pair, PairTest] = {}
        try:
            for ranker, opponent, wins, losses, first in state:
                if not (isinstance(ranker, str) and isinstance(opponent, str)):
                    raise TypeError("team names are strings")
                if not (type(wins) is int and type(losses) is int and wins >= 0 <= losses):
                    raise TypeError("wins and losses are counts")
                if first is not None and type(first) is not int:
                    raise TypeError("first_alarm_ms is an integer or null")
                statistic = log_mixture_ratio(wins, losses, self.scale) if wins + losses else 0.0
                tests[ranker, opponent] = PairTest(wins, losses, statistic, first)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not the interleaving tests' state: {exc!r}") from exc
        self._tests = tests
