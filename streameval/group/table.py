"""The state topic's detector records as every instance reads them (DESIGN §6, §9, §10, §12).

:class:`DetectorTable` holds, per record kind and bucket start, each source partition's part
(detector buckets of a relevance source, interleaving pair counts, lists per arm) and each
partition's progress record; :class:`~streameval.group.feed.GroupFeed` hands the parts on once
the whole group has reported past them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from streameval.detect.persisted import (
    PAIRS,
    SNAPSHOT_SLOTS,
    SRM,
    BadRecord,
    Chunk,
    DetectorBucket,
    Progress,
    assemble,
    decode_chunk,
    decode_detector_bucket,
    decode_progress,
    whole,
)
from streameval.interleave.partitioned import PairBucket, decode_pair_bucket
from streameval.srm.partitioned import ArmBucket, decode_arm_bucket
from streameval.values import IMPLICIT, JUDGED

_LOG = logging.getLogger(__name__)

#: the record kinds of the detectors in the state topic (the last field of the key)
PROGRESS = "progress"
SNAPSHOT = "snapshot"
BUCKET_KINDS = (JUDGED, IMPLICIT, PAIRS, SRM)
KINDS = (*BUCKET_KINDS, PROGRESS, SNAPSHOT)


class DetectorTable:
    """The group's detector records as the state topic holds them. Pure: records in, buckets
    and progress out."""

    def __init__(self) -> None:
        #: relevance -> bucket start -> source -> data, or its record still encoded (decoded
        #: when fed: a start reads many buckets only to read their tombstones next)
        self._buckets: dict[str, dict[int, dict[str, Any]]] = {r: {} for r in BUCKET_KINDS}
        #: detector records that could not be decoded when fed (counted by the state table)
        self.invalid = 0
        self._progress: dict[str, Progress] = {}
        #: bumped at each change of a progress record: the frontiers (all that
        #: :meth:`~streameval.group.feed.GroupFeed.step` reads of the table) move only then
        self.progress_version = 0
        #: slot -> chunk index -> chunk
        self._chunks: dict[str, dict[int, Chunk]] = {}
        #: called before a detector bucket is dropped (the feed: it feeds what it may first)
        self.before_drop: Callable[[], object] | None = None

    def apply(self, source: str, start: int, kind: str, value: bytes | None) -> str | None:
        """One record (``value`` None: a tombstone); returns why it is invalid, else None."""
        if kind == SNAPSHOT:
            return self._apply_chunk(source, start, value)
        if kind == PROGRESS:
            self.progress_version += 1
            if value is None:
                self._progress.pop(source, None)
                return None
            progress = decode_progress(value)
            if isinstance(progress, BadRecord):
                return progress.reason
            self._progress[source] = progress
            return None
        if value is None:
            self.drop(source, kind, start)
            return None
        self._buckets[kind].setdefault(start, {})[source] = value
        return None

    def _apply_chunk(self, slot: str, index: int, value: bytes | None) -> str | None:
        if slot not in SNAPSHOT_SLOTS:
            return f"a snapshot slot {slot!r}"
        chunks = self._chunks.setdefault(slot, {})
        if value is None:
            chunks.pop(index, None)
            return None
        chunk = decode_chunk(value)
        if isinstance(chunk, BadRecord):
            chunks.pop(index, None)  # the slot's snapshot is not whole any more
            return chunk.reason
        chunks[index] = chunk
        return None

    def chunk_positions(self, slot: str) -> list[int]:
        return sorted(self._chunks.get(slot, {}))

    def snapshots(self) -> list[dict[str, Any]]:
        """The whole snapshots held (at most one per slot), newest first, and only those at
        least as new as every snapshot begun (the buckets before the newest one's point may be
        gone: an older one is no longer a place to restore from)."""
        begun = [c.point for chunks in self._chunks.values() for c in chunks.values()]
        newest = max(begun, default=None)
        out = []
        for slot in SNAPSHOT_SLOTS:
            chunks = self._chunks.get(slot, {})
            if whole(chunks) and chunks[0].point == newest:
                body = assemble(chunks)
                if body is not None:
                    out.append(body)
        return out

    def snapshot_point(self) -> int | None:
        """The point of the newest whole snapshot: the detector buckets before it are needed by
        no one (every instance has fed them; a starting one restores the snapshot)."""
        points = [
            chunks[0].point
            for chunks in self._chunks.values()
            if whole(chunks)  # (cheap: headers only)
        ]
        return max(points, default=None)

    def put(
        self,
        source: str,
        relevance: str,
        start: int,
        data: DetectorBucket | PairBucket | ArmBucket,
    ) -> None:
        self._buckets[relevance].setdefault(start, {})[source] = data

    def put_progress(self, source: str, progress: Progress) -> None:
        self.progress_version += 1
        self._progress[source] = progress

    def drop(self, source: str, relevance: str, start: int) -> None:
        if self.before_drop is not None:
            self.before_drop()
        parts = self._buckets[relevance].get(start)
        if parts is not None:
            parts.pop(source, None)
            if not parts:
                del self._buckets[relevance][start]

    def older(self, source: str, before: int) -> list[tuple[str, int]]:
        """(relevance, start) of every bucket of ``source`` starting before ``before``."""
        return sorted(
            (r, start)
            for r, by_start in self._buckets.items()
            for start, parts in by_start.items()
            if start < before and source in parts
        )

    def progress(self, source: str) -> Progress | None:
        return self._progress.get(source)

    def frontier(self, relevance: str, sources: Iterable[str]) -> int | None:
        """The bucket start before which every one of ``sources`` has written its buckets of
        ``relevance`` (None: one of them has not reported yet)."""
        points = []
        for source in sources:
            progress = self._progress.get(source)
            point = None if progress is None else progress.of(relevance)
            if point is None:
                return None
            points.append(point)
        return min(points, default=None)

    def watermark_floor(self, sources: Iterable[str], attribution_ms: int) -> int | None:
        """A watermark that the instances reading ``sources`` have all passed, by their progress
        records (None: one of them has not reported). A judged point is a bucket boundary at or
        before the watermark of the instance that wrote it; an implicit or pairs point, one at
        or before its horizon, the watermark less ``attribution_ms`` (an srm point too)."""
        points = []
        for source in sources:
            progress = self._progress.get(source)
            if progress is None:
                return None
            passed = [
                p
                for p in (
                    progress.judged,
                    None if progress.implicit is None else progress.implicit + attribution_ms,
                    None if progress.pairs is None else progress.pairs + attribution_ms,
                    None if progress.srm is None else progress.srm + attribution_ms,
                )
                if p is not None
            ]
            if not passed:
                return None
            points.append(max(passed))
        return min(points, default=None)

    def buckets(
        self, relevance: str, since: int, before: int
    ) -> Iterator[tuple[int, list[tuple[str, Any]]]]:
        """The buckets starting in ``[since, before)``, oldest first, each as its partitions'
        parts sorted by partition (``DetectorBucket`` values; ``PairBucket`` for ``pairs``)."""
        by_start = self._buckets[relevance]
        for start in sorted(s for s in by_start if since <= s < before):
            parts = by_start[start]
            out = []
            for source in sorted(parts):
                data = parts[source]
                if isinstance(data, bytes):
                    decoded = _decode(relevance, data)
                    if isinstance(decoded, BadRecord):
                        self.invalid += 1
                        _LOG.warning(
                            "state topic: skipped the %s detector bucket %d of %s (%s); the "
                            "group's detectors lack that part",
                            relevance,
                            start,
                            source,
                            decoded.reason,
                        )
                        del parts[source]
                        continue
                    parts[source] = data = decoded
                out.append((source, data))
            yield start, out


def _decode(kind: str, value: bytes) -> DetectorBucket | PairBucket | ArmBucket | BadRecord:
    if kind == PAIRS:
        pairs = decode_pair_bucket(value)
        return BadRecord(pairs) if isinstance(pairs, str) else pairs
    if kind == SRM:
        arms = decode_arm_bucket(value)
        return BadRecord(arms) if isinstance(arms, str) else arms
    return decode_detector_bucket(value)
