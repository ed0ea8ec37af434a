"""The per-partition batch the streams hand the daemon: rows for the pipeline, and the whole
record (for a dead letter) found again by its offset."""

from __future__ import annotations

from kafka.consumer.fetcher import ConsumerRecord

from streameval.kafka.records import Fetched, RawRecord
from streameval.kafka.stream import _ROW


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
    rows = list(map(_ROW, records))
    return Fetched("clicks", 2, rows, records, RawRecord.from_consumer_record)


def test_rows_are_what_the_pipeline_takes_of_each_record() -> None:
    assert _batch().rows == [
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
