"""A consumer that says ``takes_judged = False`` gets no judged score early (nothing is scored
for it before finalization), is still reset, and the detectors say so when judged is not watched."""

from __future__ import annotations

from streameval.config import DetectionSettings, EvaluationSettings, Settings
from streameval.detect import detectors_for
from streameval.engine import Pipeline
from streameval.sim import SimConfig, traffic
from streameval.values import ScoredList


class Tap:
    def __init__(self, takes_judged: bool) -> None:
        self.takes_judged = takes_judged
        self.judged: list[str] = []
        self.finalized: list[str] = []
        self.resets = 0

    def add(self, s: ScoredList) -> None:
        self.finalized.append(s.request_id)

    def advance(self, horizon_ms: int) -> None:
        pass

    def add_judged(self, s: ScoredList) -> None:
        self.judged.append(s.request_id)

    def advance_judged(self, watermark_ms: int) -> None:
        pass

    def reset(self) -> None:
        self.resets += 1


def _run(*taps: Tap) -> Pipeline:
    pipeline = Pipeline(EvaluationSettings(ks=(10,), windows=(60_000,)), consumers=taps)
    pipeline.add_source("log")
    sim = SimConfig(rate=5, queries=50, seed=4, duration_ms=600_000)
    for r in traffic(sim, 1_700_000_000_000):
        pipeline.offer(r.raw, "log")
    pipeline.reset()  # a rebalance: both are told
    pipeline.finish()
    return pipeline


def test_a_consumer_that_does_not_take_judged_gets_none_early_but_is_reset() -> None:
    off, on = Tap(takes_judged=False), Tap(takes_judged=True)
    _run(off, on)
    assert len(on.judged) > 100  # the other consumer still gets them
    assert off.judged == []
    assert off.resets == on.resets == 1
    assert off.finalized == on.finalized


def test_detectors_take_judged_only_when_they_watch_it() -> None:
    def det(relevance: tuple[str, ...]) -> bool:
        d = detectors_for(Settings(detection=DetectionSettings(relevance=relevance)))  # type: ignore[arg-type]
        assert d is not None
        return d.takes_judged

    assert det(("implicit",)) is False
    assert det(("judged",)) is True
    assert det(("judged", "implicit")) is True
