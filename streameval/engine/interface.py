"""The engine interface (docs/design.md §13): what any implementation of the engine provides.

:class:`~streameval.engine.Pipeline` is the Python implementation; a second one (native) sits
behind the same methods and agrees with it exactly. Records go in per source, in the source's
order (one by one, ``offer``, or a fetched batch of a partition at once, ``offer_batch``, which
is ``offer`` per record in offset order); finalized
scored lists go out to the consumers of :mod:`streameval.engine.consumers` as the horizon
completes each bucket; the state is read as a :class:`~streameval.snapshot.Snapshot`; a commit
takes the checkpoint methods' answers, a restart hands them back through the restore methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from streameval.engine.intake import Offered
from streameval.snapshot import Snapshot
from streameval.windows.store import Bucket

#: one record of a batch: ``(value, offset, record_ms)`` (a None value: the empty record; offset
#: -1: none; record_ms ≤ 0: none), as :data:`streameval.kafka.records.Row`
Row = tuple[bytes | None, int, int]


@runtime_checkable
class Engine(Protocol):
    # --- records in ---------------------------------------------------------------------------
    def offer(
        self,
        raw: bytes,
        source: str = "input",
        offset: int = -1,
        record_ms: int = -1,
        judgment_key: bytes | None = None,
    ) -> Offered: ...

    def offer_batch(self, rows: Iterable[Row], source: str) -> None: ...

    def offer_judgment(
        self, raw: bytes | None, key: bytes | None, source: str, record_ms: int = -1
    ) -> Offered: ...

    # --- event time -----------------------------------------------------------------------------
    def add_source(self, source: str) -> None: ...

    def set_idle(self, source: str, idle: bool = True) -> None: ...

    def follow(self, watermark_ms: int) -> bool: ...

    def advance(self) -> None: ...

    def finish(self) -> None: ...

    @property
    def watermark(self) -> int | None: ...

    @property
    def horizon(self) -> int | None: ...

    # --- snapshot -------------------------------------------------------------------------------
    def snapshot(self, *, consumer_lag: dict[tuple[str, int], int] | None = None) -> Snapshot: ...

    # --- checkpoint -----------------------------------------------------------------------------
    def commit_offsets(self) -> dict[str, int]: ...

    def counted_through(self, source: str) -> tuple[int | None, int]: ...

    def read_positions(self) -> dict[str, int]: ...

    def unpersisted_buckets(self) -> tuple[int | None, list[tuple[str, int, Bucket]]]: ...

    def mark_persisted(self, before: int) -> None: ...

    def persisted_before(self, source: str) -> int | None: ...

    # --- restore --------------------------------------------------------------------------------
    def restore_source(
        self,
        source: str,
        horizon_ms: int | None,
        next_offset: int,
        persisted_before: int | None = None,
    ) -> None: ...

    def load_bucket(self, start: int, bucket: Bucket) -> None: ...

    def forget_source(self, source: str) -> None: ...

    def reset(self) -> None: ...
