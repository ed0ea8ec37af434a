"""The Python engine: the per-record path (decode → future skew → watermark → join) of the
coordinator (:mod:`.coordinator`), by records and event time only.

It owns no I/O and reads no clock. A driver (``replay``, ``demo``, the Kafka daemon) hands it raw
records with the source they came from, tells it which sources are idle, and reads
:meth:`Pipeline.snapshot` for export. Every record read ends in exactly one intake outcome
(:mod:`.intake`). What is not the path of a record lives beside it: the keyed-judgment rules
(:mod:`.judgments`), the offsets and checkpoints of recovery (:mod:`.recovery`), the early
judged fan-out (:mod:`.early`), the snapshot (:mod:`.snapshots`), and the per-list back half
shared with the native engine (:mod:`.coordinator`).
"""

from __future__ import annotations

from streameval.engine.coordinator import Coordinator
from streameval.engine.intake import OFFERED, Offered
from streameval.epoch import SECONDS_BELOW_MS
from streameval.events.decode import Invalid, dedup_key
from streameval.events.models import Impression, Judgment
from streameval.join import Joiner
from streameval.values import ACCEPTED, INVALID, PENDING
from streameval.windows import WatermarkTracker


class Pipeline(Coordinator):
    """The Python engine (docs/design.md §13), the reference: records in (:meth:`offer`)."""

    def _start_join(self) -> None:
        settings = self._settings
        # (typed as themselves for :meth:`offer`; the coordinator reads them as its stages)
        self._join = self._joiner = Joiner(
            attribution_ms=settings.attribution_window,
            grades=self._grades,
            segment_of=self._segments.segment_of,
            max_open_lists=settings.max_open_lists,
            max_pending_clicks=settings.max_pending_clicks,
            pass_bucket_ms=settings.bucket if self._early else None,
        )
        self._tracker = self._watermark = WatermarkTracker(settings.allowed_lateness)

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
        event = self._decoders[source](raw)  # the source's format: made on its first record
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
                self._intake.count_invalid(event.reason)
                if self._dead_letter is not None:
                    self._dead_letter(raw, event, source, offset)
            return Offered(INVALID, None, event)
        if type(event) is Judgment:
            outcome = self._rules.apply(event, raw, judgment_key)
            self._intake.count(outcome, "judgment", count)
            return OFFERED[outcome, "judgment"]
        ts = event.timestamp
        # (streameval.epoch.looks_like_seconds, inline: one comparison per event in the usual case)
        if ts < SECONDS_BELOW_MS and self._on_seconds is not None and ts >= 0:
            self._on_seconds(ts, source)
        recovery = self._recovery
        if offset >= 0 and not (
            recovery.noted_start <= ts < recovery.noted_end and source == recovery.noted_source
        ):  # (else offsets only grew since: the smallest of its bucket is noted already)
            recovery.note_offset(source, ts, offset)
        # the watermark the event is judged against (as of before it), and the one it leaves
        before, watermark = self._tracker.observe(source, ts)
        if type(event) is Impression:
            horizon_before = None if counted_before is None else counted_before[0]
            outcome, resolved = self._join.add_impression(
                event,
                before,
                counted_before=horizon_before is not None and ts <= horizon_before,
                source=source,
            )
            for click_outcome, click_counted in resolved:
                if click_counted:  # read (and counted pending) earlier: now its final outcome
                    self._intake.pending -= 1
                    self._intake.count(click_outcome, "click", True, new_record=False)
            self._intake.count(outcome, "impression", count)
            if outcome is ACCEPTED:
                self._opened(ts)
            kind = "impression"
        else:
            key = dedup_key(event, raw)
            outcome = self._join.add_click(event, key, before, counted=count)
            self._intake.count(outcome, "click", count)
            if outcome is PENDING and ts + 1 < self._due:
                self._due = ts + 1  # expires once the watermark passes it
            kind = "click"
        if watermark is not None:
            if watermark >= self._early_due:
                self._early_due = self._judged.pass_judged(self._joiner, watermark)
            if watermark >= self._due:
                self._advance(watermark)
        return OFFERED[outcome, kind]
