"""Pacing: holding a driver back so that event time runs at ``speed`` × wall time.

The one place the simulator's drivers read the wall clock; the records and the pipeline never
see it. A *pacer* is called with the event time about to be reached and returns False when the
driver should stop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from streameval.errors import ConfigError

#: Called with the event time (ms) a driver is about to reach; returns False to stop.
Pacer = Callable[[int], bool]

#: waits shorter than this are skipped (a pacer called per record must stay cheap)
_MIN_WAIT_S = 0.002


def no_pacing(stop: threading.Event | None = None) -> Pacer:
    """As fast as the work goes (tests, backfills); stops once ``stop`` is set."""

    def pace(_event_ms: int) -> bool:
        return stop is None or not stop.is_set()

    return pace


def wall_pacer(
    start_ms: int,
    speed: float,
    stop: threading.Event,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Pacer:
    """Event time ``start_ms + x`` is reached ``x / speed`` wall seconds after the first call.

    A driver slower than that is not held at all (it never runs ahead to catch up: it just falls
    behind). Waiting wakes up at once when ``stop`` is set.
    """
    if not speed > 0:
        raise ConfigError(f"speed: must be > 0, got {speed}")
    origin: list[float] = []

    def pace(event_ms: int) -> bool:
        now = clock()
        if not origin:
            origin.append(now)
        wait = origin[0] + (event_ms - start_ms) / 1000.0 / speed - now
        if wait > _MIN_WAIT_S:
            stop.wait(wait)
        return not stop.is_set()

    return pace
