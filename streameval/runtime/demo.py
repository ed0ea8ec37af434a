"""``streameval demo``: the simulator feeding the pipeline in process, in accelerated event time.

The driver advances event time one tick at a time: it offers the tick's records to the pipeline,
takes one snapshot (the only thing the HTTP server ever reads, so the pipeline stays on the
driver's thread), records a history point for the status page, then asks the *pacer* whether to
go on. Pacing is the only use of the wall clock and it never reaches the pipeline: tests drive
the demo with :func:`~streameval.sim.pacing.no_pacing` and get, for the same seed, the same
numbers as a paced run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from prometheus_client import CollectorRegistry

from streameval import __version__
from streameval.config import Settings
from streameval.engine.evaluator import Evaluator
from streameval.errors import ConfigError
from streameval.export.collector import SnapshotCollector
from streameval.export.history import History
from streameval.export.process import register_process_metrics
from streameval.export.server import MetricsServer
from streameval.export.status import status_payload
from streameval.sim import SimConfig, SimRecord, traffic
from streameval.sim.pacing import Pacer, no_pacing, wall_pacer
from streameval.snapshot import Snapshot

__all__ = ["SOURCE", "Demo", "DemoTick", "Pacer", "no_pacing", "sim_for", "wall_pacer"]

#: the pipeline's name for the simulator's single, in-order source
SOURCE = "simulator"


@dataclass(frozen=True, slots=True)
class DemoTick:
    """What a tick observer sees: the event time reached and the snapshot taken there."""

    event_ms: int
    snapshot: Snapshot


def sim_for(settings: Settings, sim: SimConfig) -> SimConfig:
    """``sim`` with every interaction inside the configured attribution window (4/5 of it)."""
    limit = settings.evaluation.attribution_window * 4 // 5
    if sim.max_interaction_delay_ms <= limit:
        return sim
    return replace(sim, max_interaction_delay_ms=max(1, limit))


class Demo:
    """The pipeline, its simulator and what the export server reads (the latest snapshot)."""

    def __init__(
        self,
        settings: Settings,
        sim: SimConfig,
        *,
        start_ms: int,
        tick_ms: int | None = None,
        history_points: int = 360,
    ) -> None:
        self.settings = settings
        self.sim = sim_for(settings, sim)
        self.start_ms = start_ms
        self.tick_ms = tick_ms or settings.evaluation.bucket
        if self.tick_ms <= 0:
            raise ConfigError(f"demo tick: must be > 0 ms, got {self.tick_ms}")
        self.evaluator = Evaluator(settings)
        self.detectors = self.evaluator.detectors
        self.pipeline = self.evaluator.pipeline
        self.pipeline.add_source(SOURCE)
        self.history = History(history_points)
        self._latest = self.evaluator.snapshot()
        self.registry = CollectorRegistry()
        self.registry.register(SnapshotCollector(self.latest, version=__version__))
        register_process_metrics(self.registry)

    def latest(self) -> Snapshot:
        """The snapshot of the last tick (safe from any thread: it is immutable)."""
        return self._latest

    def status(self) -> dict[str, Any]:
        return status_payload(self._latest, self.history, evaluation=self.settings.evaluation)

    def server(self, host: str, port: int) -> MetricsServer:
        """The export server of this demo (not started): /metrics, /api/status, the page."""
        metrics = self.settings.metrics
        auth = None
        if metrics.basic_auth_username is not None and metrics.basic_auth_password is not None:
            auth = (metrics.basic_auth_username, metrics.basic_auth_password)
        return MetricsServer(
            self.registry,
            host=host,
            port=port,
            ready=lambda: True,
            status=self.status,
            tls_certfile=metrics.tls_certfile,
            tls_keyfile=metrics.tls_keyfile,
            basic_auth=auth,
        )

    def run(self, pace: Pacer, *, on_tick: Callable[[DemoTick], None] | None = None) -> Snapshot:
        """Drive the simulator through the pipeline until it ends or ``pace`` says stop.

        When the simulated traffic ends (``sim.duration_ms`` set) every open list is finalized.
        Returns the last snapshot.
        """
        records: Iterator[SimRecord] = traffic(self.sim, self.start_ms)
        pipeline = self.pipeline
        ahead = next(records, None)
        tick_end = self.start_ms
        while ahead is not None:
            tick_end += self.tick_ms
            while ahead is not None and ahead.time_ms < tick_end:
                pipeline.offer(ahead.raw, SOURCE)
                ahead = next(records, None)
            if ahead is None:
                pipeline.finish()
            self._publish(tick_end, on_tick)
            if not pace(tick_end):
                break
        return self._latest

    def _publish(self, event_ms: int, on_tick: Callable[[DemoTick], None] | None) -> None:
        snapshot = self.evaluator.snapshot()
        self._latest = snapshot
        self.history.record(snapshot)
        if on_tick is not None:
            on_tick(DemoTick(event_ms, snapshot))
