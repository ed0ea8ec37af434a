"""A window's definition, and the one pure function that gives window boundaries.

Definitions are frozen values; the runtime state lives in :mod:`streameval.windows.store`. All
times are event time in epoch milliseconds; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from streameval.durations import format_duration

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """A sliding event-time window of ``size_ms``, kept as buckets of ``bucket_ms``."""

    size_ms: int
    bucket_ms: int

    def __post_init__(self) -> None:
        if self.bucket_ms <= 0 or self.size_ms <= 0 or self.size_ms % self.bucket_ms:
            raise ValueError(
                f"window {self.size_ms} ms must be a positive multiple of the bucket "
                f"{self.bucket_ms} ms"
            )

    @property
    def name(self) -> str:
        """The ``window`` label: the canonical spelling of the size ("1m", "5m", "1h")."""
        return format_duration(self.size_ms)


def bucket_start(ts_ms: int, bucket_ms: int) -> int:
    """Start of the bucket holding ``ts_ms`` (floor; correct for negative times too)."""
    return ts_ms - ts_ms % bucket_ms


def window_buckets(horizon_ms: int, size_ms: int, bucket_ms: int) -> range:
    """Starts of the buckets a window of ``size_ms`` covers as of ``horizon_ms``.

    Only whole buckets that ended at or before the horizon count: the window is
    ``[end - size, end)`` with ``end = bucket_start(horizon)``. Every list whose impression falls
    in it is final at that horizon (the horizon is already the watermark less the attribution
    window), so the figures of a window never change once reported.
    """
    end = bucket_start(horizon_ms, bucket_ms)
    return range(end - size_ms, end, bucket_ms)


def pop_before(pending: dict[int, _T], end: int) -> list[tuple[int, _T]]:
    """The entries of ``pending`` (by bucket start) of the buckets starting before ``end``,
    oldest first, removed: what a consumer closes once its horizon reaches ``end``."""
    if not pending:
        return []
    return [(b, pending.pop(b)) for b in sorted(b for b in pending if b < end)]
