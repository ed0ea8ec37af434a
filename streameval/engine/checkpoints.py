"""Checkpoint and restore, as the engine's interface says them: reset, restore, offsets, buckets.

A mixin of :class:`~streameval.engine.pipeline.Pipeline` (its methods, in a module of their own),
over the bookkeeping of :mod:`.recovery`. What a commit stores per source: the offsets of
:meth:`Checkpoints.commit_offsets` and the checkpoint of :meth:`Checkpoints.counted_through`;
with the state topic, the buckets of :meth:`Checkpoints.unpersisted_buckets`. A restart hands
them back with :meth:`Checkpoints.restore_source` and :meth:`Checkpoints.load_bucket` before
re-reading.
"""

from __future__ import annotations

from collections.abc import Sequence

from streameval.config import EvaluationSettings
from streameval.engine.consumers import JudgedEarlyConsumer, WindowedConsumer
from streameval.engine.early import JudgedEarly
from streameval.engine.intake import IntakeCounters
from streameval.engine.judgments import JudgmentRules
from streameval.engine.recovery import Checkpoint, Recovery
from streameval.engine.signals import ListSignals
from streameval.engine.snapshots import build_snapshot
from streameval.engine.stages import EventClock, JoinStage
from streameval.snapshot import Snapshot
from streameval.windows import Totals, WindowStore
from streameval.windows.store import Bucket


class Checkpoints:
    _settings: EvaluationSettings
    _recovery: Recovery
    _judged: JudgedEarly
    _joiner: JoinStage
    _windows: WindowStore
    _watermark: EventClock
    _windowed: Sequence[WindowedConsumer]
    _intake: IntakeCounters
    _totals: Totals
    _rules: JudgmentRules
    _resettable: Sequence[JudgedEarlyConsumer]
    _attribution: int
    _closed_ids_dropped: int
    _signals: ListSignals

    @property
    def horizon(self) -> int | None:
        raise NotImplementedError

    def _start_stream(self) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Drop the stream state (open lists, windows, watermark) before re-reading the streams
        after a rebalance. Judgments and the since-start counters carry on. Clicks still waiting
        for their impression are counted unmatched: their re-read will not be counted again, and
        every record read must end in exactly one outcome."""
        self._intake.unmatched_from_pending(self._joiner.pending_clicks_counted)
        for windowed in self._windowed:
            windowed.reset()
        self._signals.reset()
        self._closed_ids_dropped += self._joiner.closed_ids_dropped
        self._start_stream()
        for consumer in self._resettable:
            consumer.reset()

    def forget_source(self, source: str) -> None:
        """The source is no longer read here (a revoked or lost partition). What this run
        counted of it is remembered: if it comes back, its re-read counts nothing twice."""
        self._recovery.forget(source, self.horizon)
        self._watermark.forget(source)

    def restore_source(
        self,
        source: str,
        horizon_ms: int | None,
        next_offset: int,
        persisted_before: int | None = None,
    ) -> None:
        """Before re-reading ``source`` after a restart or rebalance: a previous run committed
        at ``horizon_ms`` having read up to ``next_offset``. Records before that offset and lists
        at or before that horizon rebuild the state without being counted again.

        ``persisted_before``: every bucket of ``source`` that starts before it is in the state
        topic and is loaded with :meth:`load_bucket`; lists re-read for those buckets are not
        folded again."""
        self._recovery.restore(source, horizon_ms, next_offset, persisted_before)
        self._judged.note_floor(source)

    def load_bucket(self, start: int, bucket: Bucket) -> None:
        """A finalized bucket of a restored source, read back from the state topic."""
        self._windows.merge(start, bucket)
        for windowed in self._windowed:
            windowed.load_bucket(start, bucket)

    def unpersisted_buckets(self) -> tuple[int | None, list[tuple[str, int, Bucket]]]:
        """The buckets complete as of the horizon and not yet in the state topic, as (source,
        start, bucket), with the bucket start before which they are all complete (None: no
        horizon yet). They stay here until :meth:`mark_persisted`."""
        wm = self._watermark.watermark
        return self._recovery.unpersisted_buckets(None if wm is None else wm - self._attribution)

    def mark_persisted(self, before: int) -> None:
        """Every bucket that starts before ``before`` is now in the state topic."""
        self._recovery.mark_persisted(before)

    def persisted_before(self, source: str) -> int | None:
        """The bucket start before which every bucket of ``source`` is in the state topic."""
        return self._recovery.persisted_before.get(source)

    def read_positions(self) -> dict[str, int]:
        """Per source, the offset after the last record read."""
        return dict(self._recovery.next_offset)

    def counted_through(self, source: str) -> Checkpoint:
        """The checkpoint of ``source``: the horizon and read position up to which lists and
        records are counted — by this run, or by the run it was restored from, whichever is
        further (a run stopped while still re-reading must not move a checkpoint back)."""
        return self._recovery.counted_through(source, self.horizon)

    def commit_offsets(self) -> dict[str, int]:
        """Per source, the offset to resume from so that a restart rebuilds the same state
        (:meth:`.recovery.Recovery.commit_offsets`)."""
        return self._recovery.commit_offsets(self.horizon)

    def snapshot(self, *, consumer_lag: dict[tuple[str, int], int] | None = None) -> Snapshot:
        """The read-only picture of the engine's state that every exporter reads."""
        dropped = {
            "judgment": self._rules.ids.forgotten,
            "list": self._closed_ids_dropped + self._joiner.closed_ids_dropped,
        }
        snapshot = build_snapshot(
            self._settings,
            self.horizon,
            windows=self._windows,
            totals=self._totals,
            intake=self._intake,
            forgotten_ids={kind: n for kind, n in dropped.items() if n},
            open_lists=self._joiner.open_lists,
            judgments=len(self._rules.store),
            watermark_ms=self._watermark.watermark,
            consumer_lag=consumer_lag or {},
            windowed=self._windowed,
            judges=self._signals.judges.view(self.horizon),
        )
        return self._signals.into_snapshot(snapshot)
