"""Recovery bookkeeping: what each source's checkpoint says, and where a restart resumes reading.

Per source, the engine notes the smallest offset of a record in each event-time bucket, the offset
after the last record read, and what a previous run (or this one, before it let the source go)
counted already: ``(horizon, next offset)``. From these it answers the offsets a commit may store
(:meth:`Recovery.commit_offsets`: a restart from them rebuilds the same state) and the checkpoint of
a source (:meth:`Recovery.counted_through`). With the window state changelog (DESIGN §6) it also
keeps each source's complete buckets until they are in the state topic.
"""

from __future__ import annotations

from streameval.windows import bucket_start
from streameval.windows.persisted import SourceBuckets
from streameval.windows.store import Bucket

#: a source's checkpoint: the horizon and the read position up to which it is counted
Checkpoint = tuple[int | None, int]


class Recovery:
    def __init__(self, bucket_ms: int, keep_ms: int, persist: bool) -> None:
        self._bucket_ms = bucket_ms
        #: how far before the horizon's bucket a record may still change a window
        self._keep_ms = keep_ms
        #: keep each source's complete buckets for the window state changelog (DESIGN §6)
        self._persist = persist
        #: per source, what this run counted before it let the source go: a source lost (no
        #: commit allowed) or read before any commit and then given back must not count the
        #: records and lists it re-reads again in this run's since-start counters
        self.counted_here: dict[str, Checkpoint] = {}
        self.start_stream()

    def start_stream(self) -> None:
        """The bookkeeping of the streams as read from now on (rebuilt by a reset)."""
        # per source, what was already counted: (horizon, next offset) at a previous run's
        # commit, or by this run before it let the source go (see forget)
        self.counted: dict[str, Checkpoint] = dict(self.counted_here)
        # per source: bucket -> smallest offset of a record with an event time in that bucket
        self.offsets: dict[str, dict[int, int]] = {}
        self.next_offset: dict[str, int] = {}
        # the (source, bucket [start, end)) note_offset noted last: a record inside it needs
        # two comparisons in offer, not a call and the modulo of an epoch-ms timestamp
        self.noted_source: str | None = None
        self.noted_start = self.noted_end = 0
        # the window state changelog: per source, the buckets not yet in the state topic, and
        # the bucket start before which every bucket of a source is there (restored or written)
        self.unpersisted = SourceBuckets(self._bucket_ms) if self._persist else None
        self.persisted_before: dict[str, int] = {}
        # the horizon of the checkpoints whose buckets were loaded: the windows are exact as of
        # it before the re-read gets there (or when the records it would re-read are gone)
        self.horizon_floor: int | None = None

    def note_offset(self, source: str, ts: int, offset: int) -> None:
        """Remember the smallest offset of a record of ``source`` in each event-time bucket."""
        b = ts - ts % self._bucket_ms  # bucket_start, inlined
        buckets = self.offsets.get(source)
        if buckets is None:
            buckets = self.offsets[source] = {}
        first = buckets.get(b)
        if first is None or offset < first:
            buckets[b] = offset
        self.noted_source = source
        self.noted_start, self.noted_end = b, b + self._bucket_ms

    def restore(
        self, source: str, horizon_ms: int | None, next_offset: int, persisted_before: int | None
    ) -> None:
        """A previous run committed ``source`` at ``horizon_ms`` having read up to
        ``next_offset`` (see :meth:`Pipeline.restore_source`)."""
        self.counted[source] = _further(self.counted.get(source), (horizon_ms, next_offset))
        if persisted_before is not None:
            self.persisted_before[source] = persisted_before
            if horizon_ms is not None and (
                self.horizon_floor is None or horizon_ms < self.horizon_floor
            ):
                self.horizon_floor = horizon_ms

    def forget(self, source: str, horizon: int | None) -> None:
        """``source`` is no longer read here; what this run counted of it is remembered."""
        if source in self.next_offset or source in self.counted:
            self.counted_here[source] = self.counted_through(source, horizon)
        self.persisted_before.pop(source, None)
        if self.unpersisted is not None:
            self.unpersisted.forget(source)
        self.offsets.pop(source, None)
        self.next_offset.pop(source, None)
        self.noted_source = None

    def counted_through(self, source: str, horizon: int | None) -> Checkpoint:
        """The checkpoint of ``source`` at the engine's ``horizon``: the horizon and read
        position up to which lists and records are counted — by this run, or by the run it was
        restored from, whichever is further (a run stopped while still re-reading must not move
        a checkpoint back)."""
        position = self.next_offset.get(source, 0)
        restored = self.counted.get(source)
        if restored is not None:
            restored_horizon, restored_position = restored
            position = max(position, restored_position)
            if horizon is None or (restored_horizon is not None and restored_horizon > horizon):
                horizon = restored_horizon
        return horizon, position

    def commit_offsets(self, horizon: int | None) -> dict[str, int]:
        """Per source, the offset to resume from so that a restart rebuilds the same state.

        Every record with an event time in a bucket that a window may still cover (or that an
        open list or a waiting click may still need) is at or after it; records before it can no
        longer change the output.
        """
        keep_from = None if horizon is None else bucket_start(horizon, self._bucket_ms)
        result: dict[str, int] = {}
        for source, nxt in self.next_offset.items():
            buckets = self.offsets.get(source, {})
            # with the state topic, what is in it needs no re-read; else the longest window does
            cutoff = self.persisted_before.get(source)
            if cutoff is None and keep_from is not None:
                cutoff = keep_from - self._keep_ms
            if cutoff is not None:
                stale = [b for b in buckets if b < cutoff]
                for b in stale:
                    del buckets[b]
                if stale:
                    self.noted_source = None
            result[source] = min(buckets.values(), default=nxt)
        return result

    def unpersisted_buckets(
        self, horizon: int | None
    ) -> tuple[int | None, list[tuple[str, int, Bucket]]]:
        """The buckets complete as of ``horizon`` (the watermark's) and not yet in the state
        topic, with the bucket start before which they are all complete."""
        if self.unpersisted is None or horizon is None:
            return None, []
        before = bucket_start(horizon, self._bucket_ms)
        return before, list(self.unpersisted.complete(before))

    def mark_persisted(self, before: int) -> None:
        """Every bucket that starts before ``before`` is now in the state topic."""
        if self.unpersisted is None:
            return
        self.unpersisted.persisted(before)
        for source in self.next_offset.keys() | self.persisted_before.keys():
            if self.persisted_before.get(source, before) <= before:
                self.persisted_before[source] = before


def _further(a: Checkpoint | None, b: Checkpoint) -> Checkpoint:
    """Of two (horizon, next offset) checkpoints of one source, the further of each part."""
    if a is None:
        return b
    horizons = [h for h in (a[0], b[0]) if h is not None]
    return (max(horizons) if horizons else None, max(a[1], b[1]))
