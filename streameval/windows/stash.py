"""The open buckets of one stream of finalized lists, until the horizon completes them.

A consumer that reduces lists to per-bucket counts (the interleaving outcomes per pair, the
lists per arm of the sample-ratio test) keeps one :class:`BucketStash` per stream: a list adds to
the accumulator of its impression's bucket (:meth:`BucketStash.open`), the horizon hands out the
buckets it completed, in order (:meth:`BucketStash.take`), and a bucket already closed (written
to the state topic, or handed out before a re-read) takes no list again: one handed to it is
ignored and counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from streameval.windows.spec import pop_before

_B = TypeVar("_B")


class BucketStash(Generic[_B]):
    """Open buckets by start, each an accumulator made by ``new`` (buckets before ``closed`` are
    closed: lists handed again for them, on a re-read, are ignored and counted in ``ignored``)."""

    __slots__ = ("bucket_ms", "closed", "ignored", "new", "pending")

    def __init__(self, bucket_ms: int, new: Callable[[], _B]) -> None:
        self.bucket_ms = bucket_ms
        self.new = new
        self.pending: dict[int, _B] = {}
        self.closed: int | None = None
        self.ignored = 0

    def open(self, ts: int) -> _B | None:
        """The accumulator of the bucket of ``ts`` (made on first use); None when that bucket is
        closed already (the list is counted in ``ignored``)."""
        b = ts - ts % self.bucket_ms
        if self.closed is not None and b < self.closed:
            self.ignored += 1
            return None
        acc = self.pending.get(b)
        if acc is None:
            acc = self.pending[b] = self.new()
        return acc

    def close_before(self, point: int) -> None:
        """Buckets before ``point`` are in the state topic already (a restored progress)."""
        if self.closed is None or point > self.closed:
            self.closed = point
            self.pending = {b: c for b, c in self.pending.items() if b >= point}

    def take(self, horizon_ms: int) -> list[tuple[int, _B]]:
        """The buckets the horizon completed since the last call, in order (removed)."""
        end = horizon_ms - horizon_ms % self.bucket_ms
        if self.closed is not None and end <= self.closed:
            return []
        self.closed = end
        return pop_before(self.pending, end)

    def clear(self) -> None:
        self.pending.clear()
