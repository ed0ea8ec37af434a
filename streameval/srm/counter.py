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

from dataclasses import replace

from streameval.snapshot import Snapshot
from streameval.srm.arms import ArmOf
from streameval.srm.partitioned import SrmStash
from streameval.srm.sequential import SrmTest
from streameval.values import ScoredList


class SrmCounter:
    """Lists per bucket and arm, closed into the test in order (a ``JudgedEarlyConsumer`` that
    declines judged scores: it is told of a re-read, :meth:`reset`)."""

    takes_judged = False

    def __init__(self, test: SrmTest, arm_of: ArmOf, bucket_ms: int) -> None:
        self.test = test
        self._arm_of = arm_of
        self._stash = SrmStash(bucket_ms)

    @property
    def ignored(self) -> int:
        """Lists handed again for a bucket already closed (a re-read): not counted twice."""
        return self._stash.ignored

    def add(self, scored: ScoredList) -> None:
        self._stash.add(scored.timestamp, self._arm_of(scored.segment))

    def advance(self, horizon_ms: int) -> None:
        for b, counts in self._stash.take(horizon_ms):
            self.test.close(b, counts)

    def add_judged(self, scored: ScoredList) -> None:  # (declined: never called)
        return

    def advance_judged(self, watermark_ms: int) -> None:
        return

    def reset(self) -> None:
        """The stream is re-read from the last commit: open buckets are handed again."""
        self._stash.clear()

    def into_snapshot(self, snapshot: Snapshot) -> Snapshot:
        return replace(snapshot, srm=self.test.row())
