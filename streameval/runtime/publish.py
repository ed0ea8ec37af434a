"""Publishing: the snapshot the HTTP threads read (a scrape never touches live state), the
status page's history of it, and the progress log line."""

from __future__ import annotations

from collections.abc import Callable

from streameval.export.history import History
from streameval.progress import ProgressLog
from streameval.snapshot import Snapshot


class SnapshotBox:
    """The latest published snapshot: written by the loop, read by the HTTP threads."""

    def __init__(self, first: Snapshot) -> None:
        self._snapshot = first

    def publish(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot  # one reference assignment: atomic

    def get(self) -> Snapshot:
        return self._snapshot


class Publisher:
    """Publishes snapshots to the box, records each in the status page's history (not only
    while a browser polls), and logs progress by the clock."""

    def __init__(
        self, first: Snapshot, *, progress_every_s: float, clock: Callable[[], float]
    ) -> None:
        self.box = SnapshotBox(first)
        # the status page's charts: recorded at each publish, not only while a browser polls
        self.history = History.last_hour()
        self._progress = ProgressLog(progress_every_s, clock)

    def publish(self, snapshot: Snapshot) -> None:
        self.box.publish(snapshot)
        self.history.record(self.box.get())

    def log_progress(self) -> None:
        """The progress line, when one is due."""
        self._progress(self.box.get)
