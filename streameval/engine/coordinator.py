"""The coordinator shared by both engines: what follows the join, per list, and when it runs.

It owns no I/O and reads no clock. A driver (``replay``, ``demo``, the Kafka daemon) hands it raw
records with the source they came from, tells it which sources are idle, and reads
:meth:`Pipeline.snapshot` for export. Every record read ends in exactly one intake outcome
(:mod:`.intake`). What is not the path of a record lives beside it: the keyed-judgment rules
(:mod:`.judgments`), the offsets and checkpoints of recovery (:mod:`.recovery`), the early
judged fan-out (:mod:`.early`), and the snapshot (:mod:`.snapshots`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from streameval.config import EvaluationSettings, JudgesSettings, PropensitySettings
from streameval.engine.checkpoints import Checkpoints
from streameval.engine.consumers import (
    DeclinesJudged,
    JudgedEarlyConsumer,
    ListConsumer,
    WindowedConsumer,
)
from streameval.engine.early import JudgedEarly
from streameval.engine.hooks import DeadLetter, DecoderFor, OnScored, SourceDecoders
from streameval.engine.intake import OFFERED, IntakeCounters, Offered
from streameval.engine.interface import Row
from streameval.engine.judgments import JudgmentRules
from streameval.engine.progress import EventTime
from streameval.engine.recovery import Recovery
from streameval.engine.signals import ListSignals
from streameval.events.decode import decoder
from streameval.interleave import InterleavingStore
from streameval.join import InteractionGrades, OpenList, SegmentCapper
from streameval.score.lists import ListScorer
from streameval.values import EVICTED, RELEVANCE_SOURCES, ScoredList
from streameval.windows import Totals, WindowSpec, WindowStore


class Coordinator(EventTime, Checkpoints):
    """The engine (docs/design.md §13) but its per-record path: scored lists out to its
    consumers; event time, checkpoints and snapshot: :mod:`.progress`, :mod:`.checkpoints`.
    An engine adds ``offer`` and its join stages (:meth:`_start_join`, :mod:`.stages`): the
    Python :class:`~.pipeline.Pipeline`, the native :class:`~.native_pipeline.NativePipeline`;
    the per-list back half (scoring, signals, windows, consumers, recovery) is this, shared."""

    def __init__(
        self,
        settings: EvaluationSettings,
        *,
        dead_letter: DeadLetter | None = None,
        on_scored: OnScored | None = None,
        consumers: Sequence[ListConsumer] = (),
        windowed: Sequence[WindowedConsumer] | None = None,
        persist: bool = False,
        decoder_for: DecoderFor | None = None,
        on_seconds: Callable[[int, str], None] | None = None,
        judges: JudgesSettings | None = None,
        propensity: PropensitySettings | None = None,
    ) -> None:
        self._settings = settings
        #: told (event time, source) of each impression or click whose event time is surely
        #: epoch seconds (streameval.epoch): to say so; the event is counted as any other
        self._on_seconds = on_seconds
        #: fed like the windows (not the lists of buckets loaded from the state topic: they load
        #: those buckets instead); unless told otherwise, interleaving (DESIGN §10)
        self._windowed = tuple([InterleavingStore.of(settings)] if windowed is None else windowed)
        #: further consumers of finalized lists beside the windows (detectors)
        self._consumers = tuple(consumers)
        #: those of them told of a re-read (:meth:`reset`), and those that take judged scores
        #: once the watermark passes the impression (not one that declines them: then nothing
        #: is scored early, nor kept for it)
        self._resettable = tuple(c for c in self._consumers if isinstance(c, JudgedEarlyConsumer))
        self._early = tuple(
            c for c in self._resettable if not isinstance(c, DeclinesJudged) or c.takes_judged
        )
        #: per source, its decoder (each asked of ``decoder_for`` once; else native and UBI)
        self._decoders = SourceDecoders(decoder(settings.max_record_bytes), decoder_for)
        self._dead_letter = dead_letter
        self._on_scored = on_scored
        self._segments = SegmentCapper(settings.segment_labels, settings.max_segments)
        self._grades = InteractionGrades(
            by_action=dict(settings.implicit_grades),
            dwell_min_ms=settings.dwell_grade.min_ms,
            dwell_grade=settings.dwell_grade.grade,
        )
        self._scorer = ListScorer(settings)
        self._attribution = settings.attribution_window
        self._bucket_ms = settings.bucket
        self._max_future_skew = settings.max_future_skew
        # what outlives a rebuild: the judgment table and the since-start counters
        self._rules = JudgmentRules(settings.max_judgment_ids)
        self._judgments = self._rules.store
        self._closed_ids_dropped = 0  # by the joiners of earlier streams (before a reset)
        self._intake = IntakeCounters()
        self._totals = Totals()
        self._recovery = Recovery(
            settings.bucket, max(settings.windows) + settings.allowed_lateness, persist
        )
        self._judged = self._judged_early()
        #: the trust signals' sources and bookkeeping per finalized list (DESIGN §12)
        self._signals = ListSignals(settings, judges, propensity, self._judgments, self._scorer)
        self._start_stream()

    def _start_stream(self) -> None:
        """The state built from the impression and click streams (rebuilt by :meth:`reset`)."""
        settings = self._settings
        self._start_join()
        self._windows = WindowStore([WindowSpec(w, settings.bucket) for w in settings.windows])
        recovery = self._recovery
        recovery.start_stream()
        # (the dicts of the recovery bookkeeping that every record reads, at hand)
        self._counted, self._next_offset = recovery.counted, recovery.next_offset
        self._persisted_before = recovery.persisted_before
        self._judged.start_stream()
        self._signals.start_stream()
        # the watermark at which advance() has work to do next (a list to finalize, a waiting
        # click to expire, a finalized id to forget, a bucket to drop); at which a list's
        # impression is passed (judged scores handed early); and the horizon at which the
        # consumers are next told it (the next bucket's start: they act per complete bucket)
        self._due: float = math.inf
        self._early_due: float = math.inf
        self._consumers_due: float = -math.inf
        self._finished = False

    def offer(
        self,
        raw: bytes,
        source: str = "input",
        offset: int = -1,
        record_ms: int = -1,
        judgment_key: bytes | None = None,
    ) -> Offered:
        """One record read from ``source``: the engine's own (:class:`~.pipeline.Pipeline`)."""
        raise NotImplementedError

    def offer_batch(self, rows: Iterable[Row], source: str) -> None:
        """Records of one ``source``, in order (a fetched partition batch, a chunk of a file's
        lines): ``rows`` of ``(value, offset, record_ms)``. Exactly ``offer(value or b"", source,
        offset, record_ms)`` per row (the same intake, dead letters, ``on_seconds`` calls and
        state), without the answers: returns None (what became of the records is in the intake
        and the dead letters). This is the reference; an engine may run the batch at once
        (:meth:`.native_pipeline.NativePipeline.offer_batch`)."""
        offer = self.offer
        for value, offset, record_ms in rows:
            offer(value or b"", source, offset, record_ms)

    def _start_join(self) -> None:
        """A new join and event-time clock (``_joiner``, ``_watermark``): the engine's own."""
        raise NotImplementedError

    def _judged_early(self) -> JudgedEarly:
        """The early judged pass over the engine's join (the native engine's scores its lists in
        the core)."""
        return JudgedEarly(self._early, self._scorer, self._judgments, self._settings.bucket)

    def _opened(self, ts: int) -> None:
        """A list opened at ``ts``: when it is due (finalized, and passed for judged scores)."""
        due = ts + self._attribution  # when this list is finalized
        self._due = min(self._due, due)
        if self._early and ts < self._early_due:  # (else its bucket's end is not earlier)
            # its judged score goes out once the watermark completes its bucket
            due = ts - ts % self._bucket_ms + self._bucket_ms
            self._early_due = min(self._early_due, due)
        for _ in self._joiner.evict_over_cap():
            for relevance in (*RELEVANCE_SOURCES, *self._signals.extra_sources):
                self._totals.count_outcome(relevance, EVICTED)

    def offer_judgment(
        self, raw: bytes | None, key: bytes | None, source: str, record_ms: int = -1
    ) -> Offered:
        """A record of a compacted judgment topic (DESIGN: keyed by query and doc). A value is
        offered as usual and remembered under its key; a tombstone (no value) deletes what its
        key's latest value set (:meth:`.judgments.JudgmentRules.tombstone`). The key is the
        identity here: a value is a duplicate when it changes nothing its key's judge said (a
        redelivery), whatever its ``event_id``."""
        if raw is None and key is not None:
            outcome = self._rules.tombstone(key)
            self._intake.count(outcome, "judgment", True)
            return OFFERED[outcome, "judgment"]
        return self.offer(raw or b"", source, record_ms=record_ms, judgment_key=key)

    def _advance(self, watermark: int) -> None:
        """Finalize and score every list the watermark (the tracker's, as just read) has closed;
        expire waiting clicks; tell the consumers of each bucket the horizon entered."""
        joiner = self._joiner
        if watermark >= self._early_due:
            self._early_due = self._judged.pass_judged(joiner, watermark)
        for lst in joiner.finalize(watermark):
            self._fold(lst)
        expired = joiner.expire_pending(watermark)
        if expired:
            self._intake.unmatched_from_pending(expired)
        horizon = watermark - self._attribution
        if horizon >= self._consumers_due:  # the horizon entered a bucket: consumers act
            for windowed in self._windowed:
                windowed.advance(horizon)
            for consumer in self._consumers:
                consumer.advance(horizon)
            self._consumers_due = horizon - horizon % self._bucket_ms + self._bucket_ms
        windows = self._windows
        windows.evict(horizon)
        self._signals.advance(horizon)
        drop = windows.next_eviction()  # the horizon at which the oldest bucket goes
        self._due = min(
            joiner.next_due(),
            math.inf if drop is None else drop + self._attribution,
        )

    def _fold(self, lst: OpenList) -> None:
        if self._early and lst.early is None and not self._judged.below_floor(lst):
            # finalized before the watermark completed its bucket (an attribution window
            # shorter than a bucket): its judged score goes out now, still before the bucket
            # closes, and is reused just below
            self._judged.hand(lst)
        self._fold_scored(lst, self._scorer.score(lst, self._judgments))

    def _fold_scored(self, lst: OpenList, scored: ScoredList) -> None:
        """A finalized list, scored (implicit, judged; its early judged score handed out): the
        trust signals' sources, the windows, totals, recovery and consumers."""
        signals = self._signals
        scored = signals.score(lst, scored)
        persisted = self._persisted_before.get(lst.source) if self._persisted_before else None
        folded = persisted is None or lst.timestamp >= persisted
        signals.fold(lst, scored, folded)
        if folded:
            self._windows.add(scored)
            for windowed in self._windowed:
                windowed.add(scored)
            unpersisted = self._recovery.unpersisted
            if unpersisted is not None:
                unpersisted.add(lst.source, scored)
        if not lst.counted_before:
            self._totals.count_list(scored)
        if self._on_scored is not None:
            self._on_scored(scored)
        for consumer in self._consumers:
            consumer.add(scored)
