"""The daemon's progress line (DESIGN §8): every ``metrics.progress_interval`` of its injected
clock, one INFO line with records/s, consumer lag, watermark, horizon and open lists."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from streameval.config import Settings
from streameval.progress import ProgressLog
from streameval.runtime.daemon import Daemon
from streameval.snapshot import Intake, Snapshot
from tests.unit.daemon_fakes import Clock, EmptyStream, run_without_broker

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z


def _snapshot(read: int, **fields: Any) -> Snapshot:
    return Snapshot(("ranker",), ("1m",), (10,), intake=Intake(records_read=read), **fields)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "streameval.progress" and r.levelno == logging.INFO
    ]


def test_one_line_per_interval_with_the_rate_since_the_last_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="streameval.progress")
    clock = Clock(500.0)
    progress = ProgressLog(60.0, clock)
    asked = []

    def snapshot_of(s: Snapshot) -> Any:
        def get() -> Snapshot:
            asked.append(s)
            return s

        return get

    first = _snapshot(
        6_000,
        consumer_lag={("search-impressions", 0): 1_300, ("search-clicks", 2): 2_100},
        watermark_ms=T0 + 310_000,
        horizon_ms=T0 + 10_000,
        open_lists=42,
    )
    clock.now += 59.9
    progress(snapshot_of(first))
    assert _lines(caplog) == [] and asked == []  # not due: the snapshot is not even asked for
    clock.now += 0.1
    progress(snapshot_of(first))
    # 6000 records over the 60 s since it was made: 100 records/s; lag 1300 + 2100
    assert _lines(caplog) == [
        "progress: 100 records/s (6000 in 60 s, 6000 since start), consumer lag 3400 records "
        "(most behind: search-clicks/2 2100), watermark 2023-11-14T22:18:30Z, horizon "
        "2023-11-14T22:13:30Z, open lists 42, ready"
    ]
    progress(snapshot_of(first))  # the same moment: nothing more
    assert len(_lines(caplog)) == 1
    clock.now += 75.0  # a turn of the loop that took long: the line comes late, rate over 75 s
    progress(snapshot_of(_snapshot(9_000, ready=False)))
    assert _lines(caplog)[1] == (
        "progress: 40 records/s (3000 in 75 s, 9000 since start), consumer lag unknown (not "
        "measured yet, or nothing assigned), watermark none yet, horizon none yet, "
        "open lists 0, not ready"
    )


def test_an_interval_of_zero_turns_it_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="streameval.progress")
    clock = Clock(500.0)
    progress = ProgressLog(0.0, clock)
    for _ in range(3):
        clock.now += 3_600.0
        progress(lambda: _snapshot(1))
    assert _lines(caplog) == []


class _TickingStream(EmptyStream):
    """Nothing assigned; each poll takes ``step_s`` of the injected clock, and the daemon is
    stopped after ``polls`` of them."""

    def __init__(self, clock: Clock, stop: threading.Event, step_s: float, polls: int) -> None:
        self.clock, self.stop, self.step_s, self.left = clock, stop, step_s, polls

    def poll(self, timeout_ms: int) -> list[Any]:
        self.clock.now += self.step_s
        self.left -= 1
        if self.left <= 0:
            self.stop.set()
        return []


@pytest.mark.parametrize(("interval", "expected"), [("30s", 4), ("0", 0)])
def test_the_daemon_logs_it_by_its_clock(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    interval: str,
    expected: int,
) -> None:
    caplog.set_level(logging.INFO, logger="streameval.progress")
    clock = Clock(500.0)
    stop = threading.Event()
    # 130 polls of 1 s each: lines at 30, 60, 90 and 120 s of the clock
    stream = _TickingStream(clock, stop, 1.0, 130)
    run_without_broker(monkeypatch, stream)
    settings = Settings(
        kafka={"judgment_topics": [], "state_topic": "", "dlq_topic": ""},
        metrics={"host": "127.0.0.1", "port": 0, "progress_interval": interval},
    )
    Daemon(settings, clock=clock).run(stop)
    lines = _lines(caplog)
    assert len(lines) == expected
    assert all(
        line.startswith("progress: 0 records/s (0 in 30 s, 0 since start)") for line in lines
    )
