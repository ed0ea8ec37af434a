"""The consumers' per-query sums kept in the native engine's core (docs/native.md "Detector
sums in the core"): :class:`CoreStash`, an ``EngineCore``'s sums of one source as a
:class:`~streameval.detect.stash.SumsStash`, and :func:`feed_sums`, which hands them to the
:class:`~.consumers.FedBySums` consumers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streameval.detect.stash import BucketData, SumsStash
from streameval.engine.consumers import LISTS, FedBySums, ListConsumer
from streameval.values import IMPLICIT, JUDGED, Segment


class CoreStash:
    """The open buckets of one relevance source's per-query sums kept by an ``EngineCore``
    (:class:`~streameval.engine.consumers.SumsStash`, ``native/src/core_sums.rs``): what a
    :class:`~streameval.engine.consumers.FedBySums` consumer reads instead of its own
    :class:`~streameval.detect.stash.Stash` (docs/native.md "Detector sums in the core")."""

    __slots__ = ("_core", "_relevance")

    def __init__(self, core: Any, relevance: str) -> None:
        self._core = core
        self._relevance = relevance

    @property
    def ignored(self) -> int:
        n: int = self._core.sums_ignored(self._relevance)
        return n

    @ignored.setter
    def ignored(self, value: int) -> None:  # (only ever raised: ``Detectors.ingest``)
        self._core.sums_add_ignored(self._relevance, value - self.ignored)

    @property
    def closed(self) -> int | None:
        closed: int | None = self._core.sums_closed(self._relevance)
        return closed

    @closed.setter
    def closed(self, value: int | None) -> None:
        self._core.sums_set_closed(self._relevance, value)

    def add(self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]) -> None:
        self._core.sums_add(self._relevance, ts, list(segment), query_id, list(ndcg))

    def take(self, horizon_ms: int) -> list[tuple[int, BucketData]]:
        taken: list[tuple[int, BucketData]] = self._core.sums_take(self._relevance, horizon_ms)
        return taken

    def clear(self) -> None:
        self._core.sums_clear(self._relevance)

    def leave(self) -> None:
        """(No cached bucket to forget: every add looks its bucket up.)"""

    def merge(
        self, bucket_ms: int, segment: Segment, j: int, per_query: Mapping[str, Sequence[float]]
    ) -> None:
        items = [(q, (float(c), float(s), float(ss))) for q, (c, s, ss) in per_query.items()]
        self._core.sums_merge(self._relevance, bucket_ms, list(segment), j, items)


def feed_sums(core: Any, consumers: Sequence[ListConsumer]) -> bool:
    """The consumers' per-query sums kept in the core (docs/native.md "Detector sums in the
    core"): each :class:`~.consumers.FedBySums` consumer's implicit and judged sums and its
    lists counted (:data:`~.consumers.LISTS`) are the core's, unless another consumer took
    that source first (another source, e.g. the debiased one, stays its own: the core never
    folds with ``[propensity] enabled``). True when every consumer is then fed by the core
    (or there is none): a condition of ``CoreFolds._sums_inline``."""
    every = True
    taken: set[str] = set()
    for consumer in consumers:
        if not isinstance(consumer, FedBySums):
            every = False
            continue
        summed = consumer.summed()
        wanted = [r for r in summed if r in (IMPLICIT, JUDGED, LISTS)]
        if taken.intersection(wanted):
            every = False  # (one stash per source in the core)
            continue
        stashes: dict[str, SumsStash] = {}
        for relevance in wanted:
            bucket_ms, positions = summed[relevance]
            if core.watch_sums(relevance, bucket_ms, list(positions)):
                stashes[relevance] = CoreStash(core, relevance)
                taken.add(relevance)
        consumer.feed_from(stashes)
    return every
