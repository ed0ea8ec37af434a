"""The join: impressions and their interactions, met on ``request_id`` in event time.

An impression opens a list; clicks within the attribution window after it attach to it; once the
watermark passes ``impression time + attribution window`` the list is *finalized* (handed out
once, for scoring). Clicks read before their impression wait, bounded, until the watermark shows
their impression can no longer come.

Each method returns the intake outcome of the event it was given; nothing here reads a clock.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from streameval.events.models import Click, Impression
from streameval.scored import SourceScore
from streameval.snapshot import Segment


class Outcome(Enum):
    """Where one record ended up (DESIGN §5 intake accounting)."""

    ACCEPTED = "accepted"
    INVALID = "invalid"
    DUPLICATE = "duplicate"
    LATE = "late"
    UNMATCHED = "unmatched"
    PENDING = "pending"  # a click waiting for its impression; later ACCEPTED or UNMATCHED


@dataclass(frozen=True, slots=True)
class InteractionGrades:
    """How interactions become implicit grades (DESIGN §3, ``implicit_grades``, ``dwell_grade``)."""

    by_action: Mapping[str, float]
    dwell_min_ms: int
    dwell_grade: float

    def grade(self, click: Click) -> float:
        grade = self.by_action.get(click.action, 0.0)
        if click.dwell_ms is not None and click.dwell_ms >= self.dwell_min_ms:
            grade = max(grade, self.dwell_grade)
        return grade


class OpenList:
    """One served result list while it can still gain interactions. Kept small: one per request."""

    __slots__ = (
        "clicked",
        "counted_before",
        "doc_ids",
        "early",
        "first_click_rank",
        "grades",
        "interaction_keys",
        "labels",
        "query_id",
        "request_id",
        "segment",
        "source",
        "timestamp",
    )

    def __init__(
        self,
        impression: Impression,
        segment: Segment,
        counted_before: bool = False,
        source: str = "",
    ) -> None:
        self.request_id: str = impression.request_id
        self.timestamp: int = impression.timestamp
        self.query_id: str = impression.query_id
        self.doc_ids: tuple[str, ...] = impression.doc_ids
        self.labels: Mapping[str, str] = impression.labels
        self.segment: Segment = segment
        self.grades: dict[str, float] | None = None  # implicit grade per interacted doc
        self.interaction_keys: set[str | bytes] | None = None  # for de-duplication
        self.clicked = False
        self.first_click_rank: int | None = None
        #: re-read while rebuilding state: already in the since-start totals
        self.counted_before = counted_before
        #: its judged score taken when the watermark passed the impression, with the judgment
        #: table's version of its query then (reused at finalization if still current)
        self.early: tuple[int, SourceScore] | None = None
        #: the input it was read from (a Kafka partition, a replay file)
        self.source = source

    def attach(self, click: Click, key: str | bytes, grade: float) -> bool:
        """Add an interaction; False if the same one was already attached."""
        keys = self.interaction_keys
        if keys is None:
            keys = self.interaction_keys = set()
        elif key in keys:
            return False
        keys.add(key)
        grades = self.grades
        if grades is None:
            grades = self.grades = {}
        grades[click.doc_id] = max(grade, grades.get(click.doc_id, grade))  # a doc takes its best
        if click.action == "click":
            self.clicked = True
            rank: int | None
            try:
                rank = self.doc_ids.index(click.doc_id) + 1
            except ValueError:
                rank = click.position  # a result we did not see listed: trust its position
            if rank is not None and (self.first_click_rank is None or rank < self.first_click_rank):
                self.first_click_rank = rank
        return True

    @property
    def interacted(self) -> bool:
        return self.interaction_keys is not None


class Joiner:
    """Open lists by request id, finalized in impression-time order as the watermark passes."""

    def __init__(
        self,
        *,
        attribution_ms: int,
        grades: InteractionGrades,
        segment_of: Callable[[Mapping[str, str]], Segment],
        max_open_lists: int,
        max_pending_clicks: int,
        track_passed: bool = False,
    ) -> None:
        self._attribution_ms = attribution_ms
        self._grades = grades
        self._segment_of = segment_of
        self._max_open = max_open_lists
        self._max_pending = max_pending_clicks
        self._open: dict[str, OpenList] = {}
        self._deadlines: list[tuple[int, int, str]] = []  # (impression ts, seq, request_id)
        # lists the watermark has not passed yet (for judged scores without the attribution
        # wait), kept only when asked for: (impression ts, seq, request_id)
        self._track_passed = track_passed
        self._unpassed: list[tuple[int, int, str]] = []
        self._seq = 0
        # recently finalized request ids (hashed), to tell "late" from "unmatched" clicks
        self._finalized: dict[int, int] = {}
        self._finalized_order: deque[tuple[int, int]] = deque()
        # clicks read before their impression: request_id -> [(click, key, counted in intake)]
        self._pending: dict[str, list[tuple[Click, str | bytes, bool]]] = {}
        self._pending_order: list[tuple[int, int, str]] = []  # (click ts, seq, request_id)
        self._pending_count = 0

    # --- intake -----------------------------------------------------------------------------

    def add_impression(
        self,
        impression: Impression,
        watermark: int | None,
        *,
        counted_before: bool = False,
        source: str = "",
    ) -> tuple[Outcome, list[tuple[Outcome, bool]]]:
        """Open a list. Returns its outcome and, for each pending click it resolved, the click's
        outcome and whether that click was counted in the intake when it was read."""
        if watermark is not None and impression.timestamp < watermark:
            return Outcome.LATE, []
        rid = impression.request_id
        if rid in self._open:
            return Outcome.DUPLICATE, []
        lst = OpenList(impression, self._segment_of(impression.labels), counted_before, source)
        self._open[rid] = lst
        self._seq += 1
        heapq.heappush(self._deadlines, (impression.timestamp, self._seq, rid))
        if self._track_passed:
            heapq.heappush(self._unpassed, (impression.timestamp, self._seq, rid))
        resolved: list[tuple[Outcome, bool]] = []
        waiting = self._pending.pop(rid, None)
        if waiting:
            self._pending_count -= len(waiting)
            for click, key, counted in waiting:
                resolved.append((self._attach(lst, click, key), counted))
        return Outcome.ACCEPTED, resolved

    def add_click(
        self, click: Click, key: str | bytes, watermark: int | None, *, counted: bool = True
    ) -> Outcome:
        lst = self._open.get(click.request_id)
        if lst is not None:
            return self._attach(lst, click, key)
        if hash(click.request_id) in self._finalized:
            return Outcome.LATE
        if watermark is not None and click.timestamp < watermark:
            # its impression (not after the click) could only arrive late now
            return Outcome.UNMATCHED
        waiting = self._pending.get(click.request_id)
        if waiting is not None and any(k == key for _, k, _ in waiting):
            return Outcome.DUPLICATE
        if self._pending_count >= self._max_pending:
            return Outcome.UNMATCHED
        if waiting is None:
            waiting = self._pending[click.request_id] = []
        waiting.append((click, key, counted))
        self._pending_count += 1
        self._seq += 1
        heapq.heappush(self._pending_order, (click.timestamp, self._seq, click.request_id))
        return Outcome.PENDING

    def _attach(self, lst: OpenList, click: Click, key: str | bytes) -> Outcome:
        if click.timestamp >= lst.timestamp + self._attribution_ms:
            return Outcome.LATE  # after the attribution window: it does not count
        if not lst.attach(click, key, self._grades.grade(click)):
            return Outcome.DUPLICATE
        return Outcome.ACCEPTED

    # --- event-time progress ----------------------------------------------------------------

    def finalize(self, watermark: int) -> Iterator[OpenList]:
        """Hand out (once) every list whose attribution window ended at or before ``watermark``."""
        cutoff = watermark - self._attribution_ms
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= cutoff:
            ts, _, rid = heapq.heappop(deadlines)
            lst = self._open.pop(rid, None)
            if lst is not None and lst.timestamp == ts:
                self._remember_finalized(rid, ts)
                yield lst
        self._forget_finalized(cutoff - self._attribution_ms)

    def passed(self, watermark: float) -> Iterator[OpenList]:
        """Hand out (once, in impression-time order) every open list whose impression is before
        ``watermark`` (``track_passed`` only): no impression before it can still be accepted."""
        unpassed = self._unpassed
        while unpassed and unpassed[0][0] < watermark:
            ts, _, rid = heapq.heappop(unpassed)
            lst = self._open.get(rid)
            if lst is not None and lst.timestamp == ts:
                yield lst

    def next_passed(self) -> float:
        """The smallest watermark at which :meth:`passed` has a list to hand out."""
        return self._unpassed[0][0] + 1 if self._unpassed else math.inf

    def next_due(self) -> float:
        """The smallest watermark at which :meth:`finalize` or :meth:`expire_pending` has work
        (a list to hand out, a finalized id to forget, a waiting click to expire); infinity when
        there is none. Between two due points both are no-ops, so a caller may skip them."""
        due = math.inf
        if self._deadlines:
            due = self._deadlines[0][0] + self._attribution_ms
        if self._finalized_order:
            # forgotten once older than watermark − 2 × attribution
            due = min(due, self._finalized_order[0][0] + 2 * self._attribution_ms + 1)
        if self._pending_order:
            due = min(due, self._pending_order[0][0] + 1)
        return due

    def finalize_all(self) -> Iterator[OpenList]:
        """End of input: every open list, in impression-time order."""
        while self._deadlines:
            ts, _, rid = heapq.heappop(self._deadlines)
            lst = self._open.pop(rid, None)
            if lst is not None and lst.timestamp == ts:
                yield lst

    def evict_over_cap(self) -> Iterator[OpenList]:
        """The oldest lists beyond ``max_open_lists`` (to be counted as evicted, not scored)."""
        while len(self._open) > self._max_open and self._deadlines:
            ts, _, rid = heapq.heappop(self._deadlines)
            lst = self._open.pop(rid, None)
            if lst is not None and lst.timestamp == ts:
                self._remember_finalized(rid, ts)
                yield lst

    def expire_pending(self, watermark: int | None) -> int:
        """Pending clicks whose impression can no longer arrive in time: now unmatched.

        Returns how many of them had been counted in the intake when read.
        """
        expired = 0
        order = self._pending_order
        while order and (watermark is None or order[0][0] < watermark):
            _, _, rid = heapq.heappop(order)
            waiting = self._pending.get(rid)
            if waiting:
                # one entry per pending click; drop the oldest click of that request
                _, _, counted = waiting.pop(0)
                self._pending_count -= 1
                expired += counted
                if not waiting:
                    del self._pending[rid]
        return expired

    def _remember_finalized(self, rid: str, ts: int) -> None:
        h = hash(rid)
        finalized = self._finalized
        finalized[h] = ts
        order = self._finalized_order
        order.append((ts, h))
        # Bounded like the open lists: a flood of impressions evicted over the cap would
        # otherwise leave its ids here for two attribution windows, memory bounded by the event
        # rate rather than the cap. The oldest id goes first; a click for it is then counted
        # unmatched instead of late (either way not scored).
        while len(finalized) > self._max_open and order:
            old_ts, old = order.popleft()
            if finalized.get(old) == old_ts:
                del finalized[old]

    def _forget_finalized(self, before_ts: int) -> None:
        order = self._finalized_order
        while order and order[0][0] < before_ts:
            ts, h = order.popleft()
            if self._finalized.get(h) == ts:
                del self._finalized[h]

    # --- state size -------------------------------------------------------------------------

    @property
    def open_lists(self) -> int:
        return len(self._open)

    @property
    def pending_clicks(self) -> int:
        return self._pending_count

    @property
    def pending_clicks_counted(self) -> int:
        """Waiting clicks that were counted in the intake when read."""
        return sum(counted for waiting in self._pending.values() for _, _, counted in waiting)
