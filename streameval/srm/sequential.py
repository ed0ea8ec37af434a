"""The running sample-ratio test of the A/B: lists per arm since it began, fed one closed bucket
at a time, and its alarm (DESIGN §12; the arithmetic: :mod:`streameval.srm.arithmetic`).

The factor depends on the counts only, so it is recomputed after each bucket: looking at it
at bucket boundaries is a subsequence of looking after every list, and keeps Ville's bound.
Counts are integers, so a bucket's parts summed in any order (this instance's lists, or the
group's partitions through the state topic, :mod:`streameval.group.feed`) give the same test.

The arms: those of ``expected`` when it is given (lists of other arms are counted as
excluded); else every arm seen, at equal shares, and when a new arm appears the test starts
again from that bucket (its counts, alarm and ``since_ms`` restart: the guarantee holds for
each run of the test between two changes of the arms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from streameval import alarms
from streameval.snapshot import SrmArmRow, SrmRow
from streameval.srm.arithmetic import log_bayes_factor, threshold
from streameval.srm.arms import EXCLUDED


class SrmTest:
    """The test of the lists per arm against the expected split (``expected`` None: equal
    shares over the arms seen)."""

    def __init__(
        self, expected: Mapping[str, float] | None, alpha: float, concentration: float
    ) -> None:
        self.expected = None if expected is None else dict(sorted(expected.items()))
        self.alpha = alpha
        self.concentration = concentration
        self.threshold = threshold(alpha)
        self._start()

    def _start(self) -> None:
        #: arm -> lists since the test began (the expected arms from the start, when given)
        self.counts: dict[str, int] = dict.fromkeys(self.expected or (), 0)
        #: lists without an arm, or of an arm not expected, since the test began
        self.excluded = 0
        self.statistic = 0.0
        self.first_alarm_ms: int | None = None
        #: start of the first bucket the test counted (None: none yet)
        self.since_ms: int | None = None

    @property
    def fingerprint(self) -> str:
        """What a saved state must have been taken with to be loaded here."""
        return repr((self.expected, self.alpha, self.concentration))

    def shares(self) -> dict[str, float]:
        """The expected share of each arm tested."""
        if self.expected is not None:
            return dict(self.expected)
        return {arm: 1.0 / len(self.counts) for arm in self.counts}

    def close(self, start_ms: int, counts: Mapping[str, int]) -> None:
        """One closed bucket (starting at ``start_ms``): its lists per arm (:data:`EXCLUDED`:
        those without one)."""
        if not any(counts.values()):
            return
        was = self.alarm
        if self.expected is None:
            new = [a for a, n in counts.items() if n and a != EXCLUDED and a not in self.counts]
            if new:  # the arms changed: the test starts again from here
                arms = sorted([*self.counts, *new])
                if self.counts:
                    self._start()
                self.counts = dict.fromkeys(arms, 0)
        if self.since_ms is None:
            self.since_ms = start_ms
        tested = self.counts
        for arm, n in counts.items():
            if arm in tested:
                tested[arm] += n
            else:
                self.excluded += n
        self.statistic = self._statistic()
        if self.first_alarm_ms is None and self.alarm:
            self.first_alarm_ms = start_ms
        if self.alarm != was:
            self._log(start_ms)

    def _statistic(self) -> float:
        if len(self.counts) < 2:
            return 0.0  # one arm: no split to test
        shares = self.shares()
        arms = list(self.counts)
        return log_bayes_factor(
            [self.counts[a] for a in arms], [shares[a] for a in arms], self.concentration
        )

    @property
    def alarm(self) -> bool:
        return self.statistic >= self.threshold

    def _log(self, start_ms: int) -> None:
        shares = self.shares()
        alarms.srm_changed(
            alarm=self.alarm,
            arms=[(a, n, shares[a]) for a, n in self.counts.items()],
            statistic=self.statistic,
            threshold=self.threshold,
            bucket_ms=start_ms,
        )

    def row(self) -> SrmRow | None:
        """The test as a snapshot row (None before it has two arms to compare)."""
        if len(self.counts) < 2:
            return None
        total = sum(self.counts.values())
        shares = self.shares()
        arms = tuple(
            SrmArmRow(arm, n, n / total if total else math.nan, shares[arm])
            for arm, n in self.counts.items()
        )
        return SrmRow(
            arms,
            self.excluded,
            self.statistic,
            self.threshold,
            self.first_alarm_ms,
            self.since_ms,
        )

    def dump(self) -> dict[str, Any]:
        """The test as JSON-able values (the statistic is recomputed on :meth:`load`)."""
        return {
            "counts": [[arm, n] for arm, n in self.counts.items()],
            "excluded": self.excluded,
            "first": self.first_alarm_ms,
            "since": self.since_ms,
        }

    def load(self, state: Any) -> None:
        """What :meth:`dump` gave (raises ``ValueError`` if it is not: nothing changes then)."""
        try:
            counts = {}
            for arm, n in state["counts"]:
                if not (isinstance(arm, str) and arm != EXCLUDED and type(n) is int and n >= 0):
                    raise TypeError("counts are [arm, count] pairs")
                counts[arm] = n
            if self.expected is not None and list(counts) != list(self.expected):
                raise TypeError("the arms are not the expected ones")
            excluded, first, since = state["excluded"], state["first"], state["since"]
            if not (type(excluded) is int and excluded >= 0):
                raise TypeError("excluded is a count")
            if not all(v is None or type(v) is int for v in (first, since)):
                raise TypeError("first and since are integers or null")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not the sample-ratio test's state: {exc!r}") from exc
        self.counts = counts
        self.excluded = excluded
        self.first_alarm_ms = first
        self.since_ms = since
        self.statistic = self._statistic()
