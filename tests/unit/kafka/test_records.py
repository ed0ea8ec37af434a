"""The per-partition batch the streams hand the daemon: rows for the pipeline, and the whole
record (for a dead letter) found again by its offset."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.consumer.fetcher import ConsumerRecord
from kafka.errors import KafkaError

from streameval.kafka.confluent_support import per_partition
from streameval.kafka.records import Fetched, RawRecord
from streameval.kafka.stream import _OFFSET, _ROW


def _consumer_record(offset: int, value: bytes | None, headers: list[tuple[str, bytes]]) -> object:
    # kafka-python's own record type, as its poll returns them
    return ConsumerRecord(
        "clicks", 2, 0, offset, 1_000 + offset, 0, b"k%d" % offset, value, headers, None, 2, 5, -1
    )


def _batch() -> Fetched:
    # offsets with gaps, as compaction and transaction markers leave them
    records = [
        _consumer_record(10, b"a", []),
        _consumer_record(11, None, []),
        _consumer_record(14, b"c", [("h", b"1")]),
        _consumer_record(20, b"d", []),
    ]
    return Fetched(
        "clicks", 2, map(_ROW, records), records, _OFFSET, RawRecord.from_consumer_record
    )


def test_rows_are_what_the_pipeline_takes_of_each_record() -> None:
    assert list(_batch().rows) == [
        (b"a", 10, 1_010),
        (None, 11, 1_011),
        (b"c", 14, 1_014),
        (b"d", 20, 1_020),
    ]


def test_the_record_at_an_offset_is_found_whole() -> None:
    batch = _batch()
    assert batch.raw_at(14) == RawRecord("clicks", 2, 14, b"k14", b"c", 1_014, (("h", b"1"),))
    assert batch.raw_at(10) == RawRecord("clicks", 2, 10, b"k10", b"a", 1_010, ())
    assert batch.raw_at(20) == RawRecord("clicks", 2, 20, b"k20", b"d", 1_020, ())
    assert batch.raw_at(11) == RawRecord("clicks", 2, 11, b"k11", None, 1_011, ())


def test_an_offset_the_batch_does_not_hold_has_no_record() -> None:
    batch = _batch()
    for offset in (-1, 0, 9, 12, 13, 15, 21, 10**12):
        assert batch.raw_at(offset) is None


def test_confluent_messages_become_one_batch_per_partition_in_the_order_read() -> None:
    import confluent_kafka as ck  # the [confluent] extra (scripts/test installs it)

    def msg(topic: str, partition: int, offset: int, value: bytes | None = b"v") -> Any:
        return ck.Message(
            topic=topic,
            partition=partition,
            offset=offset,
            key=b"k",
            value=value,
            headers=[("h", b"1")] if offset == 7 else None,
            timestamp=(1, 5_000 + offset),
        )

    eof = ck.Message(
        topic="a", partition=0, offset=-1001, error=ck.KafkaError(ck.KafkaError._PARTITION_EOF)
    )
    messages = [msg("a", 0, 3), msg("a", 0, 4), msg("b", 0, 7), eof, msg("a", 1, 9)]
    messages += [msg("a", 0, 6, None), msg("b", 0, 8)]
    pos = {("a", 0): 3, ("c", 2): 40}
    batches = per_partition(messages, pos)
    assert [(b.topic, b.partition, list(b.rows)) for b in batches] == [
        ("a", 0, [(b"v", 3, 5_003), (b"v", 4, 5_004), (None, 6, 5_006)]),
        ("b", 0, [(b"v", 7, 5_007), (b"v", 8, 5_008)]),
        ("a", 1, [(b"v", 9, 5_009)]),
    ]
    # each partition's next offset is past its batch; the others are left alone
    assert pos == {("a", 0): 7, ("b", 0): 9, ("a", 1): 10, ("c", 2): 40}
    # a dead letter's record, found by its offset, whole
    assert batches[1].raw_at(7) == RawRecord("b", 0, 7, b"k", b"v", 5_007, (("h", b"1"),))
    assert batches[0].raw_at(6) == RawRecord("a", 0, 6, b"k", None, 5_006, ())
    assert batches[0].raw_at(5) is None


def test_a_fatal_confluent_error_ends_the_stream() -> None:
    import confluent_kafka as ck

    fatal = ck.Message(error=ck.KafkaError(ck.KafkaError._FATAL, "fenced", fatal=True))
    with pytest.raises(KafkaError, match="fatal"):
        per_partition([fatal], {})
