"""The consumer of finalized lists that counts them per arm for the sample-ratio test
(DESIGN §12), in one process (``replay``, the demo, a daemon without a state topic).

Every finalized list counts once, whatever its outcome (scored, no_relevance, no click), in
the bucket of its impression (``windows.spec.bucket_start``) under its arm
(:mod:`streameval.srm.arms`). :meth:`SrmCounter.advance` closes every complete bucket once, in
event-time order, and feeds it to the test: the test depends on the events only, never on when
``advance`` is called. A daemon with a state topic counts per partition instead
(:mod:`streameval.srm.partitioned`) and tests the group's counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

from streameval.snapshot import Snapshot
from streameval.srm.arms import ArmOf
from streameval.srm.partitioned import ArmBucket, SrmStash
from streameval.srm.sequential import SrmTest
from streameval.values import ScoredList, Segment

#: per bucket: segment -> per watched k -> per query (count, sum, sum of squares)
_Counted = dict[Segment, list[dict[str, tuple[float, float, float]]]]

#: :data:`streameval.engine.consumers.LISTS` (not imported: the engine imports this package)
_LISTS = "lists"


class ListCounts(Protocol):
    """What the counter reads of the lists the engine counts per bucket and segment: the part
    of :class:`streameval.detect.stash.SumsStash` it uses (structural: neither the detectors
    nor the engine are imported here, the layers keep srm beside them)."""

    ignored: int
    closed: int | None

    def add(
        self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]
    ) -> None: ...

    def take(self, horizon_ms: int) -> list[tuple[int, _Counted]]: ...

    def clear(self) -> None: ...


def arms_taken(lists: ListCounts, horizon_ms: int, arm_of: ArmOf) -> list[tuple[int, ArmBucket]]:
    """The buckets of lists counted per segment (by the engine) the horizon completed, each as
    its lists per arm: what :meth:`SrmStash.take <streameval.srm.partitioned.SrmStash.take>`
    answers for the same lists."""
    out = []
    for b, data in lists.take(horizon_ms):
        # segments in the order their first list came: so do the arms
        counts: ArmBucket = {}
        for segment, per_k in data.items():
            arm = arm_of(segment)
            counts[arm] = counts.get(arm, 0) + int(per_k[0][""][0])
        out.append((b, counts))
    return out


class SrmCounter:
    """Lists per bucket and arm, closed into the test in order (a ``JudgedEarlyConsumer`` that
    declines judged scores: it is told of a re-read, :meth:`reset`)."""

    takes_judged = False

    def __init__(self, test: SrmTest, arm_of: ArmOf, bucket_ms: int) -> None:
        self.test = test
        self._arm_of = arm_of
        self._stash = SrmStash(bucket_ms)
        #: the lists counted per bucket and segment by the engine (``feed_from``), else None
        self._lists: ListCounts | None = None

    @property
    def ignored(self) -> int:
        """Lists handed again for a bucket already closed (a re-read): not counted twice."""
        return self._stash.ignored if self._lists is None else self._lists.ignored

    def add(self, scored: ScoredList) -> None:
        if self._lists is not None:
            self._lists.add(scored.timestamp, scored.segment, "", (0.0,))
            return
        self._stash.add(scored.timestamp, self._arm_of(scored.segment))

    def advance(self, horizon_ms: int) -> None:
        if self._lists is not None:
            for b, counts in arms_taken(self._lists, horizon_ms, self._arm_of):
                self.test.close(b, counts)
            return
        for b, counts in self._stash.take(horizon_ms):
            self.test.close(b, counts)

    # --- FedBySums (streameval.engine.consumers): the lists counted by the engine ---------

    def summed(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """The lists per bucket and segment (one value per list: its count is the lists')."""
        return {_LISTS: (self._stash.bucket_ms, (0,))}

    def feed_from(self, stashes: Mapping[str, ListCounts]) -> None:
        lists = stashes.get(_LISTS)
        if lists is not None:
            lists.closed, lists.ignored = self._stash.closed, self._stash.ignored
            self._lists = lists

    def add_judged(self, scored: ScoredList) -> None:  # (declined: never called)
        return

    def advance_judged(self, watermark_ms: int) -> None:
        return

    def reset(self) -> None:
        """The stream is re-read from the last commit: open buckets are handed again."""
        self._stash.clear()
        if self._lists is not None:
            self._lists.clear()

    def into_snapshot(self, snapshot: Snapshot) -> Snapshot:
        return replace(snapshot, srm=self.test.row())
