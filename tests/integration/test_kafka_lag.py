"""Consumer lag: records behind the log end per (topic, partition)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from streameval.kafka.lag import LagSampler, consumer_lag, records_behind

MAX_POLLS = 60


def test_records_behind_is_end_minus_position_never_negative() -> None:
    ends = {("t", 0): 10, ("t", 1): 5, ("t", 2): 7}
    positions = {("t", 0): 4, ("t", 1): 6}
    # t/0: 10-4; t/1: position past a stale end → 0; t/2: no position → left out.
    assert records_behind(ends, positions) == {("t", 0): 6, ("t", 1): 0}


class _CountingConsumer:
    """Stands in for a KafkaConsumer in the pacing test only: counts end-offset requests."""

    def __init__(self) -> None:
        self.requests = 0

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition("t", 0)}

    def end_offsets(self, partitions: list[TopicPartition], timeout_ms: int) -> dict:
        self.requests += 1
        return dict.fromkeys(partitions, 9)

    def position(self, tp: TopicPartition) -> int:
        return 5


def test_sampler_measures_at_most_once_per_interval() -> None:
    now = [100.0]
    consumer = _CountingConsumer()
    sampler = LagSampler(consumer, interval_s=5.0, clock=lambda: now[0])
    assert sampler.last == {}
    assert sampler.sample() == {("t", 0): 4}
    now[0] = 104.9
    assert sampler.sample() is None
    assert sampler.last == {("t", 0): 4}
    now[0] = 105.0
    assert sampler.sample() == {("t", 0): 4}
    assert consumer.requests == 2


@pytest.mark.kafka
def test_lag_follows_production_and_consumption(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(2, prefix="lag")
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    try:
        for i in range(10):
            producer.send(topic, value=b"x", partition=0 if i < 7 else 1).get(timeout=30)
        partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        assert consumer_lag(consumer) == {(topic, 0): 7, (topic, 1): 3}

        read = 0
        for _ in range(MAX_POLLS):
            read += sum(len(b) for b in consumer.poll(timeout_ms=200).values())
            if read >= 10:
                break
        assert consumer_lag(consumer) == {(topic, 0): 0, (topic, 1): 0}

        for _ in range(2):
            producer.send(topic, value=b"y", partition=0).get(timeout=30)
        assert consumer_lag(consumer) == {(topic, 0): 2, (topic, 1): 0}
    finally:
        producer.close()
        consumer.close()
