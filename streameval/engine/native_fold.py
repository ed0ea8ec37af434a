"""The fold of a finalized list in the native engine's core (docs/native.md "The fold in the
core"): :class:`CoreFolds`, the part of :class:`~.native_pipeline.NativePipeline` that decides
it and hands the core's lists on, and the core's state as the coordinator reads it.

With the fold in the core, a finalized list's window buckets, since-start totals, buckets for the
state topic and judge-tracker bookkeeping live in ``streameval._native.EngineCore``. The classes
below are that state as the shared coordinator reads it (:class:`~streameval.windows.WindowStore`,
:class:`~streameval.windows.Totals`, :class:`~streameval.windows.persisted.SourceBuckets`): the
same calls, answered from the core, the same objects built for the snapshot and checkpoints.
Folding a list goes through the core itself (``EngineCore.finalize_folded`` and ``fold_list``),
never through these (their ``add`` and ``count_list`` refuse).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from streameval.config import EvaluationSettings, JudgesSettings, PropensitySettings
from streameval.durations import format_duration
from streameval.engine.consumers import FedBySourceSums
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_sums import feed_sums
from streameval.interleave import InterleavingStore
from streameval.join import OpenList
from streameval.score.lists import judged_only
from streameval.snapshot import (
    CumulativeRow,
    EngagementRow,
    FreshnessRow,
    Moments,
    NdcgRow,
    QueryClassCoverageRow,
    Snapshot,
)
from streameval.values import RELEVANCE_SOURCES, ScoredList
from streameval.windows import Totals, WindowStore
from streameval.windows.persisted import EncodedBucket, SourceBuckets, encode_bucket
from streameval.windows.spec import WindowSpec
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
        """A bucket read back from the state topic, through its codec (an ``EncodedBucket``'s
        bytes as they are: not decoded in Python)."""
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
        """Encoded by the core in the state topic's codec, and held so (``EncodedBucket``):
        a commit writes those bytes as they are, and nothing decodes them unless a Python
        reader asks for a field (decoding each cost ~320 µs, and encoding it again for the
        state topic more: docs/native.md "The restart's fixed costs")."""
        for source, start, raw in self._core.unpersisted(before):
            yield source, start, EncodedBucket(raw)

    def persisted(self, before: int) -> None:
        self._core.mark_persisted(before)

    def forget(self, source: str) -> None:
        self._core.forget_unpersisted(source)


class CoreFolds(Coordinator):
    """The native engine's part that folds the lists in its core (``_core``, an ``EngineCore``
    its ``_start_join`` made; ``_core_folds``: whether, from :meth:`_fold_in`)."""

    _core: Any
    _core_folds: bool
    #: every consumer is fed by the core's sums (or there is none): ``native_sums.feed_sums``
    _sums_fed: bool = False
    #: a consumer's sums are kept per source in the core, which then skips the judged scores
    #: below a restored source's floor itself (``native_sums.feed_sums``)
    _sums_per_source: bool = False

    def __init__(self, settings: EvaluationSettings, **options: Any) -> None:
        self._judges_settings: JudgesSettings | None = options.get("judges")
        propensity: PropensitySettings | None = options.get("propensity")
        self._propensity_on = propensity is not None and propensity.enabled
        super().__init__(settings, **options)

    def _folded_in_core(self, handed: bool, scored: ScoredList) -> None:
        """A list the core scored and folded: its early judged score if the pass did not take
        it (as ``NativePipeline._fold``), then ``on_scored`` and the consumers."""
        if self._early and not handed and not self._judged.below_floor(scored):  # type: ignore[arg-type]
            self._judged.hand_scored(judged_only(scored))
        if self._on_scored is not None:
            self._on_scored(scored)
        for consumer in self._consumers:
            consumer.add(scored)

    def _fold_scored(self, lst: OpenList, scored: ScoredList) -> None:
        """As :meth:`.coordinator.Coordinator._fold_scored`; with the fold in the core, the
        trust signals' sources and interleaving here, then the core folds the list."""
        if not self._core_folds:
            super()._fold_scored(lst, scored)
            return
        scored = self._signals.score(lst, scored)
        persisted = self._persisted_before.get(lst.source) if self._persisted_before else None
        folded = persisted is None or lst.timestamp >= persisted
        self._core.fold_list(scored, lst.doc_ids, lst.counted_before, folded)
        if folded:
            for windowed in self._windowed:
                windowed.add(scored)
        if self._on_scored is not None:
            self._on_scored(scored)
        for consumer in self._consumers:
            consumer.add(scored)

    def _start_stream(self) -> None:
        super()._start_stream()
        if self._core_folds:  # the windows and the buckets for the state topic: the core's
            self._windows = CoreWindows(self._core)
            if self._recovery.unpersisted is not None:
                self._recovery.unpersisted = CoreBuckets(self._core)
        self._sync_sums()

    def _fold_in(self, core: Any) -> bool:
        """Fold the lists in the core (docs/native.md "The fold in the core"), unless a
        configuration needs the Python back half for every list: ``[propensity] enabled`` (the
        debiased source), or windowed consumers other than interleaving's own. (A batch with
        a list with teams, or scored once two judge families are seen, reaches the Python back
        half per list, and is folded in the core after: ``EngineCore.finalize_folded``.)"""
        if self._propensity_on or any(type(w) is not InterleavingStore for w in self._windowed):
            return False
        settings = self._settings
        judges = JudgesSettings() if self._judges_settings is None else self._judges_settings
        specs = [WindowSpec(w, settings.bucket) for w in settings.windows]
        core.set_fold(
            windows_ms=list(settings.windows),
            bucket_ms=settings.bucket,
            persist=self._recovery.unpersisted is not None,
            sources=[*RELEVANCE_SOURCES, *self._signals.extra_sources],
            families=list(judges.families),
            max_families=judges.max_families,
            agreement_windows=[(format_duration(w), w) for w in judges.agreement_windows],
            max_age=judges.max_age,
            head_queries=judges.head_queries,
            window_names=[s.name for s in specs],
            ks=list(settings.ks),
        )
        self._totals = CoreTotals(core)
        self._sums_fed = feed_sums(core, self._consumers)
        self._sums_per_source = any(isinstance(c, FedBySourceSums) for c in self._consumers)
        return True

    def _sums_inline(self) -> bool:
        """The one predicate of the core adding each list's NDCG to the detectors' sums itself,
        with no ``ScoredList`` built for Python: the fold in the core, every consumer fed by
        the core's sums (or none), no ``on_scored``, no judged floor of a restored source
        (``JudgedEarly.below_floor``: those lists are not handed to the early consumers)
        unless the sums are kept per source, where the core skips them itself. A
        batch that needs the Python back half (teams, two judge families) still gets its
        lists: ``EngineCore.finalize_folded``."""
        return (
            self._core_folds
            and self._sums_fed
            and self._on_scored is None
            and (self._sums_per_source or not self._judged.has_floors)
        )

    def _sync_sums(self) -> None:
        """Tell the core :meth:`_sums_inline` (at each new stream and each restored source)."""
        if self._core_folds:
            self._core.set_sums_inline(self._sums_inline())
            if self._sums_per_source:  # the judged floors, skipped in the core
                self._core.sums_clear_floors()
                for source, floor in self._judged.floors():
                    self._core.sums_set_floor(source, floor, self._settings.bucket)

    def restore_source(
        self,
        source: str,
        horizon_ms: int | None,
        next_offset: int,
        persisted_before: int | None = None,
    ) -> None:
        super().restore_source(source, horizon_ms, next_offset, persisted_before)
        self._sync_sums()

    def snapshot(self, *, consumer_lag: dict[tuple[str, int], int] | None = None) -> Snapshot:
        """As :meth:`.checkpoints.Checkpoints.snapshot`; with the fold in the core, the judge
        tracker's freshness and coverage rows are the core's."""
        snapshot = super().snapshot(consumer_lag=consumer_lag)
        if not self._core_folds or snapshot.judges is None:
            return snapshot
        freshness, coverage = self._core.judges_view(self.horizon)
        judges = replace(
            snapshot.judges,
            freshness=tuple(FreshnessRow(*row) for row in freshness),
            coverage_by_class=tuple(QueryClassCoverageRow(*row) for row in coverage),
        )
        return replace(snapshot, judges=judges)
