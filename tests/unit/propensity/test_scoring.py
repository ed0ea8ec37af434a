"""implicit_debiased's gains and ideal (pure functions), and its scores through the pipeline
in a case worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import pytest

from streameval.config import PropensitySettings
from streameval.engine import Pipeline
from streameval.propensity import IMPLICIT_DEBIASED, ips_gains, pooled_relevance
from streameval.propensity.scoring import clipped
from streameval.values import IMPLICIT, NO_RELEVANCE, SCORED, ScoredList
from tests.unit.pipeline_helpers import click, imp, settings


@pytest.mark.parametrize(
    ("docs", "gains", "weights", "depth", "expected"),
    [
        # gain over the propensity of its rank; none without an interaction
        (["a", "b", "c"], {"a": 1.0, "c": 3.0}, (1.0, 0.5, 0.25), 3, [1.0, 0.0, 12.0]),
        # ranks beyond the weights take the last one's
        (["a", "b", "c"], {"c": 2.0}, (1.0, 0.5), 3, [0.0, 0.0, 4.0]),
        # only the first ``depth`` results
        (["a", "b", "c"], {"c": 2.0}, (1.0, 0.5, 0.25), 2, [0.0, 0.0]),
        # a repeated doc gains at its first position only
        (["a", "a", "b"], {"a": 1.0, "b": 1.0}, (1.0, 0.5, 0.25), 3, [1.0, 0.0, 4.0]),
    ],
)
def test_ips_gains(
    docs: list[str], gains: dict[str, float], weights: tuple[float, ...], depth: int,
    expected: list[float],
) -> None:  # fmt: skip
    assert ips_gains(docs, gains, weights, depth) == expected


def test_the_clip_bounds_every_weight() -> None:
    weights = clipped((1.0, 0.5, 0.1, 0.04, 0.0), 0.1)
    assert weights == (1.0, 0.5, 0.1, 0.1, 0.1)
    # a click at rank 5 weighs 1/0.1 = 10, not 1/0 or 1/0.04 = 25
    assert ips_gains(["a"] * 4 + ["b"], {"b": 1.0}, weights, 5)[4] == 10.0


def test_pooled_relevance_is_gains_over_expected_examinations() -> None:
    # shown twice at rank 1 (weight 1) and four times at rank 2 (0.5): 4 expected examinations
    assert pooled_relevance((2.0, 4.0), 3.0, (1.0, 0.5)) == 0.75
    assert pooled_relevance((0.0, 0.0), 0.0, (1.0, 0.5)) == 0.0


def _run(events: list[bytes], **propensity: Any) -> list[ScoredList]:
    scored: list[ScoredList] = []
    pipeline = Pipeline(
        settings(ks=(2,)),
        on_scored=scored.append,
        propensity=PropensitySettings(enabled=True, **propensity),
    )
    pipeline.add_source("input")
    for raw in events:
        pipeline.offer(raw, "input")
    pipeline.finish()
    return scored


def _lists() -> list[bytes]:
    """Four lists of query q that estimate p2 = 1/2 and give a and b the debiased relevance
    1 each, then a fifth list where only b (rank 2) is clicked."""
    shown = [
        (["a", "b"], ["a"]),
        (["b", "a"], ["b", "a"]),
        (["a", "b"], ["a", "b"]),
        (["b", "a"], ["b"]),
        (["a", "b"], ["b"]),
    ]
    events = []
    for i, (docs, clicked) in enumerate(shown):
        t = 1_000_000 + i * 100_000
        events.append(imp(f"r{i}", t, docs, query_id="q"))
        events += [click(f"r{i}", d, t + 1_000 + j) for j, d in enumerate(clicked)]
    events.append(imp("end", 3_000_000, ["z"], query_id="other"))  # moves the watermark on
    return events


def test_scores_worked_by_hand() -> None:
    # after four lists: a was clicked 2/2 at rank 1 and 1/2 at rank 2, b likewise, so
    # T[1][2] = 2 + 2, T[2][1] = 1 + 1: p2 = 2/4 = 0.5. Each doc: 3 clicks over 2·1 + 2·0.5 = 3
    # expected examinations: relevance 1. The fifth list, b clicked at rank 2: DCG@2 =
    # (1/0.5)/log2(3), over the pooled ideal 1 + 1/log2(3).
    scored = _run(_lists(), max_rank=2, min_clicks=1, refresh_lists=4, clip=0.1)
    by_id = {s.request_id: s for s in scored}
    assert [s.relevance for s in by_id["r4"].sources] == [IMPLICIT, "judged", IMPLICIT_DEBIASED]
    for rid in ("r0", "r1", "r2", "r3"):  # before the first estimate: no score
        source = by_id[rid].sources[2]
        assert source.outcome == NO_RELEVANCE
        assert source.ndcg == (None,)
    debiased = by_id["r4"].sources[2]
    assert debiased.outcome == SCORED
    d2 = 1 / math.log2(3)
    assert debiased.dcg == (pytest.approx(2 * d2),)
    assert debiased.idcg == (pytest.approx(1 + d2),)
    assert debiased.ndcg == (pytest.approx(2 * d2 / (1 + d2)),)
    assert by_id["r4"].sources[0].ndcg == (pytest.approx(d2),)  # implicit: its own ideal


def test_a_rank_not_estimated_yet_leaves_every_list_without_a_score() -> None:
    # min_clicks above what four lists harvest: no estimate, no implicit_debiased score
    scored = _run(_lists(), max_rank=2, min_clicks=50, refresh_lists=4)
    assert all(s.sources[2].outcome == NO_RELEVANCE for s in scored)


def test_an_unclipped_weight_changes_the_score() -> None:
    # clip 0.6 > p2 = 0.5: b's click weighs 1/0.6, and so do the ideal's expectations
    scored = _run(_lists(), max_rank=2, min_clicks=1, refresh_lists=4, clip=0.6)
    debiased = next(s for s in scored if s.request_id == "r4").sources[2]
    d2 = 1 / math.log2(3)
    # expected examinations 2·1 + 2·0.6 = 3.2: relevance 3/3.2 each
    assert debiased.ndcg == (pytest.approx((d2 / 0.6) / ((1 + d2) * 3 / 3.2)),)
