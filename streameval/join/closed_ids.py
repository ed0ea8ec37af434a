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
Ids are held as their 64-bit hashes (~190 B each with the heap entry).
"""

from __future__ import annotations

import heapq
import math

#: stale heap entries (an id closed again while still kept) tolerated beyond 2 × the live ones
_SLACK = 64


class ClosedIds:
    __slots__ = ("_cap", "_heap", "_keep_ms", "_ts", "dropped")

    def __init__(self, keep_ms: int, cap: int) -> None:
        self._keep_ms = keep_ms
        self._cap = cap
        self._ts: dict[int, int] = {}  # hash of the request id -> its impression time
        self._heap: list[tuple[int, int]] = []  # (impression time, hash), with stale entries
        #: ids forgotten before their time, over the cap
        self.dropped = 0

    def __contains__(self, request_id: str) -> bool:
        return hash(request_id) in self._ts

    def __len__(self) -> int:
        return len(self._ts)

    def add(self, request_id: str, ts: int) -> None:
        h = hash(request_id)
        kept = self._ts
        kept[h] = ts
        heap = self._heap
        heapq.heappush(heap, (ts, h))
        if len(kept) > self._cap:
            while len(kept) > self._cap:
                old_ts, old = heapq.heappop(heap)
                if kept.get(old) == old_ts:
                    del kept[old]
                    self.dropped += 1
        elif len(heap) > 2 * len(kept) + _SLACK:
            # the same ids closed again and again (a request id re-used): drop the stale entries
            self._heap = [(t, k) for k, t in kept.items()]
            heapq.heapify(self._heap)

    def forget(self, watermark: int) -> None:
        """Forget every id whose impression is more than ``keep_ms`` behind ``watermark``."""
        before = watermark - self._keep_ms
        heap = self._heap
        kept = self._ts
        while heap and heap[0][0] < before:
            ts, h = heapq.heappop(heap)
            if kept.get(h) == ts:
                del kept[h]

    def next_due(self) -> float:
        """The smallest watermark at which :meth:`forget` has work; infinity when none."""
        heap = self._heap
        return heap[0][0] + self._keep_ms + 1 if heap else math.inf
