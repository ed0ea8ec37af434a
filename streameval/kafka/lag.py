"""Consumer lag: records behind the log end per (topic, partition), for
``streameval_consumer_lag{topic,partition}`` (DESIGN §5).

:func:`consumer_lag` asks the brokers for end offsets (one request per partition leader), so it is
meant to be called every few seconds, not on every poll: :class:`LagSampler` does that pacing.
What it measures is an :class:`Offsets`: the daemon's stream (either client), or a kafka-python
``KafkaConsumer`` itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kafka.errors import IllegalStateError, KafkaError, KafkaTimeoutError

from streameval.kafka.partition import Partition

log = logging.getLogger(__name__)


def records_behind(
    end_offsets: Mapping[Partition, int], positions: Mapping[Partition, int]
) -> dict[Partition, int]:
    """``end - position`` (never negative) for each partition that has both."""
    return {
        tp: max(0, end - positions[tp])
        for tp, end in sorted(end_offsets.items())
        if tp in positions
    }


class Offsets(Protocol):
    """What a lag measurement asks: the assigned partitions (values with ``topic`` and
    ``partition``: a :class:`Partition`, or a client's own), their log ends, and the read
    position in each."""

    def assignment(self) -> Any: ...

    def end_offsets(self, partitions: Any, timeout_ms: int | None = ...) -> Any: ...

    def position(self, tp: Any) -> int | None: ...


def consumer_lag(consumer: Offsets, *, timeout_ms: int = 5000) -> dict[Partition, int]:
    """Records behind the log end for each partition assigned to ``consumer``. Partitions whose
    position is not known yet are left out. Raises kafka-python's errors when the end offsets
    cannot be had."""
    assigned = sorted(consumer.assignment() or ())
    if not assigned:
        return {}
    ends = consumer.end_offsets(set(assigned), timeout_ms=timeout_ms)
    positions: dict[Partition, int] = {}
    for tp in assigned:
        try:
            position = consumer.position(tp)
        except (IllegalStateError, KafkaTimeoutError):
            continue  # revoked meanwhile, or no position yet
        if position is not None:
            positions[Partition(tp.topic, tp.partition)] = position
    return records_behind(
        {Partition(tp.topic, tp.partition): end for tp, end in ends.items()}, positions
    )


class LagSampler:
    """Measures :func:`consumer_lag` at most once every ``interval_s``. Call :meth:`sample` as
    often as convenient (e.g. after each poll); a failed measurement is logged and skipped."""

    def __init__(
        self,
        consumer: Offsets,
        interval_s: float = 5.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._consumer = consumer
        self._interval_s = interval_s
        self._clock = clock
        self._next_at: float | None = None
        self._last: dict[Partition, int] = {}

    @property
    def last(self) -> Mapping[Partition, int]:
        """The latest measurement (empty before the first)."""
        return self._last

    def sample(self) -> Mapping[Partition, int] | None:
        """A fresh measurement when one is due, else ``None``."""
        now = self._clock()
        if self._next_at is not None and now < self._next_at:
            return None
        self._next_at = now + self._interval_s
        try:
            self._last = consumer_lag(self._consumer)
        except KafkaError as error:
            log.warning("consumer lag not measured: %s", error)
            return None
        return self._last
