"""Clicks read before their impression (the click topic read ahead of the impression topic).

Each waits, bounded, until its impression opens its list (then it is attached) or until the
watermark passes *its own* time (then its impression can no longer arrive in time: it is
unmatched, DESIGN §3). A click's identity while it waits is its ``event_id`` within its request,
else its exact record (DESIGN §2), as on an open list.
"""

from __future__ import annotations

import heapq
import math
from typing import NamedTuple

from streameval.events.models import Click

#: stale entries in the expiry order (clicks already attached) tolerated beyond 2 × those waiting
_SLACK = 64


class Waiting(NamedTuple):
    click: Click
    key: str | bytes
    #: counted in the intake when read (False while re-reading what a previous run counted)
    counted: bool
    seq: int


class PendingClicks:
    __slots__ = ("_by_request", "_cap", "_count", "_order", "_seq")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._by_request: dict[str, list[Waiting]] = {}
        # (click time, seq, request_id), one per click; entries of clicks already attached stay
        # until popped or compacted
        self._order: list[tuple[int, int, str]] = []
        self._seq = 0
        self._count = 0

    def is_duplicate(self, request_id: str, key: str | bytes) -> bool:
        waiting = self._by_request.get(request_id)
        return waiting is not None and any(w.key == key for w in waiting)

    def add(self, click: Click, key: str | bytes, counted: bool) -> bool:
        """Make ``click`` wait; False when the cap is reached (it cannot wait)."""
        if self._count >= self._cap:
            return False
        rid = click.request_id
        self._seq = seq = self._seq + 1
        waiting = self._by_request.get(rid)
        if waiting is None:
            waiting = self._by_request[rid] = []
        waiting.append(Waiting(click, key, counted, seq))
        self._count += 1
        heapq.heappush(self._order, (click.timestamp, seq, rid))
        return True

    def take(self, request_id: str) -> list[Waiting]:
        """The clicks waiting for ``request_id`` (its impression came), in arrival order."""
        waiting = self._by_request.pop(request_id, None)
        if not waiting:
            return []
        self._count -= len(waiting)
        if len(self._order) > 2 * self._count + _SLACK:
            self._order = [
                (w.click.timestamp, w.seq, rid) for rid, ws in self._by_request.items() for w in ws
            ]
            heapq.heapify(self._order)
        return waiting

    def expire(self, watermark: int | None) -> int:
        """Drop every click whose own time is behind ``watermark`` (all of them when None): now
        unmatched. Returns how many of those were counted in the intake when read."""
        expired = 0
        order = self._order
        by_request = self._by_request
        while order and (watermark is None or order[0][0] < watermark):
            _, seq, rid = heapq.heappop(order)
            waiting = by_request.get(rid)
            if waiting is None:
                continue  # attached meanwhile
            for i, w in enumerate(waiting):
                if w.seq == seq:
                    del waiting[i]
                    self._count -= 1
                    expired += w.counted
                    if not waiting:
                        del by_request[rid]
                    break
        return expired

    def next_due(self) -> float:
        """The smallest watermark at which :meth:`expire` has work; infinity when none."""
        order = self._order
        return order[0][0] + 1 if order else math.inf

    def __len__(self) -> int:
        return self._count

    @property
    def counted(self) -> int:
        """Waiting clicks that were counted in the intake when read."""
        return sum(w.counted for ws in self._by_request.values() for w in ws)
