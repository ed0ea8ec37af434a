"""The raw Kafka record as the plumbing hands it on: bytes in, decoding is someone else's job."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple


class RawRecord(NamedTuple):
    """One record as read from Kafka, undecoded, with where it came from.

    A named tuple: one is made per record read, and a frozen dataclass costs ~1 µs to build.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    #: the record's timestamp in milliseconds since the epoch (producer or log-append time)
    timestamp_ms: int
    headers: tuple[tuple[str, bytes | None], ...] = ()

    @property
    def source(self) -> str:
        """``topic/partition/offset``: where to find this record again."""
        return f"{self.topic}/{self.partition}/{self.offset}"

    @classmethod
    def from_consumer_record(cls, record: Any) -> RawRecord:
        """From a kafka-python ``ConsumerRecord``."""
        headers = record.headers
        return new_raw(
            cls,
            (
                record.topic,
                record.partition,
                record.offset,
                record.key,
                record.value,
                record.timestamp,
                tuple(map(tuple, headers)) if headers else (),
            ),
        )


#: ``new_raw(RawRecord, (topic, partition, offset, key, value, timestamp_ms, headers))``: a
#: record built without the named tuple's ``__new__`` (a Python-level call: half the cost of
#: building one, per record read); every field must be given, in order
new_raw = tuple.__new__


#: one record as the pipeline takes it: ``(value, offset, timestamp_ms)``
Row = tuple[bytes | None, int, int]


class Fetched(NamedTuple):
    """What one poll read from one partition, in offset order.

    ``rows`` is all the pipeline needs of a record, iterated once; kafka-python's come lazily
    from ``map(attrgetter(...))`` over its records (made in C, and each freed before the next is
    made), and the source name is made once per partition, not per record. A
    :class:`RawRecord` (key, headers: what a dead letter keeps) is made only when one is asked
    for, by :meth:`raw_at`. A :class:`RawRecord` per record and its loop cost the kafka-python
    re-read ~2 µs of ~24 per record: a bare consumer over a restart's 1.26M records, with the
    daemon's collector thresholds, took 11.2 CPU s that way, 9.4 with a list of rows and 8.9
    with rows made as they are read (medians of 3).
    """

    topic: str
    partition: int
    rows: Iterable[Row]
    #: the client's own records, ``rows``' order
    records: Sequence[Any]
    #: a client record's offset
    offset_of: Callable[[Any], int]
    #: a client record as a :class:`RawRecord`
    to_raw: Callable[[Any], RawRecord]

    def raw_at(self, offset: int) -> RawRecord | None:
        """The record at ``offset`` (None if this batch has none there)."""
        records, offset_of = self.records, self.offset_of
        i = bisect_left(records, offset, key=offset_of)
        if i < len(records) and offset_of(records[i]) == offset:
            return self.to_raw(records[i])
        return None
