"""Lists per arm per bucket of one source partition, and their records in the state topic
(DESIGN §6, §12).

:class:`SrmStash` holds the open buckets of one stream of lists: the daemon's collector keeps
one per source partition (:mod:`streameval.group.collector`, kind ``srm``) and writes each
complete bucket to the state topic, whence every instance tests the group's counts
(:mod:`streameval.group.feed`), as the interleaving counts go; :class:`~streameval.srm.counter.
SrmCounter` keeps one for the lists of one process. A bucket is complete once the evaluation
horizon has passed its end (a list is finalized at its impression plus the attribution window).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from streameval.windows.spec import pop_before

FORMAT_VERSION = 1

#: one bucket of one partition: arm -> lists (``""``: lists without an arm)
ArmBucket = dict[str, int]


class SrmStash:
    """The open buckets of one stream of lists (buckets before ``closed`` are closed: lists
    handed again for them, on a re-read, are ignored and counted in ``ignored``)."""

    __slots__ = ("bucket_ms", "closed", "ignored", "pending")

    def __init__(self, bucket_ms: int) -> None:
        self.bucket_ms = bucket_ms
        self.pending: dict[int, ArmBucket] = {}
        self.closed: int | None = None
        self.ignored = 0

    def add(self, ts: int, arm: str) -> None:
        """One finalized list of ``arm``, in the bucket of its impression."""
        b = ts - ts % self.bucket_ms
        if self.closed is not None and b < self.closed:
            self.ignored += 1
            return
        counts = self.pending.get(b)
        if counts is None:
            counts = self.pending[b] = {}
        counts[arm] = counts.get(arm, 0) + 1

    def close_before(self, point: int) -> None:
        """Buckets before ``point`` are in the state topic already (a restored progress)."""
        if self.closed is None or point > self.closed:
            self.closed = point
            self.pending = {b: c for b, c in self.pending.items() if b >= point}

    def take(self, horizon_ms: int) -> list[tuple[int, ArmBucket]]:
        """The buckets the horizon completed since the last call, in order (removed)."""
        end = horizon_ms - horizon_ms % self.bucket_ms
        if self.closed is not None and end <= self.closed:
            return []
        self.closed = end
        return pop_before(self.pending, end)

    def clear(self) -> None:
        self.pending.clear()


def encode_arm_bucket(counts: Mapping[str, int]) -> bytes:
    rows = [[arm, n] for arm, n in sorted(counts.items())]
    return json.dumps({"v": FORMAT_VERSION, "a": rows}, separators=(",", ":")).encode()


def decode_arm_bucket(value: bytes) -> ArmBucket | str:
    """The counts, or why ``value`` is not an arm bucket of ours."""
    try:
        obj = json.loads(value)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "not JSON"
    if not isinstance(obj, dict) or obj.get("v") != FORMAT_VERSION:
        return "not an arm bucket of this format version"
    rows = obj.get("a")
    if not isinstance(rows, list):
        return "an arm bucket without its rows"
    out: ArmBucket = {}
    for row in rows:
        if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)):
            return "an arm row that is not [arm, count]"
        if not (type(row[1]) is int and row[1] >= 0):
            return "an arm count that is not a non-negative integer"
        out[row[0]] = row[1]
    return out
