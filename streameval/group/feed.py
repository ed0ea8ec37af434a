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
from collections.abc import Iterable
from dataclasses import astuple
from typing import Any

from streameval.detect.detectors import Detectors
from streameval.detect.persisted import (
    PAIRS,
    SNAPSHOT_SLOTS,
    SRM,
    encode_snapshot,
)
from streameval.group.table import DetectorTable
from streameval.interleave.detector import PairTests
from streameval.srm.sequential import SrmTest
from streameval.windows.store import add_sums

_LOG = logging.getLogger(__name__)

#: a snapshot of the detectors is written each time the group frontier enters a new period of
#: this much event time (by the instance that reads the group's first partition)
SNAPSHOT_EVERY_MS = 300_000


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
        #: (the table's progress version, the sources) at the last step: while both are the
        #: same, the frontiers are too, and a step has nothing to do. The table calls
        #: :meth:`step` before each bucket it drops (10,000 times in a catch-up's commits,
        #: ~70 µs each spent finding the same frontiers again)
        self._stepped_at: tuple[int, frozenset[str]] | None = None

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
        at = (self._table.progress_version, self._sources)
        if at == self._stepped_at:
            return 0
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
        self._stepped_at = at
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
        self._stepped_at = None
        self._snapshot_period = self._period()
        _LOG.info("detectors: restored the group's state as of %s", fed)
        return True
