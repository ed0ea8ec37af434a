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

from streameval.windows.stash import BucketStash

FORMAT_VERSION = 1

#: one bucket of one partition: arm -> lists (``""``: lists without an arm)
ArmBucket = dict[str, int]


class SrmStash(BucketStash[ArmBucket]):
    """The open buckets of one stream of lists, each its lists per arm."""

    __slots__ = ()

    def __init__(self, bucket_ms: int) -> None:
        super().__init__(bucket_ms, dict)

    def add(self, ts: int, arm: str) -> None:
        """One finalized list of ``arm``, in the bucket of its impression."""
        counts = self.open(ts)
        if counts is not None:
            counts[arm] = counts.get(arm, 0) + 1


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
