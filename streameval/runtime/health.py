"""``/healthz`` and ``/readyz``: whether the read loop turns, and whether the published figures
are caught up and in touch with the brokers.

Written by the loop, read by the HTTP threads (plain attribute reads and assignments)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from streameval.kafka.partition import Partition
from streameval.kafka.source import Stream

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name

#: ``/healthz`` says 503 once the read loop has not come back for this long (seconds): longer
#: than anything one turn of it may wait for (a poll 0.2 s, a commit at most 10 s, a lag
#: measurement 5 s, a state-topic flush 10 s, a rebalance inside the poll up to the session
#: timeout, 45 s by default), so only a loop that is stuck (kafka-python 3.0.12 was seen waiting
#: without end inside ``poll`` after a revocation) is restarted by the orchestrator's probe
STALL_S = 300.0


class Health:
    """Readiness (caught up, brokers answering) and liveness (the loop turns)."""

    def __init__(self, clock: Callable[[], float], *, stale_s: float) -> None:
        self._clock = clock
        #: /readyz is 503 once the last contact is older than this (a broker outage)
        self._stale_s = stale_s
        # /readyz says the readiness of the last *published* snapshot, so that a 200 is never
        # served beside figures from before the rebuild it announces
        self.ready = self.published_ready = False
        # when the loop last heard from the brokers (a lag measurement: end offsets asked and
        # answered)
        self.last_contact = clock()
        # when the read loop last came back from a turn (None: not started yet): /healthz
        self.turned_at: float | None = None
        # end offsets to reach before /readyz says ready (None: no assignment yet)
        self.catch_up_to: dict[Partition, int] | None = None

    def is_ready(self) -> bool:
        """Caught up with the log end, and in touch with the brokers (read by the HTTP threads:
        two plain attribute reads)."""
        return self.published_ready and self._clock() - self.last_contact < self._stale_s

    def is_live(self) -> bool:
        """The read loop has come back from a turn within :data:`STALL_S` (read by the HTTP
        threads; before the loop starts, live: the start's own reads are not a turn)."""
        turned = self.turned_at
        return turned is None or self._clock() - turned < STALL_S

    def turned(self) -> None:
        self.turned_at = self._clock()

    def contact(self) -> None:
        self.last_contact = self._clock()

    def unready(self, catch_up_to: dict[Partition, int] | None) -> None:
        """A rebalance: not ready before ``catch_up_to`` is read (None: not before the next
        assignment is known)."""
        self.catch_up_to = catch_up_to
        self.ready = self.published_ready = False

    def check_ready(self, stream: Stream, positions: dict[str, int]) -> None:
        """Ready once every partition of the last assignment was read up to the end offset seen
        when it was assigned. Called only after a poll's records were offered, so the consumer's
        position is what the pipeline has read, or beyond it where the log has nothing left to
        read there (records removed by retention since the commit). The targets, not the
        current assignment, are checked: during a rebalance the consumer holds no partition."""
        if self.ready or self.catch_up_to is None:
            return
        for tp, target in self.catch_up_to.items():
            pos = positions.get(tp.source, -1)
            if pos < target:
                pos = max(pos, stream.position(tp) or -1)
            if pos < target:
                return
        self.ready = True
        _LOG.info("caught up: ready")
