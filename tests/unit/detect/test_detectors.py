"""The detectors' runtime against cases worked by hand, and the promise that the result does not
depend on when the horizon is advanced."""

from __future__ import annotations

import math
import random

import pytest

from streameval.config import EvaluationSettings, Settings
from streameval.detect import DetectionSpec, Detectors, detectors_for
from streameval.engine import Pipeline
from streameval.sim import SimConfig, traffic
from streameval.snapshot import DetectionRow
from streameval.values import IMPLICIT, JUDGED, SCORED, ScoredList, SourceScore
from tests.unit.detect.scenario import regression_log

CONTROL = ("bm25", "control")
TREATMENT = ("ltr", "treatment")
B = 10_000  # bucket


def spec(detectors: tuple[str, ...], *, every_ms: int = 15_000) -> DetectionSpec:
    return DetectionSpec(
        segment_labels=("ranker", "arm"),
        control=(("arm", "control"),),
        detectors=detectors,
        ks=(10,),
        scored_ks=(10,),
        relevance=(JUDGED,),
        bucket_ms=B,
        min_relative_drop=0.1,
        false_alarm_every_ms=every_ms,  # h = ln(15000 / 10000) = ln 1.5 = 0.405465
        half_life_ms=10**18,  # no forgetting within the test (decay 1 - 1e-14 per bucket)
        max_queries=100,
        min_lists=2,
    )


def judged(segment: tuple[str, str], query: str, ts: int, ndcg: float) -> ScoredList:
    source = SourceScore(JUDGED, SCORED, (10,), (ndcg,), (0.0,), (0.0,))
    labels = {"ranker": segment[0], "arm": segment[1]}
    return ScoredList("r", query, ts, labels, segment, (source,), False, None, False)


def feed(det: Detectors, bucket: int, lists: list[tuple[tuple[str, str], str, float]]) -> None:
    for segment, query, ndcg in lists:
        det.add_judged(judged(segment, query, bucket * B + 1, ndcg))
    det.advance_judged((bucket + 1) * B)


def row(det: Detectors, detector: str, segment: tuple[str, str]) -> DetectionRow:
    (found,) = [r for r in det.rows() if r.detector == detector and r.segment == segment]
    return found


def test_vs_control_worked_by_hand() -> None:
    det = Detectors(spec(("vs_control",)))
    # bucket 0: control q1 0.8, 0.6 -> reference q1 = 0.7, level 0.7; no history yet: no step
    feed(det, 0, [(CONTROL, "q1", 0.8), (CONTROL, "q1", 0.6), (TREATMENT, "q1", 0.7)])
    # no series before the control has a history (a single ranker never gets one)
    assert [r for r in det.rows() if r.detector == "vs_control"] == []
    # bucket 1: treatment residuals vs 0.7: -0.1, -0.3 -> var 0.1/2 - 0.2^2 = 0.01 (weight 2);
    # control residuals 0.2, -0.2 -> var 0.04; neither was ready before: no step
    feed(det, 1, [(CONTROL, "q1", 0.9), (CONTROL, "q1", 0.5)])
    feed_t = [(TREATMENT, "q1", 0.6), (TREATMENT, "q1", 0.4)]
    # (treatment lists of bucket 1 are added before it closes, like the control's)
    det2 = Detectors(spec(("vs_control",)))
    feed(det2, 0, [(CONTROL, "q1", 0.8), (CONTROL, "q1", 0.6), (TREATMENT, "q1", 0.7)])
    feed(det2, 1, [(CONTROL, "q1", 0.9), (CONTROL, "q1", 0.5), *feed_t])
    assert row(det2, "vs_control", TREATMENT).shift is None
    # bucket 2: control 0.7, 0.7 (residuals 0); treatment 0.5, 0.5 (residuals -0.2)
    # d = -0.2 - 0 = -0.2; v = 0.01/2 + 0.04/2 = 0.025; delta = 0.1 * 0.7 = 0.07
    # llr = -0.07 * (-0.2 + 0.035) / 0.025 = 0.462 >= h = ln 1.5 = 0.405: the alarm holds
    feed(
        det2,
        2,
        [
            (CONTROL, "q1", 0.7),
            (CONTROL, "q1", 0.7),
            (TREATMENT, "q1", 0.5),
            (TREATMENT, "q1", 0.5),
        ],
    )
    r = row(det2, "vs_control", TREATMENT)
    assert r.statistic == pytest.approx(0.462, rel=1e-6)
    assert r.threshold == pytest.approx(math.log(1.5))
    assert r.alarm and r.first_alarm_ms == 2 * B
    assert r.shift == pytest.approx(-0.2)
    assert r.shift_stderr == pytest.approx(math.sqrt(0.025))
    # the control arm has no vs_control series of its own
    assert all(x.segment != CONTROL for x in det2.rows() if x.detector == "vs_control")


def test_vs_baseline_worked_by_hand() -> None:
    det = Detectors(spec(("vs_baseline",), every_ms=10**9))
    seg = TREATMENT
    # bucket 0: every query new, nothing to compare with; refs q1 = 0.7 (2 lists), q2 = 0.5;
    # mean of new-query lists (0.8 + 0.6 + 0.5) / 3 = 0.63333; level 0.63333
    feed(det, 0, [(seg, "q1", 0.8), (seg, "q1", 0.6), (seg, "q2", 0.5)])
    # bucket 1: q1 0.9, 0.5 -> known residuals 0.2, -0.2 (variance 0.04, weight 2);
    # q3 is new: residual 0.4 - 0.63333 (new stratum, weight 1: not ready). No step.
    feed(det, 1, [(seg, "q1", 0.9), (seg, "q1", 0.5), (seg, "q3", 0.4)])
    assert row(det, "vs_baseline", seg).shift is None
    # bucket 2: q1 0.6, 0.6 against 0.7 -> -0.1, -0.1; q2 0.5 against 0.5 -> 0.
    # known stratum only: d = -0.2 / 3 = -0.066667, v = 0.04 / 3 = 0.013333
    # level = (1.9 + 1.8) / 6 = 0.616667, delta = 0.0616667
    # llr = -0.0616667 * (-0.066667 + 0.0308333) / 0.013333 = 0.165729
    feed(det, 2, [(seg, "q1", 0.6), (seg, "q1", 0.6), (seg, "q2", 0.5)])
    r = row(det, "vs_baseline", seg)
    assert r.statistic == pytest.approx(0.165729, rel=1e-5)
    assert r.shift == pytest.approx(-0.2 / 3)
    assert not r.alarm and r.first_alarm_ms is None


def test_a_list_of_a_closed_bucket_is_ignored_and_counted() -> None:
    det = Detectors(spec(("vs_baseline",)))
    feed(det, 0, [(TREATMENT, "q1", 0.8)])
    det.add_judged(judged(TREATMENT, "q1", 5, 0.1))  # bucket 0 is closed
    assert det.ignored == 1


def test_reset_drops_open_buckets_only() -> None:
    det = Detectors(spec(("vs_baseline",)))
    det.add_judged(judged(TREATMENT, "q1", 1, 0.8))
    det.reset()  # a re-read will hand the list again
    det.add_judged(judged(TREATMENT, "q1", 1, 0.8))
    det.advance_judged(B)
    det.add_judged(judged(TREATMENT, "q1", B + 1, 0.6))
    det.add_judged(judged(TREATMENT, "q1", B + 2, 0.6))
    det.advance_judged(2 * B)
    # q1's reference learned 0.8 once: bucket 1's residuals are -0.2 each (known stratum)
    track = det._tracks[TREATMENT, JUDGED, 10]
    assert track.known.total == pytest.approx(-0.4)
    assert track.refs.get("q1") is not None


def test_implicit_scores_come_from_finalized_lists_judged_ones_early() -> None:
    det = Detectors(_both_sources())
    implicit = SourceScore(IMPLICIT, SCORED, (10,), (0.9,), (0.0,), (0.0,))
    judged_ = SourceScore(JUDGED, SCORED, (10,), (0.4,), (0.0,), (0.0,))
    lst = ScoredList("r", "q", 1, {}, TREATMENT, (implicit, judged_), True, 1, True)
    det.add(lst)  # the judged source of a finalized list is not taken again
    det.advance(B)
    det.advance_judged(B)
    assert det._tracks[TREATMENT, IMPLICIT, 10].level.mean == pytest.approx(0.9)
    assert (TREATMENT, JUDGED, 10) not in det._tracks


def _both_sources() -> DetectionSpec:
    from dataclasses import replace

    return replace(spec(("vs_baseline",)), relevance=(JUDGED, IMPLICIT))


def _settings() -> Settings:
    return Settings(
        evaluation=EvaluationSettings(ks=(10,), attribution_window=60_000, windows=(60_000,)),
        detection={"min_relative_drop": 0.05, "half_life": "5m", "min_lists": 100},
    )


def _records() -> list[bytes]:
    return [r.raw for r in regression_log()]


def test_first_alarm_does_not_depend_on_when_the_horizon_moves() -> None:
    records = _records()
    settings = _settings()

    def run(extra_advance: float) -> tuple[DetectionRow, ...]:
        det = detectors_for(settings)
        assert det is not None
        pipeline = Pipeline(settings.evaluation, consumers=(det,))
        pipeline.add_source("log")
        rng = random.Random(5)
        for raw in records:
            pipeline.offer(raw, "log")
            if rng.random() < extra_advance:
                pipeline.advance()  # as a daemon's poll loop may, at any moment
        pipeline.finish()
        return det.rows()

    as_replay = run(0.0)
    like_a_daemon = run(0.3)
    assert as_replay == like_a_daemon
    # and it found the regression (a 30 % drop of the treatment, judged)
    fired = {(r.detector, r.relevance, r.segment[1]) for r in as_replay if r.first_alarm_ms}
    assert ("vs_control", "judged", "treatment") in fired
    assert ("vs_baseline", "judged", "control") not in fired


def test_lists_fed_with_one_advance_at_the_end_give_the_same_rows() -> None:
    """Every bucket closed at once, in order, equals closing them one by one."""
    settings = _settings()
    det = detectors_for(settings)
    assert det is not None
    scored: list[ScoredList] = []
    early: list[ScoredList] = []

    class Tap:
        def add(self, s: ScoredList) -> None:
            scored.append(s)

        def advance(self, horizon_ms: int) -> None:
            pass

        def add_judged(self, s: ScoredList) -> None:
            early.append(s)

        def advance_judged(self, watermark_ms: int) -> None:
            pass

        def reset(self) -> None:
            pass

    pipeline = Pipeline(settings.evaluation, consumers=(det, Tap()))
    pipeline.add_source("log")
    for raw in _records():
        pipeline.offer(raw, "log")
    pipeline.finish()
    late = detectors_for(settings)
    assert late is not None
    for s in early:
        late.add_judged(s)
    for s in scored:
        late.add(s)
    end = max(s.timestamp for s in scored) + B
    late.advance(end)
    late.advance_judged(end)
    assert late.rows() == det.rows()


def test_vs_control_is_the_same_whether_or_not_vs_baseline_runs_beside_it() -> None:
    """With one control segment and vs_baseline on, the control's own track serves as the
    reference of vs_control (one pass instead of two): the vs_control figures must not move."""
    rng = random.Random(3)
    alone = Detectors(spec(("vs_control",), every_ms=10**9))
    both = Detectors(spec(("vs_control", "vs_baseline"), every_ms=10**9))
    for bucket in range(30):
        lists = []
        for _ in range(20):
            q = f"q{rng.randrange(8)}"
            segment = CONTROL if rng.random() < 0.5 else TREATMENT
            drop = 0.1 if segment == TREATMENT and bucket >= 15 else 0.0
            lists.append((segment, q, rng.random() * 0.5 + 0.4 - drop))
        feed(alone, bucket, lists)
        feed(both, bucket, lists)
    control_rows = [r for r in both.rows() if r.detector == "vs_control"]
    assert control_rows == list(alone.rows())
    assert control_rows[0].statistic > 0.0  # it stepped, and saw the drop


def test_every_list_reaches_the_judged_detectors_once_even_with_a_short_attribution_window() -> (
    None
):
    """An attribution window shorter than a bucket finalizes lists before the watermark
    completes their bucket: their judged score goes out at finalization, once."""
    settings = Settings(
        evaluation=EvaluationSettings(ks=(10,), attribution_window=2_000, windows=(60_000,))
    )
    judged: list[str] = []
    finalized: list[str] = []

    class Tap:
        def add(self, s: ScoredList) -> None:
            finalized.append(s.request_id)

        def advance(self, horizon_ms: int) -> None:
            pass

        def add_judged(self, s: ScoredList) -> None:
            judged.append(s.request_id)

        def advance_judged(self, watermark_ms: int) -> None:
            pass

        def reset(self) -> None:
            pass

    pipeline = Pipeline(settings.evaluation, consumers=(Tap(),))
    pipeline.add_source("log")
    sim = SimConfig(rate=5, queries=50, seed=2, duration_ms=120_000, max_interaction_delay_ms=1_500)
    for r in traffic(sim, 1_700_000_000_000):
        pipeline.offer(r.raw, "log")
    pipeline.finish()
    assert len(finalized) > 100
    assert sorted(judged) == sorted(finalized)  # each once, none lost
