"""The engine interface as built (docs/design.md §13): the Python engine implements it, a
windowed consumer is fed like the windows through the declared protocol, and the evaluator's
snapshot carries every consumer's rows."""

from __future__ import annotations

from dataclasses import replace

from streameval.config import Settings
from streameval.engine import Pipeline
from streameval.engine.consumers import WindowedConsumer
from streameval.engine.evaluator import Evaluator
from streameval.engine.interface import Engine
from streameval.sim import SimConfig, traffic
from streameval.snapshot import Snapshot
from streameval.values import ScoredList
from streameval.windows.store import Bucket
from tests.unit.pipeline_helpers import imp, settings


class _Windowed:
    """A windowed consumer that records what it is told."""

    def __init__(self) -> None:
        self.added: list[str] = []
        self.advanced: list[int] = []
        self.loaded: list[int] = []
        self.resets = 0

    def add(self, scored: ScoredList) -> None:
        self.added.append(scored.request_id)

    def advance(self, horizon_ms: int) -> None:
        self.advanced.append(horizon_ms)

    def load_bucket(self, start: int, bucket: Bucket) -> None:
        self.loaded.append(start)

    def reset(self) -> None:
        self.resets += 1

    def into_snapshot(self, snapshot: Snapshot, horizon_ms: int | None) -> Snapshot:
        return replace(snapshot, open_lists=-len(self.added))


def test_the_python_engine_implements_the_engine_interface() -> None:
    pipeline = Pipeline(settings())
    assert isinstance(pipeline, Engine)
    assert isinstance(_Windowed(), WindowedConsumer)
    assert not isinstance(object(), Engine)


def test_a_windowed_consumer_is_fed_the_lists_the_windows_fold_and_adds_its_rows() -> None:
    windowed = _Windowed()
    p = Pipeline(settings(), windowed=[windowed], persist=True)
    # the buckets of t/0 before 120 s are in the state topic: its lists there are not folded
    p.restore_source("t/0", None, 0, persisted_before=120_000)
    p.offer(imp("old", 60_000, ["a"]), "t/0", 0)
    p.offer(imp("other", 60_000, ["a"]), "t/1", 0)
    p.offer(imp("new", 180_000, ["a"]), "t/0", 1)
    p.finish()
    assert windowed.added == ["other", "new"]
    assert windowed.advanced and windowed.advanced == sorted(windowed.advanced)
    assert p.snapshot().open_lists == -2  # its rows (here: a marker) are in every snapshot
    p.load_bucket(0, Bucket())
    assert windowed.loaded == [0]
    p.reset()
    assert windowed.resets == 1


def test_without_windowed_consumers_there_is_no_interleaving_and_by_default_there_is() -> None:
    sim = SimConfig(rate=5, queries=50, seed=4, duration_ms=600_000, interleaving=True)
    records = [r.raw for r in traffic(sim, 1_700_000_000_000)]
    figures = []
    for windowed in (None, ()):
        p = Pipeline(settings(windows=(600_000,)), windowed=windowed)
        for raw in records:
            p.offer(raw, "log")
        p.finish()
        figures.append(p.snapshot())
    assert figures[0].interleaving_outcomes  # the default: the interleaving of the settings
    assert not figures[1].interleaving_outcomes and not figures[1].interleaving
    bare = replace(figures[0], interleaving=(), interleaving_outcomes={}, interleaving_tests=())
    assert bare == figures[1]


def test_the_evaluator_snapshot_carries_the_detectors_and_interleaving() -> None:
    evaluator = Evaluator(Settings())
    assert evaluator.detectors is not None  # the default detectors
    sim = SimConfig(rate=5, queries=50, seed=4, duration_ms=600_000, interleaving=True)
    for r in traffic(sim, 1_700_000_000_000):
        evaluator.pipeline.offer(r.raw, "log")
    evaluator.pipeline.finish()
    snapshot = evaluator.snapshot()
    assert snapshot.detection == evaluator.detectors.rows() and snapshot.detection
    assert snapshot.interleaving_outcomes == evaluator.interleaving.outcomes_total()
    assert snapshot.interleaving_outcomes
    assert replace(snapshot, detection=()) == evaluator.pipeline.snapshot()
