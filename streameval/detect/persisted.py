"""The detectors' records in the state topic (DESIGN §6, §9): the value formats, pure.

Two kinds of record, beside the windows' buckets (:mod:`streameval.windows.persisted`):

* a **detector bucket**: one source partition's, one bucket's and one relevance source's
  sufficient statistics, per (segment, watched k) and query: the count, sum and sum of squares
  of NDCG@k. Exactly what :meth:`~streameval.detect.detectors.Detectors.ingest` takes.
* a **progress** record, one per source partition: the bucket starts before which its judged
  and its implicit detector buckets are all written (a bucket with no list is not written; the
  progress says it is complete all the same).
* a **snapshot** of the detectors' whole state (:meth:`~streameval.detect.Detectors.dump`) at a
  group frontier, cut into chunks: what a starting instance restores before feeding itself the
  buckets since, so that it reaches the state of the instances that never stopped.

JSON, floats written with ``repr`` (``json`` does), so a value read back equals the one
written, to the bit: every instance then merges the same numbers in the same order.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from streameval.values import Segment

FORMAT_VERSION = 1
#: the kind of the interleaving counts' records (:mod:`streameval.interleave.partitioned`),
#: beside the relevance sources' NDCG buckets (kinds ``judged`` and ``implicit``)
PAIRS = "pairs"
#: the kind of the sample-ratio test's records: lists per arm (:mod:`streameval.srm.partitioned`)
SRM = "srm"

#: per query: (count, sum, sum of squares) of NDCG@k
Agg = tuple[float, float, float]
#: one detector bucket of one source partition and relevance source: (segment, k) -> per query
DetectorBucket = dict[tuple[Segment, int], dict[str, Agg]]


class Progress(NamedTuple):
    """Of one source partition: every detector bucket starting before these is written (None:
    none yet), per kind: judged and implicit NDCG, and the interleaving pairs' counts
    (:mod:`streameval.interleave.partitioned`; absent from records of versions before them),
    and the lists per arm of the sample-ratio test (``srm``; absent from records before it)."""

    judged: int | None
    implicit: int | None
    pairs: int | None = None
    srm: int | None = None

    def of(self, kind: str) -> int | None:
        if kind == "judged":
            return self.judged
        if kind == SRM:
            return self.srm
        return self.implicit if kind == "implicit" else self.pairs


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
        {
            "v": FORMAT_VERSION,
            "judged": progress.judged,
            "implicit": progress.implicit,
            "pairs": progress.pairs,
            "srm": progress.srm,
        },
        separators=(",", ":"),
    ).encode()


def decode_progress(value: bytes) -> Progress | BadRecord:
    obj = _load(value)
    if isinstance(obj, BadRecord):
        return obj
    points = [obj.get(r) for r in ("judged", "implicit", "pairs", SRM)]
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


# --- snapshots of the detectors' state ----------------------------------------------------------

#: the two slots snapshots alternate between (the "partition" field of their keys): a snapshot
#: half-written when its writer died leaves the other slot's complete one to restore from
SNAPSHOT_SLOTS = ("~detectors/a", "~detectors/b")
#: a snapshot is cut into records of at most this many bytes (a broker's default limit is 1 MiB)
CHUNK_BYTES = 512 * 1024


class Chunk(NamedTuple):
    snapshot_id: str
    position: int
    total: int
    #: the snapshot's point: the oldest of its relevance sources' fed frontiers
    point: int
    payload: bytes


def encode_snapshot(body: Mapping[str, Any], point: int) -> list[bytes]:
    """A snapshot (JSON-able ``body``, taken at ``point``) as the values of its chunk records,
    in order."""
    data = json.dumps(body, separators=(",", ":")).encode()
    count = max(1, -(-len(data) // CHUNK_BYTES))
    snapshot_id = f"{zlib.crc32(data):08x}-{len(data)}"
    out = []
    for i in range(count):
        head = {"v": FORMAT_VERSION, "id": snapshot_id, "i": i, "n": count, "at": point}
        part = data[i * CHUNK_BYTES : (i + 1) * CHUNK_BYTES]
        out.append(json.dumps(head, separators=(",", ":")).encode() + b"\n" + part)
    return out


def decode_chunk(value: bytes) -> Chunk | BadRecord:
    head, sep, payload = value.partition(b"\n")
    if not sep:
        return BadRecord("a snapshot chunk without its header line")
    obj = _load(head)
    if isinstance(obj, BadRecord):
        return obj
    snapshot_id, index, count = obj.get("id"), obj.get("i"), obj.get("n")
    point = obj.get("at")
    if not (isinstance(snapshot_id, str) and type(index) is int and type(count) is int):
        return BadRecord("a snapshot chunk header without id, i and n")
    if type(point) is not int:
        return BadRecord("a snapshot chunk header without its point")
    if not 0 <= index < count:
        return BadRecord("a snapshot chunk index out of range")
    return Chunk(snapshot_id, index, count, point, payload)


def whole(chunks: Mapping[int, Chunk]) -> bool:
    """The chunks of one slot make one whole snapshot (not one whose writer died half-way)."""
    first = chunks.get(0)
    if first is None:
        return False
    for i in range(first.total):
        chunk = chunks.get(i)
        if chunk is None or chunk.snapshot_id != first.snapshot_id or chunk.total != first.total:
            return False
    return True


def assemble(chunks: Mapping[int, Chunk]) -> dict[str, Any] | None:
    """The snapshot the chunks of one slot make, or None when they do not make a whole one
    (its writer died half-way, or a chunk was unreadable)."""
    if not whole(chunks):
        return None
    data = b"".join(chunks[i].payload for i in range(chunks[0].total))
    first = chunks[0]
    if f"{zlib.crc32(data):08x}-{len(data)}" != first.snapshot_id:
        return None
    try:
        body = json.loads(data)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
