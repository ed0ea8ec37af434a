"""DeadLetterSink: invalid raw records land in the DLQ topic with reason and source headers."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from streameval.kafka.dlq import REASON_HEADER, SOURCE_HEADER, DeadLetterSink
from streameval.kafka.records import RawRecord

MAX_POLLS = 60


def _bad(offset: int, key: bytes | None) -> RawRecord:
    return RawRecord(
        topic="search-clicks",
        partition=2,
        offset=offset,
        key=key,
        value=b"{not json",
        timestamp_ms=1_700_000_000_000,
        headers=(("trace", b"t-1"),),
    )


@pytest.mark.kafka
def test_dead_letters_keep_key_value_and_say_why_and_where_from(
    kafka_bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    dlq = topic_factory(1, prefix="dlq")
    with DeadLetterSink(dlq, {"bootstrap_servers": kafka_bootstrap}) as sink:
        assert sink.enabled
        sink.send(_bad(41, b"req-1"), "invalid_json")
        sink.send(_bad(42, None), "missing_field:request_id")
        sink.flush(timeout_s=30)
        assert (sink.sent, sink.failed) == (2, 0)

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, enable_auto_commit=False)
    try:
        tp = TopicPartition(dlq, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        got = []
        for _ in range(MAX_POLLS):
            for batch in consumer.poll(timeout_ms=200).values():
                got.extend(batch)
            if len(got) >= 2:
                break
    finally:
        consumer.close()

    assert [(r.key, r.value) for r in got] == [(b"req-1", b"{not json"), (None, b"{not json")]
    assert got[0].headers == [
        ("trace", b"t-1"),
        (REASON_HEADER, b"invalid_json"),
        (SOURCE_HEADER, b"search-clicks/2/41"),
    ]
    assert dict(got[1].headers)[REASON_HEADER] == b"missing_field:request_id"
    assert dict(got[1].headers)[SOURCE_HEADER] == b"search-clicks/2/42"


def test_an_empty_topic_name_disables_the_sink_without_connecting() -> None:
    # Port 1 on loopback: any connection attempt would fail loudly.
    sink = DeadLetterSink("", {"bootstrap_servers": "127.0.0.1:1"})
    assert not sink.enabled
    sink.send(_bad(1, b"k"), "invalid_json")
    sink.flush()
    sink.close()
    assert sink.sent == 0


@pytest.mark.kafka
def test_a_missing_dead_letter_topic_is_created_at_start(kafka_bootstrap: str) -> None:
    """Where the broker does not create topics on demand, a producer sending to a missing one
    waits up to 60 s (``max_block_ms``) for its metadata, per dead letter, and the read loop
    with it: the sink creates its topic when it starts, before any record is read."""
    topic = f"dlq-absent-{uuid.uuid4().hex}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert topic not in admin.list_topics()
        with DeadLetterSink(topic, {"bootstrap_servers": kafka_bootstrap}) as sink:
            assert topic in admin.list_topics()  # before any dead letter was sent
            assert sink.sent == 0
            sink.send(_bad(7, b"req-7"), "invalid_json")
            sink.flush(timeout_s=30)
            assert (sink.sent, sink.failed) == (1, 0)
        # started again on the topic it made: nothing to create, nothing lost
        with DeadLetterSink(topic, {"bootstrap_servers": kafka_bootstrap}) as again:
            again.send(_bad(8, b"req-8"), "invalid_json")
            again.flush(timeout_s=30)
            assert (again.sent, again.failed) == (1, 0)
        ends = KafkaConsumer(bootstrap_servers=kafka_bootstrap)
        try:
            assert ends.end_offsets([TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): 2}
        finally:
            ends.close()
    finally:
        admin.delete_topics([topic])
        admin.close()
