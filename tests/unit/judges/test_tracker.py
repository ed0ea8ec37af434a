"""The judges in the pipeline: per-family judged sources, agreement, freshness and head/tail
coverage, on a hand-built stream whose figures are worked out by hand below."""

from __future__ import annotations

import math

import krippendorff
import pytest

from streameval.config import JudgesSettings
from streameval.engine import Pipeline
from streameval.snapshot import JudgesView
from streameval.values import ScoredList
from tests.unit.pipeline_helpers import imp, judgment, settings

L3 = math.log2(3)


def run(
    judgments: list[bytes], impressions: list[bytes], **judges: object
) -> tuple[dict[str, ScoredList], JudgesView]:
    scored: dict[str, ScoredList] = {}
    pipeline = Pipeline(
        settings(windows=(60_000, 600_000)),
        on_scored=lambda s: scored.__setitem__(s.request_id, s),
        judges=JudgesSettings(**judges),  # type: ignore[arg-type]
    )
    pipeline.add_source("in")
    for raw in [*judgments, *impressions]:
        pipeline.offer(raw, "in")
    view = pipeline.snapshot().judges
    assert view is not None
    return scored, view


# q: d1 graded 3 by alice (human) and 2 by llm:m; d2 1 by bob and 2 by carol (human mean 1.5),
# 0 by llm:m; d3 3 by llm:m only
JUDGMENTS = [
    judgment("q", "d1", 3, judge="alice"),
    judgment("q", "d1", 2, judge="llm:m"),
    judgment("q", "d2", 1, judge="bob"),
    judgment("q", "d2", 2, judge="carol"),
    judgment("q", "d2", 0, judge="llm:m"),
    judgment("q", "d3", 3, judge="llm:m"),
]


def sources(s: ScoredList) -> dict[str, tuple[float | None, ...]]:
    return {src.relevance: src.ndcg for src in s.sources}


def test_each_family_scores_its_own_grades_and_pool() -> None:
    scored, view = run(
        JUDGMENTS, [imp("r1", 30_000, ["d2", "d1", "d3"]), imp("end", 400_000, ["x"])]
    )
    assert view.families == ("human", "llm:m")
    ndcg = sources(scored["r1"])
    # every judge: d1 2.5, d2 1, d3 3; pool 3, 2.5, 1; the list's grades 1, 2.5, 3
    assert ndcg["judged"] == pytest.approx((1 / 3, (1 + 2.5 / L3 + 3 / 2) / (3 + 2.5 / L3 + 1 / 2)))
    # human: d1 3, d2 1.5 (mean of bob and carol); pool 3, 1.5; grades 1.5, 3, 0
    assert ndcg["judged:human"] == pytest.approx((0.5, (1.5 + 3 / L3) / (3 + 1.5 / L3)))
    # llm:m: d1 2, d2 0, d3 3; pool 3, 2, 0; grades 0, 2, 3
    assert ndcg["judged:llm:m"] == pytest.approx((0.0, (2 / L3 + 3 / 2) / (3 + 2 / L3)))
    coverage = {src.relevance: src.coverage for src in scored["r1"].sources}
    assert coverage["judged:human"] == pytest.approx((1.0, 2 / 3))
    assert coverage["judged:llm:m"] == (1.0, 1.0)
    # the existing sources keep their place: implicit, then judged
    assert [s.relevance for s in scored["r1"].sources][:2] == ["implicit", "judged"]


def test_one_family_adds_nothing() -> None:
    human_only = [j for j in JUDGMENTS if b"llm:" not in j]
    scored, view = run(human_only, [imp("r1", 30_000, ["d2", "d1"]), imp("e", 400_000, ["x"])])
    assert view.families == ("human",)
    assert [s.relevance for s in scored["r1"].sources] == ["implicit", "judged"]
    assert view.agreement == ()


def test_agreement_over_shared_pairs_and_its_window_of_judgment_time() -> None:
    _, view = run(JUDGMENTS, [])
    # shared pairs: d1 (human 3, llm 2), d2 (human 1.5, llm 0); d3 has one family only
    expected = krippendorff.alpha(
        reliability_data=[[3, 1.5], [2, 0]], level_of_measurement="interval"
    )
    rows = {(r.window, r.family, r.other): r for r in view.agreement}
    assert set(rows) == {("1h", "human", "llm:m"), ("all", "human", "llm:m")}
    for row in rows.values():
        assert row.pairs == 2
        assert row.alpha == pytest.approx(expected)
    # llm:m re-grades d1 (3) 5000 s later: only d1's newer grade is within 1h of it, and one
    # unit whose two values agree has no expected disagreement: alpha undefined
    later = [*JUDGMENTS, judgment("q", "d1", 3, ts=5_000_000, judge="llm:m")]
    _, view = run(later, [])
    rows = {(r.window, r.family, r.other): r for r in view.agreement}
    assert rows["1h", "human", "llm:m"].pairs == 1
    assert rows["1h", "human", "llm:m"].alpha is None
    assert rows["all", "human", "llm:m"].pairs == 2
    again = krippendorff.alpha(reliability_data=[[3, 1.5], [3, 0]], level_of_measurement="interval")
    assert rows["all", "human", "llm:m"].alpha == pytest.approx(again)
    assert view.newest_judgment_ms == 5_000_000


def test_freshness_and_head_tail_coverage() -> None:
    _, view = run(
        JUDGMENTS,
        [
            imp("r1", 30_000, ["d2", "d1", "d3"]),  # judgments 30 s old: fresh
            imp("r2", 100_000, ["d2", "d9", "d1"]),  # 100 s old: stale (d9 unjudged)
            imp("end", 400_000, ["x"], query="other"),
        ],
        max_age=60_000,
        head_queries=1,
    )
    fresh = {r.window: r for r in view.freshness}
    # horizon 340 s: the 10m window holds both lists, the 1m window neither
    assert (fresh["10m"].judged_docs, fresh["10m"].stale_docs) == (5, 2)
    assert fresh["10m"].stale_share == pytest.approx(0.4)
    assert (fresh["1m"].judged_docs, fresh["1m"].stale_docs) == (0, 0)
    # the head is decided once per bucket from the counts before it: r1 (nothing counted yet)
    # is tail, r2 (q counted once) head
    cov = {(r.window, r.query_class, r.k): r for r in view.coverage_by_class}
    assert cov["10m", "tail", 3].lists == 1 and cov["10m", "tail", 3].coverage == 1.0
    assert cov["10m", "head", 3].lists == 1
    assert cov["10m", "head", 3].coverage == pytest.approx(2 / 3)
    assert cov["10m", "head", 1].coverage == 1.0
