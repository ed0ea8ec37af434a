"""The detectors' input per source partition, for the state topic (DESIGN §6, §9).

With several instances, no instance sees every list, so none can run the detectors on its own
lists and be exact. Instead each instance reduces the lists of the partitions it owns to
detector buckets (per partition, bucket and relevance source: per (segment, k) and query the
count, sum and sum of squares of NDCG@k), writes them to the state topic in step with its
commits, and every instance feeds the group's buckets to its detectors
(:mod:`streameval.group.feed`).

:class:`PartitionCollector` is that reduction: a consumer of finalized lists (and of judged
scores early) like the detectors themselves, fed by the pipeline through the same interface.
Buckets complete as they do for the detectors (implicit on the horizon, judged on the
watermark) and wait in :meth:`ready` until :meth:`written` says the state topic has them.

It also reduces interleaved lists to their outcome counts per partition and bucket (kind
``pairs``, :mod:`streameval.interleave.partitioned`; complete on the horizon), so that the
interleaving test too runs on the group's lists; with no detector configured it collects only
those. And, with the sample-ratio test on, every finalized list to its arm's count per partition
and bucket (kind ``srm``, :mod:`streameval.srm.partitioned`; complete on the horizon).

With the native engine its per-query sums and lists per segment are the core's, kept per
source partition (a :class:`~streameval.engine.consumers.FedBySourceSums`: docs/native.md "The
daemon's collector fed by sums"): the core adds each list itself and builds no ``ScoredList``
for it; the interleaving counts stay here (only lists with teams have outcomes, and those still
reach :meth:`PartitionCollector.add`).
"""

from __future__ import annotations

from streameval.detect.persisted import PAIRS, SRM, DetectorBucket, Progress
from streameval.detect.spec import DetectionSpec
from streameval.detect.stash import BucketData, SourceSums, Stash, SumsStash
from streameval.engine.consumers import LISTS
from streameval.interleave.partitioned import PairBucket, PairStash
from streameval.srm.arms import ArmOf
from streameval.srm.counter import arms_taken
from streameval.srm.partitioned import ArmBucket, SrmStash
from streameval.values import IMPLICIT, JUDGED, ScoredList, source_named


class PartitionCollector:
    """Detector buckets per source partition, until written (a ``JudgedEarlyConsumer``).

    ``spec`` None: no NDCG detector runs; only the interleaving counts are collected.
    ``arm_of``: the arm of a list's segment, when the sample-ratio test runs (else None)."""

    def __init__(
        self,
        spec: DetectionSpec | None,
        *,
        bucket_ms: int | None = None,
        arm_of: ArmOf | None = None,
    ) -> None:
        if spec is None and bucket_ms is None:
            raise ValueError("a collector without detectors needs its bucket_ms")
        self._bucket_ms = spec.bucket_ms if spec is not None else int(bucket_ms or 0)
        self._ks = () if spec is None else tuple(k for k, _ in spec.k_index)
        self._positions = () if spec is None else tuple(i for _, i in spec.k_index)
        self._relevance = () if spec is None else tuple(spec.relevance)
        self._implicit = IMPLICIT in self._relevance
        #: source -> relevance -> its open buckets (``closed``: the progress point)
        self._stash: dict[str, dict[str, SumsStash]] = {}
        #: source -> its open interleaving buckets
        self._pairs: dict[str, PairStash] = {}
        #: complete and not yet written: (source, relevance, bucket start) -> data
        self._ready: dict[tuple[str, str, int], BucketData] = {}
        #: complete and not yet written: (source, bucket start) -> counts per pair
        self._ready_pairs: dict[tuple[str, int], PairBucket] = {}
        self._arm_of = arm_of
        #: source -> its open buckets of lists per arm (with ``arm_of`` only)
        self._srm: dict[str, SrmStash] = {}
        #: complete and not yet written: (source, bucket start) -> lists per arm
        self._ready_srm: dict[tuple[str, int], ArmBucket] = {}
        self.takes_judged = JUDGED in self._relevance
        #: the engine's sums per source (:meth:`feed_per_source`), else None
        self._sums: SourceSums | None = None
        #: source -> its lists per bucket and segment, the engine's (with ``arm_of`` and
        #: :meth:`feed_per_source` only; then instead of ``_srm``)
        self._lists: dict[str, SumsStash] = {}

    def _of(self, source: str) -> dict[str, SumsStash]:
        stashes = self._stash.get(source)
        if stashes is None:
            if self._sums is not None:  # made in the engine, in the order it made them
                self._sums.open(source)
                self._sync()
                return self._stash[source]
            stashes = self._stash[source] = {
                r: Stash(self._bucket_ms, self._positions) for r in self._relevance
            }
            self._pairs[source] = PairStash(self._bucket_ms)
            if self._arm_of is not None:
                self._srm[source] = SrmStash(self._bucket_ms)
        return stashes

    # --- FedBySourceSums (streameval.engine.consumers): the engine's sums per source -------

    def summed(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """Per relevance source collected (and the lists counted, with ``arm_of``): (bucket_ms,
        the watched ks' positions), each kept per source partition."""
        summed = dict.fromkeys(self._relevance, (self._bucket_ms, self._positions))
        if self._arm_of is not None:
            summed[LISTS] = (self._bucket_ms, (0,))
        return summed

    def feed_per_source(self, sums: SourceSums) -> None:
        """Read and add to the engine's sums per source from now on (before any list)."""
        if self._stash:
            raise RuntimeError("a collector is fed by the engine's sums before any source")
        self._sums = sums

    def _sync(self) -> None:
        """Take up the sources the engine made sums for since the last look (at their first
        list, in that order), as :meth:`_of` would have at that list."""
        sums = self._sums
        if sums is None:
            return
        for source in sums.sources():
            if source not in self._stash:
                self._stash[source] = {r: sums.stash(source, r) for r in self._relevance}
                self._pairs[source] = PairStash(self._bucket_ms)
                if self._arm_of is not None:
                    self._lists[source] = sums.stash(source, LISTS)

    # --- the assignment -----------------------------------------------------------------------

    @property
    def sources(self) -> frozenset[str]:
        """The source partitions read here."""
        self._sync()
        return frozenset(self._stash)

    def assign(self, source: str, progress: Progress | None) -> None:
        """``source`` is read here from now on; its detector buckets before ``progress`` are in
        the state topic already (lists of them, re-read, are ignored)."""
        self._sync()
        stashes = self._of(source)
        for relevance, stash in stashes.items():
            point = None if progress is None else progress.of(relevance)
            if point is not None:
                stash.close_before(point)
        point = None if progress is None else progress.pairs
        if point is not None:
            self._pairs[source].close_before(point)
        point = None if progress is None else progress.srm
        if point is not None and source in self._srm:
            self._srm[source].close_before(point)
        if point is not None and source in self._lists:
            self._lists[source].close_before(point)

    def judged_floor(self, source: str) -> int | None:
        """The bucket start before which the judged buckets of ``source`` are in the state
        topic: the pipeline need not score its lists early (they would be ignored)."""
        self._sync()
        stash = self._stash.get(source, {}).get(JUDGED)
        return None if stash is None else stash.closed

    def forget(self, source: str) -> None:
        """``source`` is no longer read here: what it holds is dropped (its new owner re-reads
        it from the last commit)."""
        self._sync()
        if self._sums is not None and source in self._stash:
            self._sums.forget(source)
        self._lists.pop(source, None)
        self._stash.pop(source, None)
        self._pairs.pop(source, None)
        self._srm.pop(source, None)
        for srm_key in [key for key in self._ready_srm if key[0] == source]:
            del self._ready_srm[srm_key]
        for key in [key for key in self._ready if key[0] == source]:
            del self._ready[key]
        for pair_key in [key for key in self._ready_pairs if key[0] == source]:
            del self._ready_pairs[pair_key]

    # --- the consumer protocols ---------------------------------------------------------------

    def add(self, scored: ScoredList) -> None:
        if self._arm_of is not None:
            self._of(scored.source)
            if self._sums is not None:
                self._lists[scored.source].add(scored.timestamp, scored.segment, "", (0.0,))
            else:
                self._srm[scored.source].add(scored.timestamp, self._arm_of(scored.segment))
        interleaved = scored.interleaved
        if interleaved is not None and interleaved.outcomes:
            self._of(scored.source)
            self._pairs[scored.source].add(scored.timestamp, interleaved.outcomes)
        if not self._implicit:
            return
        source = source_named(scored.sources, IMPLICIT)
        if source is not None:
            self._of(scored.source)[IMPLICIT].add(
                scored.timestamp, scored.segment, scored.query_id, source.ndcg
            )

    def add_judged(self, scored: ScoredList) -> None:
        source = source_named(scored.sources, JUDGED)  # alone, or among the others
        if source is not None:
            self._of(scored.source)[JUDGED].add(
                scored.timestamp, scored.segment, scored.query_id, source.ndcg
            )

    def advance(self, horizon_ms: int) -> None:
        self._sync()
        self._take(IMPLICIT, horizon_ms)
        for source, stash in self._pairs.items():
            for b, counts in stash.take(horizon_ms):
                self._ready_pairs[source, b] = counts
        for source, srm in self._srm.items():
            for b, arms in srm.take(horizon_ms):
                self._ready_srm[source, b] = arms
        arm_of = self._arm_of
        if self._lists and arm_of is not None:  # (lists are counted with an arm_of only)
            for source, lists in self._lists.items():
                for b, arms in arms_taken(lists, horizon_ms, arm_of):
                    self._ready_srm[source, b] = arms

    def advance_judged(self, watermark_ms: int) -> None:
        self._sync()
        self._take(JUDGED, watermark_ms)

    def _take(self, relevance: str, point_ms: int) -> None:
        for source, stashes in self._stash.items():
            stash = stashes.get(relevance)
            if stash is not None:
                for b, data in stash.take(point_ms):
                    self._ready[source, relevance, b] = data

    def reset(self) -> None:
        """The stream is re-read from the last commit: open buckets are handed again."""
        self._sync()
        for lists in self._lists.values():
            lists.clear()
        for stashes in self._stash.values():
            for stash in stashes.values():
                stash.clear()
        for pairs in self._pairs.values():
            pairs.clear()
        for srm in self._srm.values():
            srm.clear()

    # --- what to write ------------------------------------------------------------------------

    def ready(self) -> list[tuple[str, str, int, DetectorBucket]]:
        """Complete buckets not yet written, as (source, relevance, start, data), oldest first
        per source (kept until :meth:`written`)."""
        out = []
        for (source, relevance, b), data in sorted(self._ready.items()):
            out.append((source, relevance, b, self._keyed(data)))
        return out

    def ready_pairs(self) -> list[tuple[str, int, PairBucket]]:
        """Complete interleaving buckets not yet written, as (source, start, counts), oldest
        first per source (kept until :meth:`written` names them with the kind ``pairs``)."""
        return [(source, b, counts) for (source, b), counts in sorted(self._ready_pairs.items())]

    def ready_srm(self) -> list[tuple[str, int, ArmBucket]]:
        """Complete buckets of lists per arm not yet written, as (source, start, counts), oldest
        first per source (kept until :meth:`written` names them with the kind ``srm``)."""
        return [(source, b, counts) for (source, b), counts in sorted(self._ready_srm.items())]

    def progress(self) -> dict[str, Progress]:
        """Per source read here: the points before which its buckets are complete (written once
        :meth:`ready`'s buckets are)."""
        self._sync()
        out = {}
        for source, stashes in self._stash.items():
            judged = stashes.get(JUDGED)
            implicit = stashes.get(IMPLICIT)
            out[source] = Progress(
                None if judged is None else judged.closed,
                None if implicit is None else implicit.closed,
                self._pairs[source].closed,
                self._srm[source].closed if source in self._srm else self._lists_closed(source),
            )
        return out

    def written(self, keys: list[tuple[str, str, int]]) -> None:
        """These buckets are acknowledged by the state topic."""
        for source, kind, b in keys:
            if kind == PAIRS:
                self._ready_pairs.pop((source, b), None)
            elif kind == SRM:
                self._ready_srm.pop((source, b), None)
            else:
                self._ready.pop((source, kind, b), None)

    def _keyed(self, data: BucketData) -> DetectorBucket:
        out: DetectorBucket = {}
        for segment, per_k in data.items():
            for k, per_query in zip(self._ks, per_k, strict=True):
                if per_query:
                    out[segment, k] = per_query
        return out

    def _lists_closed(self, source: str) -> int | None:
        lists = self._lists.get(source)
        return None if lists is None else lists.closed

    @property
    def ignored(self) -> int:
        """Lists re-read for buckets already written (not collected twice)."""
        self._sync()
        return (
            sum(s.ignored for stashes in self._stash.values() for s in stashes.values())
            + sum(p.ignored for p in self._pairs.values())
            + sum(s.ignored for s in self._srm.values())
            + sum(s.ignored for s in self._lists.values())
        )
