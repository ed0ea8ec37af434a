"""A partition of a topic read: the one value that names it, whichever client reads it.

:class:`Partition` is a ``(topic, partition)`` named tuple: it equals, sorts and hashes like
the plain tuple (and like a client's own tuple-based type, e.g. kafka-python's
``TopicPartition``), so a client module converts at its own boundary only. The pipeline names a
partition by its *source* string, ``topic/partition`` (:attr:`Partition.source`,
:func:`source_of`).
"""

from __future__ import annotations

from typing import NamedTuple


def source_of(topic: str, partition: int) -> str:
    """The pipeline's name of a partition: ``topic/partition``."""
    return f"{topic}/{partition}"


class Partition(NamedTuple):
    """A topic's partition."""

    topic: str
    partition: int

    @property
    def source(self) -> str:
        """The pipeline's name of it: ``topic/partition``."""
        return source_of(self.topic, self.partition)
