"""Group-wide detection (DESIGN §9, §10, §12): every instance runs the detectors, the
interleaving tests and the sample-ratio test on the group's buckets.

Each instance writes, per source partition it owns, its detector buckets and a progress record
to the state topic (:mod:`streameval.group.collector`); every instance reads the whole topic
into a :class:`DetectorTable`. :class:`GroupFeed` hands the detectors a bucket only once *every*
partition of the group has reported past it (the group frontier, per relevance source), the
partitions' parts in one fixed order (sorted by partition), then closes it. Every instance thus
feeds its detectors the same numbers in the same order and reaches the same state, whichever
partitions it owns: a page does not depend on how the partitions are spread, and the exported
detector series are the group's (each instance exports the same values; the rules take one).

The frontier waits for the slowest partition. An instance whose partitions are all idle (read
to their ends: silent, or never written to) would hold it where its last record left it, or
for good with none: such an instance follows the group's event time instead, up to the
watermark the other partitions' progress records show passed (:meth:`GroupFeed.
passed_elsewhere`, ``Pipeline.follow``). A partition nobody reads (between a revocation and its
next assignment) still holds the frontier back (see docs/detection.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import astuple
from typing import Any

from streameval.detect.detectors import Detectors
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
    encode_snapshot,
    whole,
)
from streameval.interleave.detector import PairTests
from streameval.interleave.partitioned import PairBucket, decode_pair_bucket
from streameval.srm.partitioned import ArmBucket, decode_arm_bucket
from streameval.srm.sequential import SrmTest
from streameval.values import IMPLICIT, JUDGED
from streameval.windows.store import add_sums

_LOG = logging.getLogger(__name__)

#: the record kinds of the detectors in the state topic (the last field of the key)
PROGRESS = "progress"
SNAPSHOT = "snapshot"
BUCKET_KINDS = (JUDGED, IMPLICIT, PAIRS, SRM)
KINDS = (*BUCKET_KINDS, PROGRESS, SNAPSHOT)
#: a snapshot of the detectors is written each time the group frontier enters a new period of
#: this much event time (by the instance that reads the group's first partition)
SNAPSHOT_EVERY_MS = 300_000


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
        #: slot -> chunk index -> chunk
        self._chunks: dict[str, dict[int, Chunk]] = {}
        #: called before a detector bucket is dropped (the feed: it feeds what it may first)
        self.before_drop: Callable[[], object] | None = None

    def apply(self, source: str, start: int, kind: str, value: bytes | None) -> str | None:
        """One record (``value`` None: a tombstone); returns why it is invalid, else None."""
        if kind == SNAPSHOT:
            return self._apply_chunk(source, start, value)
        if kind == PROGRESS:
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


class GroupFeed:
    """Hands the detectors, the interleaving tests and the sample-ratio test the group's
    buckets up to the frontier, once each, in order. Any may be absent (``None``): no detector
    configured, no interleaving test fed from the group, the sample-ratio test off."""

    def __init__(
        self,
        detectors: Detectors | None,
        table: DetectorTable,
        *,
        history_ms: int,
        pairs: PairTests | None = None,
        srm: SrmTest | None = None,
    ) -> None:
        self._detectors = detectors
        self._pairs = pairs
        self._srm = srm
        self._table = table
        #: the kinds of bucket fed: the watched relevance sources, then the pairs' counts
        self._kinds: tuple[str, ...] = (
            *(() if detectors is None else detectors.spec.relevance),
            *(() if pairs is None else (PAIRS,)),
            *(() if srm is None else (SRM,)),
        )
        #: what a snapshot must have been taken with to be restored here (per part)
        self._fingerprint = None if detectors is None else repr(astuple(detectors.spec))
        self._pairs_fingerprint = None if pairs is None else repr((pairs.scale, pairs.threshold))
        self._srm_fingerprint = None if srm is None else srm.fingerprint
        #: the period (:data:`SNAPSHOT_EVERY_MS`) of the last snapshot taken or restored
        self._snapshot_period: int | None = None
        #: on the first step, how far before the frontier to start (what the state topic keeps)
        self._history_ms = history_ms
        self._sources: frozenset[str] = frozenset()
        #: per kind: the frontier it was last brought to
        self._fed: dict[str, int] = {}

    @property
    def sources(self) -> frozenset[str]:
        return self._sources

    def set_sources(self, sources: Iterable[str]) -> None:
        """Every partition of the group (``topic/partition`` of each topic read)."""
        self._sources = frozenset(sources)

    def frontier(self, kind: str) -> int | None:
        """Where the group's buckets of ``kind`` are complete (None: not known yet)."""
        if not self._sources:
            return None
        return self._table.frontier(kind, self._sources)

    def passed_elsewhere(self, here: Iterable[str], attribution_ms: int) -> int | None:
        """The watermark that the group's partitions not in ``here`` (those read elsewhere) have
        all passed, by their progress records; None when there are none, or one of them has
        not reported (:meth:`DetectorTable.watermark_floor`)."""
        others = self._sources.difference(here)
        if not others:
            return None
        return self._table.watermark_floor(others, attribution_ms)

    def step(self) -> int:
        """Feed and close every bucket the frontier has completed since the last step; returns
        how many buckets were closed.

        From the first step on, the table calls it before it drops a detector bucket (a
        tombstone read, or written here): buckets are tombstoned once a snapshot past them is
        written, which comes after the progress records that let the frontier pass them, so a
        bucket is always fed before it goes, however many records one poll brings."""
        self._table.before_drop = self.step
        n = 0
        for kind in self._kinds:
            point = self.frontier(kind)
            if point is None:
                continue
            fed = self._fed.get(kind)
            if fed is not None and point <= fed:
                continue
            since = point - self._history_ms if fed is None else fed
            for start, parts in self._table.buckets(kind, since, point):
                self._feed(kind, start, parts)
                n += 1
            if kind not in (PAIRS, SRM) and self._detectors is not None:
                self._detectors.close(kind, point)
            self._fed[kind] = point
        return n

    def _feed(self, kind: str, start: int, parts: list[tuple[str, Any]]) -> None:
        if kind == PAIRS:
            if self._pairs is not None:  # the partitions' counts summed: integers, any order
                total: dict[tuple[str, str], list[int]] = {}
                for _, counts in parts:
                    add_sums(total, counts)
                self._pairs.close(start, total.items())
        elif kind == SRM:
            if self._srm is not None:  # the partitions' lists per arm summed
                arms: dict[str, int] = {}
                for _, counts in parts:
                    for arm, n in counts.items():
                        arms[arm] = arms.get(arm, 0) + n
                self._srm.close(start, arms)
        elif self._detectors is not None:
            for _, data in parts:
                self._detectors.ingest(kind, start, data)

    # --- snapshots ----------------------------------------------------------------------------

    def _period(self) -> int | None:
        return max(self._fed.values()) // SNAPSHOT_EVERY_MS if self._fed else None

    def snapshot(self) -> tuple[str, list[bytes]] | None:
        """When the frontier has entered a new period since the last snapshot: (slot, chunk
        values) of the detectors' and tests' state as of now (between buckets); else None."""
        period = self._period()
        if period is None or period == self._snapshot_period:
            return None
        self._snapshot_period = period
        body: dict[str, Any] = {"spec": self._fingerprint, "fed": dict(sorted(self._fed.items()))}
        if self._detectors is not None:
            body["state"] = self._detectors.dump()
        if self._pairs is not None:
            body["pairs_spec"] = self._pairs_fingerprint
            body["pairs"] = self._pairs.dump()
        if self._srm is not None:
            body["srm_spec"] = self._srm_fingerprint
            body["srm"] = self._srm.dump()
        return SNAPSHOT_SLOTS[period % 2], encode_snapshot(body, min(self._fed.values()))

    def restore(self) -> bool:
        """Before the first :meth:`step`: load the newest snapshot the table holds, if it was
        taken with this spec and the buckets since it are still kept (else the detectors start
        from the buckets kept, and say so). The interleaving tests are restored from it when it
        holds them, taken with the same scale and alpha (else they start from the buckets
        kept). Returns whether one was loaded."""
        usable = []
        for body in self._table.snapshots():
            fed = body.get("fed")
            if not isinstance(fed, dict) or not all(type(v) is int for v in fed.values()):
                continue
            if self._detectors is not None and body.get("spec") != self._fingerprint:
                _LOG.warning("detectors: a snapshot of another configuration is not restored")
                continue
            fed = {k: v for k, v in fed.items() if k in self._kinds}
            if PAIRS in fed and not (
                body.get("pairs_spec") == self._pairs_fingerprint and "pairs" in body
            ):
                del fed[PAIRS]  # the tests start afresh from the buckets kept
            if SRM in fed and not (body.get("srm_spec") == self._srm_fingerprint and "srm" in body):
                del fed[SRM]  # (another configuration of the test: afresh, likewise)
            if not fed:
                continue
            if any(
                (point := self.frontier(r)) is not None and v < point - self._history_ms
                for r, v in fed.items()
            ):  # the buckets since it are no longer all kept
                _LOG.warning("detectors: the snapshot as of %s is too old to restore", fed)
                continue
            usable.append((max(fed.values()), fed, body))
        if not usable:
            return False
        _, fed, body = max(usable, key=lambda u: u[0])
        try:
            if self._detectors is not None and any(k not in (PAIRS, SRM) for k in fed):
                self._detectors.load(body["state"])
        except (KeyError, ValueError) as exc:
            _LOG.warning("detectors: the snapshot could not be restored (%s)", exc)
            return False
        if self._pairs is not None and PAIRS in fed:
            try:
                self._pairs.load(body["pairs"])
            except ValueError as exc:  # (the detectors' part stands)
                _LOG.warning("interleaving tests: not restored from the snapshot (%s)", exc)
                fed = {k: v for k, v in fed.items() if k != PAIRS}
        if self._srm is not None and SRM in fed:
            try:
                self._srm.load(body["srm"])
            except ValueError as exc:  # (the other parts stand)
                _LOG.warning("sample-ratio test: not restored from the snapshot (%s)", exc)
                fed = {k: v for k, v in fed.items() if k != SRM}
        self._fed = dict(fed)
        self._snapshot_period = self._period()
        _LOG.info("detectors: restored the group's state as of %s", fed)
        return True
