"""JudgmentReader: every reader reads the whole judgment topic, to its end, then follows it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka import KafkaProducer

from streameval.errors import KafkaUnavailableError
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.records import RawRecord

pytestmark = pytest.mark.kafka

MAX_POLLS = 60


def _produce(bootstrap: str, topic: str, items: list[tuple[bytes, bytes]]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for key, value in items:
            producer.send(topic, key=key, value=value, headers=[("h", b"1")]).get(timeout=30)
    finally:
        producer.close()


def _judgments(start: int, stop: int) -> list[tuple[bytes, bytes]]:
    return [(f"q{i}|doc{i}".encode(), f'{{"grade": {i % 4}}}'.encode()) for i in range(start, stop)]


def test_two_readers_each_read_everything_to_the_end_then_follow(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(3, prefix="judgments", config={"cleanup.policy": "compact"})
    _produce(kafka_bootstrap, topic, _judgments(0, 30))
    config = {"bootstrap_servers": kafka_bootstrap}
    with JudgmentReader([topic], config) as one, JudgmentReader([topic], config) as two:
        assert len(one.partitions) == 3
        for reader in (one, two):
            records = list(reader.read_to_end())
            assert sorted((r.key, r.value) for r in records) == sorted(_judgments(0, 30))
            assert len({(r.partition, r.offset) for r in records}) == 30
            assert all(r.topic == topic and r.headers == (("h", b"1"),) for r in records)
            # Read to the end: nothing more to read for now.
            assert reader.poll(timeout_ms=200) == []

        _produce(kafka_bootstrap, topic, _judgments(30, 35))
        later: list[RawRecord] = []
        for _ in range(MAX_POLLS):
            later.extend(one.poll(timeout_ms=200))
            if len(later) >= 5:
                break
        assert sorted((r.key, r.value) for r in later) == sorted(_judgments(30, 35))


def test_an_empty_topic_is_read_to_its_end_at_once(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(2)
    with JudgmentReader([topic], {"bootstrap_servers": kafka_bootstrap}) as reader:
        assert list(reader.read_to_end(timeout_s=30)) == []


def test_no_judgment_topics_reads_nothing_and_connects_nowhere() -> None:
    reader = JudgmentReader([], {"bootstrap_servers": "127.0.0.1:1"})
    assert reader.consumer is None
    assert list(reader.read_to_end()) == []
    assert reader.poll(timeout_ms=10) == []
    reader.close()


def test_a_missing_judgment_topic_is_an_error_naming_it(kafka_bootstrap: str) -> None:
    with pytest.raises(KafkaUnavailableError, match="no-such-judgments"):
        JudgmentReader(["no-such-judgments"], {"bootstrap_servers": kafka_bootstrap})
