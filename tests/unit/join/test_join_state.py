"""The join's bounded memories: ids of closed lists, clicks waiting for their impression, and
judgment identities. Hostile input (the same ids over and over, clicks dated far ahead) must not
grow them beyond their caps."""

from __future__ import annotations

import heapq
import math
import random

import pytest

from streameval.events.models import Click
from streameval.join import JudgmentIds
from streameval.join.closed_ids import ClosedIds
from streameval.join.pending import PendingClicks

A = 60_000  # attribution window


def _click(rid: str, ts: int, doc: str = "a") -> Click:
    return Click(type="click", request_id=rid, doc_id=doc, timestamp=ts)


def test_closed_ids_are_forgotten_in_impression_time_order() -> None:
    closed = ClosedIds(2 * A, cap=10)
    closed.add("late-closed", 100_000)
    closed.add("early", 50_000)  # closed after, impression before
    assert closed.next_due() == 50_000 + 2 * A + 1
    closed.forget(170_001)  # 170 001 - 120 000 = 50 001 > 50 000
    assert "early" not in closed
    assert "late-closed" in closed
    closed.forget(220_001)
    assert len(closed) == 0
    assert closed.next_due() == math.inf
    assert closed.dropped == 0


def test_closed_ids_stay_within_the_cap_and_count_what_falls_out() -> None:
    closed = ClosedIds(2 * A, cap=3)
    for i in range(10):
        closed.add(f"r{i}", 1_000 * (10 - i))  # the newest id has the oldest impression
    assert len(closed) == 3
    assert closed.dropped == 7
    # the oldest impressions were forgotten first: r9 (1 s), r8 (2 s), r7 (3 s) ... are gone
    assert [f"r{i}" in closed for i in range(10)] == [True] * 3 + [False] * 7


def test_over_the_cap_a_tie_of_impression_time_drops_the_id_closed_first() -> None:
    """Which id falls out is decided by the input (the order the ids were closed in, which is
    their impressions' arrival order), not by their hashes, which change with PYTHONHASHSEED."""
    closed = ClosedIds(2 * A, cap=10)
    for i in range(20):
        closed.add(f"r{i}", 5_000)  # one impression time
    assert closed.dropped == 10
    assert [f"r{i}" in closed for i in range(20)] == [False] * 10 + [True] * 10
    closed.add("newer", 6_000)
    closed.add("older", 4_000)  # closed last, impression first: it goes first
    assert "older" not in closed and "newer" in closed and "r10" not in closed
    assert closed.dropped == 12
    assert closed.next_due() == 5_000 + 2 * A + 1


def test_closing_the_same_ids_again_and_again_does_not_grow_the_heap() -> None:
    closed = ClosedIds(2 * A, cap=1_000)
    for i in range(30_000):
        closed.add(f"r{i % 3}", i)  # a re-used request id closed at every impression time
    assert len(closed) == 3
    assert closed.entries <= 2 * 3 + 64  # stale entries compacted away
    # their last impressions are at 29 997, 29 998, 29 999 ms: all before 30 000, forgotten once
    # the watermark is 2A past 30 000
    closed.forget(30_000 + 2 * A)
    assert len(closed) == 0


class _HeapClosedIds:
    """The reference: every entry in one heap, the order ``ClosedIds`` must keep (written
    apart from it, as the module's first version was)."""

    def __init__(self, keep_ms: int, cap: int) -> None:
        self.keep_ms, self.cap = keep_ms, cap
        self.entry: dict[str, tuple[int, int]] = {}  # id -> its live (time, arrival)
        self.heap: list[tuple[int, int, str]] = []
        self.arrivals = 0
        self.dropped = 0

    def add(self, rid: str, ts: int) -> None:
        self.arrivals += 1  # ties of time: the id closed first goes first
        self.entry[rid] = (ts, self.arrivals)
        heapq.heappush(self.heap, (ts, self.arrivals, rid))
        while len(self.entry) > self.cap:
            old_ts, arrival, old = heapq.heappop(self.heap)
            if self.entry.get(old) == (old_ts, arrival):
                del self.entry[old]
                self.dropped += 1

    def forget(self, watermark: int) -> None:
        while self.heap and self.heap[0][0] < watermark - self.keep_ms:
            ts, arrival, rid = heapq.heappop(self.heap)
            if self.entry.get(rid) == (ts, arrival):
                del self.entry[rid]


@pytest.mark.parametrize("seed", range(20))
def test_closed_ids_forget_and_drop_exactly_as_one_heap_of_every_entry_would(seed: int) -> None:
    """Mostly in order (as lists close), some out of order (eviction), re-used ids, ties of
    impression time, a cap small enough to bite: the same ids kept, dropped and due."""
    rng = random.Random(seed)
    closed, model = ClosedIds(2 * A, cap=40), _HeapClosedIds(2 * A, cap=40)
    ts = watermark = 0
    for _ in range(3_000):
        roll = rng.random()
        if roll < 0.7:
            ts += rng.choice((0, 0, 1, 250, 1_000))  # ties included
            at = ts if rng.random() < 0.9 else ts - rng.randrange(1, 20_000)
            rid = f"r{rng.randrange(400)}"  # ids come back
            closed.add(rid, at)
            model.add(rid, at)
        else:
            watermark = max(watermark, ts + rng.randrange(-A, 3 * A))
            closed.forget(watermark)
            model.forget(watermark)
        assert len(closed) == len(model.entry)
        assert closed.dropped == model.dropped
        kept = [f"r{i}" in model.entry for i in range(400)]
        assert [f"r{i}" in closed for i in range(400)] == kept
        if closed.next_due() != math.inf:
            # due no later than the oldest live id's time (stale entries may make it earlier)
            oldest = min((ts for ts, _ in model.entry.values()), default=None)
            assert oldest is None or closed.next_due() <= oldest + 2 * A + 1


def test_each_waiting_click_expires_at_its_own_time() -> None:
    pending = PendingClicks(cap=10)
    assert pending.add(_click("r", 20_000, "x"), b"x", counted=True)
    assert pending.add(_click("r", 10_000, "y"), b"y", counted=False)
    assert pending.next_due() == 10_001
    assert pending.expire(10_001) == 0  # y went, and it had not been counted when read
    assert [w.click.doc_id for w in pending.take("r")] == ["x"]
    assert len(pending) == 0
    assert pending.expire(None) == 0


def test_attached_clicks_leave_no_trace_in_the_expiry_order() -> None:
    """Clicks dated far ahead that wait, then attach: their entries in the expiry order would
    otherwise stay until the watermark reaches them."""
    pending = PendingClicks(cap=10)
    far = 10**12
    for i in range(20_000):
        assert pending.add(_click(f"r{i}", far), b"k", counted=True)
        assert len(pending.take(f"r{i}")) == 1
    assert len(pending) == 0
    assert len(pending._order) <= 64
    assert pending.add(_click("z", far + 1), b"k", counted=True)
    assert pending.is_duplicate("z", b"k")
    assert pending.add(_click("z", far + 2), b"k2", counted=False)
    assert (len(pending), pending.counted) == (2, 1)
    assert pending.expire(None) == 1  # both go; one had been counted when read
    assert len(pending) == 0


def test_pending_clicks_are_capped() -> None:
    pending = PendingClicks(cap=2)
    assert pending.add(_click("a", 1), b"1", counted=True)
    assert pending.add(_click("b", 2), b"2", counted=True)
    assert not pending.add(_click("c", 3), b"3", counted=True)
    assert pending.counted == 2
    assert pending.expire(None) == 2


def test_judgment_ids_are_capped_oldest_first() -> None:
    ids = JudgmentIds(cap=2)
    assert ids.add("e1")
    assert ids.add(b"\x00" * 16)
    assert not ids.add("e1")
    assert ids.add("e2")  # e1 falls out
    assert ids.forgotten == 1
    assert ids.add("e1")  # forgotten: new again
    assert not ids.add("e2")
    assert len(ids) == 2
    # an event id and a record digest never stand for each other
    assert ids.add(b"e2")
