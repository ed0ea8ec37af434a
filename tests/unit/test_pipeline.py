"""Event-time scenarios through the whole in-process pipeline, with exact figures."""

from __future__ import annotations

import math

import pytest

from streameval.engine import Pipeline
from streameval.events.decode import Invalid
from streameval.values import ScoredList
from tests.unit.pipeline_helpers import click, imp, judgment, settings

LOG2_3 = math.log2(3)


def run(
    records: list[bytes | tuple[bytes, str]], **overrides: object
) -> tuple[Pipeline, list[ScoredList]]:
    scored: list[ScoredList] = []
    p = Pipeline(settings(**overrides), on_scored=scored.append)
    for source in {rec[1] for rec in records if isinstance(rec, tuple)}:
        p.add_source(source)
    for i, rec in enumerate(records):
        raw, source = rec if isinstance(rec, tuple) else (rec, "s0")
        p.offer(raw, source, i)
    return p, scored


def by_request(scored: list[ScoredList]) -> dict[str, ScoredList]:
    return {s.request_id: s for s in scored}


def test_clicks_within_the_attribution_window_give_implicit_grades() -> None:
    p, scored = run(
        [
            imp("r1", 0, ["a", "b", "c"]),
            click("r1", "b", 1_000),
            click("r1", "c", 2_000, action="purchase"),
            click("r1", "a", 61_000),  # after the 60 s attribution window: late
            imp("r2", 200_000, ["x"]),  # moves the watermark: r1 is finalized
        ]
    )
    assert [s.request_id for s in scored] == ["r1"]
    implicit = scored[0].sources[0]
    # grades [0, 1, 3]: DCG@3 = 1/log2(3) + 3/2; ideal [3, 1, 0]: 3 + 1/log2(3)
    assert implicit.dcg[1] == pytest.approx(1 / LOG2_3 + 1.5)
    assert implicit.idcg[1] == pytest.approx(3 + 1 / LOG2_3)
    assert implicit.ndcg[0] == 0.0  # top doc not interacted with
    assert scored[0].first_click_rank == 2
    intake = p.snapshot().intake
    assert intake.accepted == {"impression": 2, "click": 2}
    assert intake.late == {"click": 1}
    assert intake.records_read == intake.accounted == 5


def test_dwell_and_highest_grade_per_doc() -> None:
    _, scored = run(
        [
            imp("r1", 0, ["a", "b"]),
            click("r1", "a", 1_000, action="dwell", dwell_ms=45_000),  # dwell >= 30 s -> 2
            click("r1", "a", 2_000),  # click -> 1, but a doc keeps its highest grade
            click("r1", "b", 3_000, action="dwell", dwell_ms=5_000),  # short dwell -> 0
            imp("r2", 500_000, ["x"]),
        ]
    )
    implicit = scored[0].sources[0]
    assert implicit.dcg[0] == 2.0
    assert implicit.ndcg == (1.0, 1.0)
    assert scored[0].interacted


def test_judged_relevance_uses_the_pool_and_mean_of_latest_grades() -> None:
    _, scored = run(
        [
            judgment("Red Shoes", "a", 3, 0, judge="ann"),
            judgment("red  shoes", "a", 1, 5, judge="ann"),  # ann's latest for a: 1
            judgment("red shoes", "a", 2, 0, judge="bob"),  # mean(a) = (1 + 2) / 2 = 1.5
            judgment("red shoes", "z", 3, 0),  # judged but never shown: in the pool
            imp("r1", 0, ["b", "a"], query=" RED shoes"),
            imp("r2", 500_000, ["x"]),
        ]
    )
    judged = scored[0].sources[1]
    # shown [b=unjudged 0, a=1.5]; pool [3, 1.5]
    # DCG@3 = 1.5/log2(3); IDCG@3 = 3 + 1.5/log2(3)
    assert judged.ndcg[0] == 0.0
    assert judged.ndcg[1] == pytest.approx((1.5 / LOG2_3) / (3 + 1.5 / LOG2_3))
    assert judged.coverage == (0.0, 0.5)  # @1: b unjudged; @3: 1 of 2 shown docs judged


def test_a_tombstone_in_the_judgment_topic_deletes_what_its_key_said() -> None:
    scored: list[ScoredList] = []
    p = Pipeline(settings(), on_scored=scored.append)
    key_a, key_b = b"q\x1fa", b"q\x1fb"
    outcomes = [
        p.offer_judgment(judgment("q", "a", 3, 0), key_a, "j/0").outcome,
        p.offer_judgment(judgment("q", "b", 1, 0), key_b, "j/0").outcome,
        p.offer_judgment(None, key_a, "j/0").outcome,  # a's grade is gone
        p.offer_judgment(None, key_a, "j/0").outcome,  # nothing left to delete
        p.offer_judgment(None, b"q\x1fnever", "j/0").outcome,
        p.offer_judgment(None, None, "j/0").outcome,  # no key: an empty record
    ]
    assert [o.value for o in outcomes] == [
        "accepted",
        "accepted",
        "accepted",
        "duplicate",
        "duplicate",
        "invalid",
    ]
    assert p.snapshot().judgments == 1
    p.offer(imp("r1", 0, ["a", "b"], query="q"), "s0", 0)
    p.finish()
    judged = scored[0].sources[1]
    # a unjudged now (grade 0), b = 1 at rank 2; pool [1]: NDCG@3 = (1/log2 3) / 1
    assert judged.ndcg[1] == pytest.approx(1 / LOG2_3)
    assert judged.coverage == (0.0, 0.5)
    intake = p.snapshot().intake
    assert intake.accepted == {"judgment": 3, "impression": 1}
    assert intake.duplicate == {"judgment": 2}
    assert intake.records_read == intake.accounted == 7


def test_a_key_that_names_another_judgment_replaces_it_as_compaction_would() -> None:
    p = Pipeline(settings())
    p.offer_judgment(judgment("q", "a", 3, 0, judge="ann"), b"k", "j/0")
    p.offer_judgment(judgment("q", "a", 1, 0, judge="bob"), b"k", "j/0")
    # compaction keeps the key's latest value only: bob's grade, not the mean of both
    assert p.snapshot().judgments == 1
    p.offer_judgment(None, b"k", "j/0")
    assert p.snapshot().judgments == 0


def test_condensed_and_list_ideal() -> None:
    records = [
        judgment("q", "a", 2),
        judgment("q", "z", 3),
        imp("r1", 0, ["b", "a"]),
        imp("r2", 500_000, ["x"]),
    ]
    _, scored = run(records, unjudged="condensed", ideal="list")
    judged = scored[0].sources[1]
    # condensed: [a=2] alone; list ideal [2]: a perfect list
    assert judged.ndcg == (1.0, 1.0)


def test_no_relevance_is_skipped_or_zero() -> None:
    records = [imp("r1", 0, ["a"]), imp("r2", 500_000, ["x"])]
    p, scored = run(records)
    assert scored[0].sources[0].ndcg == (None, None)
    assert scored[0].sources[0].outcome == "no_relevance"
    assert p.snapshot().lists_total[("implicit", "no_relevance")] == 1
    _, scored = run(records, no_relevance="zero")
    assert scored[0].sources[0].ndcg == (0.0, 0.0)


def test_out_of_order_click_before_its_impression_waits() -> None:
    # the click topic is read ahead of the impression topic; both sources are known up front
    p, scored = run(
        [
            (click("r1", "a", 1_000), "clicks"),
            (imp("r1", 0, ["a"]), "impressions"),
            (imp("r2", 500_000, ["x"]), "impressions"),
            (click("r2", "x", 501_000), "clicks"),
        ]
    )
    assert scored[0].sources[0].ndcg == (1.0, 1.0)
    intake = p.snapshot().intake
    assert intake.accepted == {"click": 2, "impression": 2}
    assert intake.unmatched_clicks == 0
    assert intake.pending_clicks == 0
    assert intake.records_read == intake.accounted == 4


def test_unmatched_clicks_are_counted_once_the_watermark_passes() -> None:
    p, _ = run(
        [
            imp("r1", 0, ["a"]),
            click("nope", "a", 1_000),  # read in time: waits for an impression that never comes
            imp("r2", 500_000, ["x"]),  # watermark 500 s > 1 s: unmatched now
            click("gone", "a", 2_000),  # read behind the watermark, no open list: late at once
        ]
    )
    intake = p.snapshot().intake
    assert intake.unmatched_clicks == 1
    assert intake.late == {"click": 1}
    assert intake.pending_clicks == 0
    assert intake.records_read == intake.accounted


def test_late_impression_and_click_for_a_finalized_list() -> None:
    p, scored = run(
        [
            imp("r1", 100_000, ["a"]),
            imp("r2", 170_000, ["x"]),  # watermark 170 s finalizes r1 (100 s + 60 s)
            click("r1", "a", 101_000),  # its list is finalized: late
            imp("r3", 150_000, ["y"]),  # behind the watermark (170 s): late
        ]
    )
    intake = p.snapshot().intake
    assert intake.late == {"click": 1, "impression": 1}
    assert [s.request_id for s in scored] == ["r1"]
    assert scored[0].sources[0].outcome == "no_relevance"


def test_duplicates_are_counted_once() -> None:
    p, scored = run(
        [
            imp("r1", 0, ["a", "b"]),
            imp("r1", 0, ["a", "b"]),  # same request again
            click("r1", "a", 1_000),
            click("r1", "a", 1_000),  # identical record redelivered
            click("r1", "b", 2_000, event_id="e1"),
            click("r1", "b", 2_500, event_id="e1"),  # same event id
            judgment("q", "a", 1),
            judgment("q", "a", 1),  # identical judgment
            imp("r9", 500_000, ["x"]),
        ]
    )
    intake = p.snapshot().intake
    assert intake.duplicate == {"impression": 1, "click": 2, "judgment": 1}
    assert intake.records_read == intake.accounted == 9
    # the duplicate click did not raise the grade twice: [1, 1] is ideal
    assert by_request(scored)["r1"].sources[0].ndcg == (1.0, 1.0)


def test_a_repeated_doc_gains_only_at_its_first_position() -> None:
    _, scored = run(
        [
            judgment("q", "a", 1),
            imp("r1", 0, ["a", "a", "b"]),
            imp("r2", 500_000, ["x"]),
        ]
    )
    judged = scored[0].sources[1]
    assert judged.dcg == (1.0, 1.0)  # [1, 0, 0]
    assert judged.ndcg == (1.0, 1.0)


def test_idle_source_does_not_hold_back_finalization() -> None:
    scored: list[ScoredList] = []
    p = Pipeline(settings(), on_scored=scored.append)
    p.offer(imp("r1", 0, ["a"]), "p0", 0)
    p.offer(imp("r2", 0, ["b"]), "p1", 0)
    p.offer(imp("r3", 500_000, ["c"]), "p0", 1)
    assert scored == []  # p1 is behind at 0 s: nothing is final
    p.set_idle("p1")
    assert sorted(s.request_id for s in scored) == ["r1", "r2"]


def test_open_list_cap_evicts_the_oldest_and_counts_it() -> None:
    p, scored = run(
        [imp("r1", 0, ["a"]), imp("r2", 1_000, ["b"]), imp("r3", 2_000, ["c"])],
        max_open_lists=2,
    )
    snap = p.snapshot()
    assert snap.open_lists == 2
    assert snap.lists_total == {("implicit", "evicted"): 1, ("judged", "evicted"): 1}
    p.finish()
    assert sorted(s.request_id for s in scored) == ["r2", "r3"]


def test_ids_of_finalized_lists_are_remembered_within_the_open_list_cap() -> None:
    """A click read in time for a list already handed out is late while its id is remembered;
    the ids are kept within max_open_lists too (here 2), the oldest forgotten first (and counted):
    a click read in time for it then waits, and is unmatched. Neither is scored."""
    records: list[bytes | tuple[bytes, str]] = [imp(f"r{i}", i, ["a"]) for i in range(6)]
    # r0..r3 were evicted over the cap; r2 and r3 are the two ids still remembered, r0 and r1
    # fell out; the watermark is 5 ms: both clicks are read in time
    records += [click("r3", "a", 5), click("r0", "a", 5)]
    p, scored = run(records, max_open_lists=2)
    snap = p.snapshot()
    assert snap.intake.late == {"click": 1}
    assert snap.intake.pending_clicks == 1
    assert snap.forgotten_ids == {"list": 2}
    assert snap.open_lists == 2
    assert scored == []
    p.finish()
    assert p.snapshot().intake.unmatched_clicks == 1
    assert [s.request_id for s in scored] == ["r4", "r5"]


def test_invalid_records_go_to_the_dead_letter_sink() -> None:
    dead: list[tuple[bytes, Invalid, str, int]] = []
    p = Pipeline(
        settings(), dead_letter=lambda raw, inv, src, off: dead.append((raw, inv, src, off))
    )
    p.offer(b"{not json", "s0", 0)
    p.offer(b'{"type": "judgment", "query_id": "q", "doc_id": "a", "grade": "NaN", "timestamp": 0}')
    p.offer(b'{"type": "teleport"}', "s0", 2)
    # the offset: where the daemon finds the whole record (key, headers) for its dead letter
    assert [(d[0][:5], d[1].reason, d[2], d[3]) for d in dead] == [
        (b"{not ", "bad_json", "s0", 0),
        (b'{"typ', "schema", "input", -1),
        (b'{"typ', "unknown_type", "s0", 2),
    ]
    intake = p.snapshot().intake
    assert intake.invalid == {"bad_json": 1, "schema": 1, "unknown_type": 1}
    assert intake.records_read == intake.accounted == 3


def test_an_event_from_a_wrong_clock_is_invalid_and_leaves_the_watermark_alone() -> None:
    """Dated more than max_future_skew (here 60 s) after its Kafka record: dead-lettered as
    future_timestamp; had it been accepted, the watermark would have jumped a day ahead and
    every in-time event after it would be late."""
    dead: list[tuple[bytes, Invalid, str]] = []
    p = Pipeline(
        settings(max_future_skew=60_000),
        dead_letter=lambda raw, inv, src, off: dead.append((raw, inv, src)),
    )
    now = 1_000_000_000
    day = 86_400_000
    assert p.offer(imp("r1", now, ["a"]), "s0", 0, now).outcome.value == "accepted"
    bad = p.offer(imp("r2", now + day, ["a"]), "s0", 1, now + 1_000)
    assert bad.outcome.value == "invalid"
    assert bad.invalid is not None and bad.invalid.reason == "future_timestamp"
    assert "r2" not in bad.invalid.detail
    assert p.watermark == now  # allowed_lateness 0
    assert p.offer(click("r1", "a", now + 1_000), "s0", 2).outcome.value == "accepted"
    # a minute ahead of its record is a tolerated skew
    assert p.offer(imp("r3", now + 60_000, ["a"]), "s0", 3, now).outcome.value == "accepted"
    # without a record timestamp (a log file, or Kafka's -1) there is nothing to check against
    assert p.offer(imp("r4", now + day, ["a"]), "s0", 4, -1).outcome.value == "accepted"
    assert p.watermark == now + day
    assert [(d[1].reason, d[2]) for d in dead] == [("future_timestamp", "s0")]
    intake = p.snapshot().intake
    assert intake.invalid == {"future_timestamp": 1}
    assert intake.records_read == intake.accounted == 5


def test_windows_report_as_of_the_evaluation_horizon() -> None:
    p, _ = run(
        [
            judgment("q", "a", 1),
            imp("r1", 0, ["a"]),  # judged NDCG 1
            imp("r2", 5_000, ["b", "a"]),  # judged NDCG@1 0, @3 1/log2(3)
            imp("r3", 130_000, ["a"]),  # watermark 130 s -> horizon 70 s
        ]
    )
    snap = p.snapshot()
    assert snap.horizon_ms == 70_000
    rows = {(r.window, r.relevance, r.k): r for r in snap.ndcg}
    # window [10 s, 70 s) as of horizon 70 s: neither list (both in bucket 0) is in it
    assert ("1m", "judged", 3) not in rows
    five = rows[("5m", "judged", 3)]
    assert five.ndcg.n == 2
    assert five.ndcg.mean == pytest.approx((1 + 1 / LOG2_3) / 2)
    p.finish()
    snap = p.snapshot()
    five = {(r.window, r.relevance, r.k): r for r in snap.ndcg}[("5m", "judged", 3)]
    assert five.ndcg.n == 3


def test_segments_are_capped_into_other() -> None:
    records = [
        imp(f"r{i}", i * 1_000, ["a"], labels={"ranker": f"v{i}", "arm": "x"}) for i in range(5)
    ]
    _, scored = run([*records, imp("z", 500_000, ["a"])], max_segments=3)
    segs = [s.segment for s in sorted(scored, key=lambda s: s.timestamp)]
    assert segs[:3] == [("v0", "x"), ("v1", "x"), ("v2", "x")]
    assert segs[3:] == [("__other__", "__other__")] * 2


def test_commit_offsets_keep_what_a_restart_needs() -> None:
    p = Pipeline(settings())
    p.offer(imp("r1", 0, ["a"]), "t/0", 10)
    p.offer(imp("r2", 1_000, ["a"]), "t/0", 11)
    # nothing final yet: resume from the first record
    assert p.commit_offsets() == {"t/0": 10}
    p.offer(imp("r3", 2_000_000, ["a"]), "t/0", 12)
    # horizon far past the 5 min longest window: only r3's record is still needed
    assert p.commit_offsets() == {"t/0": 12}


#: a judgment, a list finalized early (r1), a garbage record, a list still open (r2) and its click
_RESTART_LOG = [
    judgment("q", "a", 1),
    imp("r1", 0, ["a"]),
    b"garbage",
    imp("r2", 500_000, ["a"]),
    click("r2", "a", 501_000),
]


def test_rebuild_after_restart_counts_nothing_twice() -> None:
    records = _RESTART_LOG
    first = Pipeline(settings())
    for i, rec in enumerate(records[:4]):
        first.offer(rec, "t/0", i)
    # the first run commits: horizon 440 s (watermark 500 s - 60 s), it had read up to offset 4
    assert first.horizon == 440_000
    dead: list[bytes] = []
    again = Pipeline(settings(), dead_letter=lambda raw, inv, src, off: dead.append(raw))
    again.restore_source("t/0", 440_000, 4)
    for i, rec in enumerate(records):
        again.offer(rec, "t/0", i)
    again.finish()
    snap = again.snapshot()
    # only the click (offset 4) is new to the since-start counters
    assert snap.intake.records_read == 1
    assert snap.intake.accepted == {"click": 1}
    assert dead == []  # the garbage record was dead-lettered by the first run
    cum = {(c.relevance, c.k): c.lists_scored for c in snap.cumulative}
    assert cum[("judged", 1)] == 1  # r2 only; r1 (at 0 s <= 440 s) was counted before
    # ... but the windows hold both lists again, exactly as an uninterrupted run
    clean = Pipeline(settings())
    for i, rec in enumerate(records):
        clean.offer(rec, "t/0", i)
    clean.finish()
    assert snap.ndcg == clean.snapshot().ndcg
    assert snap.engagement == clean.snapshot().engagement


def test_a_source_lost_and_given_back_counts_nothing_twice_in_this_run() -> None:
    """A partition lost (no commit allowed) or read before any commit, then assigned to this
    run again: its re-read rebuilds the state but the since-start counters take only what is
    new, as an uninterrupted run's would."""
    records = _RESTART_LOG
    p = Pipeline(settings())
    for i, rec in enumerate(records[:4]):
        p.offer(rec, "t/0", i)
    assert p.horizon == 440_000  # r1 finalized and counted; r2 open
    p.forget_source("t/0")  # lost
    p.reset()  # the rebuild for the next assignment: no checkpoint was ever committed
    p.add_source("t/0")
    assert p.counted_through("t/0") == (440_000, 4)  # what this run had counted
    for i, rec in enumerate(records):  # re-read from the beginning, then the new click
        p.offer(rec, "t/0", i)
    p.finish()
    clean = Pipeline(settings())
    for i, rec in enumerate(records):
        clean.offer(rec, "t/0", i)
    clean.finish()
    snap, once = p.snapshot(), clean.snapshot()
    assert snap.intake == once.intake  # 5 records read, each in one outcome, once
    assert snap.cumulative == once.cumulative  # r1 and r2 scored once each
    assert snap.ndcg == once.ndcg
    # a checkpoint committed meanwhile by another member that read further wins
    q = Pipeline(settings())
    q.offer(imp("r1", 0, ["a"]), "t/0", 0)
    q.forget_source("t/0")
    q.reset()
    q.restore_source("t/0", 440_000, 4)
    assert q.counted_through("t/0") == (440_000, 4)
    # ... and one behind what this run counted does not move it back
    q.forget_source("t/0")
    q.reset()
    q.restore_source("t/0", None, 0)
    assert q.counted_through("t/0") == (440_000, 4)


def test_a_checkpoint_never_moves_back_while_rebuilding() -> None:
    p = Pipeline(settings())
    p.restore_source("t/0", 440_000, 4)
    p.offer(imp("r1", 0, ["a"]), "t/0", 1)  # re-reading: position 2, horizon unknown yet
    assert p.counted_through("t/0") == (440_000, 4)
    p.offer(imp("r2", 600_000, ["a"]), "t/0", 5)  # past the restored point
    assert p.counted_through("t/0") == (540_000, 6)
    assert Pipeline(settings()).counted_through("t/9") == (None, 0)


class _Recorder:
    """A consumer of finalized lists beside the windows (engine.consumers.ListConsumer)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def add(self, scored: ScoredList) -> None:
        self.events.append(("add", scored.request_id))

    def advance(self, horizon_ms: int) -> None:
        self.events.append(("advance", horizon_ms))


def test_consumers_get_each_finalized_list_once_before_the_horizon_passes_it() -> None:
    recorder = _Recorder()
    scored: list[ScoredList] = []
    p = Pipeline(settings(), on_scored=scored.append, consumers=[recorder])
    log = [imp("r1", 0, ["a"]), click("r1", "a", 1_000), imp("r2", 30_000, ["b"])]
    log.append(imp("r3", 200_000, ["c"]))
    for i, raw in enumerate(log):
        p.offer(raw, "s0", i)
    p.finish()
    adds = [rid for kind, rid in recorder.events if kind == "add"]
    assert adds == [s.request_id for s in scored] == ["r1", "r2", "r3"]
    horizons = [h for kind, h in recorder.events if kind == "advance"]
    assert horizons == sorted(horizons)  # the horizon never moves back
    # each list was handed out before any horizon past its impression was announced
    seen_horizon: float = -math.inf
    impression_ts = {"r1": 0, "r2": 30_000, "r3": 200_000}
    for kind, value in recorder.events:
        if kind == "advance":
            assert isinstance(value, int)
            seen_horizon = value
        else:
            assert impression_ts[str(value)] > seen_horizon
    # finish moves the horizon past the last bucket: every list's bucket is complete
    assert horizons[-1] > 200_000


class _EarlyRecorder(_Recorder):
    """A consumer that also takes judged scores early (engine.consumers.JudgedEarlyConsumer)."""

    def add_judged(self, scored: ScoredList) -> None:
        self.events.append(("add_judged", scored.request_id))

    def advance_judged(self, watermark_ms: int) -> None:
        self.events.append(("advance_judged", watermark_ms))

    def reset(self) -> None:
        self.events.append(("reset", None))


def test_follow_moves_event_time_only_when_every_source_here_is_idle() -> None:
    """``follow``: the group's event time, for an instance whose partitions are read to their
    ends (one that never got a record included): its lists are finalized as if its own
    watermark had got there, judged buckets complete, and a record older than it, read later,
    is late. It never moves a watermark back, nor one that a source here still drives."""
    recorder = _EarlyRecorder()
    scored: list[ScoredList] = []
    p = Pipeline(settings(), on_scored=scored.append, consumers=[recorder])
    p.add_source("p0")
    p.add_source("p1")
    assert not p.follow(100_000)  # neither is read to its end yet
    p.set_idle("p1")
    p.offer(imp("r1", 5_000, ["a"]), "p0", 0)
    assert not p.follow(100_000)  # p0 is active
    assert scored == []
    p.set_idle("p0")  # its own newest event (5 s) bounds the watermark: r1 stays open
    assert scored == [] and p.watermark == 5_000
    assert p.follow(100_000)
    assert p.watermark == 100_000
    # r1 (5 s + 60 s of attribution) is final, and its judged score went out before that
    assert [s.request_id for s in scored] == ["r1"]
    assert ("add_judged", "r1") in recorder.events
    # the judged buckets before the watermark's complete, the implicit ones before the horizon
    assert ("advance_judged", 100_000) in recorder.events
    assert recorder.events[-1] == ("advance", 40_000)
    assert not p.follow(90_000)  # never back
    assert not p.follow(100_000)
    assert p.watermark == 100_000
    # read later: older than the followed watermark is late, newer is taken
    p.offer(imp("r2", 95_000, ["b"]), "p1", 0)
    p.offer(imp("r3", 120_000, ["c"]), "p1", 1)
    intake = p.snapshot().intake
    assert intake.late == {"impression": 1}
    assert intake.accepted["impression"] == 2
    assert intake.records_read == intake.accounted == 3


def test_an_instance_that_never_read_a_record_follows_too() -> None:
    recorder = _EarlyRecorder()
    p = Pipeline(settings(), consumers=[recorder])
    p.add_source("p1")
    assert p.watermark is None
    assert not p.follow(100_000)  # p1 not known to be read to its end
    p.set_idle("p1")
    assert p.watermark is None  # nothing read: no watermark of its own, ever
    assert p.follow(100_000)
    assert p.watermark == 100_000
    # its consumers hear of the judged and the implicit points as with lists
    assert recorder.events == [("advance_judged", 100_000), ("advance", 40_000)]
