"""What the daemon needs of the impression and click topics, read in a consumer group whose
members get partition i of every topic together: the client-neutral source protocol.

Partitions are :class:`~streameval.kafka.partition.Partition` values at this interface, and
records come as :class:`~streameval.kafka.records.Fetched` batches, whichever client reads (one
module per client: :mod:`~streameval.kafka.stream` for kafka-python,
:mod:`~streameval.kafka.confluent_stream` for confluent-kafka; :func:`~streameval.kafka.consumer.
open_stream` picks one). Failures of the brokers are raised as kafka-python's ``KafkaError``,
whichever client reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.partition import Partition
from streameval.kafka.records import Fetched

#: per partition: the offset to commit, and the checkpoint committed with it as metadata
Commits = Mapping[Partition, tuple[int, Checkpoint]]
#: ``on_revoke(partitions, lost)``: called inside :meth:`Stream.poll` before ``partitions`` move
#: to another member; returns what to commit for them (nothing when ``lost``: they have already
#: moved, and a commit could overwrite the new owner's)
OnRevoke = Callable[[set[Partition], bool], Commits]


class Stream(Protocol):
    """The impression and click topics as the daemon reads them.

    *Records*: :meth:`poll`. *Assigned*: :meth:`take_assignment`, then the rebuild's reads
    (:meth:`checkpoints`, :meth:`committed_offsets`, :meth:`rewind`, :meth:`seek_to_beginning`,
    :meth:`beginning_offsets`). *Revoked*: the ``on_revoke`` callback, inside :meth:`poll`.
    *Commit*: :meth:`commit`. *Lag* and idleness: :meth:`assignment`, :meth:`end_offsets`,
    :meth:`highwater`, :meth:`position`. *Close*: :meth:`close`."""

    def poll(self, timeout_ms: int) -> list[Fetched]:
        """The next records, per partition (rebalance callbacks run inside)."""
        ...

    def take_assignment(self) -> set[Partition] | None:
        """The partitions assigned by the last poll's rebalance, once; None if none happened."""
        ...

    def assignment(self) -> set[Partition]: ...

    def checkpoints(self, partitions: set[Partition]) -> dict[Partition, Checkpoint]:
        """The checkpoint committed with each partition's offset, where there is one of ours."""
        ...

    def rewind(self, partitions: set[Partition]) -> set[Partition]:
        """Go back to the committed offsets; the partitions whose already polled records will
        be read again (and are to be dropped)."""
        ...

    def end_offsets(
        self, partitions: set[Partition], timeout_ms: int | None = None
    ) -> dict[Partition, int]:
        """The log end of each partition, asked of the brokers now (``timeout_ms`` None: the
        client's default)."""
        ...

    def beginning_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        """The log start of each partition (moved on by retention), asked of the brokers now."""
        ...

    def committed_offsets(self, partitions: set[Partition]) -> dict[Partition, int]:
        """The group's committed offset of each partition that has one."""
        ...

    def seek_to_beginning(self, partitions: set[Partition]) -> None:
        """Read these partitions again from their log start (the full re-read)."""
        ...

    def highwater(self, tp: Partition) -> int | None:
        """The log end seen by the last fetch of ``tp`` (None before one)."""
        ...

    def position(self, tp: Partition) -> int | None:
        """The offset of the next record to be returned from ``tp`` (None if unknown)."""
        ...

    def commit(self, offsets: Commits) -> None:
        """Commit synchronously, each offset with its checkpoint as metadata."""
        ...

    def close(self) -> None: ...
