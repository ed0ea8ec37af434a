"""The impression and click topics, read in a consumer group: records, rebalances, commits.

Only Kafka I/O lives here. A revocation asks ``on_revoke`` what to commit for the revoked
partitions and commits it before they move (kafka-python runs listeners on its I/O loop, so the
listener is the async kind and awaits the commit); an assignment is queued and handed out by
:meth:`EventStream.take_assignment` after the poll that caused it, before any record of the new
assignment is processed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka import AsyncConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.errors import KafkaError
from kafka.structs import OffsetAndMetadata

from streameval.errors import KafkaUnavailableError
from streameval.kafka.assignor import CoPartitionedAssignor
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.records import RawRecord

_LOG = logging.getLogger(__name__)


def source_of(topic: str, partition: int) -> str:
    """The pipeline's name of a partition: ``topic/partition``."""
    return f"{topic}/{partition}"


Commits = Mapping[TopicPartition, tuple[int, Checkpoint]]


class _Listener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, stream: EventStream) -> None:
        self._stream = stream

    async def on_partitions_revoked(self, revoked: Any) -> None:
        offsets = self._stream._on_revoke(set(revoked), False)
        if offsets:
            try:
                await self._stream._commit_future(offsets)
            except KafkaError as exc:
                _LOG.warning("commit of revoked partitions failed: %s", exc)

    async def on_partitions_lost(self, lost: Any) -> None:
        self._stream._on_revoke(set(lost), True)  # lost: nothing may be committed

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self._stream._assignment = set(assigned)


class EventStream:
    def __init__(
        self,
        topics: Sequence[str],
        *,
        group_id: str,
        client: Mapping[str, object],
        auto_offset_reset: str,
        on_revoke: Callable[[set[TopicPartition], bool], Commits],
        max_poll_records: int = 5000,
        session_timeout_ms: int = 45_000,
    ) -> None:
        self._on_revoke = on_revoke
        self._auto_offset_reset = auto_offset_reset
        self._assignment: set[TopicPartition] | None = None
        try:
            self._consumer = KafkaConsumer(
                **client,
                group_id=group_id,
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

    @property
    def consumer(self) -> Any:
        return self._consumer

    def take_assignment(self) -> set[TopicPartition] | None:
        """The partitions assigned by the last poll's rebalance, once; None if none happened."""
        assignment, self._assignment = self._assignment, None
        return assignment

    # --- reading ----------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> list[RawRecord]:
        batches = self._consumer.poll(timeout_ms=timeout_ms)
        out: list[RawRecord] = []
        for records in batches.values():
            out.extend(RawRecord.from_consumer_record(r) for r in records)
        return out

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assignment() or ())

    def checkpoints(self, partitions: set[TopicPartition]) -> dict[TopicPartition, Checkpoint]:
        """The checkpoint committed with each partition's offset, where there is one of ours."""
        out: dict[TopicPartition, Checkpoint] = {}
        for tp in partitions:
            committed = self._consumer.committed(tp, metadata=True)
            if committed is not None:
                cp = Checkpoint.decode(committed.metadata)
                if cp is not None:
                    out[tp] = cp
        return out

    def rewind(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        """Seek each partition back to its committed offset, so that reading restarts where the
        commit says the state must be rebuilt from. kafka-python keeps the fetch position of a
        partition that stays with this member through a rebalance (and may have fetched ahead),
        so a new assignment alone does not go back. Without a commit: the beginning when reading
        from the earliest, else the partition stays where it is. Returns the partitions moved
        (records already polled from them will be read again)."""
        moved = set()
        for tp in partitions:
            committed = self._consumer.committed(tp)
            if committed is not None:
                self._consumer.seek(tp, committed)
            elif self._auto_offset_reset == "earliest":
                self._consumer.seek_to_beginning(tp)
            else:
                continue
            moved.add(tp)
        return moved

    def end_offsets(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        if not partitions:
            return {}
        ends: dict[TopicPartition, int] = self._consumer.end_offsets(list(partitions))
        return ends

    def highwater(self, tp: TopicPartition) -> int | None:
        """The log end seen by the last fetch of ``tp`` (None before one)."""
        hw: int | None = self._consumer.highwater(tp)
        return hw

    def position(self, tp: TopicPartition) -> int | None:
        try:
            pos: int | None = self._consumer.position(tp, timeout_ms=1000)
        except KafkaError:
            return None
        return pos

    def commit(self, offsets: Commits) -> None:
        """Commit synchronously (from the poll loop, never from a listener)."""
        if offsets:
            self._consumer.commit(_with_metadata(offsets))

    def _commit_future(self, offsets: Commits) -> Any:
        return self._consumer.commit_async(_with_metadata(offsets))

    def close(self) -> None:
        try:
            self._consumer.close(autocommit=False)
        except KafkaError as exc:  # pragma: no cover - best effort at shutdown
            _LOG.warning("closing the consumer failed: %s", exc)


def _with_metadata(offsets: Commits) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: OffsetAndMetadata(off, cp.encode(), -1) for tp, (off, cp) in offsets.items()}
