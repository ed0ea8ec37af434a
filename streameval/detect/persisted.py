"""The detectors' records in the state topic (DESIGN §6, §9): the value formats, pure.

Two kinds of record, beside the windows' buckets (:mod:`streameval.windows.persisted`):

* a **detector bucket**: one source partition's, one bucket's and one relevance source's
  sufficient statistics, per (segment, watched k) and query: the count, sum and sum of squares
  of NDCG@k. Exactly what :meth:`~streameval.detect.detectors.Detectors.ingest` takes.
* a **progress** record, one per source partition: the bucket starts before which its judged
  and its implicit detector buckets are all written (a bucket with no list is not written; the
  progress says it is complete all the same).

JSON, floats written with ``repr`` (``json`` does), so a value read back equals the one
written, to the bit: every instance then merges the same numbers in the same order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from streameval.snapshot import Segment

FORMAT_VERSION = 1

#: per query: (count, sum, sum of squares) of NDCG@k
Agg = tuple[float, float, float]
#: one detector bucket of one source partition and relevance source: (segment, k) -> per query
DetectorBucket = dict[tuple[Segment, int], dict[str, Agg]]


class Progress(NamedTuple):
    """Of one source partition: every detector bucket starting before these is written (None:
    none yet)."""

    judged: int | None
    implicit: int | None

    def of(self, relevance: str) -> int | None:
        return self.judged if relevance == "judged" else self.implicit


class BadRecord(NamedTuple):
    """A value that is not a detector record of ours: why."""

    reason: str


def encode_detector_bucket(data: Mapping[tuple[Segment, int], Mapping[str, Agg]]) -> bytes:
    rows = [
        [list(segment), k, [[q, c, t, tt] for q, (c, t, tt) in per_query.items()]]
        for (segment, k), per_query in data.items()
    ]
    return json.dumps({"v": FORMAT_VERSION, "d": rows}, separators=(",", ":")).encode()


def decode_detector_bucket(value: bytes) -> DetectorBucket | BadRecord:
    obj = _load(value)
    if isinstance(obj, BadRecord):
        return obj
    rows = obj.get("d")
    if not isinstance(rows, list):
        return BadRecord("a detector bucket without its rows")
    out: DetectorBucket = {}
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3):
            return BadRecord("a detector row that is not [segment, k, queries]")
        segment, k, queries = row
        if not (isinstance(segment, list) and all(isinstance(v, str) for v in segment)):
            return BadRecord("a segment that is not a list of strings")
        if not (type(k) is int and k > 0) or not isinstance(queries, list):
            return BadRecord("a k that is not a positive integer, or queries not a list")
        per_query: dict[str, Agg] = {}
        for entry in queries:
            agg = _agg(entry)
            if agg is None:
                return BadRecord("a query entry that is not [query_id, count, sum, sum_sq]")
            per_query[entry[0]] = agg
        out[tuple(segment), k] = per_query
    return out


def _agg(entry: Any) -> Agg | None:
    if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)):
        return None
    c, t, tt = entry[1], entry[2], entry[3]
    if not (type(c) is int and c > 0):
        return None
    if not all(type(x) in (int, float) and math.isfinite(x) for x in (t, tt)):
        return None
    return (c, t, tt)


def encode_progress(progress: Progress) -> bytes:
    return json.dumps(
        {"v": FORMAT_VERSION, "judged": progress.judged, "implicit": progress.implicit},
        separators=(",", ":"),
    ).encode()


def decode_progress(value: bytes) -> Progress | BadRecord:
    obj = _load(value)
    if isinstance(obj, BadRecord):
        return obj
    points = [obj.get(r) for r in ("judged", "implicit")]
    if not all(p is None or type(p) is int for p in points):
        return BadRecord("a progress record whose points are not integers")
    return Progress(*points)


def _load(value: bytes) -> dict[str, Any] | BadRecord:
    try:
        obj = json.loads(value)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return BadRecord("not JSON")
    if not isinstance(obj, dict):
        return BadRecord("not a JSON object")
    if obj.get("v") != FORMAT_VERSION:
        return BadRecord(f"format version {obj.get('v')!r}, not {FORMAT_VERSION}")
    return obj


__all__ = [
    "Agg",
    "BadRecord",
    "DetectorBucket",
    "Progress",
    "decode_detector_bucket",
    "decode_progress",
    "encode_detector_bucket",
    "encode_progress",
]
