"""The raw Kafka record as the plumbing hands it on: bytes in, decoding is someone else's job."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from operator import itemgetter
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

_OFFSET = itemgetter(1)


class Fetched(NamedTuple):
    """What one poll read from one partition, in offset order.

    ``rows`` is all the pipeline needs of a record; a client makes them without a Python-level
    call per record (kafka-python: ``map(attrgetter(...))`` over its records), and the source
    name is made once per partition, not per record. A :class:`RawRecord` (key, headers: what a
    dead letter keeps) is made only when one is asked for, by :meth:`raw_at`. Per record, the
    :class:`RawRecord` and its loop cost the kafka-python re-read ~2.4 µs of ~24 (a bare
    consumer over a restart's 1.26M records: 14.5 against 11.4 CPU s, medians of 3).
    """

    topic: str
    partition: int
    rows: Sequence[Row]
    #: the client's own records, ``rows``' order
    records: Sequence[Any]
    #: a client record as a :class:`RawRecord`
    to_raw: Callable[[Any], RawRecord]

    def raw_at(self, offset: int) -> RawRecord | None:
        """The record at ``offset`` (None if this batch has none there)."""
        i = bisect_left(self.rows, offset, key=_OFFSET)
        if i < len(self.rows) and self.rows[i][1] == offset:
            return self.to_raw(self.records[i])
        return None
