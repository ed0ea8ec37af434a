"""The consumers' per-query sums kept in the native engine's core (docs/native.md "Detector
sums in the core", "The daemon's collector fed by sums"): :class:`CoreStash`, an
``EngineCore``'s sums of one relevance source (of all lists, or of one source partition's) as a
:class:`~streameval.detect.stash.SumsStash`; :class:`CoreSources`, its sums per source
partition; and :func:`feed_sums`, which hands them to the :class:`~.consumers.FedBySums` and
:class:`~.consumers.FedBySourceSums` consumers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from streameval.detect.stash import BucketData, SumsStash
from streameval.engine.consumers import LISTS, FedBySourceSums, FedBySums, ListConsumer
from streameval.values import IMPLICIT, JUDGED, Segment


class CoreStash:
    """The open buckets of one relevance source's per-query sums kept by an ``EngineCore``
    (:class:`~streameval.engine.consumers.SumsStash`, ``native/src/core_sums.rs``): what a
    :class:`~streameval.engine.consumers.FedBySums` consumer reads instead of its own
    :class:`~streameval.detect.stash.Stash` (docs/native.md "Detector sums in the core").
    ``source``: the sums of that source partition's lists (kept per source), else of all."""

    __slots__ = ("_core", "_relevance", "_source")

    def __init__(self, core: Any, relevance: str, source: str | None = None) -> None:
        self._core = core
        self._relevance = relevance
        self._source = source

    @property
    def ignored(self) -> int:
        n: int = self._core.sums_ignored(self._relevance, self._source)
        return n

    @ignored.setter
    def ignored(self, value: int) -> None:  # (only ever raised: ``Detectors.ingest``)
        self._core.sums_add_ignored(self._relevance, value - self.ignored, self._source)

    @property
    def closed(self) -> int | None:
        closed: int | None = self._core.sums_closed(self._relevance, self._source)
        return closed

    @closed.setter
    def closed(self, value: int | None) -> None:
        self._core.sums_set_closed(self._relevance, value, self._source)

    def add(self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]) -> None:
        core, relevance = self._core, self._relevance
        core.sums_add(relevance, ts, list(segment), query_id, list(ndcg), self._source)

    def take(self, horizon_ms: int) -> list[tuple[int, BucketData]]:
        core = self._core
        taken: list[tuple[int, BucketData]] = core.sums_take(
            self._relevance, horizon_ms, self._source
        )
        return taken

    def clear(self) -> None:
        self._core.sums_clear(self._relevance, self._source)

    def leave(self) -> None:
        """(No cached bucket to forget: every add looks its bucket up.)"""

    def close_before(self, point: int) -> None:
        self._core.sums_close_before(self._relevance, point, self._source)

    def merge(
        self, bucket_ms: int, segment: Segment, j: int, per_query: Mapping[str, Sequence[float]]
    ) -> None:
        items = [(q, (float(c), float(s), float(ss))) for q, (c, s, ss) in per_query.items()]
        self._core.sums_merge(self._relevance, bucket_ms, list(segment), j, items)


class CoreSources:
    """An ``EngineCore``'s sums per source partition
    (:class:`~streameval.detect.stash.SourceSums`): the core makes a source's at its first
    list, in that order."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:
        self._core = core

    def stash(self, source: str, relevance: str) -> SumsStash:
        return CoreStash(self._core, relevance, source)

    def sources(self) -> list[str]:
        sources: list[str] = self._core.sums_sources()
        return sources

    def open(self, source: str) -> None:
        self._core.sums_open(source)

    def forget(self, source: str) -> None:
        self._core.sums_forget(source)


def feed_sums(core: Any, consumers: Sequence[ListConsumer]) -> bool:
    """The consumers' per-query sums kept in the core (docs/native.md "Detector sums in the
    core"): each :class:`~.consumers.FedBySums` consumer's implicit and judged sums and its
    lists counted (:data:`~.consumers.LISTS`) are the core's, unless another consumer took
    that source first (another source, e.g. the debiased one, stays its own: the core never
    folds with ``[propensity] enabled``); a :class:`~.consumers.FedBySourceSums` consumer's
    (one, every source it sums among those) are the core's per source partition
    (docs/native.md "The daemon's collector fed by sums"). True when every consumer is then
    fed by the core (or there is none): a condition of ``CoreFolds._sums_inline``."""
    every = True
    taken: set[str] = set()
    per_source = False
    for consumer in consumers:
        if isinstance(consumer, FedBySourceSums):
            summed = consumer.summed()
            wanted = [r for r in summed if r in (IMPLICIT, JUDGED, LISTS)]
            if per_source or len(wanted) < len(summed) or taken.intersection(wanted):
                every = False  # (one consumer per source in the core)
            elif wanted:  # (with nothing to sum, its own stashes stay: nothing reaches them)
                for relevance in wanted:
                    bucket_ms, positions = summed[relevance]
                    core.watch_sums(relevance, bucket_ms, list(positions), True)
                taken.update(wanted)
                per_source = True
                consumer.feed_per_source(CoreSources(core))
        elif isinstance(consumer, FedBySums):
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
        else:
            every = False
    return every
