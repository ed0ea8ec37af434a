"""The pipeline: events → join → score → windows, driven by records and event time only.

It owns no I/O and reads no clock. A driver (``replay``, ``demo``, the Kafka daemon) hands it raw
records with the source they came from, tells it which sources are idle, and reads
:meth:`Pipeline.snapshot` for export. Every record read ends in exactly one intake outcome.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from streameval.config import EvaluationSettings
from streameval.epoch import SECONDS_BELOW_MS
from streameval.events.decode import Invalid, decoder, dedup_key
from streameval.events.models import Event, Impression, Judgment
from streameval.finalized import JudgedEarlyConsumer, ListConsumer
from streameval.intake import IntakeCounters
from streameval.interleave import InterleavingStore
from streameval.join import (
    InteractionGrades,
    Joiner,
    JudgmentIds,
    JudgmentStore,
    OpenList,
    SegmentCapper,
)
from streameval.score.lists import ListScorer
from streameval.snapshot import Snapshot
from streameval.values import (
    ACCEPTED,
    DUPLICATE,
    EVICTED,
    INVALID,
    LATE,
    PENDING,
    RELEVANCE_SOURCES,
    UNMATCHED,
    Outcome,
    ScoredList,
)
from streameval.windows import Totals, WatermarkTracker, WindowSpec, WindowStore, bucket_start
from streameval.windows.persisted import SourceBuckets
from streameval.windows.store import Bucket

#: called with (raw record, why it is invalid, source, offset or -1) for the dead-letter topic
DeadLetter = Callable[[bytes, Invalid, str, int], None]
#: called with each list as it is scored (``replay --output lists``)
OnScored = Callable[[ScoredList], None]
#: the decoder of one record: bytes -> event or Invalid, never raising
RecordDecoder = Callable[[bytes], Event | Invalid]
#: the decoder of each source (its format, DESIGN §11), asked once per source
DecoderFor = Callable[[str], RecordDecoder]


@dataclass(frozen=True, slots=True)
class Offered:
    """What became of one record: its outcome, the event type, and why it was invalid."""

    outcome: Outcome
    type: str | None = None
    invalid: Invalid | None = None


#: the answers without an ``invalid`` reason, made once (one per record would cost ~5 % of offer)
_OFFERED = {
    (outcome, kind): Offered(outcome, kind)
    for outcome in Outcome
    for kind in (None, "impression", "click", "judgment")
}


class Pipeline:
    def __init__(
        self,
        settings: EvaluationSettings,
        *,
        dead_letter: DeadLetter | None = None,
        on_scored: OnScored | None = None,
        consumers: Sequence[ListConsumer] = (),
        persist: bool = False,
        decoder_for: DecoderFor | None = None,
        on_seconds: Callable[[int, str], None] | None = None,
    ) -> None:
        self._settings = settings
        #: told (event time, source) of each impression or click whose event time is surely
        #: epoch seconds (streameval.epoch): to say so; the event is counted as any other
        self._on_seconds = on_seconds
        #: interleaving (DESIGN §10): a ListConsumer of its own, fed like the windows (not the
        #: lists of buckets loaded from the state topic: it loads those buckets instead), its
        #: figures part of every snapshot
        self._interleaving = InterleavingStore(
            settings.interleaving, [WindowSpec(w, settings.bucket) for w in settings.windows]
        )
        #: keep each source's complete buckets for the window state changelog (DESIGN §6)
        self._persist = persist
        #: further consumers of finalized lists beside the windows (detectors, interleaving)
        self._consumers = tuple(consumers)
        #: those of them told of a re-read (:meth:`reset`), and those that take judged scores
        #: once the watermark passes the impression (not one whose ``takes_judged`` is False:
        #: then nothing is scored early, nor kept for it)
        self._resettable = tuple(c for c in self._consumers if isinstance(c, JudgedEarlyConsumer))
        self._early = tuple(c for c in self._resettable if getattr(c, "takes_judged", True))
        self._decode: RecordDecoder = decoder(settings.max_record_bytes)
        #: per source, its decoder (sources are few; each asked of ``decoder_for`` once)
        self._decoder_for = decoder_for
        self._decoders: dict[str, RecordDecoder] = {}
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
        self._keep_ms = max(settings.windows) + settings.allowed_lateness
        self._bucket_ms = settings.bucket
        self._max_future_skew = settings.max_future_skew
        # what outlives a rebuild: the judgment table and the since-start counters
        self._judgments = JudgmentStore()
        # identities of the judgments read outside keyed judgment topics (DESIGN §2)
        self._judgment_ids = JudgmentIds(settings.max_judgment_ids)
        self._closed_ids_dropped = 0  # by the joiners of earlier streams (before a reset)
        # per key of a compacted judgment topic: the judgment its latest value set
        self._judgment_keys: dict[bytes, tuple[str, str, str]] = {}
        self._intake = IntakeCounters()
        self._totals = Totals()
        #: per source, what this run counted before it let the source go: a source lost (no
        #: commit allowed) or read before any commit and then given back must not count the
        #: records and lists it re-reads again in this run's since-start counters
        self._counted_here: dict[str, tuple[int | None, int]] = {}
        self._start_stream()

    def _start_stream(self) -> None:
        """The state built from the impression and click streams (rebuilt by :meth:`reset`)."""
        settings = self._settings
        self._joiner = Joiner(
            attribution_ms=settings.attribution_window,
            grades=self._grades,
            segment_of=self._segments.segment_of,
            max_open_lists=settings.max_open_lists,
            max_pending_clicks=settings.max_pending_clicks,
            pass_bucket_ms=settings.bucket if self._early else None,
        )
        self._windows = WindowStore([WindowSpec(w, settings.bucket) for w in settings.windows])
        self._watermark = WatermarkTracker(settings.allowed_lateness)
        # per source, what was already counted: (horizon, next offset) at a previous run's
        # commit, or by this run before it let the source go (see forget_source)
        self._counted: dict[str, tuple[int | None, int]] = dict(self._counted_here)
        # per source: bucket -> smallest offset of a record with an event time in that bucket
        self._offsets: dict[str, dict[int, int]] = {}
        self._next_offset: dict[str, int] = {}
        # the (source, bucket [start, end)) _note_offset noted last: a record inside it needs
        # two comparisons in offer, not a call and the modulo of an epoch-ms timestamp
        self._noted_source: str | None = None
        self._noted_start = self._noted_end = 0
        # the watermark at which advance() has work to do next (a list to finalize, a waiting
        # click to expire, a finalized id to forget, a bucket to drop)
        self._due: float = math.inf
        # the watermark at which a list's impression is passed (judged scores handed early)
        self._early_due: float = math.inf
        # the horizon at which the consumers are next told it (the start of the next bucket:
        # they act per complete bucket, ListConsumer.advance)
        self._consumers_due: float = -math.inf
        self._finished = False
        # the window state changelog: per source, the buckets not yet in the state topic, and
        # the bucket start before which every bucket of a source is there (restored or written)
        self._unpersisted = SourceBuckets(settings.bucket) if self._persist else None
        self._persisted_before: dict[str, int] = {}
        # the horizon of the checkpoints whose buckets were loaded: the windows are exact as of
        # it before the re-read gets there (or when the records it would re-read are gone)
        self._horizon_floor: int | None = None
        # per restored source: impressions before it get no early judged score (every early
        # consumer has those buckets already: ``judged_floor``)
        self._judged_floor: dict[str, int] = {}
        self._judged_floor_max = -math.inf

    def reset(self) -> None:
        """Drop the stream state (open lists, windows, watermark) before re-reading the streams
        after a rebalance. Judgments and the since-start counters carry on. Clicks still waiting
        for their impression are counted unmatched: their re-read will not be counted again, and
        every record read must end in exactly one outcome."""
        waiting = self._joiner.pending_clicks_counted
        self._intake.pending -= waiting
        self._intake.unmatched += waiting
        self._interleaving.reset()
        self._closed_ids_dropped += self._joiner.closed_ids_dropped
        self._start_stream()
        for consumer in self._resettable:
            consumer.reset()

    # --- intake -----------------------------------------------------------------------------

    def offer(
        self,
        raw: bytes,
        source: str = "input",
        offset: int = -1,
        record_ms: int = -1,
        judgment_key: bytes | None = None,
    ) -> Offered:
        """Take one record read from ``source`` (at ``offset``, when the source has offsets;
        ``record_ms``: the Kafka record's own timestamp, when it has one; ``judgment_key``: its
        key, for a record of a compacted judgment topic, see :meth:`offer_judgment`).

        An event dated more than ``max_future_skew`` after ``record_ms`` is invalid
        (``future_timestamp``). A record that a previous run already counted (see
        :meth:`restore_source`) rebuilds the state but is not counted, nor dead-lettered, again.
        """
        counted_before = self._counted.get(source) if self._counted else None
        count = counted_before is None or offset >= counted_before[1]
        # with decoders per source (their formats): looked up here, made on first use
        event = (
            self._decode
            if self._decoder_for is None
            else self._decoders.get(source) or self._source_decoder(source)
        )(raw)
        # dispatched on the exact class, which every decoder makes (never a subclass): isinstance
        # against an event's class, a pydantic model's (an ABCMeta), runs __instancecheck__ in
        # Python (~1.1 k instructions when it fails, against ~0.2 k for ``type(event) is``)
        if record_ms > 0 and type(event) is not Invalid:
            ahead = event.timestamp - record_ms
            if ahead > self._max_future_skew:
                event = Invalid(
                    "future_timestamp",
                    f"event time {ahead} ms after its record's timestamp"
                    f" (max_future_skew {self._max_future_skew} ms)",
                )
        if offset >= 0:
            self._next_offset[source] = offset + 1
        if type(event) is Invalid:
            if count:
                self._intake.read += 1
                self._intake.invalid[event.reason] += 1
                if self._dead_letter is not None:
                    self._dead_letter(raw, event, source, offset)
            return Offered(INVALID, None, event)
        if type(event) is Judgment:
            outcome = self._apply_judgment(event, raw, judgment_key)
            self._count(outcome, "judgment", count)
            return _OFFERED[outcome, "judgment"]
        ts = event.timestamp
        # (streameval.epoch.looks_like_seconds, inline: one comparison per event in the usual case)
        if ts < SECONDS_BELOW_MS and self._on_seconds is not None and ts >= 0:
            self._on_seconds(ts, source)
        if offset >= 0 and not (
            self._noted_start <= ts < self._noted_end and source == self._noted_source
        ):  # (else offsets only grew since: the smallest of its bucket is noted already)
            self._note_offset(source, ts, offset)
        # the watermark the event is judged against (as of before it), and the one it leaves
        before, watermark = self._watermark.observe(source, ts)
        if type(event) is Impression:
            horizon_before = None if counted_before is None else counted_before[0]
            outcome, resolved = self._joiner.add_impression(
                event,
                before,
                counted_before=horizon_before is not None and ts <= horizon_before,
                source=source,
            )
            for click_outcome, click_counted in resolved:
                if click_counted:  # read (and counted pending) earlier: now its final outcome
                    self._intake.pending -= 1
                    self._count(click_outcome, "click", True, new_record=False)
            self._count(outcome, "impression", count)
            if outcome is ACCEPTED:
                self._opened(ts)
            kind = "impression"
        else:
            key = dedup_key(event, raw)
            outcome = self._joiner.add_click(event, key, before, counted=count)
            self._count(outcome, "click", count)
            if outcome is PENDING and ts + 1 < self._due:
                self._due = ts + 1  # expires once the watermark passes it
            kind = "click"
        if watermark is not None:
            if watermark >= self._early_due:
                self._pass_judged(watermark)
            if watermark >= self._due:
                self._advance(watermark)
        return _OFFERED[outcome, kind]

    def _opened(self, ts: int) -> None:
        """A list opened at ``ts``: when it is due (finalized, and passed for judged scores)."""
        due = ts + self._attribution  # when this list is finalized
        self._due = min(self._due, due)
        if self._early and ts < self._early_due:  # (else its bucket's end is not earlier)
            # its judged score goes out once the watermark completes its bucket
            due = ts - ts % self._bucket_ms + self._bucket_ms
            self._early_due = min(self._early_due, due)
        self._evict_over_cap()

    def _source_decoder(self, source: str) -> RecordDecoder:
        decode = self._decoders.get(source)
        if decode is None and self._decoder_for is not None:
            decode = self._decoders[source] = self._decoder_for(source)
        return decode or self._decode

    def offer_judgment(
        self, raw: bytes | None, key: bytes | None, source: str, record_ms: int = -1
    ) -> Offered:
        """A record of a compacted judgment topic (DESIGN: keyed by query and doc). A value is
        offered as usual and remembered under its key; a tombstone (no value) deletes what its
        key's latest value set, as compaction will: accepted as a judgment when it deleted one,
        duplicate when there was nothing to delete (e.g. its value was already compacted away).
        The key is the identity here: a value is a duplicate when it changes nothing its key's
        judge said (a redelivery), whatever its ``event_id``."""
        if raw is None and key is not None:
            forgotten = self._judgment_keys.pop(key, None)
            deleted = forgotten is not None and self._judgments.delete(*forgotten)
            outcome = ACCEPTED if deleted else DUPLICATE
            self._count(outcome, "judgment", True)
            return _OFFERED[outcome, "judgment"]
        return self.offer(raw or b"", source, record_ms=record_ms, judgment_key=key)

    def _apply_judgment(self, judgment: Judgment, raw: bytes, key: bytes | None) -> Outcome:
        if key is None:  # its identity: its event_id, else the exact record (DESIGN §2)
            if not self._judgment_ids.add(dedup_key(judgment, raw)):
                return DUPLICATE
            self._judgments.apply(judgment)
            return ACCEPTED
        # a keyed topic: the key is the identity, and its latest value is what it says, as
        # compaction keeps it (even dated before the value it replaces)
        self._key_judgment(key, judgment)
        changed = self._judgments.apply(judgment, replace=True)
        return ACCEPTED if changed else DUPLICATE

    def _key_judgment(self, key: bytes, judgment: Judgment) -> None:
        """Remember what ``key``'s latest value set; compaction keeps only that value, so what
        the key said before, if it named another judgment, goes."""
        now = (judgment.query_id, judgment.doc_id, judgment.judge)
        before = self._judgment_keys.get(key)
        if before is not None and before != now:
            self._judgments.delete(*before)
        self._judgment_keys[key] = now

    def _count(self, outcome: Outcome, kind: str, count: bool, *, new_record: bool = True) -> None:
        if not count:
            return
        intake = self._intake
        if new_record:
            intake.read += 1
        if outcome is ACCEPTED:
            intake.accepted[kind] += 1
        elif outcome is PENDING:
            intake.pending += 1
        elif outcome is DUPLICATE:
            intake.duplicate[kind] += 1
        elif outcome is LATE:
            intake.late[kind] += 1
        elif outcome is UNMATCHED:
            intake.unmatched += 1

    def _note_offset(self, source: str, ts: int, offset: int) -> None:
        """Remember the smallest offset of a record of ``source`` in each event-time bucket."""
        b = ts - ts % self._bucket_ms  # bucket_start, inlined
        buckets = self._offsets.get(source)
        if buckets is None:
            buckets = self._offsets[source] = {}
        first = buckets.get(b)
        if first is None or offset < first:
            buckets[b] = offset
        self._noted_source = source
        self._noted_start, self._noted_end = b, b + self._bucket_ms

    # --- event-time progress ----------------------------------------------------------------

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
            self._pass_judged(watermark_ms)
        self.advance()
        return True

    def forget_source(self, source: str) -> None:
        """The source is no longer read here (a revoked or lost partition). What this run
        counted of it is remembered: if it comes back, its re-read counts nothing twice."""
        if source in self._next_offset or source in self._counted:
            self._counted_here[source] = self.counted_through(source)
        self._watermark.forget(source)
        self._persisted_before.pop(source, None)
        if self._unpersisted is not None:
            self._unpersisted.forget(source)
        self._offsets.pop(source, None)
        self._next_offset.pop(source, None)
        self._noted_source = None

    def advance(self) -> None:
        """Finalize and score every list the watermark has closed; expire waiting clicks."""
        watermark = self._watermark.watermark
        if watermark is not None:
            self._advance(watermark)

    def _advance(self, watermark: int) -> None:
        """:meth:`advance` to ``watermark``, the tracker's watermark as just read."""
        joiner = self._joiner
        if watermark >= self._early_due:
            self._pass_judged(watermark)
        for lst in joiner.finalize(watermark):
            self._fold(lst)
        expired = joiner.expire_pending(watermark)
        if expired:
            self._intake.pending -= expired
            self._intake.unmatched += expired
        horizon = watermark - self._attribution
        if horizon >= self._consumers_due:  # the horizon entered a bucket: consumers act
            self._interleaving.advance(horizon)  # (it closes whole buckets too)
            for consumer in self._consumers:
                consumer.advance(horizon)
            self._consumers_due = horizon - horizon % self._bucket_ms + self._bucket_ms
        windows = self._windows
        windows.evict(horizon)
        drop = windows.next_eviction()  # the horizon at which the oldest bucket goes
        self._due = min(
            joiner.next_due(),
            math.inf if drop is None else drop + self._attribution,
        )

    def finish(self) -> None:
        """End of input: finalize every open list and move the horizon past the last event."""
        if self._finished:
            return
        self._finished = True
        newest = self._watermark.newest
        if self._early:
            for lst in self._joiner.passed(math.inf):
                scored = self._scorer.score_judged(lst, self._judgments)
                for early in self._early:
                    early.add_judged(scored)
            if newest is not None:
                end = bucket_start(newest, self._settings.bucket) + self._settings.bucket
                for early in self._early:
                    early.advance_judged(end)
        for lst in self._joiner.finalize_all():
            self._fold(lst)
        expired = self._joiner.expire_pending(None)
        self._intake.pending -= expired
        self._intake.unmatched += expired
        if newest is not None:
            bucket = self._settings.bucket
            horizon = bucket_start(newest, bucket) + bucket
            self._watermark.advance_to(horizon + self._attribution)
            self._interleaving.advance(horizon)
            for consumer in self._consumers:
                consumer.advance(horizon)

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
        self._counted[source] = _further(self._counted.get(source), (horizon_ms, next_offset))
        self._note_judged_floor(source)
        if persisted_before is not None:
            self._persisted_before[source] = persisted_before
            if horizon_ms is not None and (
                self._horizon_floor is None or horizon_ms < self._horizon_floor
            ):
                self._horizon_floor = horizon_ms

    def _note_judged_floor(self, source: str) -> None:
        """The bucket start before which every early consumer already holds the judged scores
        of ``source`` (its optional ``judged_floor``): the re-read's impressions before it are
        not scored early only to be ignored. After a restart with the state topic that is
        nearly every list re-read: they are open lists, and the judged detector buckets were
        written up to the watermark."""
        floors = [getattr(c, "judged_floor", _no_floor)(source) for c in self._early]
        if floors and all(f is not None for f in floors):
            floor = min(f for f in floors if f is not None)
            self._judged_floor[source] = floor
            self._judged_floor_max = max(self._judged_floor_max, floor)

    def load_bucket(self, start: int, bucket: Bucket) -> None:
        """A finalized bucket of a restored source, read back from the state topic."""
        self._windows.merge(start, bucket)
        self._interleaving.load_bucket(start, bucket.interleaving)

    def unpersisted_buckets(self) -> tuple[int | None, list[tuple[str, int, Bucket]]]:
        """The buckets complete as of the horizon and not yet in the state topic, as (source,
        start, bucket), with the bucket start before which they are all complete (None: no
        horizon yet). They stay here until :meth:`mark_persisted`."""
        wm = self._watermark.watermark
        if self._unpersisted is None or wm is None:
            return None, []
        before = bucket_start(wm - self._attribution, self._settings.bucket)
        return before, list(self._unpersisted.complete(before))

    def mark_persisted(self, before: int) -> None:
        """Every bucket that starts before ``before`` is now in the state topic."""
        if self._unpersisted is None:
            return
        self._unpersisted.persisted(before)
        for source in self._next_offset.keys() | self._persisted_before.keys():
            if self._persisted_before.get(source, before) <= before:
                self._persisted_before[source] = before

    def persisted_before(self, source: str) -> int | None:
        """The bucket start before which every bucket of ``source`` is in the state topic."""
        return self._persisted_before.get(source)

    def _pass_judged(self, watermark: int) -> None:
        """Hand out the judged score of every list in a bucket the watermark completed (whole
        buckets at a time: one call per bucket, not per impression)."""
        bucket = self._bucket_ms
        cut = watermark - watermark % bucket
        joiner = self._joiner
        score, judgments, early = self._scorer.score_judged, self._judgments, self._early
        if cut <= self._judged_floor_max + bucket:  # a re-read: skip what they hold already
            floors = self._judged_floor
            for lst in joiner.passed(cut):
                floor = floors.get(lst.source)
                if floor is None or lst.timestamp >= floor:
                    scored = score(lst, judgments)
                    for consumer in early:
                        consumer.add_judged(scored)
        elif len(early) == 1:  # the usual case (the detectors): no inner loop per list
            add_judged = early[0].add_judged
            for lst in joiner.passed(cut):
                add_judged(score(lst, judgments))
        else:
            for lst in joiner.passed(cut):
                scored = score(lst, judgments)
                for consumer in early:
                    consumer.add_judged(scored)
        nxt = joiner.next_passed()  # the earliest impression not handed out, + 1
        self._early_due = nxt if nxt == math.inf else (nxt - 1) - (nxt - 1) % bucket + bucket
        for consumer in early:
            consumer.advance_judged(cut)

    def _fold(self, lst: OpenList) -> None:
        if self._early and lst.early is None and not self._below_judged_floor(lst):
            # finalized before the watermark completed its bucket (an attribution window
            # shorter than a bucket): its judged score goes out now, still before the bucket
            # closes, and is reused just below
            judged = self._scorer.score_judged(lst, self._judgments)
            for early in self._early:
                early.add_judged(judged)
        scored = self._scorer.score(lst, self._judgments)
        persisted = self._persisted_before.get(lst.source) if self._persisted_before else None
        if persisted is None or lst.timestamp >= persisted:
            self._windows.add(scored)
            if scored.interleaved is not None:  # (a call saved per list that is not)
                self._interleaving.add(scored)
            if self._unpersisted is not None:
                self._unpersisted.add(lst.source, scored)
        if not lst.counted_before:
            self._totals.count_list(scored)
        if self._on_scored is not None:
            self._on_scored(scored)
        for consumer in self._consumers:
            consumer.add(scored)

    def _below_judged_floor(self, lst: OpenList) -> bool:
        floor = self._judged_floor.get(lst.source) if self._judged_floor else None
        return floor is not None and lst.timestamp < floor

    def _evict_over_cap(self) -> None:
        for _ in self._joiner.evict_over_cap():
            for relevance in RELEVANCE_SOURCES:
                self._totals.count_outcome(relevance, EVICTED)

    # --- reading the state ------------------------------------------------------------------

    @property
    def watermark(self) -> int | None:
        return self._watermark.watermark

    @property
    def horizon(self) -> int | None:
        """The evaluation horizon: the watermark less the attribution window, or the horizon of
        the restored checkpoints whose buckets were loaded, whichever is further."""
        wm = self._watermark.watermark
        horizon = None if wm is None else wm - self._attribution
        floor = self._horizon_floor
        if floor is not None and (horizon is None or floor > horizon):
            return floor
        return horizon

    def read_positions(self) -> dict[str, int]:
        """Per source, the offset after the last record read."""
        return dict(self._next_offset)

    def counted_through(self, source: str) -> tuple[int | None, int]:
        """The checkpoint of ``source``: the horizon and read position up to which lists and
        records are counted — by this run, or by the run it was restored from, whichever is
        further (a run stopped while still re-reading must not move a checkpoint back)."""
        horizon = self.horizon
        position = self._next_offset.get(source, 0)
        restored = self._counted.get(source)
        if restored is not None:
            restored_horizon, restored_position = restored
            position = max(position, restored_position)
            if horizon is None or (restored_horizon is not None and restored_horizon > horizon):
                horizon = restored_horizon
        return horizon, position

    def commit_offsets(self) -> dict[str, int]:
        """Per source, the offset to resume from so that a restart rebuilds the same state.

        Every record with an event time in a bucket that a window may still cover (or that an
        open list or a waiting click may still need) is at or after it; records before it can no
        longer change the output.
        """
        horizon = self.horizon
        keep_from = None if horizon is None else bucket_start(horizon, self._settings.bucket)
        result: dict[str, int] = {}
        for source, nxt in self._next_offset.items():
            buckets = self._offsets.get(source, {})
            # with the state topic, what is in it needs no re-read; else the longest window does
            cutoff = self._persisted_before.get(source)
            if cutoff is None and keep_from is not None:
                cutoff = keep_from - self._keep_ms
            if cutoff is not None:
                stale = [b for b in buckets if b < cutoff]
                for b in stale:
                    del buckets[b]
                if stale:
                    self._noted_source = None
            result[source] = min(buckets.values(), default=nxt)
        return result

    def _forgotten_ids(self) -> dict[str, int]:
        dropped = {
            "judgment": self._judgment_ids.forgotten,
            "list": self._closed_ids_dropped + self._joiner.closed_ids_dropped,
        }
        return {kind: n for kind, n in dropped.items() if n}

    def snapshot(self, *, consumer_lag: dict[tuple[str, int], int] | None = None) -> Snapshot:
        horizon = self.horizon
        ndcg, engagement = self._windows.rows(horizon)
        return Snapshot(
            segment_labels=self._settings.segment_labels,
            windows=self._settings.window_names,
            ks=tuple(sorted(self._settings.ks)),
            ndcg=ndcg,
            engagement=engagement,
            cumulative=self._totals.cumulative(),
            lists_total=self._totals.lists_total(),
            intake=self._intake.snapshot(),
            forgotten_ids=self._forgotten_ids(),
            open_lists=self._joiner.open_lists,
            judgments=len(self._judgments),
            watermark_ms=self._watermark.watermark,
            horizon_ms=horizon,
            consumer_lag=consumer_lag or {},
            interleaving=self._interleaving.rows(horizon),
            interleaving_outcomes=self._interleaving.outcomes_total(),
            interleaving_tests=self._interleaving.tests(),
        )


def _no_floor(source: str) -> None:
    return None


def _further(a: tuple[int | None, int] | None, b: tuple[int | None, int]) -> tuple[int | None, int]:
    """Of two (horizon, next offset) checkpoints of one source, the further of each part."""
    if a is None:
        return b
    horizons = [h for h in (a[0], b[0]) if h is not None]
    return (max(horizons) if horizons else None, max(a[1], b[1]))
