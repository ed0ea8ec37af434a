"""CoPartitionedAssignor: partition i of every subscribed topic goes to one group member."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, TopicPartition

from streameval.kafka.assignor import (
    CoPartitionedAssignor,
    Member,
    copartition_problem,
    copartitioned_assignment,
)

# Seconds allowed for a rebalance to settle; the waits end as soon as it did. Generous: on a
# loaded 2-core machine a rebalance can take tens of seconds.
SETTLE_S = 120.0


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


class _Member(threading.Thread):
    """One group member polling in a thread of its own, as each daemon does in its process
    (two members polled in turn from one thread can starve each other's rebalance)."""

    def __init__(self, bootstrap: str, group: str, topics: list[str]) -> None:
        super().__init__(daemon=True)
        self._args = (bootstrap, group, topics)
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self._assignment: set[TopicPartition] = set()
        self.error: BaseException | None = None

    def run(self) -> None:
        consumer = _consumer(*self._args)
        try:
            while not self._stop_event.is_set():
                consumer.poll(timeout_ms=100)
                with self._lock:
                    self._assignment = set(consumer.assignment() or ())
        except BaseException as exc:  # surfaced by the test
            self.error = exc
        finally:
            consumer.close()

    def assignment(self) -> set[TopicPartition]:
        with self._lock:
            return set(self._assignment)

    def leave(self) -> None:
        self._stop_event.set()
        self.join(timeout=60)


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline and not condition():
        time.sleep(0.1)


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
    everything = {TopicPartition(t, p) for t in topics for p in range(4)}
    first = _Member(kafka_bootstrap, group, topics)
    second = _Member(kafka_bootstrap, group, topics)
    first.start()
    second.start()
    try:
        # wait until the group settled on two non-empty assignments covering all 8 partitions
        _wait(
            lambda: (
                bool(first.assignment())
                and bool(second.assignment())
                and len(first.assignment()) + len(second.assignment()) == 8
            )
        )
        a, b = first.assignment(), second.assignment()
        assert a.isdisjoint(b)
        assert a | b == everything
        for mine in (a, b):
            assert _by_topic(mine, impressions) == _by_topic(mine, clicks)
            assert len(_by_topic(mine, impressions)) == 2
    finally:
        second.leave()
    try:
        _wait(lambda: first.assignment() == everything)
        assert first.assignment() == everything
        assert first.error is None and second.error is None
    finally:
        first.leave()
