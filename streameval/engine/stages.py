"""The two stages of a record's path that each engine implements its own way, as the shared
coordinator (:mod:`.coordinator`) reads them: the join (open lists, finalization, evictions, the
early judged pass) and the event-time clock (sources, idleness, the watermark). The Python
engine's are :class:`~streameval.join.Joiner` and :class:`~streameval.windows.WatermarkTracker`;
the native engine's wrap one ``streameval._native.EngineCore`` (:mod:`.native_pipeline`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from streameval.join import OpenList


class JoinStage(Protocol):
    def finalize(self, watermark: int) -> Iterable[OpenList]: ...

    def finalize_all(self) -> Iterable[OpenList]: ...

    def evict_over_cap(self) -> Iterable[object]: ...

    def expire_pending(self, watermark: int | None) -> int: ...

    def next_due(self) -> float: ...

    def passed(self, cut: float) -> Sequence[Any]:
        """The lists of every bucket before ``cut`` not handed to the early judged pass yet:
        OpenLists (the Python join; :class:`~.early.JudgedEarly`
        scores them), or their judged ScoredLists from a join that scores them itself
        (the native one: :class:`~.native_pipeline.NativeJudgedEarly`)."""
        ...

    def next_passed(self) -> float: ...

    @property
    def open_lists(self) -> int: ...

    @property
    def pending_clicks_counted(self) -> int: ...

    @property
    def closed_ids_dropped(self) -> int: ...


class EventClock(Protocol):
    def register(self, source: str) -> None: ...

    def set_idle(self, source: str, idle: bool = True) -> None: ...

    def forget(self, source: str) -> None: ...

    def advance_to(self, watermark_ms: int) -> None: ...

    @property
    def all_idle(self) -> bool: ...

    @property
    def watermark(self) -> int | None: ...

    @property
    def newest(self) -> int | None: ...
