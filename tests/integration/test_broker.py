"""The session's Kafka broker works with the real kafka-python client: no mocks."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord
from kafka.structs import OffsetAndMetadata

pytestmark = pytest.mark.kafka

# Upper bound on poll rounds while waiting for records that were already acknowledged: the loop
# ends as soon as they arrived; the bound only turns a broken broker into a failure, not a hang.
MAX_POLLS = 60


def _poll_until(consumer: KafkaConsumer, count: int) -> list[ConsumerRecord]:
    records: list[ConsumerRecord] = []
    for _ in range(MAX_POLLS):
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
        if len(records) >= count:
            break
    return records


def _producer(bootstrap: str) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=0)


def test_records_round_trip_with_keys_and_headers(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(3)
    sent: list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]] = [
        (f"req-{i % 4}".encode(), f"value-{i}".encode(), [("n", str(i).encode()), ("src", b"t")])
        for i in range(12)
    ]
    # A record without key or headers must come back as exactly that.
    sent.append((None, b"keyless", []))
    producer = _producer(kafka_bootstrap)
    try:
        for key, value, headers in sent:
            producer.send(topic, value=value, key=key, headers=headers).get(timeout=30)
    finally:
        producer.close()

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    try:
        partitions = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        received = _poll_until(consumer, len(sent))
    finally:
        consumer.close()

    assert sorted((r.key or b"", r.value, list(r.headers)) for r in received) == sorted(
        (k or b"", v, h) for k, v, h in sent
    )
    assert next(r for r in received if r.value == b"keyless").key is None
    # Keyed records: one key, one partition, in the order they were sent.
    by_key: dict[bytes, list[ConsumerRecord]] = {}
    for record in received:
        if record.key is not None:
            by_key.setdefault(record.key, []).append(record)
    assert len(by_key) == 4
    for records in by_key.values():
        assert len({r.partition for r in records}) == 1
        ordered = sorted(records, key=lambda r: r.offset)
        sent_order = [int(dict(r.headers)["n"]) for r in ordered]
        assert sent_order == sorted(sent_order)


def test_group_commit_is_where_the_next_member_resumes(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(1)
    group = f"group-{topic}"
    tp = TopicPartition(topic, 0)
    producer = _producer(kafka_bootstrap)
    try:
        for i in range(6):
            producer.send(topic, value=f"v{i}".encode(), key=b"k").get(timeout=30)

        first = KafkaConsumer(
            topic,
            bootstrap_servers=kafka_bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        try:
            seen = _poll_until(first, 6)
            assert [r.value for r in seen] == [f"v{i}".encode() for i in range(6)]
            # Only the first four are "done": commit offset 4 (the next record to read), with
            # metadata, as the daemon will carry its watermark there.
            first.commit({tp: OffsetAndMetadata(4, "watermark=1700000000", -1)})
        finally:
            first.close()

        for i in range(6, 9):
            producer.send(topic, value=f"v{i}".encode(), key=b"k").get(timeout=30)
    finally:
        producer.close()

    second = KafkaConsumer(
        topic,
        bootstrap_servers=kafka_bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        committed = second.committed(tp, metadata=True)
        resumed = _poll_until(second, 5)
    finally:
        second.close()

    assert committed is not None
    assert committed.offset == 4
    assert committed.metadata == "watermark=1700000000"
    # Records 4 and 5 were read but not committed: read again; 6..8 are new.
    assert [r.offset for r in resumed] == [4, 5, 6, 7, 8]
    assert [r.value for r in resumed] == [f"v{i}".encode() for i in range(4, 9)]
