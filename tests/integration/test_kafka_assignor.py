"""CoPartitionedAssignor: partition i of every subscribed topic goes to one group member."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, TopicPartition

from streameval.kafka.assignor import (
    CoPartitionedAssignor,
    Member,
    copartition_problem,
    copartitioned_assignment,
)

# Poll rounds (100 ms each) allowed for a rebalance to settle; the loops end as soon as it did.
# Generous: on a loaded 2-core machine a rebalance can take tens of seconds.
MAX_ROUNDS = 600


def test_two_members_get_the_same_partition_numbers_of_both_topics() -> None:
    members = [
        Member("m-b", frozenset({"imp", "clk"})),
        Member("m-a", frozenset({"imp", "clk"})),
    ]
    got = copartitioned_assignment(members, {"imp": range(4), "clk": range(4)})
    # Ordered by member id: m-a takes 0 and 2, m-b takes 1 and 3 (i modulo 2), of both topics.
    assert got == {
        "m-a": {"clk": [0, 2], "imp": [0, 2]},
        "m-b": {"clk": [1, 3], "imp": [1, 3]},
    }


def test_more_members_than_partitions_and_static_members_first() -> None:
    members = [
        Member("dyn-1", frozenset({"t"})),
        Member("dyn-0", frozenset({"t"})),
        Member("zzz", frozenset({"t"}), group_instance_id="instance-a"),
    ]
    got = copartitioned_assignment(members, {"t": [1, 0]})
    # Order: the static member, then dyn-0, dyn-1; two partitions for three members.
    assert got == {"zzz": {"t": [0]}, "dyn-0": {"t": [1]}, "dyn-1": {}}


def test_members_with_different_subscriptions_each_cover_their_topics() -> None:
    members = [Member("a", frozenset({"x", "y"})), Member("b", frozenset({"x"}))]
    got = copartitioned_assignment(members, {"x": range(3), "y": range(3)})
    assert got == {"a": {"x": [0, 2], "y": [0, 1, 2]}, "b": {"x": [1]}}


def test_copartition_problem_names_the_counts() -> None:
    assert copartition_problem({"a": 4, "b": 4}) is None
    assert copartition_problem({}) is None
    problem = copartition_problem({"b": 3, "a": 4})
    assert problem is not None
    assert "a=4, b=3" in problem


def _consumer(bootstrap: str, group: str, topics: list[str]) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        partition_assignment_strategy=[CoPartitionedAssignor],
        heartbeat_interval_ms=500,
    )
    consumer.subscribe(topics)
    return consumer


def _by_topic(assignment: set[TopicPartition], topic: str) -> set[int]:
    return {tp.partition for tp in assignment if tp.topic == topic}


@pytest.mark.kafka
def test_group_members_are_copartitioned_and_the_survivor_takes_all(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    impressions, clicks = topic_factory(4, prefix="imp"), topic_factory(4, prefix="clk")
    topics = [impressions, clicks]
    group = f"group-{impressions}"
    first = _consumer(kafka_bootstrap, group, topics)
    second = _consumer(kafka_bootstrap, group, topics)
    try:
        # Both poll until the group settled on two non-empty assignments covering 8 partitions.
        for _ in range(MAX_ROUNDS):
            first.poll(timeout_ms=100)
            second.poll(timeout_ms=100)
            a, b = first.assignment() or set(), second.assignment() or set()
            if a and b and len(a) + len(b) == 8:
                break
        a, b = set(first.assignment()), set(second.assignment())
        assert a.isdisjoint(b)
        assert a | b == {TopicPartition(t, p) for t in topics for p in range(4)}
        for mine in (a, b):
            assert _by_topic(mine, impressions) == _by_topic(mine, clicks)
            assert len(_by_topic(mine, impressions)) == 2
    finally:
        second.close()
    try:
        for _ in range(MAX_ROUNDS):
            first.poll(timeout_ms=100)
            if len(first.assignment() or ()) == 8:
                break
        assert set(first.assignment()) == {TopicPartition(t, p) for t in topics for p in range(4)}
    finally:
        first.close()
