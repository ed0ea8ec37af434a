"""A consumer-group assignor that co-partitions: partition i of every topic goes to one member.

DESIGN §6: impressions and clicks are keyed by ``request_id`` and have equal partition counts, so
a list's events are in the same partition number of both topics. Giving partition i of each
subscribed topic to the same member makes them meet in one process. (kafka-python's range
assignor happens to do the same for equal counts; this one says so, and keeps doing it when
members subscribe to different topic sets or counts differ.)

Use: ``KafkaConsumer(..., partition_assignment_strategy=[CoPartitionedAssignor])``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Member:
    """A group member as the assignor sees it."""

    member_id: str
    topics: frozenset[str]
    #: set for static members (``group_instance_id``), which are ordered first, by this id
    group_instance_id: str | None = None


def member_order(members: Iterable[Member]) -> list[Member]:
    """Static members first (by instance id, stable across restarts), then dynamic by member id."""
    return sorted(
        members,
        key=lambda m: (m.group_instance_id is None, m.group_instance_id or "", m.member_id),
    )


def copartitioned_assignment(
    members: Sequence[Member], partitions: Mapping[str, Iterable[int]]
) -> dict[str, dict[str, list[int]]]:
    """``{member_id: {topic: [partition, …]}}``: partition i of a topic goes to the i-th (modulo
    their number) of the ordered members subscribed to that topic. When every member subscribes
    to the same topics, that is the same member for every topic: co-partitioned. Topics missing
    from ``partitions`` (no metadata) are left out.
    """
    ordered = member_order(members)
    result: dict[str, dict[str, list[int]]] = {m.member_id: {} for m in ordered}
    for topic in sorted({t for m in ordered for t in m.topics}):
        if topic not in partitions:
            continue
        owners = [m for m in ordered if topic in m.topics]
        for index in sorted(partitions[topic]):
            owner = owners[index % len(owners)]
            result[owner.member_id].setdefault(topic, []).append(index)
    return result


def copartition_problem(partition_counts: Mapping[str, int]) -> str | None:
    """A message when the topics' partition counts differ (co-partitioning impossible), else
    ``None``. For the daemon's start-up check."""
    if len(set(partition_counts.values())) <= 1:
        return None
    counts = ", ".join(f"{topic}={n}" for topic, n in sorted(partition_counts.items()))
    return f"topics must have the same number of partitions to be co-partitioned: {counts}"


class CoPartitionedAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """kafka-python assignor: partition i of every subscribed topic to the same member."""

    name = "streameval-copartitioned"
    version = 0

    @classmethod
    def assign(cls, cluster: Any, members: Sequence[Any]) -> dict[str, Any]:
        ours = [
            Member(
                member_id=m.member_id,
                topics=frozenset(m.metadata.topics),
                group_instance_id=getattr(m, "group_instance_id", None),
            )
            for m in members
        ]
        partitions: dict[str, set[int]] = {}
        for topic in sorted({t for m in ours for t in m.topics}):
            known = cluster.partitions_for_topic(topic)
            if known is None:
                log.warning("no partition metadata for topic %s: not assigned", topic)
                continue
            partitions[topic] = set(known)
        problem = copartition_problem({t: len(p) for t, p in partitions.items()})
        if problem is not None:
            log.warning(problem)
        assignment = copartitioned_assignment(ours, partitions)
        return {
            member_id: ConsumerProtocolAssignment(cls.version, sorted(topics.items()), b"")
            for member_id, topics in assignment.items()
        }

    @classmethod
    def metadata(cls, topics: Iterable[str]) -> Any:
        return ConsumerProtocolSubscription(cls.version, list(topics), b"")

    @classmethod
    def on_assignment(cls, assignment: Any, generation: int) -> None:
        return None
