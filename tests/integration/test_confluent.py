"""`streameval run` with `kafka.consumer = "confluent-kafka"` against the real broker: its figures
equal replay's and its commits carry our checkpoint (read back by kafka-python); unequal partition
counts are refused. The crash-restart and two-member tests run with both clients
(tests/integration/test_daemon.py and test_faults.py, parametrized over ``CONSUMERS``)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from streameval.errors import ConfigError
from streameval.kafka.checkpoint import Checkpoint
from streameval.kafka.client import librdkafka_config
from streameval.kafka.confluent_stream import ConfluentStream
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    PARTITIONS,
    T0,
    DaemonProcess,
    Topics,
    assert_windows_match,
    dump_partitions,
    free_port,
    make_log,
    produce,
    replay_json,
    samples,
    sentinels,
    value,
)
from tests.integration.test_daemon import intake_of

pytestmark = pytest.mark.kafka

CONFLUENT = {"STREAMEVAL_KAFKA__CONSUMER": "confluent-kafka"}


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def _env(bootstrap: str, topics: Topics, group: str) -> dict[str, str]:
    return {**topics.env(bootstrap, group, free_port()), **CONFLUENT}


def _read(metrics: dict[Any, float], name: str) -> float:
    v = value(metrics, name)
    return -1.0 if v is None else v


def test_confluent_daemon_figures_equal_replay_and_its_commits_carry_the_checkpoint(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    log = make_log(11, 400)
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    total, horizon_s = len(log.records), expected["horizon_ms"] / 1000
    group = f"g-{uuid.uuid4().hex}"
    daemon = DaemonProcess(_env(kafka_bootstrap, topics, group), tmp_path / "daemon.log")
    try:
        metrics = daemon.wait_for(
            lambda m: (
                _read(m, "streameval_records_read_total") == total
                and _read(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and sum(1 for _ in samples(m, "streameval_consumer_lag")) == 2 * PARTITIONS
            ),
            what="the daemon to read the whole log and be ready",
            ready=True,
        )
        assert assert_windows_match(metrics, expected) > 20
        intake = intake_of(metrics)
        assert intake == {k: expected["intake"][k] for k in intake}
        lags = [v for _, v in samples(metrics, "streameval_consumer_lag")]
        assert lags == [0.0] * (2 * PARTITIONS)  # measured through the stream: caught up
        assert "confluent" in daemon.log_path.read_text()  # the client asked for is the one used
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
    # the commits (made by librdkafka) are read back by kafka-python with our checkpoint
    reader = KafkaConsumer(
        bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False
    )
    try:
        for topic in (topics.impressions, topics.clicks):
            for p in range(PARTITIONS):
                committed = reader.committed(TopicPartition(topic, p), metadata=True)
                assert committed is not None
                checkpoint = Checkpoint.decode(committed.metadata)
                assert checkpoint is not None, (topic, p, committed)
                assert committed.offset <= checkpoint.next_offset
    finally:
        reader.close(autocommit=False)


def test_unequal_partition_counts_stop_the_confluent_stream_at_start(
    kafka_bootstrap: str, topic_factory: TopicFactory
) -> None:
    impressions, clicks = topic_factory(4, prefix="impressions"), topic_factory(2, prefix="clicks")
    with pytest.raises(ConfigError, match="equal partition counts"):
        ConfluentStream(
            [impressions, clicks],
            group_id=f"g-{uuid.uuid4().hex}",
            config=librdkafka_config({"bootstrap_servers": kafka_bootstrap}),
            auto_offset_reset="earliest",
            on_revoke=lambda partitions, lost: {},
        )


def test_confluent_reads_the_checkpoints_kafka_python_commits(
    kafka_bootstrap: str, topic_factory: TopicFactory
) -> None:
    """A group may switch clients (docs/operations.md): librdkafka reads commit metadata as a C
    string, so kafka-python's commits must carry the terminator (without it about one read in eight
    came back with bytes past the end, or raised UnicodeDecodeError;
    confluentinc/librdkafka#4649)."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    from streameval.kafka.stream import _with_metadata

    topic = topic_factory(PARTITIONS, prefix="checkpoints")
    group = f"g-{uuid.uuid4().hex}"
    committer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group)
    checkpoints = {
        TopicPartition(topic, p): (10 + p, Checkpoint(T0 + p, 100 + p, T0 - 10_000 * p))
        for p in range(PARTITIONS)
    }
    committer.commit(_with_metadata(checkpoints))
    committer.close(autocommit=False)
    reader = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": group})
    try:
        wanted = [CkTopicPartition(topic, p) for p in range(PARTITIONS)]
        for _ in range(60):
            for c in reader.committed(wanted, timeout=10):
                offset, checkpoint = checkpoints[TopicPartition(c.topic, c.partition)]
                assert c.offset == offset
                assert Checkpoint.decode(c.metadata) == checkpoint
    finally:
        reader.close()
