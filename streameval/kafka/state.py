"""The window state changelog (DESIGN §6): a compacted topic of finalized buckets.

Like Kafka Streams' changelog topics: each instance writes the complete buckets of the partitions
it owns, keyed ``group␟topic/partition␟bucket start`` so that compaction keeps the latest value
per (partition, bucket), and tombstones the buckets no window covers any more. Every instance
reads the whole topic, like the judgment topics, so it knows the group's finalized buckets: on
an assignment it loads those of its new partitions instead of re-reading the longest window.

Writes go through an idempotent producer and are flushed before the offset commit that relies on
them (:meth:`StateTopic.flush`), so a commit, its checkpoint and the persisted buckets describe
one state. A record that is not a bucket of ours (corrupt, another format, a foreign key) is
logged, counted and skipped; the partition it names then falls back to the full re-read.

The records' values are encoded and decoded by the codecs the runtime hands in
(:class:`~streameval.kafka.state_table.StateCodecs`); the table they fill is
:class:`~streameval.kafka.state_table.StateTable`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic

from kafka import KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import KafkaError
from kafka.partitioner import DefaultPartitioner

from streameval.errors import ConfigError, KafkaUnavailableError
from streameval.kafka.admin import admin_client, create_topic
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.records import RawRecord
from streameval.kafka.state_table import B, D, StateCodecs, StateTable, detector_key, state_key

_LOG = logging.getLogger(__name__)

#: the configs the daemon creates the state topic with. Compaction only ever cleans *closed*
#: segments, and Kafka closes one at ``segment.bytes`` (1 GiB) or ``segment.ms`` (7 days) by
#: default: until then every record ever written (each bucket, and its tombstone ~70 minutes
#: later: ~17k records a day per impression partition at a 10 s bucket) stays in the log, and
#: every start reads all of it (measured: 140k records, a day of four partitions' writes, in
#: ~11 s). Short segments let the cleaner keep the log near its live set (the longest window's
#: buckets), and tombstones go ten minutes after a cleaning instead of a day.
STATE_TOPIC_CONFIGS: Mapping[str, str] = {
    "cleanup.policy": "compact",
    "segment.ms": "600000",
    "delete.retention.ms": "600000",
}
#: an existing state topic whose segments close less often than this gets a warning at start
MAX_SEGMENT_MS = 3_600_000
#: the state producer's batches: every write is followed by :meth:`StateTopic.flush` in the same
#: commit, so a record waits for that flush, not for a linger, and one batch holds a commit's
#: writes (~1,000 records of ~400 B in a catch-up, at a 1 s commit interval). With 16 KiB
#: batches and a 5 ms linger, kafka-python started a batch every ~2 records, and each new batch
#: woke its sender thread (a socket write, and the thread taking the GIL from the loop): ~10,000
#: wake-ups over a 200,000-record catch-up, ~1 s of the loop under cProfile
STATE_BATCH_BYTES = 512 * 1024


class _StatePartitioner(DefaultPartitioner):  # type: ignore[misc]
    """kafka-python's default (murmur2 of the key), without hashing the key when the topic has
    one partition, as the daemon creates it: the pure-Python murmur2 cost ~50 µs per state
    record (1 s of a 200,000-record catch-up's loop under cProfile). Keys land where the
    default partitioner puts them, so compaction sees each key in one partition either way."""

    def partition(  # noqa: PLR0917 - kafka-python's Partitioner signature
        self,
        topic: str,
        key: Any,
        serialized_key: bytes | None,
        value: Any,
        serialized_value: bytes | None,
        cluster: Any,
    ) -> int:
        partitions = cluster.partitions_for_topic(topic)
        if partitions is not None and len(partitions) == 1:
            (only,) = partitions
            return int(only)
        return int(super().partition(topic, key, serialized_key, value, serialized_value, cluster))


class StateTopic(Generic[B, D]):
    """The state topic of ``group``: checked or created at start, read in full, written to."""

    def __init__(
        self,
        topic: str,
        group: str,
        config: Mapping[str, Any],
        *,
        codecs: StateCodecs[B, D],
        bucket_ms: int = 10_000,
        flush_timeout_s: float = 5.0,
    ) -> None:
        self._topic = topic
        self._group = group
        #: how long a flush may wait before the commit that needs it is skipped (and the writes
        #: sent again with the next one): bounded, so that an outage does not stall the reading
        self._flush_timeout_s = flush_timeout_s
        _ensure_compacted(topic, config, bucket_ms=bucket_ms)
        self._codecs = codecs
        self.table = StateTable(group, bucket_ms, codecs=codecs)
        self._reader = JudgmentReader([topic], config, what="state")
        self._config = dict(config)
        try:
            self._producer = self._new_producer()
        except KafkaError as exc:
            self._reader.close()
            raise KafkaUnavailableError(f"cannot connect to write the state topic: {exc}") from exc
        self._futures: list[Any] = []

    def _new_producer(self) -> Any:
        # max_block_ms: a send waits at most this for metadata (kafka-python's default, 60 s,
        # stalled the whole loop through a broker outage, and the group dropped the member)
        return KafkaProducer(
            **self._config,
            enable_idempotence=True,
            acks="all",
            # sent at the flush that follows the writes (or when a batch is full)
            linger_ms=int(self._flush_timeout_s * 1000),
            batch_size=STATE_BATCH_BYTES,
            partitioner=_StatePartitioner(),
            max_block_ms=int(self._flush_timeout_s * 1000),
        )

    def _renew_producer(self, why: KafkaError) -> None:
        """After a failed write: a fresh producer. kafka-python's producer did not find the
        brokers again after a broker restart (every send timed out on metadata, measured), while
        a new one does; what was not acknowledged is sent again with the next commit."""
        _LOG.warning("state topic write failed (%s); reconnecting its producer", why)
        self._futures = []
        with contextlib.suppress(KafkaError):  # it is being replaced
            self._producer.close(timeout=0)
        try:
            self._producer = self._new_producer()
        except KafkaError as exc:  # the brokers are away: the next write tries again
            _LOG.warning("state topic producer not recreated yet: %s", exc)

    def _send(self, key: bytes, value: bytes | None) -> None:
        try:
            self._futures.append(self._producer.send(self._topic, key=key, value=value))
        except KafkaError as exc:
            self._renew_producer(exc)
            raise

    def partitions(self, topics: Iterable[str]) -> frozenset[str]:
        """``topic/partition`` of every partition of ``topics`` (the group's source partitions,
        as :func:`~streameval.kafka.partition.source_of` names them)."""
        with admin_client(self._config, "to list partitions") as admin:
            try:
                described = admin.describe_topics(list(topics))
            except KafkaError as exc:
                raise KafkaUnavailableError(
                    f"cannot list the partitions of {topics}: {exc}"
                ) from exc
        # kafka-python 2.x names them topic / partition, 3.x name / partition_index
        return frozenset(
            f"{t.get('name', t.get('topic'))}/{p.get('partition_index', p.get('partition'))}"
            for t in described
            if not t.get("error_code")
            for p in t.get("partitions", ())
        )

    def read_to_end(self, stop: Callable[[], bool] | None = None) -> int:
        """Apply every record up to the topic's end (or until ``stop`` says True, see
        :meth:`JudgmentReader.read_to_end`); returns how many."""
        n = 0
        for record in self._reader.read_to_end(stop=stop):
            self._apply(record)
            n += 1
        return n

    def poll(self) -> None:
        """Apply what other instances wrote since."""
        for record in self._reader.poll(0):
            self._apply(record)

    def _apply(self, record: RawRecord) -> None:
        self.table.apply(record.key, record.value)

    def write(self, source: str, start: int, bucket: B) -> None:
        value = self._codecs.encode_bucket(bucket)
        self.table.written(source, start, bucket, value)
        self._send(state_key(self._group, source, start), value)

    def write_detector(self, source: str, relevance: str, start: int, data: Any) -> None:
        self.table.detection.put(source, relevance, start, data)
        self._send(
            detector_key(self._group, source, start, relevance),
            self._codecs.encode_detector_bucket(data),
        )

    def write_pairs(self, source: str, start: int, counts: Any) -> None:
        """One partition's interleaving counts of one bucket (kind ``pairs``)."""
        pairs = self._codecs.pairs_kind
        self.table.detection.put(source, pairs, start, counts)
        self._send(
            detector_key(self._group, source, start, pairs),
            self._codecs.encode_pair_bucket(counts),
        )

    def write_srm(self, source: str, start: int, counts: Any) -> None:
        """One partition's lists per arm of one bucket (kind ``srm``)."""
        srm = self._codecs.srm_kind
        self.table.detection.put(source, srm, start, counts)
        self._send(
            detector_key(self._group, source, start, srm),
            self._codecs.encode_srm_bucket(counts),
        )

    def write_progress(self, source: str, progress: Any) -> None:
        self.table.detection.put_progress(source, progress)
        self._send(
            detector_key(self._group, source, 0, self._codecs.progress_kind),
            self._codecs.encode_progress(progress),
        )

    def write_snapshot(self, slot: str, chunks: list[bytes]) -> None:
        """A snapshot of the detectors (:meth:`~streameval.group.feed.GroupFeed.snapshot`) into
        ``slot``, chunk by chunk; the slot's chunks beyond them are tombstoned."""
        detection = self.table.detection
        snapshot = self._codecs.snapshot_kind
        for i, value in enumerate(chunks):
            detection.apply(slot, i, snapshot, value)
            self._send(detector_key(self._group, slot, i, snapshot), value)
        for i in detection.chunk_positions(slot):
            if i >= len(chunks):
                detection.apply(slot, i, snapshot, None)
                self._send(detector_key(self._group, slot, i, snapshot), None)

    def expire(self, sources: Iterable[str], before: int) -> None:
        """Tombstone the window buckets of ``sources`` that start before ``before``, and their
        detector buckets before the newest whole snapshot of the detectors (before ``before``
        while there is none): a start restores that snapshot and needs only the buckets since,
        so the topic a start reads keeps minutes of detector buckets, not the longest window."""
        detection = self.table.detection
        snapshot = detection.snapshot_point()
        detector_before = before if snapshot is None else snapshot
        for source in sources:
            for start in self.table.older(source, before):
                self.table.drop(source, start)
                self._send(state_key(self._group, source, start), None)
            for relevance, start in detection.older(source, detector_before):
                detection.drop(source, relevance, start)
                self._send(detector_key(self._group, source, start, relevance), None)

    def flush(self) -> None:
        """Wait until everything written is acknowledged; raises ``KafkaError`` if it is not."""
        futures, self._futures = self._futures, []
        if not futures:
            return
        try:
            self._producer.flush(timeout=self._flush_timeout_s)
            failed = [f.exception for f in futures if f.failed()]
            if failed or not all(f.is_done for f in futures):
                raise KafkaError(f"not acknowledged: {failed[0] if failed else 'timed out'}")
        except KafkaError as exc:
            self._renew_producer(exc)
            raise

    def close(self) -> None:
        self._reader.close()
        try:
            self._producer.close(timeout=5)
        except KafkaError as exc:  # pragma: no cover - best effort at shutdown
            _LOG.warning("closing the state producer failed: %s", exc)


def _ensure_compacted(
    topic: str,
    config: Mapping[str, Any],
    *,
    bucket_ms: int = 10_000,
    topic_configs: Mapping[str, str] = STATE_TOPIC_CONFIGS,
) -> None:
    """Create the state topic (compacted, short segments: :data:`STATE_TOPIC_CONFIGS`) when it
    is missing; otherwise check that it is compacted (a topic that deletes by time would lose
    the buckets of a quiet partition), and warn when its segments close so rarely that every
    start reads days of superseded records."""
    with admin_client(config, "to check the state topic") as admin:
        try:
            if create_topic(admin, topic, topic_configs):
                _LOG.info(
                    "created the state topic %s (%s)",
                    topic,
                    ", ".join(f"{k}={v}" for k, v in topic_configs.items()),
                )
                return
        except KafkaError as exc:
            _LOG.info("could not create the state topic %s (%s); checking it", topic, exc)
        try:
            described = admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, ["cleanup.policy", "segment.ms"])],
                config_filter="all",
            )
        except KafkaError as exc:
            raise KafkaUnavailableError(
                f"state topic {topic!r} cannot be created or described ({exc}): create it with "
                'cleanup.policy=compact, or set kafka.state_topic = "" to re-read instead'
            ) from exc
        policy = _topic_config(described, topic, "cleanup.policy")
        if policy is not None and "compact" not in policy.split(","):
            raise ConfigError(
                f"kafka.state_topic: topic {topic!r} has cleanup.policy={policy}; it must be "
                "compact (the buckets of a quiet partition would otherwise be deleted)"
            )
        segment = _topic_config(described, topic, "segment.ms")
        if segment is not None and segment.isdigit() and int(segment) > MAX_SEGMENT_MS:
            per_day = 2 * 86_400_000 // bucket_ms
            _LOG.warning(
                "state topic %s: segment.ms=%s; compaction cleans only closed segments, so every "
                "start reads all that was written since the last one closed (~%d records per "
                "partition per day, a bucket and its tombstone) instead of the live buckets; "
                "set segment.ms <= %d (the daemon creates the topic with %s) and "
                "delete.retention.ms=%s",
                topic,
                segment,
                per_day,
                MAX_SEGMENT_MS,
                STATE_TOPIC_CONFIGS["segment.ms"],
                STATE_TOPIC_CONFIGS["delete.retention.ms"],
            )


def _topic_config(described: Any, topic: str, name: str) -> str | None:
    """One config's value out of kafka-python's DescribeConfigs answer
    (``{"topic": {name: {key: {"value": …}}}}``), if present."""
    try:
        value = described["topic"][topic][name]["value"]
    except (KeyError, TypeError):
        return None
    return None if value is None else str(value)
