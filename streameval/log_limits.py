"""Keeping the Kafka clients' repeated complaints to a trickle.

During a broker outage kafka-python and librdkafka log every failed reconnect: a few dozen lines
a second that bury everything else and fill disks. :class:`RepeatLimiter`, a logging filter,
lets the first record of a kind through and then at most one per interval, and the next one it
lets through says how many it held back. Nothing is hidden for longer than the interval.
:class:`SlowStepFilter` keeps out one warning of kafka-python's that says nothing an operator
can act on (the reason is in its doc).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streameval.events.decode import Invalid

#: the loggers of the Kafka clients (kafka-python, librdkafka through confluent-kafka)
KAFKA_CLIENT_LOGGERS = ("kafka", "streameval.kafka.librdkafka", "streameval.kafka.confluent_stream")

#: what changes from one repeat of a line to the next: hex runs with a digit in them (object
#: addresses ``0x7f3a…``, member ids and UUIDs, 6+ hex digits, so words like "added" are kept),
#: then any other digits (ports, offsets, timings)
_VARYING = re.compile(r"0x[0-9a-f]+|\b(?=[0-9a-f-]*\d)[0-9a-f]{6,}(?:-[0-9a-f]+)*\b|\d+", re.I)
_KIND_CHARS = 200


class RepeatLimiter(logging.Filter):
    """Passes records of loggers under ``prefixes``: the first of each kind, then at most one
    per ``interval_s``. A record's kind is its logger, level and message with every number and
    hex id blanked (ports, offsets, timings, addresses, member ids change from one repeat to the
    next). Other loggers'
    records always pass. At most ``max_kinds`` kinds are tracked (then the table starts over)."""

    def __init__(
        self,
        prefixes: Iterable[str] = KAFKA_CLIENT_LOGGERS,
        *,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        max_kinds: int = 1000,
    ) -> None:
        super().__init__()
        self._prefixes = tuple(prefixes)
        self._interval_s = interval_s
        self._clock = clock
        self._max_kinds = max_kinds
        self._lock = threading.Lock()
        # kind -> [time it last passed, records held back since]
        self._kinds: dict[tuple[str, int, str], list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if not any(name == p or name.startswith(p + ".") for p in self._prefixes):
            return True
        message = record.getMessage()
        kind = (name, record.levelno, _VARYING.sub("#", message)[:_KIND_CHARS])
        now = self._clock()
        with self._lock:
            seen = self._kinds.get(kind)
            if seen is not None and now - seen[0] < self._interval_s:
                seen[1] += 1
                return False
            if seen is None and len(self._kinds) >= self._max_kinds:
                self._kinds.clear()
            self._kinds[kind] = [now, 0]
        if seen is not None and seen[1]:
            record.msg = f"{message} (and {int(seen[1])} more like it in {now - seen[0]:.0f} s)"
            record.args = ()
        return True


#: kafka-python's logger of its network event loop, and its slow-step warning
SELECTOR_LOGGER = "kafka.net.selector"
_SLOW_STEP = re.compile(
    r"ran for (\d+(?:\.\d+)?)s \(>[\d.]+s threshold\)\. It is blocking the event loop"
)


class SlowStepFilter(logging.Filter):
    """Keeps kafka-python's ``Task … ran for 0.186s (>0.100s threshold). It is blocking the
    event loop`` out of the operator's log unless the step took ``keep_from_s`` or more.

    What it meant for the daemon (kafka-python 3.0.12, measured): the client runs its network
    event loop (:class:`kafka.net.selector.NetworkSelector`) on a thread of its own
    (``kafka-io-<client_id>``), which also sends the group heartbeats; the daemon's read loop,
    decoding, join and scoring run on the main thread and never inside a task of that loop (a
    poll hands the fetched records over and returns). The slow steps were
    ``KafkaTCPTransport._read_from_sock``: 0.14-0.28 s of wall time with 0.002-0.003 s of CPU
    of their own thread. The step reads a socket, which releases the GIL; getting it back
    waits for the main thread, which holds it through stretches the interpreter does not
    switch in (a cyclic collection of the large live heap: 0.15 s for a middle generation there)
    and on a busy machine for its time slices. Nothing is looping; the loop, heartbeats
    included, is late by that pause, far inside the heartbeat interval (a third of
    ``kafka.session_timeout``, at least 1 s: 15 s by default) and the session timeout. Nothing
    to fix in the daemon short of another process for the client; the line, logged at every
    such step (each names another task, so :class:`RepeatLimiter` does not catch it), would
    only train operators to ignore warnings. A step of ``keep_from_s`` (default 1 s, the
    shortest heartbeat interval the daemon sets) or more could delay a heartbeat, and is still
    logged."""

    def __init__(self, keep_from_s: float = 1.0) -> None:
        super().__init__()
        self._keep_from_s = keep_from_s

    def filter(self, record: logging.LogRecord) -> bool:
        match = _SLOW_STEP.search(record.getMessage())
        return match is None or float(match.group(1)) >= self._keep_from_s


def quiet_slow_steps(keep_from_s: float = 1.0) -> None:
    """Install :class:`SlowStepFilter` on kafka-python's selector logger (once)."""
    logger = logging.getLogger(SELECTOR_LOGGER)
    if not any(isinstance(f, SlowStepFilter) for f in logger.filters):
        logger.addFilter(SlowStepFilter(keep_from_s))


class InvalidRecordLog:
    """A sampled log of invalid records: the first of each (reason, field), then at most one per
    ``interval_s``, each saying how many like it were held back. The detail is log-safe by
    construction (:class:`~streameval.events.decode.Invalid`: short, printable, never the
    record); the field is a JSON Pointer from the configuration."""

    def __init__(
        self,
        *,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger | None = None,
        max_kinds: int = 1000,
    ) -> None:
        self._interval_s = interval_s
        self._clock = clock
        self._log = logger or logging.getLogger("streameval.intake")
        self._max_kinds = max_kinds
        # (reason, field) -> [time it last logged, records held back since]
        self._kinds: dict[tuple[str, str], list[float]] = {}

    def note(self, invalid: Invalid, source: str) -> None:
        kind = (invalid.reason, invalid.field)
        now = self._clock()
        seen = self._kinds.get(kind)
        if seen is not None and now - seen[0] < self._interval_s:
            seen[1] += 1
            return
        held = 0 if seen is None else int(seen[1])
        if seen is None and len(self._kinds) >= self._max_kinds:
            self._kinds.clear()
        self._kinds[kind] = [now, 0]
        field = f", field {invalid.field}" if invalid.field else ""
        more = f" (+{held} more like it in the last {self._interval_s:.0f} s)" if held else ""
        self._log.warning(
            "invalid record (%s%s) from %s: %s%s",
            *(invalid.reason, field, source, invalid.detail, more),
        )


class SecondsTimestampLog:
    """A sampled WARNING about event times that are surely epoch seconds read as milliseconds
    (:func:`~streameval.epoch.looks_like_seconds`): the first, then at most one per
    ``interval_s``, each saying how many like it were held back. Only said: those events are
    counted as any other (usually late)."""

    def __init__(
        self,
        *,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger | None = None,
    ) -> None:
        self._interval_s = interval_s
        self._clock = clock
        self._log = logger or logging.getLogger("streameval.intake")
        self._last: float | None = None
        self._held = 0

    def __call__(self, ms: int, source: str) -> None:
        from streameval.epoch import seconds_hint

        now = self._clock()
        if self._last is not None and now - self._last < self._interval_s:
            self._held += 1
            return
        held, self._held, self._last = self._held, 0, now
        more = f" (+{held} more like it in the last {self._interval_s:.0f} s)" if held else ""
        self._log.warning("%s: %s%s", source, seconds_hint(ms), more)
