"""The raw Kafka record as the plumbing hands it on: bytes in, decoding is someone else's job."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One record as read from Kafka, undecoded, with where it came from."""

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
        return cls(
            topic=record.topic,
            partition=record.partition,
            offset=record.offset,
            key=record.key,
            value=record.value,
            timestamp_ms=record.timestamp,
            headers=tuple((name, value) for name, value in record.headers or ()),
        )
