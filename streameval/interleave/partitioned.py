"""Interleaving outcomes per source partition and bucket, for the state topic (DESIGN §6, §10).

With several instances, none sees every interleaved list, so none can run the interleaving
test on its own lists and be exact. Like the regression detectors' buckets
(:mod:`streameval.group.collector`), each instance reduces the lists of the partitions it
owns to per-bucket counts per ordered pair (wins, losses, ties, no_click), writes them to the
state topic, and every instance feeds the group's counts to its tests, bucket by bucket
(:mod:`streameval.group.feed`). A bucket is complete once the evaluation horizon has passed
its end (an outcome needs the list's clicks), as for the implicit NDCG buckets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from streameval.interleave.detector import Pair
from streameval.windows.stash import BucketStash
from streameval.windows.store import fold_outcomes

FORMAT_VERSION = 1

#: one bucket of one partition: pair -> [wins, losses, ties, no_click]
PairBucket = dict[Pair, list[int]]


class PairStash(BucketStash[PairBucket]):
    """The open buckets of one source partition, each its outcome counts per pair."""

    __slots__ = ()

    def __init__(self, bucket_ms: int) -> None:
        super().__init__(bucket_ms, dict)

    def add(self, ts: int, outcomes: Sequence[tuple[str, str, str]]) -> None:
        """One interleaved list's outcomes, in the bucket of its impression."""
        counts = self.open(ts)
        if counts is not None:
            fold_outcomes(counts, outcomes)


def encode_pair_bucket(counts: Mapping[Pair, Sequence[int]]) -> bytes:
    rows = [[ranker, opponent, list(acc)] for (ranker, opponent), acc in sorted(counts.items())]
    return json.dumps({"v": FORMAT_VERSION, "p": rows}, separators=(",", ":")).encode()


def decode_pair_bucket(value: bytes) -> PairBucket | str:
    """The counts, or why ``value`` is not a pair bucket of ours."""
    try:
        obj = json.loads(value)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "not JSON"
    if not isinstance(obj, dict) or obj.get("v") != FORMAT_VERSION:
        return "not a pair bucket of this format version"
    rows = obj.get("p")
    if not isinstance(rows, list):
        return "a pair bucket without its rows"
    out: PairBucket = {}
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3):
            return "a pair row that is not [ranker, opponent, counts]"
        ranker, opponent, acc = row
        if not (isinstance(ranker, str) and isinstance(opponent, str)):
            return "team names that are not strings"
        if not (
            isinstance(acc, list) and len(acc) == 4 and all(type(n) is int and n >= 0 for n in acc)
        ):
            return "counts that are not four non-negative integers"
        out[ranker, opponent] = acc
    return out
