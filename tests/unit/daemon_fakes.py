"""What the unit tests of the daemon's loop run it against, without a broker: an injected clock,
a stream with nothing assigned, and the start's broker and topic checks stubbed."""

from __future__ import annotations

from typing import Any

import pytest

from streameval.runtime import daemon as daemon_module
from streameval.runtime import startup


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class EmptyStream:
    """A source stream with nothing assigned; subclasses say what ``poll`` does."""

    def poll(self, timeout_ms: int) -> list[Any]:
        return []

    def take_assignment(self) -> None:
        return None

    def assignment(self) -> set[Any]:
        return set()

    def end_offsets(self, partitions: Any, timeout_ms: int | None = None) -> dict[Any, int]:
        return {}

    def commit(self, commits: Any, **kwargs: Any) -> None:
        return None

    def close(self) -> None:
        return None


def run_without_broker(monkeypatch: pytest.MonkeyPatch, stream: EmptyStream) -> None:
    """Make the daemon read ``stream``, and find at start what the fake stream offers."""
    monkeypatch.setattr(daemon_module, "open_stream", lambda *a, **k: stream)
    monkeypatch.setattr(startup, "wait_for_brokers", lambda *a, **k: True)
    monkeypatch.setattr(startup, "check_topics", lambda *a, **k: None)
