"""``/healthz`` of the daemon: 200 while its read loop turns, 503 once a turn has not come back
for ``STALL_S`` (kafka-python 3.0.12 was seen waiting without end inside ``poll`` after a
revocation; an orchestrator's liveness probe then restarts the process). The loop runs against a
stream that blocks in ``poll`` when told to; time is the injected clock."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from streameval.config import Settings
from streameval.runtime.daemon import Daemon
from streameval.runtime.health import STALL_S
from tests.unit.daemon_fakes import Clock, EmptyStream, run_without_broker


class BlockingStream(EmptyStream):
    """A stream with nothing assigned whose ``poll`` blocks while ``hold`` is set."""

    def __init__(self) -> None:
        self.hold = threading.Event()
        self.blocked = threading.Event()
        self.release = threading.Event()
        self.polls = 0

    def poll(self, timeout_ms: int) -> list[Any]:
        self.polls += 1
        if self.hold.is_set():
            self.blocked.set()
            self.release.wait(30)
        return []


def _healthz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Daemon, BlockingStream, Clock]]:
    stream = BlockingStream()
    run_without_broker(monkeypatch, stream)
    settings = Settings(
        kafka={"judgment_topics": [], "state_topic": "", "dlq_topic": ""},
        metrics={"host": "127.0.0.1", "port": 0},
    )
    clock = Clock()
    daemon = Daemon(settings, clock=clock)
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield daemon, stream, clock
    finally:
        stream.release.set()
        stop.set()
        thread.join(30)


def test_healthz_turns_503_only_when_a_turn_of_the_loop_does_not_come_back(
    running: tuple[Daemon, BlockingStream, Clock],
) -> None:
    daemon, stream, clock = running
    for _ in range(200):  # the loop turns (real polls of the fake stream)
        if stream.polls >= 3:
            break
        threading.Event().wait(0.01)
    port = daemon.server.port
    assert _healthz(port) == 200
    clock.now += STALL_S * 2  # time passes while the loop keeps turning: still live
    polls = stream.polls
    for _ in range(200):
        if stream.polls > polls + 1:
            break
        threading.Event().wait(0.01)
    assert _healthz(port) == 200
    stream.hold.set()  # the next poll does not come back
    assert stream.blocked.wait(10)
    clock.now += STALL_S - 1
    assert _healthz(port) == 200
    clock.now += 2
    assert _healthz(port) == 503
    stream.release.set()  # it comes back: live again at the next turn
    for _ in range(200):
        if _healthz(port) == 200:
            break
        threading.Event().wait(0.01)
    assert _healthz(port) == 200
