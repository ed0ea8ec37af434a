"""The collector's thresholds (streameval.gc_policy) rest on one fact, checked here: the pipeline
makes no cyclic garbage, so collecting cycles less often frees nothing later than before. And the
commands that hold a large heap apply the thresholds."""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from streameval import gc_policy
from streameval.cli import main
from streameval.config import Settings
from streameval.detect import detectors_for
from streameval.engine import Pipeline
from streameval.sim import SimConfig, traffic

T0 = 1_700_000_000_000


@pytest.fixture
def thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*before)


@pytest.mark.parametrize("interleaving", [False, True])
def test_the_pipeline_makes_no_cyclic_garbage(interleaving: bool) -> None:
    """40k simulated records (A/B or interleaved, with judgments, the detectors on, lists
    finalized and evicted from the windows as the horizon moves): with the collector off, a
    collection afterwards finds nothing unreachable."""
    config = SimConfig(seed=11, rate=50, interleaving=interleaving, regression_at_ms=600_000)
    raws = [r.raw for r in itertools.islice(traffic(config, T0), 40_000)]
    settings = Settings()
    detectors = detectors_for(settings)
    assert detectors is not None
    pipeline = Pipeline(settings.evaluation, consumers=(detectors,))
    gc.collect()
    gc.disable()
    try:
        for raw in raws:
            pipeline.offer(raw)
        pipeline.finish()  # every list finalized, scored, folded and handed to the detectors
        snapshot = pipeline.snapshot()
        found = gc.collect()
    finally:
        gc.enable()
    assert snapshot.intake.records_read == len(raws)  # it did the work
    assert sum(row.lists for row in snapshot.engagement) > 1_000  # and finalized lists
    assert found == 0


@pytest.mark.usefixtures("thresholds")
def test_replay_runs_with_the_policy_s_thresholds(tmp_path: Path) -> None:
    gc.set_threshold(700, 10, 10)
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"\n".join(r.raw for r in itertools.islice(traffic(SimConfig(seed=1), T0), 50)))
    assert main(["replay", str(log)]) == 0
    assert gc.get_threshold() == gc_policy.THRESHOLDS
