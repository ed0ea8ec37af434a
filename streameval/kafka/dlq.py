"""The dead-letter topic: invalid raw records, with why and where from in headers (DESIGN §6).

Each dead letter keeps the original key and value and headers, and adds
``streameval.reason`` (the reason string) and ``streameval.source`` (``topic/partition/offset``).
An empty topic name turns the sink off: nothing is produced and no connection is made.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kafka import KafkaProducer
from kafka.errors import KafkaError

from streameval.errors import KafkaUnavailableError
from streameval.kafka.records import RawRecord

log = logging.getLogger(__name__)

REASON_HEADER = "streameval.reason"
SOURCE_HEADER = "streameval.source"


def dead_letter_headers(record: RawRecord, reason: str) -> list[tuple[str, bytes | None]]:
    """The original headers, then the reason and the source."""
    return [
        *record.headers,
        (REASON_HEADER, reason.encode()),
        (SOURCE_HEADER, record.source.encode()),
    ]


class DeadLetterSink:
    """Produces invalid records to ``topic``; ``config`` is kafka-python keyword arguments (see
    :func:`streameval.kafka.client.client_config`). Sending does not wait: :meth:`flush` does."""

    def __init__(self, topic: str, config: Mapping[str, object]) -> None:
        self.topic = topic
        self._sent = 0
        self._failed = 0
        self._producer: Any = None
        if not topic:
            return
        try:
            self._producer = KafkaProducer(**{**config, "acks": "all", "linger_ms": 50})
        except KafkaError as error:
            raise KafkaUnavailableError(
                f"cannot connect to produce to the dead-letter topic: {error}"
            ) from error

    @property
    def enabled(self) -> bool:
        return self._producer is not None

    @property
    def sent(self) -> int:
        """Dead letters handed to the producer."""
        return self._sent

    @property
    def failed(self) -> int:
        """Dead letters the broker did not take (known once they completed, e.g. after flush)."""
        return self._failed

    def send(self, record: RawRecord, reason: str) -> None:
        """Queues ``record`` for the dead-letter topic with ``reason``; no-op when disabled."""
        if self._producer is None:
            return
        future = self._producer.send(
            self.topic,
            value=record.value,
            key=record.key,
            headers=dead_letter_headers(record, reason),
        )
        future.add_errback(self._on_error, record.source)
        self._sent += 1

    def _on_error(self, source: str, error: BaseException) -> None:
        self._failed += 1
        log.warning("dead letter for %s not written to %s: %s", source, self.topic, error)

    def flush(self, timeout_s: float | None = None) -> None:
        """Waits until every queued dead letter was acknowledged (or failed)."""
        if self._producer is not None:
            self._producer.flush(timeout=timeout_s)

    def close(self, timeout_s: float | None = None) -> None:
        """Flushes and closes the producer."""
        if self._producer is not None:
            self._producer.close(timeout=timeout_s)
            self._producer = None

    def __enter__(self) -> DeadLetterSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
