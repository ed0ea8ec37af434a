"""The most frequent queries, in bounded memory: the Space-Saving sketch.

Metwally, A., Agrawal, D. & El Abbadi, A. (2005). Efficient computation of frequent and top-k
elements in data streams. *ICDT 2005*, LNCS 3363, 398–412; weighted updates: Berinde, R.,
Cormode, G., Indyk, P. & Strauss, M. (2010). Space-optimal heavy hitters with strong error
bounds. *ACM TODS* 35(4).

``capacity`` counters; an item already counted adds one to its counter; a new item takes a free
counter, or else the smallest counter's place with that count plus one (its overestimate, kept
as ``error``). Any item whose true count exceeds total/capacity is held, and a held item's count
overestimates its true count by at most total/capacity. Ties are broken by input order: among
the smallest counters, the one last raised earliest goes first; among equal counts in the top,
the one held longer ranks first. The smallest counter is found with a min-heap whose stale
entries are skipped (and rebuilt away when they pile up), so an update costs O(log capacity).
"""

from __future__ import annotations

import heapq


class SpaceSaving:
    __slots__ = ("_capacity", "_counts", "_heap", "_seq", "_since", "total")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self._capacity = capacity
        self._counts: dict[str, list[int]] = {}  # item -> [count, error, last raised (seq)]
        self._since: dict[str, int] = {}  # item -> seq at which it took its counter
        self._heap: list[tuple[int, int, str]] = []  # (count, seq, item), stale entries skipped
        self._seq = 0
        self.total = 0

    def add(self, item: str, weight: int = 1) -> None:
        """Count ``item`` ``weight`` times (the weighted update of Berinde, Cormode, Indyk &
        Strauss 2010, which keeps the bounds with total = the sum of the weights)."""
        self._seq += 1
        self.total += weight
        seq = self._seq
        entry = self._counts.get(item)
        if entry is None:
            if len(self._counts) < self._capacity:
                entry = self._counts[item] = [0, 0, seq]
            else:
                floor = self._pop_smallest()
                del self._counts[floor[2]]
                del self._since[floor[2]]
                entry = self._counts[item] = [floor[0], floor[0], seq]
            self._since[item] = seq
        entry[0] += weight
        entry[2] = seq
        heapq.heappush(self._heap, (entry[0], seq, item))
        if len(self._heap) > 4 * self._capacity + 16:
            self._heap = [(c, s, i) for i, (c, _, s) in self._counts.items()]
            heapq.heapify(self._heap)

    def _pop_smallest(self) -> tuple[int, int, str]:
        heap = self._heap
        while True:
            count, seq, item = heapq.heappop(heap)
            entry = self._counts.get(item)
            if entry is not None and entry[0] == count and entry[2] == seq:
                return count, seq, item

    def count(self, item: str) -> tuple[int, int]:
        """(estimated count, its maximum overestimate) of ``item``; (0, 0) when not held."""
        entry = self._counts.get(item)
        return (0, 0) if entry is None else (entry[0], entry[1])

    def top(self, n: int) -> list[str]:
        """The ``n`` items with the largest estimated counts (ties: held longer first)."""
        since = self._since
        ranked = heapq.nsmallest(n, [(-e[0], since[i], i) for i, e in self._counts.items()])
        return [item for _, _, item in ranked]

    def __len__(self) -> int:
        return len(self._counts)
