"""Rebalances: what a revocation commits and forgets, and how a new assignment's state is
rebuilt (re-read from the commits, the window buckets loaded from the state topic where a
checkpoint says they were persisted)."""

from __future__ import annotations

import logging

from streameval.config import Settings
from streameval.engine.interface import Engine
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.kafka.partition import Partition
from streameval.kafka.source import Commits, Stream
from streameval.runtime.committer import Committer
from streameval.runtime.health import Health
from streameval.runtime.state_codecs import DaemonStateTopic

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name


class Rebalance:
    """Revoke, assign, rebuild."""

    def __init__(
        self,
        settings: Settings,
        pipeline: Engine,
        committer: Committer,
        health: Health,
        *,
        state: DaemonStateTopic | None,
        collector: PartitionCollector | None,
        feed: GroupFeed | None,
    ) -> None:
        self._settings = settings
        self._pipeline = pipeline
        self._committer = committer
        self._health = health
        self._state = state
        self._collector = collector
        self._feed = feed
        self._longest_ms = max(settings.evaluation.windows)
        #: records the re-reads needed that retention had deleted (since start)
        self.records_deleted = 0

    def on_revoke(self, partitions: set[Partition], lost: bool) -> Commits:
        """Inside poll: what to commit for the revoked partitions (nothing when lost)."""
        # not ready again before the next assignment is read up to its ends: the targets of
        # the last one may all be met already (librdkafka can hand over a whole log in the poll
        # that assigns it), which would make a member that holds nothing look ready
        self._health.unready(None)
        _LOG.info("%d partitions %s", len(partitions), "lost" if lost else "revoked")
        commits = {} if lost else self._committer.revoked(partitions)
        for tp in partitions:
            source = tp.source
            self._pipeline.forget_source(source)
            if self._collector is not None:
                self._collector.forget(source)
        return commits

    def rebuild(self, stream: Stream, assignment: set[Partition]) -> set[Partition]:
        """A new assignment: start the stream state afresh and re-read from the commits (returns
        the partitions rewound to their commit)."""
        pipeline = self._pipeline
        pipeline.reset()
        state = self._state
        if state is not None:
            state.read_to_end()  # what the previous owners wrote before they let go
            feed = self._feed
            assigned = {tp.source for tp in assignment}
            if feed is not None and not assigned <= feed.sources:
                # partitions were added: the group's are asked again (an admin request)
                feed.set_sources(state.partitions(self._settings.kafka.topics))
        checkpoints = stream.checkpoints(assignment)
        committed = stream.committed_offsets(assignment)
        rewound = stream.rewind(assignment)
        full_reread: set[Partition] = set()
        for tp in sorted(assignment):
            source = tp.source
            pipeline.add_source(source)
            if self._collector is not None and state is not None:
                # its detector buckets before its progress are written: not collected again
                self._collector.assign(source, state.table.detection.progress(source))
            cp = checkpoints.get(tp)
            if cp is None:
                continue
            persisted = cp.persisted_before if state is not None else None
            if persisted is not None and state is not None and state.table.is_bad(source):
                _LOG.warning("%s: its state records are unreadable; re-reading it in full", source)
                state.table.clear_bad(source)
                full_reread.add(tp)
                persisted = None
            if persisted is not None and state is not None:
                since = persisted - self._longest_ms - self._settings.evaluation.bucket
                for first_ms, bucket in state.table.buckets(source, since, persisted):
                    pipeline.load_bucket(first_ms, bucket)
            pipeline.restore_source(source, cp.horizon_ms, cp.next_offset, persisted)
            if persisted is not None:
                self._committer.restored(source, persisted)
        if full_reread:
            stream.seek_to_beginning(full_reread)
            rewound |= full_reread
        self._note_deleted(stream.beginning_offsets(assignment), committed, full_reread)
        # what the rebuild must read before it is ready: every partition not already at its end
        self._health.unready(
            {
                tp: end
                for tp, end in stream.end_offsets(assignment).items()
                if (start := stream.position(tp)) is None or start < end
            }
        )
        _LOG.info("assigned %d partitions; rebuilding state", len(assignment))
        return rewound

    def _note_deleted(
        self,
        starts: dict[Partition, int],
        committed: dict[Partition, int],
        full_reread: set[Partition],
    ) -> None:
        """Records between a partition's commit and its log start were deleted by retention
        before this re-read could read them: the state they held is lost (with the state topic
        only the open lists' part of it). Said loudly, and counted."""
        for tp, start in sorted(starts.items()):
            offset = 0 if tp in full_reread else committed.get(tp)
            if offset is None or start <= offset:
                continue
            self.records_deleted += start - offset
            _LOG.error(
                "%s/%d: %d records the state needs (offsets %d to %d) were deleted by the "
                "topic's retention before they could be re-read: the lists they held are lost. "
                "Keep retention.ms well above the longest window (and mind that records are "
                "deleted by their own timestamps)",
                tp.topic,
                tp.partition,
                start - offset,
                offset,
                start - 1,
            )
