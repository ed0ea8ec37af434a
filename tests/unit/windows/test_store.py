import math

import pytest

from streameval.values import IMPLICIT, JUDGED, NO_RELEVANCE, SCORED, ScoredList, SourceScore
from streameval.windows import Totals, WindowSpec, WindowStore

SEG_A = ("r1", "control")
SEG_B = ("r1", "treatment")


def scored(
    ts: int,
    ndcg_implicit: tuple[float | None, ...],
    seg: tuple[str, ...] = SEG_A,
    *,
    ndcg_judged: tuple[float | None, ...] | None = None,
    coverage: tuple[float, ...] = (1.0, 0.5),
    first_click: int | None = None,
) -> ScoredList:
    ks = (1, 3)
    sources = [
        SourceScore(
            IMPLICIT,
            NO_RELEVANCE if ndcg_implicit[0] is None else SCORED,
            ks,
            ndcg_implicit,
            (0.0, 0.0),
            (0.0, 0.0),
        )
    ]
    if ndcg_judged is not None:
        sources.append(
            SourceScore(JUDGED, SCORED, ks, ndcg_judged, (0.0, 0.0), (1.0, 1.0), coverage)
        )
    return ScoredList(
        request_id=f"r{ts}",
        query_id="q",
        timestamp=ts,
        labels={},
        segment=seg,
        sources=tuple(sources),
        clicked=first_click is not None,
        first_click_rank=first_click,
        interacted=first_click is not None,
    )


def store() -> WindowStore:
    return WindowStore([WindowSpec(20_000, 10_000), WindowSpec(60_000, 10_000)])


def test_window_sums_whole_buckets_as_of_the_horizon() -> None:
    s = store()
    s.add(scored(1_000, (1.0, 0.5), first_click=1))  # bucket 0
    s.add(scored(15_000, (0.0, 0.25), first_click=4))  # bucket 10 s
    s.add(scored(25_000, (0.5, 0.5)))  # bucket 20 s: not complete at horizon 29 s
    ndcg, eng = s.rows(29_999)
    by = {(r.window, r.k): r.ndcg for r in ndcg}
    # 20 s window as of 29.999 s: buckets [0, 10) and [10, 20) -> lists at 1 s and 15 s
    assert by[("20s", 1)].n == 2
    assert by[("20s", 1)].total == pytest.approx(1.0)
    assert by[("20s", 3)].total_sq == pytest.approx(0.5**2 + 0.25**2)
    assert by[("20s", 3)].mean == pytest.approx(0.375)
    # stderr by hand: values 0.5, 0.25; sample var = ((0.125)^2 * 2) / 1 = 0.03125; se = sqrt(var/2)
    assert by[("20s", 3)].stderr == pytest.approx(math.sqrt(0.03125 / 2))
    (e20,) = [e for e in eng if e.window == "20s"]
    assert (e20.lists, e20.clicked_lists, e20.zero_click_lists) == (2, 2, 0)
    assert e20.reciprocal_rank.mean == pytest.approx((1 + 0.25) / 2)
    # once the horizon passes 30 s the third list counts, and the first has left the 20 s window
    ndcg, _ = s.rows(30_000)
    by = {(r.window, r.k): r.ndcg for r in ndcg}
    assert by[("20s", 1)].n == 2
    assert by[("20s", 1)].total == pytest.approx(0.5)
    assert by[("1m", 1)].n == 3


def test_no_value_is_excluded_and_segments_are_separate() -> None:
    s = store()
    s.add(scored(1_000, (None, None)))
    s.add(scored(2_000, (0.8, 0.6), SEG_B, ndcg_judged=(0.2, 0.4), coverage=(1.0, 0.25)))
    ndcg, eng = s.rows(10_000)
    rows = {(r.window, r.relevance, r.segment, r.k): r for r in ndcg}
    assert ("20s", IMPLICIT, SEG_A, 1) not in rows  # no NDCG value at all -> no row
    assert rows[("20s", IMPLICIT, SEG_B, 1)].ndcg.mean == pytest.approx(0.8)
    judged = rows[("20s", JUDGED, SEG_B, 3)]
    assert judged.ndcg.mean == pytest.approx(0.4)
    assert judged.coverage is not None
    assert judged.coverage.mean == pytest.approx(0.25)
    assert rows[("20s", IMPLICIT, SEG_B, 3)].coverage is None
    # both lists count for engagement (zero clicks)
    seg_lists = {(e.window, e.segment): e.lists for e in eng}
    assert seg_lists[("20s", SEG_A)] == 1
    assert seg_lists[("20s", SEG_B)] == 1


def test_eviction_bounds_state() -> None:
    s = store()
    s.add(scored(1_000, (1.0, 0.5)))
    ndcg, _ = s.rows(10_000)
    assert {(r.window, r.k): r.ndcg.n for r in ndcg}[("1m", 1)] == 1
    s.evict(200_000)  # longest window 60 s: bucket 0 is far behind
    assert s.rows(200_000) == ((), ())


def test_totals_count_outcomes_and_cumulative_sums() -> None:
    t = Totals()
    t.count_list(scored(1_000, (1.0, 0.5), ndcg_judged=(0.25, 0.75)))
    t.count_list(scored(2_000, (None, None)))
    t.count_outcome(IMPLICIT, "evicted")
    assert t.lists_total() == {
        (IMPLICIT, SCORED): 1,
        (IMPLICIT, NO_RELEVANCE): 1,
        (IMPLICIT, "evicted"): 1,
        (JUDGED, SCORED): 1,
    }
    cum = {(c.relevance, c.k): (c.ndcg_sum, c.lists_scored) for c in t.cumulative()}
    assert cum == {
        (IMPLICIT, 1): (1.0, 1),
        (IMPLICIT, 3): (0.5, 1),
        (JUDGED, 1): (0.25, 1),
        (JUDGED, 3): (0.75, 1),
    }


def test_no_rows_before_a_horizon_exists() -> None:
    s = store()
    s.add(scored(1_000, (1.0, 0.5)))
    assert s.rows(None) == ((), ())
