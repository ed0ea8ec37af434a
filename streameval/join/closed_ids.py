"""Request ids of lists already closed (finalized or evicted), kept for a while and within a cap.

What they are for (DESIGN §3): a click read *in time* (its own time not behind the watermark) for a
list that is already closed falls after that list's attribution window (a list closes once the
watermark is past ``impression + attribution``), or its list was evicted over the cap: either way
it is *late*. Without its id the click would wait for an impression that already came, and end
*unmatched*. (A click read behind the watermark is late without any look-up.)

An id is kept until the watermark is ``keep_ms`` (two attribution windows) past its impression, in
impression-time order whatever the order the ids were closed in, and at most ``cap`` ids
(``max_open_lists``) at once: beyond, the oldest impression is forgotten first and counted in
:attr:`ClosedIds.dropped`. A forgotten id's click read in time waits, and is counted unmatched.

Ties of impression time are broken by the order the ids were closed in, which is the order their
impressions arrived in (lists close in ``(impression time, arrival)`` order, the open lists'
deadline order), so which id falls out over the cap depends on the input alone (DESIGN §4), never
on the interpreter's hash seed. Ids are held as their 64-bit hashes (~200 B each with the order's
entry): ``hash()`` of a string changes with ``PYTHONHASHSEED``, but it is only ever looked up
here, in this process (never ordered by, persisted or compared across processes); two ids of a
run alike by it (a chance of ~n²/2⁶⁵ for n ids kept) would share one entry.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

#: stale entries (an id closed again while still kept) tolerated beyond 2 × the live ones
_SLACK = 64

#: an entry's order key is ``impression time << _SERIAL_BITS`` plus its serial (the how-manieth
#: id closed): one int, ordered by time then arrival, that tells an entry from a stale one
_SERIAL_BITS = 64


class ClosedIds:
    """The kept ids, and their entries in impression-time order.

    Lists close oldest first (finalization and eviction both take the open list with the
    earliest deadline), so nearly every entry arrives in order and goes to the end of a queue:
    O(1) to add and to forget, where a heap paid O(log n) tuple comparisons for each (~4 % of a
    replay in a profile). An entry that arrives out of order (an impression accepted after a
    newer list was evicted over the cap) goes to a small heap. The two together are always
    taken in ``(impression time, serial)`` order, the order a single heap of every entry gives.
    """

    __slots__ = ("_cap", "_heap", "_keep_ms", "_queue", "_serial", "_ts", "dropped")

    def __init__(self, keep_ms: int, cap: int) -> None:
        self._keep_ms = keep_ms
        self._cap = cap
        self._serial = 0
        # hash of the request id -> the order key of its live entry (see _SERIAL_BITS)
        self._ts: dict[int, int] = {}
        # (order key, hash) entries, with stale ones: in order, and the few out of it
        self._queue: deque[tuple[int, int]] = deque()
        self._heap: list[tuple[int, int]] = []
        #: ids forgotten before their time, over the cap
        self.dropped = 0

    def __contains__(self, request_id: str) -> bool:
        return hash(request_id) in self._ts

    def __len__(self) -> int:
        return len(self._ts)

    @property
    def entries(self) -> int:
        """Entries held, stale ones included (bounded: see :meth:`add`)."""
        return len(self._queue) + len(self._heap)

    def add(self, request_id: str, ts: int) -> None:
        h = hash(request_id)
        self._serial = serial = self._serial + 1
        key = (ts << _SERIAL_BITS) + serial
        kept = self._ts
        kept[h] = key
        entry = (key, h)
        queue = self._queue
        if not queue or entry >= queue[-1]:
            queue.append(entry)
        else:
            heapq.heappush(self._heap, entry)
        if len(kept) > self._cap:
            while len(kept) > self._cap:
                old_key, old = self._pop_oldest()
                if kept.get(old) == old_key:
                    del kept[old]
                    self.dropped += 1
        elif len(queue) + len(self._heap) > 2 * len(kept) + _SLACK:
            # the same ids closed again and again (a request id re-used): drop the stale entries
            self._queue = deque(sorted((t, k) for k, t in kept.items()))
            self._heap = []

    def _pop_oldest(self) -> tuple[int, int]:
        heap, queue = self._heap, self._queue
        if heap and (not queue or heap[0] < queue[0]):
            return heapq.heappop(heap)
        return queue.popleft()

    def forget(self, watermark: int) -> None:
        """Forget every id whose impression is more than ``keep_ms`` behind ``watermark``."""
        # impression time < watermark - keep_ms, for a key of it and a serial in [1, 2**64)
        before = (watermark - self._keep_ms) << _SERIAL_BITS
        kept = self._ts
        queue = self._queue
        while queue and queue[0][0] < before:
            key, h = queue.popleft()
            if kept.get(h) == key:
                del kept[h]
        heap = self._heap
        while heap and heap[0][0] < before:
            key, h = heapq.heappop(heap)
            if kept.get(h) == key:
                del kept[h]

    def next_due(self) -> float:
        """The smallest watermark at which :meth:`forget` has work; infinity when none."""
        queue, heap = self._queue, self._heap
        if queue:
            first = queue[0][0]
            if heap and heap[0][0] < first:
                first = heap[0][0]
        elif heap:
            first = heap[0][0]
        else:
            return math.inf
        return (first >> _SERIAL_BITS) + self._keep_ms + 1
