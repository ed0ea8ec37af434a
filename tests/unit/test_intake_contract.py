"""The intake as DESIGN §2 and §3 write it, one rule a test, each on a small hand-made log whose
figures are worked out in the test (issue 15, items 2 and 5).

Settings of every test (``tests/unit/pipeline_helpers.settings``): attribution window A = 60 s,
allowed lateness 0, so the watermark W is the minimum over the sources of the newest event time.
A list opened at I is finalized when W >= I + A; a click is late when it is read with its own
time behind W (t < W) and its list is not open, or when t >= I + A.
"""

from __future__ import annotations

import math

import pytest

from streameval.engine import Pipeline
from streameval.values import ScoredList
from tests.unit.pipeline_helpers import click, imp, judgment, settings

LOG2_3 = math.log2(3)


def feed(
    log: list[tuple[bytes, str]], *, sources: tuple[str, ...] = ("s0",), **overrides: object
) -> tuple[Pipeline, list[str], list[ScoredList]]:
    """Offer ``log`` in order (each record with its source); the outcome of each record."""
    scored: list[ScoredList] = []
    p = Pipeline(settings(**overrides), on_scored=scored.append)
    for source in sources:
        p.add_source(source)
    offsets = dict.fromkeys(sources, 0)
    outcomes = []
    for raw, source in log:
        outcomes.append(p.offer(raw, source, offsets[source]).outcome.value)
        offsets[source] += 1
    return p, outcomes, scored


def s0(*raws: bytes) -> list[tuple[bytes, str]]:
    return [(raw, "s0") for raw in raws]


# --- item 2: late versus unmatched ----------------------------------------------------------


def test_a_click_read_behind_the_watermark_without_an_open_list_is_late() -> None:
    """Late is decided by the click's own time when it is read: behind the watermark and its list
    not open, it is late, whether its list was finalized (and its id forgotten) or never came.
    Unmatched is only for a click read in time whose impression never arrived."""
    p, outcomes, scored = feed(
        s0(
            imp("r1", 0, ["a"]),
            imp("r2", 500_000, ["b"]),  # W = 500 s: r1 final (0 + 60 s <= 500 s), its id
            # forgotten (W > 0 + 2A = 120 s)
            click("r1", "a", 1_000),  # t = 1 s < W, r1 not open: late (was: unmatched)
            click("never", "a", 2_000),  # t = 2 s < W, no such list: late (was: unmatched)
            click("r1", "a", 500_000),  # t = W: read in time, r1 forgotten: waits ...
            click("ghost", "a", 520_000),  # read in time, no impression: waits ...
            imp("r3", 600_000, ["c"]),  # ... W = 600 s passes both: unmatched
        )
    )
    assert outcomes == [
        "accepted",
        "accepted",
        "late",
        "late",
        "pending",
        "pending",
        "accepted",
    ]
    intake = p.snapshot().intake
    assert intake.late == {"click": 2}
    assert intake.unmatched_clicks == 2
    assert intake.pending_clicks == 0
    assert intake.accepted == {"impression": 3}
    assert intake.records_read == intake.accounted == 7
    assert [s.request_id for s in scored] == ["r1", "r2"]  # r2: 500 s + 60 s <= 600 s


def test_a_click_read_in_time_for_a_closed_list_is_late_and_reset_makes_waiting_unmatched() -> None:
    """A click read in time (t >= W) whose list is already final falls after its attribution
    window (final means W >= I + A, so t >= I + A): late while the id is remembered. After a
    rebalance (reset) the clicks still waiting are unmatched, as docs/operations.md says."""
    p, outcomes, _ = feed(
        s0(
            imp("r1", 0, ["a"]),
            imp("r2", 100_000, ["b"]),  # W = 100 s: r1 final, remembered until W > 120 s
            click("r1", "a", 100_000),  # in time, list final: late
            click("r2", "b", 101_000),  # r2 open: accepted
            click("x", "a", 110_000),  # in time, no impression yet: waits
        )
    )
    assert outcomes == ["accepted", "accepted", "late", "accepted", "pending"]
    p.reset()
    intake = p.snapshot().intake
    assert intake.late == {"click": 1}
    assert intake.unmatched_clicks == 1
    assert intake.pending_clicks == 0
    assert intake.records_read == intake.accounted == 5


# --- item 5: six places where the intake did otherwise than DESIGN §2 -----------------------


def test_null_in_optional_action_or_judge_is_absent() -> None:
    """``"action": null`` is the default action (click, grade 1); ``"judge": null`` is the
    absent judge "", so a later grade without a judge replaces it (one judge, not two)."""
    p, outcomes, scored = feed(
        s0(
            judgment("q", "b", 3, 0, judge=None),
            judgment("q", "b", 1, 5),  # the same judge "", later: b = 1 (two judges: mean 2)
            judgment("q", "c", 2, 0),  # judged, never shown: in the pool
            imp("r1", 0, ["a", "b"]),
            click("r1", "a", 1_000, action=None),  # a click: a = 1
            imp("r9", 500_000, ["z"]),
        )
    )
    assert outcomes == ["accepted"] * 6
    assert p.snapshot().judgments == 2  # (q, b, "") and (q, c, "")
    r1 = next(s for s in scored if s.request_id == "r1")
    implicit, judged = r1.sources
    assert implicit.ndcg == (1.0, 1.0)  # [a=1, b=0]: ideal
    # judged: shown [a=0, b=1]; pool [c=2, b=1]
    # DCG@3 = 1/log2(3); IDCG@3 = 2 + 1/log2(3)   (b = 2 would give (2/log2 3) / (2 + 2/log2 3))
    assert judged.ndcg[1] == pytest.approx((1 / LOG2_3) / (2 + 1 / LOG2_3))


def test_a_fractional_dwell_is_a_valid_number() -> None:
    """Any finite JSON number >= 0 is a dwell: 45000.5 ms >= 30 s gives grade 2, 1500.5 ms
    grade 0 (a short dwell, accepted all the same); -0.5 and true are invalid."""
    p, outcomes, scored = feed(
        s0(
            imp("r1", 0, ["a", "b"]),
            click("r1", "b", 1_000, action="dwell", dwell_ms=45_000.5),
            click("r1", "a", 2_000, action="dwell", dwell_ms=1500.5),
            click("r1", "a", 3_000, action="dwell", dwell_ms=-0.5),
            click("r1", "a", 4_000, action="dwell", dwell_ms=True),
            imp("r9", 500_000, ["z"]),
        )
    )
    assert outcomes == ["accepted", "accepted", "accepted", "invalid", "invalid", "accepted"]
    implicit = next(s for s in scored if s.request_id == "r1").sources[0]
    # [a=0, b=2]: DCG@3 = 2/log2(3); ideal [2, 0]: 2
    assert implicit.dcg[1] == pytest.approx(2 / LOG2_3)
    assert implicit.ndcg == (0.0, pytest.approx(1 / LOG2_3))
    intake = p.snapshot().intake
    assert intake.accepted == {"impression": 2, "click": 2}
    assert intake.invalid == {"schema": 2}


def test_a_judgment_is_a_duplicate_by_event_id_or_exact_record_even_when_superseded() -> None:
    old = judgment("q", "a", 1, 0)
    p, outcomes, scored = feed(
        s0(
            old,
            judgment("q", "a", 3, 10),  # a newer grade replaces it: a = 3
            old,  # the old record re-sent: a duplicate (was: accepted)
            judgment("q", "b", 2, 0, event_id="e1"),
            judgment("q", "c", 3, 0, event_id="e1"),  # same event id: duplicate, not applied
            judgment("q", "a", 3, 10, note="x"),  # another record, same grade: accepted
            imp("r1", 0, ["a", "b", "c"]),
            imp("r9", 500_000, ["z"]),
        )
    )
    acc, dup = "accepted", "duplicate"
    assert outcomes == [acc, acc, dup, acc, dup, acc, acc, acc]
    intake = p.snapshot().intake
    assert intake.accepted == {"judgment": 4, "impression": 2}
    assert intake.duplicate == {"judgment": 2}
    assert intake.records_read == intake.accounted == 8
    judged = next(s for s in scored if s.request_id == "r1").sources[1]
    # [a=3, b=2, c unjudged]; pool [3, 2]: ideal (with c = 3 the pool would be [3, 3, 2])
    assert judged.ndcg == (1.0, 1.0)
    assert judged.coverage == (1.0, pytest.approx(2 / 3))


def test_remembered_judgment_identities_are_bounded_and_what_falls_out_is_counted() -> None:
    """At most ``max_judgment_ids`` identities (here 2), the oldest forgotten first: a record
    re-sent after its identity fell out is accepted again (it changes nothing: same grade)."""
    ja, jb, jc = (judgment("q", doc, 1, 0) for doc in "abc")
    p, outcomes, _ = feed(s0(ja, jb, jc, jc, ja, jc), max_judgment_ids=2)
    # remembered: {a} {a,b} {b,c} (a out) {b,c} dup c; a again: {c,a} (b out); c: duplicate
    assert outcomes == ["accepted", "accepted", "accepted", "duplicate", "accepted", "duplicate"]
    snap = p.snapshot()
    assert snap.forgotten_ids == {"judgment": 2}
    assert snap.judgments == 3


def test_keyed_judgment_topics_keep_the_key_as_identity() -> None:
    """In a compacted topic the key is the identity: an event id seen under another key does not
    make a record a duplicate; the same value redelivered under its key does."""
    p = Pipeline(settings())
    offered = [
        p.offer_judgment(judgment("q", "a", 1, 0, event_id="e1"), b"q\x1fa", "j/0"),
        p.offer_judgment(judgment("q", "b", 2, 0, event_id="e1"), b"q\x1fb", "j/0"),
        p.offer_judgment(judgment("q", "b", 2, 0, event_id="e1"), b"q\x1fb", "j/0"),
    ]
    assert [o.outcome.value for o in offered] == ["accepted", "accepted", "duplicate"]
    assert p.snapshot().judgments == 2
    assert p.snapshot().forgotten_ids == {}


def test_impression_and_click_identities() -> None:
    """An impression is its request id while its list is open (a redelivery behind the watermark
    included); a click is its event id within its request, else its exact record."""
    p, outcomes, _ = feed(
        s0(
            imp("r1", 0, ["a", "b"]),
            imp("r2", 30_000, ["a", "b"]),  # W = 30 s; r1 open until W >= 60 s
            imp("r1", 0, ["a", "b"]),  # redelivered, r1 open: duplicate (was: late)
            imp("r1", 40_000, ["b"], event_id="i9"),  # another record, r1 open: duplicate
            click("r1", "a", 31_000, event_id="e1"),
            click("r2", "b", 32_000, event_id="e1"),  # same event id, other request: accepted
            click("r1", "b", 33_000, event_id="e1"),  # same event id and request: duplicate
            click("r1", "b", 34_000),
            click("r1", "b", 34_000),  # the exact record again: duplicate
            click("r1", "b", 34_000, position=2),  # another record: accepted
            imp("r3", 100_000, ["c"]),  # W = 100 s: r1 and r2 final
            imp("r1", 0, ["a", "b"]),  # r1 no longer open; behind W: late
        )
    )
    acc, dup = "accepted", "duplicate"
    # 4 impressions, 6 clicks, 2 impressions
    assert outcomes == [acc, acc, dup, dup, acc, acc, dup, acc, dup, acc, acc, "late"]
    intake = p.snapshot().intake
    assert intake.duplicate == {"impression": 2, "click": 2}
    assert intake.late == {"impression": 1}
    assert intake.records_read == intake.accounted == 12


def test_each_waiting_click_expires_when_the_watermark_passes_its_own_time() -> None:
    """Clicks read ahead of their impressions (source "c" ahead of source "i")."""
    p, outcomes, scored = feed(
        [
            (click("rx", "x", 20_000), "c"),  # waits (W unknown: "i" not heard from)
            (click("rx", "y", 10_000), "c"),  # waits
            (imp("r1", 15_000, ["z"]), "i"),  # W = min(15 s, 20 s): y (10 s) unmatched, x not
            (imp("rx", 15_000, ["x", "y"]), "i"),  # x (20 s) attaches
            (imp("r9", 500_000, ["z"]), "i"),
            (click("r9", "z", 500_000), "c"),  # W = 500 s: rx final
        ],
        sources=("i", "c"),
    )
    assert outcomes == ["pending", "pending", "accepted", "accepted", "accepted", "accepted"]
    rx = next(s for s in scored if s.request_id == "rx").sources[0]
    assert rx.ndcg == (1.0, 1.0)  # x, at rank 1, clicked (y at rank 2 would give NDCG@1 = 0)
    intake = p.snapshot().intake
    assert intake.unmatched_clicks == 1
    assert intake.accepted == {"impression": 3, "click": 2}
    assert intake.pending_clicks == 0


def test_a_click_that_attached_does_not_expire_another_waiting_click() -> None:
    """ry's first click attaches when ry's impression comes; ry is then evicted (cap 1) and its id
    forgotten (ids kept at most max_open_lists = 1), so a later click of ry waits. The watermark
    passing the first click's time (30 s) must not expire the second (40 s)."""
    p, outcomes, _ = feed(
        [
            (click("ry", "a", 30_000), "c"),  # waits
            (imp("ry", 16_000, ["a"]), "i"),  # W unknown ("i" was silent): a attaches
            (imp("rz", 17_000, ["b"]), "i"),  # cap 1: ry evicted, its id remembered
            (imp("rw", 18_000, ["c"]), "i"),  # rz evicted; ids cap 1: ry's id forgotten
            (click("ry", "b", 40_000), "c"),  # W = 18 s: in time, ry unknown: waits
            (imp("rv", 35_000, ["d"]), "i"),  # W = min(35 s, 40 s) = 35 s: b still waits
        ],
        sources=("i", "c"),
        max_open_lists=1,
    )
    assert outcomes == ["pending", "accepted", "accepted", "accepted", "pending", "accepted"]
    intake = p.snapshot().intake
    assert intake.pending_clicks == 1  # b: 40 s not passed yet
    assert intake.unmatched_clicks == 0
    assert intake.accepted == {"click": 1, "impression": 4}
    p.finish()
    assert p.snapshot().intake.unmatched_clicks == 1
    assert p.snapshot().intake.pending_clicks == 0


def test_closed_ids_are_forgotten_two_attribution_windows_after_their_impression() -> None:
    """max_open_lists = 2 evicts r1 (200 s) first, then r4 (100 s, read later from a slower
    source): remembered out of time order. Each is forgotten once W > I + 2A: r4 at W > 220 s, r1
    at W > 320 s, whatever the order they were remembered in."""
    p, outcomes, _ = feed(
        [
            (imp("r1", 200_000, ["a"]), "i1"),
            (imp("r2", 210_000, ["a"]), "i1"),
            (imp("r3", 220_000, ["a"]), "i1"),  # over the cap: r1 evicted
            (imp("r4", 100_000, ["a"]), "i2"),  # over the cap: r4 (the oldest) evicted
            (click("x", "a", 250_000), "i2"),  # waits; W = min(220 s, 250 s)
            (click("y", "a", 300_000), "i1"),  # waits; W = min(300 s, 250 s) = 250 s
            (click("r4", "a", 260_000), "i2"),  # in time; r4 forgotten (250 > 220): waits
            (click("r1", "a", 270_000), "i1"),  # in time; r1 remembered (250 <= 320): late
        ],
        sources=("i1", "i2"),
        max_open_lists=2,
    )
    assert outcomes == [
        "accepted",
        "accepted",
        "accepted",
        "accepted",
        "pending",
        "pending",
        "pending",
        "late",
    ]
    p.finish()
    intake = p.snapshot().intake
    assert intake.late == {"click": 1}
    assert intake.unmatched_clicks == 3  # x, y and r4's click: no impression came for them
    assert p.snapshot().lists_total[("implicit", "evicted")] == 2


def test_a_keyed_value_replaces_what_its_key_said_even_when_dated_earlier() -> None:
    """Compaction keeps a key's last value whatever its timestamp: the daemon applies the topic
    as a restart after compaction would read it (the re-sent old grade is the key's value now)."""
    key_a, key_b = b"q\x1fa", b"q\x1fb"
    b2 = judgment("q", "b", 2, 0)
    a_values = [judgment("q", "a", 1, 0), judgment("q", "a", 3, 10), judgment("q", "a", 1, 0)]
    figures = []
    for log in (
        [(b2, key_b), *((v, key_a) for v in a_values)],
        [(b2, key_b), (a_values[-1], key_a)],
    ):
        scored: list[ScoredList] = []
        p = Pipeline(settings(), on_scored=scored.append)
        outcomes = [p.offer_judgment(raw, key, "j/0").outcome.value for raw, key in log]
        assert outcomes == ["accepted"] * len(log)
        p.offer(imp("r1", 0, ["b", "a"]), "s0", 0)
        p.finish()
        figures.append(scored[0].sources[1].ndcg)
    live, compacted = figures
    # a = 1, b = 2: [2, 1] is the ideal order of the pool [2, 1]   (a = 3 would give NDCG@1 2/3)
    assert live == compacted == (1.0, 1.0)
