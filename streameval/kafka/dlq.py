"""The dead-letter topic: invalid raw records, with why and where from in headers (DESIGN §6).

Each dead letter keeps the original key and value and headers, and adds
``streameval.reason`` (the reason string) and ``streameval.source`` (``topic/partition/offset``).
An empty topic name turns the sink off: nothing is produced and no connection is made.

A dead letter never stops the daemon and never vanishes without a trace. A record too large for
a Kafka request (over :data:`MAX_DEAD_LETTER_BYTES` with its headers, e.g. a ``too_large`` one)
is cut: its value to what fits, its key to :data:`MAX_TRUNCATED_KEY_BYTES`, its own headers
dropped, and ``streameval.truncated`` says the original value's size (the source header still
points at the whole record). A record with neither key nor value is sent with an empty value, and
a null header value as an empty one. Should the producer still refuse, the failure is counted in
:attr:`DeadLetterSink.failed` and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kafka import KafkaProducer
from kafka.errors import KafkaError

from streameval.errors import KafkaUnavailableError
from streameval.kafka.admin import admin_client, create_topic
from streameval.kafka.records import RawRecord

log = logging.getLogger(__name__)

REASON_HEADER = "streameval.reason"
SOURCE_HEADER = "streameval.source"
TRUNCATED_HEADER = "streameval.truncated"
#: for a record of a mapped format that did not map: the record's field (a JSON Pointer)
FIELD_HEADER = "streameval.field"

#: key + value + headers of one dead letter at most: under both kafka-python's default
#: ``max_request_size`` (1,048,576) and the broker's default ``message.max.bytes`` (1,048,588),
#: with room for the record and batch overhead
MAX_DEAD_LETTER_BYTES = 1_000_000
#: the producer waits this long to batch dead letters (a burst of bad records goes in few
#: requests); a commit flushes them first (the daemon's ``_commit``), so none waits past it
LINGER_MS = 50
#: a cut dead letter keeps this much of its key
MAX_TRUNCATED_KEY_BYTES = 1024


def dead_letter_headers(record: RawRecord, reason: str, field: str = "") -> list[tuple[str, bytes]]:
    """The original headers (a null value as empty), then the reason, the source, and the field
    that did not map (when there is one)."""
    return [
        *((name, value or b"") for name, value in record.headers),
        *_own_headers(record, reason, field),
    ]


def _own_headers(record: RawRecord, reason: str, field: str) -> list[tuple[str, bytes]]:
    own = [(REASON_HEADER, reason.encode()), (SOURCE_HEADER, record.source.encode())]
    if field:
        own.append((FIELD_HEADER, field.encode()[:MAX_TRUNCATED_KEY_BYTES]))
    return own


def _size(key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes]]) -> int:
    return (
        len(key or b"")
        + len(value or b"")
        + sum(len(name.encode()) + len(data) for name, data in headers)
    )


def dead_letter(
    record: RawRecord, reason: str, field: str = ""
) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]:
    """(key, value, headers) of the dead letter of ``record``: the record itself when it fits
    in :data:`MAX_DEAD_LETTER_BYTES`, else cut to fit (see the module's doc)."""
    key, value = record.key, record.value
    headers = dead_letter_headers(record, reason, field)
    if _size(key, value, headers) <= MAX_DEAD_LETTER_BYTES:
        if key is None and value is None:
            value = b""  # the producer refuses a record with neither
        return key, value, headers
    original = len(value or b"")
    key = None if key is None else key[:MAX_TRUNCATED_KEY_BYTES]
    headers = [*_own_headers(record, reason, field), (TRUNCATED_HEADER, str(original).encode())]
    room = MAX_DEAD_LETTER_BYTES - _size(key, None, headers)
    return key, (value or b"")[: max(0, room)], headers


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
        ensure_topic(topic, config)
        try:
            self._producer = KafkaProducer(**{**config, "acks": "all", "linger_ms": LINGER_MS})
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

    def send(self, record: RawRecord, reason: str, field: str = "") -> None:
        """Queues ``record`` for the dead-letter topic with ``reason`` (and the ``field`` that
        did not map, if any); no-op when disabled."""
        if self._producer is None:
            return
        key, value, headers = dead_letter(record, reason, field)
        try:
            future = self._producer.send(self.topic, value=value, key=key, headers=headers)
        except (KafkaError, ValueError, TypeError) as error:  # refused before it was queued
            self._on_error(record.source, error)
            return
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


def ensure_topic(topic: str, config: Mapping[str, object]) -> None:
    """Create the dead-letter topic when it is missing (one partition, the broker's defaults
    otherwise). Where the broker does not create topics on demand, a producer sending to a
    missing topic waits for its metadata up to ``max_block_ms`` (60 s) per dead letter, and the
    read loop with it; the dead letter is then lost. Raises :class:`KafkaUnavailableError` when
    the topic is missing and cannot be created (e.g. not authorized)."""
    with admin_client(config, "to check the dead-letter topic") as admin:
        try:
            if topic in admin.list_topics() or not create_topic(admin, topic):
                return  # (created meanwhile, e.g. by another instance)
        except KafkaError as error:
            raise KafkaUnavailableError(
                f"dead-letter topic {topic!r} does not exist and cannot be created ({error}): "
                'create it, or set kafka.dlq_topic = "" to turn dead letters off'
            ) from error
        log.info("created the dead-letter topic %s (1 partition)", topic)
