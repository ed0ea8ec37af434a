"""Event-time progress of the engine: sources, idleness, the watermark and the end of input.

A mixin of :class:`~streameval.engine.pipeline.Pipeline` (its methods, in a module of their own):
the watermark moves on the records offered (:meth:`Pipeline.offer`), and here on what a driver
says of its sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from streameval.config import EvaluationSettings
from streameval.engine.consumers import JudgedEarlyConsumer, ListConsumer, WindowedConsumer
from streameval.engine.early import JudgedEarly
from streameval.engine.intake import IntakeCounters
from streameval.engine.recovery import Recovery
from streameval.engine.stages import EventClock, JoinStage
from streameval.join import OpenList
from streameval.windows import bucket_start


class EventTime:
    _settings: EvaluationSettings
    _watermark: EventClock
    _joiner: JoinStage
    _judged: JudgedEarly
    _early: tuple[JudgedEarlyConsumer, ...]
    _consumers: Sequence[ListConsumer]
    _windowed: Sequence[WindowedConsumer]
    _intake: IntakeCounters
    _attribution: int
    _finished: bool
    _early_due: float
    _recovery: Recovery

    def _advance(self, watermark: int) -> None:
        raise NotImplementedError

    def _fold(self, lst: OpenList) -> None:
        raise NotImplementedError

    def add_source(self, source: str) -> None:
        """Declare a source before reading it (it holds the watermark back until it speaks)."""
        self._watermark.register(source)

    def set_idle(self, source: str, idle: bool = True) -> None:
        """A source caught up with its end (or exhausted) no longer holds the watermark back."""
        self._watermark.set_idle(source, idle)
        self.advance()

    def follow(self, watermark_ms: int) -> bool:
        """Event time read elsewhere: when every source read here is idle (caught up with its
        end), the watermark moves up to ``watermark_ms``, a point the other readers of the same
        streams have passed (a group's other instances), and the lists it closes are finalized.
        A record read here later and older than it is late, as it would be behind an active
        source read here. Nothing moves while a source here is active, nor backwards. Returns
        whether the watermark moved."""
        tracker = self._watermark
        if not tracker.all_idle:
            return False
        before = tracker.watermark
        if before is not None and before >= watermark_ms:
            return False
        tracker.advance_to(watermark_ms)
        if self._early:  # judged buckets complete on the watermark, with lists in them or not
            self._early_due = self._judged.pass_judged(self._joiner, watermark_ms)
        self.advance()
        return True

    def advance(self) -> None:
        """Finalize and score every list the watermark has closed; expire waiting clicks."""
        watermark = self._watermark.watermark
        if watermark is not None:
            self._advance(watermark)

    def finish(self) -> None:
        """End of input: finalize every open list and move the horizon past the last event."""
        if self._finished:
            return
        self._finished = True
        newest = self._watermark.newest
        bucket = self._settings.bucket
        end = None if newest is None else bucket_start(newest, bucket) + bucket
        if self._early:
            self._judged.finish(self._joiner, end)
        for lst in self._joiner.finalize_all():
            self._fold(lst)
        self._intake.unmatched_from_pending(self._joiner.expire_pending(None))
        if end is not None:
            self._watermark.advance_to(end + self._attribution)
            for windowed in self._windowed:
                windowed.advance(end)
            for consumer in self._consumers:
                consumer.advance(end)

    @property
    def watermark(self) -> int | None:
        return self._watermark.watermark

    @property
    def horizon(self) -> int | None:
        """The evaluation horizon: the watermark less the attribution window, or the horizon of
        the restored checkpoints whose buckets were loaded, whichever is further."""
        wm = self._watermark.watermark
        horizon = None if wm is None else wm - self._attribution
        floor = self._recovery.horizon_floor
        if floor is not None and (horizon is None or floor > horizon):
            return floor
        return horizon
