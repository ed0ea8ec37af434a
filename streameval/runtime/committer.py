"""The commit protocol: what a commit of the daemon's offsets guarantees, and the order of the
writes that make it so.

**The guarantee.** When :meth:`Committer.commit` returns, for each partition it committed:

* the committed *offset* is the oldest record the state still needs, so a restart (or the next
  owner) that re-reads from it rebuilds the state this run had;
* the commit's *checkpoint* (:class:`~streameval.kafka.checkpoint.Checkpoint`) says how far this
  run had read and counted: what it had counted is rebuilt but never counted a second time;
* with the state topic, every window bucket of the partition that starts before the
  checkpoint's ``persisted_before`` was acknowledged by the state topic *before* the commit, so
  the re-read may load them instead of re-reading their records; the detector buckets and
  progress written with them likewise;
* every dead letter of a record before the commit was acknowledged by the dead-letter topic (or
  failed for good: logged and counted). A crash loses none: at least once, never lost.

A failure leaves the last commit in force, which keeps the same guarantee with an older point:
the next interval tries again.

**The steps**, in this order (each relies on the ones before it):

1. *Persist* (state topic only): write the buckets completed since the last commit, tombstone
   those no window of the last **committed** checkpoint may still load, write the detector
   buckets, pair counts, progress and (one instance) the detectors' snapshot, and wait for the
   acknowledgements; only then is the pipeline told they are persisted. A failure backs off
   (2 s, doubling, at most 30 s): meanwhile commits go on with the state point of the last write
   that succeeded (a valid checkpoint, only an older one), and the loop keeps reading instead of
   waiting on the state topic at every commit. The final commit always tries.
2. *Checkpoint*: per partition, the oldest offset the state still needs, with the horizon and
   read position counted through and the state point persisted (after step 1, so it includes
   what step 1 wrote).
3. *Dead letters*: wait for every dead letter queued so far (a ``KafkaError`` past the flush
   timeout: no commit).
4. *Commit* the offsets, each with its checkpoint as metadata.
5. *Remember* each partition's committed state point: the tombstone bound of the next step 1
   (a run killed between a flush and its commit is recovered from the checkpoint before it).

A revocation commits steps 2 to 4 only (inside the rebalance, no state-topic write): its
checkpoint keeps the last persisted state point.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafka.errors import KafkaError

from streameval.detect.persisted import PAIRS, SRM
from streameval.engine.interface import Engine
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.partition import Partition
from streameval.kafka.source import Commits, Stream
from streameval.runtime.dead_letters import DeadLetters
from streameval.runtime.state_codecs import DaemonStateTopic

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name


class Committer:
    """Owns persist → dead-letter flush → commit (see the module's docstring for what a commit
    guarantees)."""

    def __init__(
        self,
        pipeline: Engine,
        dead_letters: DeadLetters,
        *,
        clock: Callable[[], float],
        longest_ms: int,
        bucket_ms: int,
    ) -> None:
        self._pipeline = pipeline
        self._dead_letters = dead_letters
        self._clock = clock
        #: how far back of a committed state point a rebuild may still load buckets
        self._margin_ms = longest_ms + bucket_ms
        # set once the start has read the state topic (None: no state topic)
        self.state: DaemonStateTopic | None = None
        self.collector: PartitionCollector | None = None
        self.feed: GroupFeed | None = None
        # after a failed write to the state topic: not again before this (monotonic clock)
        self._persist_after = 0.0
        self._persist_backoff = 0.0
        # per partition: the state point (persisted_before) of its last successful commit
        self._committed_state: dict[str, int] = {}

    def restored(self, source: str, persisted_before: int) -> None:
        """A rebuild loaded ``source`` from the checkpoint with this state point."""
        self._committed_state[source] = persisted_before

    def commit(self, stream: Stream, partitions: set[Partition], *, final: bool = False) -> None:
        """Steps 1 to 5 for ``partitions`` (``final``: step 1 is tried despite a backoff).
        Raises ``KafkaError`` when step 3 or 4 fails: nothing was committed."""
        if not partitions:
            return
        self._try_persist(partitions, final=final)  # 1
        commits = self.commits(partitions)  # 2
        self._dead_letters.flush()  # 3
        stream.commit(commits)  # 4
        for tp, (_, checkpoint) in commits.items():  # 5
            if checkpoint.persisted_before is not None:
                self._committed_state[tp.source] = checkpoint.persisted_before

    def revoked(self, partitions: set[Partition]) -> Commits:
        """Steps 2 and 3 for partitions being revoked: what to commit for them (nothing when the
        dead letters are not acknowledged: the next owner reads them again, nothing is lost)."""
        commits = self.commits(partitions)
        if commits:
            try:
                self._dead_letters.flush()
            except KafkaError as exc:
                _LOG.warning("revoked partitions not committed: %s", exc)
                commits = {}
        return commits

    def commits(self, partitions: set[Partition]) -> Commits:
        """Step 2: per partition, the oldest offset the state still needs, and the checkpoint."""
        offsets = self._pipeline.commit_offsets()
        to_commit: dict[Partition, tuple[int, Checkpoint]] = {}
        for tp in partitions:
            source = tp.source
            if source in offsets:
                horizon, position = self._pipeline.counted_through(source)
                persisted = self._pipeline.persisted_before(source)
                to_commit[tp] = (offsets[source], Checkpoint(horizon, position, persisted))
        return to_commit

    def _try_persist(self, partitions: set[Partition], *, final: bool) -> None:
        """Step 1, unless a failure asked to wait (the commit then goes on with the state point
        of the last write that succeeded)."""
        now = self._clock()
        if not final and now < self._persist_after:
            return
        try:
            self._persist(partitions)
        except KafkaError as exc:
            self._persist_backoff = min(30.0, max(2.0, 2 * self._persist_backoff))
            self._persist_after = now + self._persist_backoff
            _LOG.warning(
                "state topic not written (%s); the commits keep the last state point, next "
                "try in %.0f s",
                exc,
                self._persist_backoff,
            )
        else:
            self._persist_backoff = 0.0

    def _persist(self, partitions: set[Partition]) -> None:
        """Write the buckets completed since the last commit to the state topic, tombstone those
        no window covers any more, and wait for the acknowledgements: only then may the commit
        rely on them (a failure raises, and the commit waits for the next interval)."""
        state = self.state
        if state is None:
            return
        before, buckets = self._pipeline.unpersisted_buckets()
        if before is None:
            return
        for source, start, bucket in buckets:
            state.write(source, start, bucket)
        # Tombstones only below what the last *committed* checkpoint may still load: a run killed
        # between this flush and its commit is recovered from the checkpoint before it.
        for tp in partitions:
            source = tp.source
            committed = self._committed_state.get(source)
            if committed is not None:
                state.expire((source,), committed - self._margin_ms)
        written = self._write_detection(state)
        state.flush()
        self._pipeline.mark_persisted(before)
        if self.collector is not None:
            self.collector.written(written)

    def _write_detection(self, state: DaemonStateTopic) -> list[tuple[str, str, int]]:
        """The detector buckets completed since the last write, then each partition's progress
        (after its buckets: a reader that sees the progress has them). Returns their keys."""
        collector = self.collector
        if collector is None:
            return []
        written = []
        for source, relevance, start, data in collector.ready():
            state.write_detector(source, relevance, start, data)
            written.append((source, relevance, start))
        for source, start, counts in collector.ready_pairs():
            state.write_pairs(source, start, counts)
            written.append((source, PAIRS, start))
        for source, start, arms in collector.ready_srm():
            state.write_srm(source, start, arms)
            written.append((source, SRM, start))
        table = state.table.detection
        for source, progress in collector.progress().items():
            if progress != table.progress(source):
                state.write_progress(source, progress)
        feed = self.feed
        if feed is not None:
            feed.step()
            # one instance writes the snapshots: the one that reads the group's first partition
            if feed.sources and min(feed.sources) in collector.sources:
                snapshot = feed.snapshot()
                if snapshot is not None:
                    state.write_snapshot(*snapshot)
        return written
