"""The status page's chart history is kept by whoever publishes the snapshots (the daemon at
each snapshot it publishes), bounded to the last hour at the page's resolution, so the page's
first look shows the last hour: it is not recorded only while a browser polls."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from itertools import pairwise

import pytest

from streameval.config import Settings
from streameval.errors import StreamevalError
from streameval.export.history import PAGE_SPAN_MS, PAGE_STEP_MS, History
from streameval.export.status import status_source
from streameval.runtime.daemon import Daemon
from streameval.snapshot import Snapshot
from tests.unit.pipeline_helpers import imp

SOURCE = "search-impressions/0"
START_MS = 1_795_800_000_000


def snap(horizon_ms: int | None) -> Snapshot:
    return Snapshot(("arm",), ("5m",), (10,), horizon_ms=horizon_ms)


def test_a_point_only_once_the_horizon_moved_a_step() -> None:
    history = History(max_points=10, min_step_ms=10_000)
    for horizon in (0, 4_000, 9_999, 10_000, 15_000, 25_000, 24_000, 40_000):
        history.record(snap(horizon))
    assert [p.horizon_ms for p in history.points()] == [0, 10_000, 25_000, 40_000]
    assert history.to_json()["step_ms"] == 10_000


def test_the_last_hour_at_the_pages_resolution() -> None:
    history = History.last_hour()
    assert (history.max_points, history.min_step_ms) == (360, 10_000)
    assert history.max_points * history.min_step_ms == PAGE_SPAN_MS == 3_600_000
    for second in range(0, 2 * 3600, 1):  # two hours of horizon, a snapshot per second
        history.record(snap(second * 1000))
    horizons = [p.horizon_ms for p in history.points()]
    assert len(horizons) == 360
    assert horizons[-1] == 7_190_000  # the newest multiple of 10 s reached
    assert horizons[0] == 7_190_000 - 359 * PAGE_STEP_MS  # an hour (less a step) before it


def test_min_step_must_not_be_negative() -> None:
    with pytest.raises(StreamevalError, match="min_step_ms"):
        History(min_step_ms=-1)


def test_the_status_source_reads_the_history_and_does_not_record() -> None:
    history = History()
    history.record(snap(10_000))
    current = [snap(20_000)]
    payload = status_source(lambda: current[0], history)()
    assert payload["history"]["horizons_ms"] == [10_000]  # polling added nothing
    assert len(history) == 1


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    settings = Settings(
        kafka={"judgment_topics": [], "state_topic": "", "dlq_topic": ""},
        metrics={"host": "127.0.0.1", "port": 0},
    )
    made = Daemon(settings, clock=lambda: 0.0)
    yield made
    made.server.stop()


def test_the_daemon_records_the_history_without_a_poller(daemon: Daemon) -> None:
    """90 minutes of event time read and published (as the loop does, a snapshot per publish),
    with nobody polling the page: its first look shows the last hour, a point per 10 s."""
    pipeline = daemon._pipeline
    pipeline.add_source(SOURCE)
    for i in range(90 * 60 // 5):  # an impression every 5 s of event time, a publish after each
        pipeline.offer(imp(f"r{i}", START_MS + i * 5_000, ["d1", "d2"]), SOURCE, i)
        daemon._publish()
    daemon.server.start()
    url = f"http://127.0.0.1:{daemon.server.port}/api/status"
    with urllib.request.urlopen(url, timeout=5) as response:
        first_look = json.load(response)
    horizons = first_look["history"]["horizons_ms"]
    assert len(horizons) == 360
    assert all(b - a >= PAGE_STEP_MS for a, b in pairwise(horizons))
    assert 0 <= first_look["horizon_ms"] - horizons[-1] < PAGE_STEP_MS  # up to date
    assert horizons[-1] - horizons[0] >= PAGE_SPAN_MS - PAGE_STEP_MS
    # the payload carries the daemon's evaluation settings: the trail note names its window
    assert first_look["attribution_window_ms"] == 300_000
