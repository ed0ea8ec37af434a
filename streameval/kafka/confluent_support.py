"""confluent-kafka's records, errors and retries as the :class:`~streameval.kafka.confluent_stream.
ConfluentStream` hands them on: ``consume()``'s messages as :class:`Fetched` batches, its errors
as kafka-python's ``KafkaError`` (the interface's error type), and which errors are transient
(tried again).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kafka.errors import KafkaError

from streameval.errors import ConfigError, KafkaUnavailableError
from streameval.kafka.assignor import copartition_problem
from streameval.kafka.records import Fetched, RawRecord, Row, new_raw

# the confluent stream's log lines keep their logger (rate-limited as a Kafka client's)
_LOG = logging.getLogger("streameval.kafka.confluent_stream")

#: (topic, partition): equal to, and hashed like, :class:`~streameval.kafka.partition.Partition`
_Key = tuple[str, int]
_T = TypeVar("_T")

#: errors a broker restart or a leader move leaves behind for a moment (stale metadata, a
#: coordinator not elected yet): the request is tried again, within the request timeout
_TRANSIENT = frozenset(
    {
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "NOT_LEADER_FOR_PARTITION",
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "REQUEST_TIMED_OUT",
        "UNKNOWN_TOPIC_OR_PART",
        "NOT_COORDINATOR",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "OFFSET_NOT_AVAILABLE",
        "_TRANSPORT",
        "_TIMED_OUT",
        "_ALL_BROKERS_DOWN",
        "_WAIT_COORD",
    }
)


def _transient(exc: BaseException) -> bool:
    error: Any = exc.args[0] if exc.args else None
    try:
        return bool(error.retriable()) or error.name() in _TRANSIENT
    except AttributeError:
        return False


def retrying(
    ck: Any,
    timeout_s: float,
    what: str,
    attempt: Callable[[], _T],
    on_retry: Callable[[], None] | None = None,
) -> _T:
    """``attempt()``, tried again after a transient error (see ``_TRANSIENT``: e.g. the
    stale leader epoch a broker restart leaves for a moment) with a growing pause, until
    ``timeout_s`` (the request timeout); then, or on any other error, kafka-python's
    ``KafkaError``. Used in the assignment callback too, where an error would otherwise stop
    the daemon. ``ck``: the confluent_kafka module."""
    deadline = time.monotonic() + timeout_s
    pause = 0.1
    while True:
        try:
            return attempt()
        except ck.KafkaException as exc:
            if not _transient(exc) or time.monotonic() + pause > deadline:
                raise KafkaError(f"{what}: {exc}") from exc
            _LOG.info("%s: %s; trying again", what, exc)
        except Exception as exc:  # e.g. a future's own timeout
            raise KafkaError(f"{what}: {exc!r}") from exc
        time.sleep(pause)
        if on_retry is not None:
            on_retry()
        pause = min(2 * pause, 2.0)


def check_topics(ck: Any, admin: Any, topics: Sequence[str]) -> None:
    """Every topic exists, and all have as many partitions (librdkafka's range assignor
    co-partitions only then): else :class:`KafkaUnavailableError`, :class:`ConfigError`."""
    try:
        metadata = admin.list_topics(timeout=10.0)
    except ck.KafkaException as exc:
        raise KafkaUnavailableError(f"cannot connect to Kafka: {exc}") from exc
    missing = [
        t for t in topics if t not in metadata.topics or metadata.topics[t].error is not None
    ]
    if missing:
        raise KafkaUnavailableError(f"topics do not exist or cannot be read: {missing}")
    problem = copartition_problem({t: len(metadata.topics[t].partitions) for t in topics})
    if problem is not None:
        raise ConfigError(
            f"kafka.consumer: 'confluent-kafka' co-partitions with librdkafka's range "
            f"assignor, which needs equal partition counts ({problem}); "
            "use consumer = 'kafka-python'"
        )


def _import() -> Any:
    try:
        import confluent_kafka
        import confluent_kafka.admin
    except ImportError as exc:
        raise ConfigError(
            "kafka.consumer: 'confluent-kafka' needs the optional extra: "
            "pip install 'streameval[confluent]'"
        ) from exc
    return confluent_kafka


def _log_error(error: Any) -> None:
    """librdkafka's error callback: transient errors (a broker down, a reconnect) are retried by
    librdkafka itself; the daemon sees an outage through its lag measurements."""
    _LOG.warning("confluent-kafka: %s", error)


class FatalConsumerError(KafkaError):  # type: ignore[misc]
    """A fatal error handed out by ``consume()``; ``error`` is confluent-kafka's."""

    def __init__(self, error: Any) -> None:
        super().__init__(f"fatal consumer error: {error}")
        self.error = error


def _is_fatal(error: Any) -> bool:
    """Whether a message's error is librdkafka's fatal one. Its code says so: ``fatal()`` is
    False on the message a fenced static member is handed (``_FATAL``, "Static consumer fenced
    by other consumer with same group.instance.id"), seen in a clean-clone CI run."""
    return bool(error.fatal()) or error.code() == type(error)._FATAL


def _message_error(error: Any) -> None:
    """An error handed out in place of a record: fatal ones end the stream, the rest (a partition
    end, a topic gone) are logged."""
    if _is_fatal(error):
        raise FatalConsumerError(error)
    _LOG.warning("consumer error: %s", error)


def raise_fatal(messages: Sequence[Any]) -> None:
    """Raise the fatal error among ``messages``, if there is one: librdkafka hands a fatal error
    (a fenced static member) out once, so a batch dropped for any reason is searched first."""
    for m in messages:
        error = m.error()
        if error is not None and _is_fatal(error):
            raise FatalConsumerError(error)


def per_partition(messages: Sequence[Any], pos: dict[_Key, int]) -> list[Fetched]:
    """``consume()``'s messages as one batch per partition, each in the order read (librdkafka
    hands out runs of one partition's records); errors in their place are raised if fatal, else
    logged and skipped. ``pos``: each partition's next offset, moved past its batch."""
    batches: dict[_Key, tuple[list[Row], list[Any]]] = {}
    key: _Key | None = None
    rows: list[Row] = []
    records: list[Any] = []
    for m in messages:
        error = m.error()
        if error is not None:
            _message_error(error)
            continue
        at = (m.topic(), m.partition())
        if at != key:
            key = at
            batch = batches.get(at)
            if batch is None:
                batch = batches[at] = ([], [])
            rows, records = batch
        rows.append((m.value(), m.offset(), m.timestamp()[1]))
        records.append(m)
    out = []
    for (topic, partition), (rows, records) in batches.items():
        pos[(topic, partition)] = rows[-1][1] + 1
        out.append(Fetched(topic, partition, rows, records, _offset_of, _raw_of))
    return out


def _offset_of(m: Any) -> int:
    offset: int = m.offset()
    return offset


def _raw_of(m: Any) -> RawRecord:
    """A confluent-kafka ``Message`` as a :class:`RawRecord`."""
    headers = m.headers()
    return new_raw(
        RawRecord,
        (
            m.topic(),
            m.partition(),
            m.offset(),
            m.key(),
            m.value(),
            m.timestamp()[1],
            tuple(headers) if headers else (),
        ),
    )
