"""The regression, measured the way streameval measures it: the stream through ``Pipeline``.

``regression_size`` promises the expected relative drop of the treatment's judged NDCG@k (pool
ideal, unjudged docs count 0). Both arms use equally good rankers, so before the regression
treatment / control ≈ 1 and after it ≈ 1 − size.

Tolerance: a 10 min window at 8 impressions/s holds ~2400 lists per arm, ~2000 with a judged
relevant doc; NDCG@10's sd is about 0.25 around 0.56, so each arm's mean has a relative standard
error of 0.25 / 0.56 / sqrt(2000) = 1.0 %, and the ratio of two arms 1.4 %: the ±0.06 asked
below is over 4 standard errors.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.sim import SimConfig, traffic
from streameval.snapshot import Snapshot
from tests.unit.sim.helpers import START_MS

MINUTE = 60_000
REGRESSION_AT = 10 * MINUTE
SIM = SimConfig(
    queries=300,
    candidates=20,
    rate=8.0,
    duration_ms=26 * MINUTE,
    regression_at_ms=REGRESSION_AT,
    regression_size=0.25,
    seed=11,
)
SETTINGS = EvaluationSettings(ks=(5, 10), windows=("10m",))


def _snapshots(sim: SimConfig) -> tuple[Snapshot, Snapshot]:
    """Snapshots when the horizon reaches the regression and 10 minutes after it."""
    pipeline = Pipeline(SETTINGS)
    pipeline.add_source("sim")
    marks = [START_MS + REGRESSION_AT, START_MS + REGRESSION_AT + 10 * MINUTE]
    taken: list[Snapshot] = []
    for record in traffic(sim, START_MS):
        pipeline.offer(record.raw, "sim")
        horizon = pipeline.horizon
        if marks and horizon is not None and horizon >= marks[0]:
            marks.pop(0)
            taken.append(pipeline.snapshot())
    if len(taken) != 2:
        pytest.fail(f"the horizon did not reach both marks: {len(taken)} snapshots")
    before, after = taken
    return before, after


def _ratio(snapshot: Snapshot, k: int) -> float:
    means = {
        row.segment[1]: row.ndcg.mean
        for row in snapshot.ndcg
        if row.k == k and row.relevance == "judged" and row.window == "10m"
    }
    control, treatment = means["control"], means["treatment"]
    assert control is not None and treatment is not None
    assert control > 0.3  # a sane ranker, not an empty window
    return treatment / control


def test_the_measured_drop_is_the_configured_size() -> None:
    before, after = _snapshots(SIM)
    assert before.horizon_ms is not None and before.horizon_ms < START_MS + REGRESSION_AT + 10_000
    for k in (5, 10):
        assert abs(_ratio(before, k) - 1.0) < 0.06, k
        assert abs(_ratio(after, k) - (1 - 0.25)) < 0.06, k


def test_no_regression_no_drop() -> None:
    _, after = _snapshots(replace(SIM, regression_at_ms=None))
    for k in (5, 10):
        assert abs(_ratio(after, k) - 1.0) < 0.06, k


def test_the_drop_scales_with_the_size() -> None:
    _, after = _snapshots(replace(SIM, regression_size=0.5))
    assert abs(_ratio(after, 10) - 0.5) < 0.06
