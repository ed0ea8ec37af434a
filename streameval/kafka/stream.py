"""The impression and click topics read with kafka-python (the default client): the
:class:`~streameval.kafka.source.Stream` behind ``kafka.consumer = "kafka-python"``.

Only Kafka I/O lives here. A revocation asks ``on_revoke`` what to commit for the revoked
partitions and commits it before they move (kafka-python runs listeners on its I/O loop, so the
listener is the async kind and awaits the commit); an assignment is queued and handed out by
:meth:`EventStream.take_assignment` after the poll that caused it, before any record of the new
assignment is processed.

Partitions are :class:`~streameval.kafka.partition.Partition` values at the interface, converted
to kafka-python's ``TopicPartition`` here, where the consumer is called.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from kafka import AsyncConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.errors import FencedInstanceIdError, KafkaError
from kafka.structs import OffsetAndMetadata

from streameval.errors import FencedError, KafkaUnavailableError
from streameval.kafka.assignor import CoPartitionedAssignor
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.partition import Partition
from streameval.kafka.records import Fetched, RawRecord
from streameval.kafka.source import Commits, OnRevoke

_LOG = logging.getLogger(__name__)

#: the longest a revocation waits for its commit before letting the rebalance go on
REVOKE_COMMIT_TIMEOUT_MS = 10_000
#: the longest a periodic commit holds the poll loop. Unbounded, kafka-python waits its request
#: timeout (30 s) for a coordinator that is not there: through a broker outage the loop sat in
#: ``commit_offsets_sync`` 30 s at a time (py-spy), once 13 s past the broker's return. A commit
#: that gives up is retried at the next interval.
COMMIT_TIMEOUT_MS = 5_000
#: a kafka-python ``ConsumerRecord``'s :data:`~streameval.kafka.records.Row`, made in C
_ROW = attrgetter("value", "offset", "timestamp")
_OFFSET = attrgetter("offset")


def _tp(p: Partition) -> TopicPartition:
    return TopicPartition(p.topic, p.partition)


def _partitions(tps: Iterable[Any]) -> set[Partition]:
    """kafka-python's ``TopicPartition`` values as :class:`Partition` values."""
    return {Partition(tp.topic, tp.partition) for tp in tps}


def _keyed(by_tp: Mapping[Any, int]) -> dict[Partition, int]:
    return {Partition(tp.topic, tp.partition): v for tp, v in by_tp.items()}


class _Listener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, stream: EventStream) -> None:
        self._stream = stream

    async def on_partitions_revoked(self, revoked: Any) -> None:
        offsets = self._stream._on_revoke(_partitions(revoked), False)
        if offsets:
            try:
                await self._stream._commit_bounded(offsets)
            except KafkaError as exc:
                _LOG.warning(
                    "commit of revoked partitions failed (their new owner re-reads from the "
                    "last commit): %s",
                    exc,
                )

    async def on_partitions_lost(self, lost: Any) -> None:
        self._stream._on_revoke(_partitions(lost), True)  # lost: nothing may be committed

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self._stream._assignment = _partitions(assigned)


class EventStream:
    """The :class:`~streameval.kafka.source.Stream` read with kafka-python, with
    :class:`CoPartitionedAssignor`.

    With ``group_instance_id`` the member is static (KIP-345): kafka-python then never sends
    LeaveGroup (``close`` included, as Java's consumer), so its partitions stay with the id
    until it comes back or the session times out. A member fenced by another one with the same
    id (kafka-python raises ``FencedInstanceIdError`` from the join, a commit, or the poll after
    an asynchronous commit; its heartbeat only stops) raises :class:`FencedError`."""

    def __init__(
        self,
        topics: Sequence[str],
        *,
        group_id: str,
        client: Mapping[str, object],
        auto_offset_reset: str,
        on_revoke: OnRevoke,
        max_poll_records: int = 5000,
        session_timeout_ms: int = 45_000,
        group_instance_id: str | None = None,
    ) -> None:
        self._on_revoke = on_revoke
        self._auto_offset_reset = auto_offset_reset
        self._instance_id = group_instance_id
        self._assignment: set[Partition] | None = None
        try:
            self._consumer = KafkaConsumer(
                **client,
                group_id=group_id,
                group_instance_id=group_instance_id,
                enable_auto_commit=False,
                auto_offset_reset=auto_offset_reset,
                partition_assignment_strategy=[CoPartitionedAssignor],
                max_poll_records=max_poll_records,
                session_timeout_ms=session_timeout_ms,
                heartbeat_interval_ms=max(1_000, session_timeout_ms // 3),
            )
        except KafkaError as exc:
            raise KafkaUnavailableError(f"cannot connect to Kafka: {exc}") from exc
        missing = [t for t in topics if not self._consumer.partitions_for_topic(t)]
        if missing:
            self._consumer.close(autocommit=False)
            raise KafkaUnavailableError(f"topics do not exist or cannot be read: {missing}")
        self._consumer.subscribe(topics=list(topics), listener=_Listener(self))
        # one metadata answer after subscribing, before the first join: kafka-python compares
        # the metadata its assignment was made with to the current one and rejoins when they
        # differ, and without this the first join saw none ({} != the topics' partitions): every
        # start was assigned twice, a rebalance and a rebuild more (~0.6 s, kafka-python debug log)
        try:
            self._consumer.topics()
        except KafkaError as exc:  # the first poll asks again
            _LOG.debug("metadata before the first join: %s", exc)

    @property
    def consumer(self) -> Any:
        return self._consumer

    def take_assignment(self) -> set[Partition] | None:
        """The partitions assigned by the last poll's rebalance, once; None if none happened."""
        assignment, self._assignment = self._assignment, None
        return assignment

    # --- reading ----------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> list[Fetched]:
        try:
            batches = self._consumer.poll(timeout_ms=timeout_ms)
        except FencedInstanceIdError as exc:
            raise FencedError(self._instance_id) from exc
        to_raw = RawRecord.from_consumer_record
        out = [
            Fetched(tp.topic, tp.partition, map(_ROW, records), records, _OFFSET, to_raw)
            for tp, records in batches.items()
            if records
        ]
        if not out:
            self._validate_positions()
        return out

    def _validate_positions(self) -> None:
        """After an empty poll: ask each partition's position, which runs the offset validation
        a new leader epoch asks for (KIP-320). kafka-python's poll alone does not
        (dpkp/kafka-python#3106): after a broker restart a partition awaiting validation was
        never fetched again, and the daemon read nothing more, silently. Cheap when nothing
        awaits validation (a local look-up)."""
        for tp in self._consumer.assignment() or ():
            try:
                self._consumer.position(tp, timeout_ms=1000)
            except KafkaError as exc:  # a broker still away: the next empty poll asks again
                _LOG.debug("position of %s not known yet: %s", tp, exc)
                return

    def assignment(self) -> set[Partition]:
        return _partitions(self._consumer.assignment() or ())

    def checkpoints(self, partitions: set[Partition]) -> dict[Partition, Checkpoint]:
        """The checkpoint committed with each partition's offset, where there is one of ours."""
        out: dict[Partition, Checkpoint] = {}
        for tp in partitions:
            committed = self._consumer.committed(_tp(tp), metadata=True)
            if committed is not None:
                cp = Checkpoint.decode(committed.metadata)
                if cp is not None:
                    out[tp] = cp
        return out

    def rewind(self, partitions: set[Partition]) -> set[Partition]:
        """Seek each partition back to its committed offset, so that reading restarts where the
        commit says the state must be rebuilt from. kafka-python keeps the fetch position of a
        partition that stays with this member through a rebalance (and may have fetched ahead),
        so a new assignment alone does not go back. Without a commit: the beginning when reading
        from the earliest, else the partition stays where it is. Returns the partitions moved
        (records already polled from them will be read again)."""
        moved = set()
        for tp in partitions:
            committed = self._consumer.committed(_tp(tp))
            if committed is not None:
                self._consumer.seek(_tp(tp), committed)
            elif self._auto_offset_reset == "earliest":
                self._consumer.seek_to_beginning(_tp(tp))
            else:
                continue
            moved.add(tp)
        return moved

    def end_offsets(
        self, partitions: set[Partition], timeout_ms: int | None = None
    ) -> dict[Partition, int]:
        if not partitions:
            return {}
        ends = self._consumer.end_offsets([_tp(p) for p in partitions], timeout_ms=timeout_ms)
        return _keyed(ends)

    def beginning_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        if not partitions:
            return {}
        return _keyed(self._consumer.beginning_offsets([_tp(p) for p in partitions]))

    def committed_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        out: dict[Partition, int] = {}
        for tp in partitions:
            committed = self._consumer.committed(_tp(tp))
            if committed is not None:
                out[tp] = committed
        return out

    def seek_to_beginning(self, partitions: set[Partition]) -> None:
        if partitions:
            self._consumer.seek_to_beginning(*(_tp(p) for p in partitions))

    def highwater(self, tp: Partition) -> int | None:
        """The log end seen by the last fetch of ``tp`` (None before one)."""
        hw: int | None = self._consumer.highwater(_tp(tp))
        return hw

    def position(self, tp: Partition) -> int | None:
        try:
            pos: int | None = self._consumer.position(_tp(tp), timeout_ms=1000)
        except KafkaError:
            return None
        return pos

    def commit(self, offsets: Commits) -> None:
        """Commit synchronously (from the poll loop, never from a listener), waiting at most
        :data:`COMMIT_TIMEOUT_MS` (then ``KafkaTimeoutError``)."""
        if offsets:
            try:
                self._consumer.commit(_with_metadata(offsets), timeout_ms=COMMIT_TIMEOUT_MS)
            except FencedInstanceIdError as exc:
                raise FencedError(self._instance_id) from exc

    def _commit_bounded(self, offsets: Commits) -> Any:
        """An awaitable commit that fails with ``KafkaTimeoutError`` after
        :data:`REVOKE_COMMIT_TIMEOUT_MS`. kafka-python runs the listener inside the join and
        awaits it without a bound: a commit whose answer never came would hold this member out
        of the group, and the whole group with it (the others wait in JoinGroup for up to the
        rebalance timeout), while ``poll`` never returns. A commit that fails only costs the
        new owner a re-read from the last periodic commit."""
        future = self._consumer.commit_async(_with_metadata(offsets))
        manager = getattr(getattr(self._consumer, "_coordinator", None), "_manager", None)
        if manager is None or not hasattr(manager, "wait_for"):  # pragma: no cover - other versions
            return future
        return manager.wait_for(future, REVOKE_COMMIT_TIMEOUT_MS)

    def close(self) -> None:
        try:
            self._consumer.close(autocommit=False)
        except KafkaError as exc:  # pragma: no cover - best effort at shutdown
            _LOG.warning("closing the consumer failed: %s", exc)


def _with_metadata(offsets: Commits) -> dict[TopicPartition, OffsetAndMetadata]:
    """Each offset with its checkpoint, NUL-terminated: librdkafka reads commit metadata as a C
    string and, without the terminator kafka-python does not write, reads past its end
    (confluentinc/librdkafka#4649: garbage or an undecodable string, measured on about one read
    in eight); :meth:`Checkpoint.decode` drops the NUL again."""
    return {
        _tp(tp): OffsetAndMetadata(off, cp.encode() + "\x00", -1)
        for tp, (off, cp) in offsets.items()
    }
