"""The raw Kafka record as the plumbing hands it on: bytes in, decoding is someone else's job."""

from __future__ import annotations

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
