"""The daemon's progress line (DESIGN §8): what an operator tailing the log checks first.

Every ``metrics.progress_interval`` (default ``1m``; ``0`` turns it off) of the daemon's injected
monotonic clock, one INFO line of the published snapshot::

    progress: 1520 records/s (91200 in 60 s, 1204800 since start), consumer lag 3400 records
    (most behind: search-clicks/2 2100), watermark 2023-11-14T22:30:00Z, horizon
    2023-11-14T22:24:50Z, open lists 9120, ready

The rate is the records read between two lines over the clock time between them (the first line:
since the daemon started). Reading it costs a clock read per turn of the loop, and the line is
made only when due.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from streameval.durations import format_instant
from streameval.snapshot import Snapshot

_LOG = logging.getLogger("streameval.progress")


def progress_line(snapshot: Snapshot, read: int, elapsed_s: float) -> str:
    """The line for ``snapshot``, ``read`` records having been read over ``elapsed_s``."""
    rate = read / elapsed_s if elapsed_s > 0 else 0.0
    lag = snapshot.consumer_lag
    if lag:
        (topic, partition), most = max(lag.items(), key=lambda item: (item[1], item[0]))
        behind = (
            f"consumer lag {sum(lag.values())} records (most behind: {topic}/{partition} {most})"
        )
    else:
        behind = "consumer lag unknown (not measured yet, or nothing assigned)"
    watermark = snapshot.watermark_ms
    horizon = snapshot.horizon_ms
    return (
        f"progress: {rate:.0f} records/s ({read} in {elapsed_s:.0f} s, "
        f"{snapshot.intake.records_read} since start), {behind}, "
        f"watermark {'none yet' if watermark is None else format_instant(watermark)}, "
        f"horizon {'none yet' if horizon is None else format_instant(horizon)}, "
        f"open lists {snapshot.open_lists}, {'ready' if snapshot.ready else 'not ready'}"
    )


class ProgressLog:
    """Logs :func:`progress_line` when ``every_s`` of ``clock`` have passed since the last
    line (since it was made, for the first); ``every_s`` 0 never."""

    def __init__(self, every_s: float, clock: Callable[[], float]) -> None:
        self._every_s = every_s
        self._clock = clock
        self._last_at = clock()
        self._last_read = 0
        self._next_at = self._last_at + every_s

    def __call__(self, snapshot: Callable[[], Snapshot]) -> None:
        """Once a turn: the line, when due, of the snapshot ``snapshot`` gives (only then
        asked for)."""
        if self._every_s <= 0:
            return
        now = self._clock()
        if now < self._next_at:
            return
        current = snapshot()
        read = current.intake.records_read
        # (a count that went back, a rebuilt pipeline's: the rate starts over from it)
        _LOG.info(progress_line(current, max(0, read - self._last_read), now - self._last_at))
        self._last_at, self._last_read = now, read
        self._next_at = now + self._every_s
