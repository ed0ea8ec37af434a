"""A bounded history of window NDCG, one point per evaluation horizon, for the status page.

Prometheus keeps the real history; this ring only feeds the sparklines of the live page, so it is
small, in memory, and forgets the oldest point when full. A point is taken only when the
snapshot's evaluation horizon moved forward (by at least ``min_step_ms``): the windows are
reported as of the horizon, so two snapshots at the same horizon show the same figures and the x
axis stays event time. Whoever publishes the snapshots records them (the daemon at each
snapshot it publishes, the demo at each tick), so the page shows the last hour at its first look.

``record`` and ``to_json`` may run on different threads (the pipeline records, the HTTP thread
reads), so the ring is guarded by a lock of its own.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from streameval.errors import StreamevalError
from streameval.snapshot import Snapshot
from streameval.values import Segment

#: (window, relevance, segment, k): one NDCG series.
SeriesKey = tuple[str, str, Segment, int]


@dataclass(frozen=True, slots=True)
class SeriesValue:
    """One window figure at one horizon."""

    mean: float | None
    stderr: float | None
    n: int


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    horizon_ms: int
    values: dict[SeriesKey, SeriesValue]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


#: Decimals kept in :meth:`History.to_json` (sparklines; about a third of the JSON of full floats).
JSON_DECIMALS = 5


def _short(value: float | None) -> float | None:
    return None if value is None else round(value, JSON_DECIMALS)


def point_of(snapshot: Snapshot) -> HistoryPoint | None:
    """The history point of a snapshot, or None while it has no evaluation horizon."""
    if snapshot.horizon_ms is None:
        return None
    values = {
        (row.window, row.relevance, row.segment, row.k): SeriesValue(
            _finite(row.ndcg.mean), _finite(row.ndcg.stderr), row.ndcg.n
        )
        for row in snapshot.ndcg
    }
    return HistoryPoint(snapshot.horizon_ms, values)


#: the page's resolution and reach: a point per 10 s of event time, an hour of them
PAGE_STEP_MS = 10_000
PAGE_SPAN_MS = 3_600_000


class History:
    """The last ``max_points`` horizons' window NDCG, oldest first, each at least
    ``min_step_ms`` of event time after the one before."""

    def __init__(self, max_points: int = 120, *, min_step_ms: int = 0) -> None:
        if max_points < 1:
            raise StreamevalError(f"History needs max_points >= 1, got {max_points}")
        if min_step_ms < 0:
            raise StreamevalError(f"History needs min_step_ms >= 0, got {min_step_ms}")
        self._points: deque[HistoryPoint] = deque(maxlen=max_points)
        self._lock = threading.Lock()
        self.max_points = max_points
        self.min_step_ms = min_step_ms

    @classmethod
    def last_hour(cls) -> History:
        """The page's history: the last hour of event time, a point per 10 s (360 points)."""
        return cls(PAGE_SPAN_MS // PAGE_STEP_MS, min_step_ms=PAGE_STEP_MS)

    def record(self, snapshot: Snapshot) -> bool:
        """Append the snapshot's figures if its horizon moved forward (by ``min_step_ms`` at
        least); True when appended."""
        step = max(1, self.min_step_ms)
        with self._lock:
            last = self._points[-1].horizon_ms if self._points else None
            if snapshot.horizon_ms is None or (
                last is not None and snapshot.horizon_ms < last + step
            ):
                return False
            point = point_of(snapshot)
            if point is None:  # (no horizon: checked above)
                return False
            self._points.append(point)
            return True

    def points(self) -> tuple[HistoryPoint, ...]:
        """The points held, oldest first (a copy)."""
        with self._lock:
            return tuple(self._points)

    def __len__(self) -> int:
        with self._lock:
            return len(self._points)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready columns: one shared x axis and, per series, values aligned with it.

        ``{"horizons_ms": [h0, h1, ...], "series": [{"window", "relevance", "segment": [...],
        "k", "mean": [...], "stderr": [...], "n": [...]}, ...]}``; a series absent at a horizon
        has ``null`` there (``0`` for ``n``). Series are sorted by (window, relevance, segment, k).
        Means and standard errors are rounded to ``JSON_DECIMALS`` places.
        """
        points = self.points()
        keys = sorted({key for point in points for key in point.values})
        empty = SeriesValue(None, None, 0)
        series: list[dict[str, Any]] = []
        for key in keys:
            window, relevance, segment, k = key
            column = [point.values.get(key, empty) for point in points]
            series.append(
                {
                    "window": window,
                    "relevance": relevance,
                    "segment": list(segment),
                    "k": k,
                    "mean": [_short(value.mean) for value in column],
                    "stderr": [_short(value.stderr) for value in column],
                    "n": [value.n for value in column],
                }
            )
        return {
            "max_points": self.max_points,
            "step_ms": self.min_step_ms,
            "horizons_ms": [point.horizon_ms for point in points],
            "series": series,
        }
