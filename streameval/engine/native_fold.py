"""The native engine's per-list state read from its core (docs/native.md "The fold in the core").

With the fold in the core, a finalized list's window buckets, since-start totals, buckets for the
state topic and judge-tracker bookkeeping live in ``streameval._native.EngineCore``. These are
that state as the shared coordinator reads it (:class:`~streameval.windows.WindowStore`,
:class:`~streameval.windows.Totals`, :class:`~streameval.windows.persisted.SourceBuckets`): the
same calls, answered from the core, the same objects built for the snapshot and checkpoints.
Folding a list goes through the core itself (``EngineCore.finalize_folded`` and ``fold_list``),
never through these (their ``add`` and ``count_list`` refuse).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from streameval.snapshot import CumulativeRow, EngagementRow, Moments, NdcgRow
from streameval.values import ScoredList
from streameval.windows import Totals, WindowStore
from streameval.windows.persisted import SourceBuckets, decode_bucket, encode_bucket
from streameval.windows.store import Bucket


def _folded_in_core(what: str) -> RuntimeError:
    return RuntimeError(f"{what}: the lists are folded in the native core (EngineCore)")


class CoreWindows(WindowStore):
    """The window buckets of an ``EngineCore``."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:  # (no Python buckets: not WindowStore's __init__)
        self._core = core

    def add(self, scored: ScoredList) -> None:
        raise _folded_in_core("WindowStore.add")

    def merge(self, start: int, bucket: Bucket) -> None:
        """A bucket read back from the state topic, through its codec."""
        reason = self._core.load_bucket(start, encode_bucket(bucket))
        if reason is not None:  # (a Bucket of ours always encodes: never reached)
            raise ValueError(f"bucket at {start}: {reason}")

    def evict(self, horizon_ms: int) -> None:
        """The buckets no window covers go, and the judge tracker's (``ListSignals.advance``'s
        work, in the core)."""
        self._core.evict_windows(horizon_ms)

    def next_eviction(self) -> int | None:
        nxt: int | None = self._core.next_eviction()
        return nxt

    def rows(self, horizon_ms: int | None) -> tuple[tuple[NdcgRow, ...], tuple[EngagementRow, ...]]:
        ndcg, eng = self._core.window_rows(horizon_ms)
        return (
            tuple(
                NdcgRow(w, rel, seg, k, Moments(*m), None if c is None else Moments(*c))
                for w, rel, seg, k, m, c in ndcg
            ),
            tuple(
                EngagementRow(w, seg, lists, clicked, Moments(*rr), zero)
                for w, seg, lists, clicked, rr, zero in eng
            ),
        )


class CoreTotals(Totals):
    """The since-start totals of an ``EngineCore``."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:  # (no Python sums: not Totals' __init__)
        self._core = core

    def count_list(self, scored: ScoredList) -> None:
        raise _folded_in_core("Totals.count_list")

    def count_outcome(self, relevance: str, outcome: str) -> None:
        self._core.count_outcome(relevance, outcome)

    def cumulative(self) -> tuple[CumulativeRow, ...]:
        return tuple(CumulativeRow(*row) for row in self._core.cumulative())

    def lists_total(self) -> dict[tuple[str, str], int]:
        return dict(self._core.lists_total())


class CoreBuckets(SourceBuckets):
    """The buckets of an ``EngineCore`` not yet in the state topic."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:  # (no Python buckets: not SourceBuckets' __init__)
        self._core = core

    def add(self, source: str, scored: ScoredList) -> None:
        raise _folded_in_core("SourceBuckets.add")

    def complete(self, before: int) -> Iterator[tuple[str, int, Bucket]]:
        """Decoded from the state topic's codec (what a commit writes is those bytes again)."""
        for source, start, raw in self._core.unpersisted(before):
            bucket = decode_bucket(raw)
            if not isinstance(bucket, Bucket):  # (the core's encoder is ours: never reached)
                raise ValueError(f"bucket {source} at {start}: {bucket.reason}")
            yield source, start, bucket

    def persisted(self, before: int) -> None:
        self._core.mark_persisted(before)

    def forget(self, source: str) -> None:
        self._core.forget_unpersisted(source)
