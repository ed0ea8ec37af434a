"""`streameval run` with `kafka.consumer = "confluent-kafka"` against the real broker: the same
promises as the kafka-python consumer (tests/integration/test_daemon.py and test_faults.py): its
figures equal replay's, its commits carry our checkpoint, killed and restarted it loses and
double-counts nothing, and two of them split the work exactly and hand over on SIGTERM."""

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
    Log,
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
    window_labels,
)
from tests.integration.test_daemon import intake_of
from tests.integration.test_faults import _identity, _summed

pytestmark = pytest.mark.kafka

CONFLUENT = {"STREAMEVAL_KAFKA__CONSUMER": "confluent-kafka"}


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics(
        impressions=topic_factory(PARTITIONS, prefix="impressions"),
        clicks=topic_factory(PARTITIONS, prefix="clicks"),
        judgments=topic_factory(1, prefix="judgments", config={"cleanup.policy": "compact"}),
        dlq=topic_factory(1, prefix="dlq"),
    )


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


def test_confluent_daemon_killed_and_restarted_loses_and_double_counts_nothing(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    first = make_log(12, 300)
    second = make_log(13, 300, start_ms=T0 + 20 * 60_000 + 1, span_ms=10 * 60_000)
    produce(kafka_bootstrap, topics, first)
    env = _env(kafka_bootstrap, topics, f"g-{uuid.uuid4().hex}")
    daemon = DaemonProcess(env, tmp_path / "daemon-1.log")
    n_first = len(first.records)
    daemon.wait_for(
        lambda m: _read(m, "streameval_records_read_total") == n_first,
        what="run 1 to read its part",
    )
    daemon.kill()
    produce(kafka_bootstrap, topics, second)
    daemon = DaemonProcess(env, tmp_path / "daemon-2.log")
    daemon.wait_for(lambda m: _read(m, "streameval_records_read_total") > 0, what="run 2 to start")
    daemon.kill()
    rest = Log()
    sentinels(rest, T0 + 60 * 60_000)
    produce(kafka_bootstrap, topics, rest)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    horizon_s = expected["horizon_ms"] / 1000
    daemon = DaemonProcess(env, tmp_path / "daemon-3.log")
    try:
        # the killed run 2 stays in the group until its session (6 s) times out
        metrics = daemon.wait_for(
            lambda m: (
                _read(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and sum(1 for _ in samples(m, "streameval_consumer_lag")) == 2 * PARTITIONS
            ),
            what="run 3 to hold every partition and catch up",
            ready=True,
        )
        assert_windows_match(metrics, expected)
        intake = intake_of(metrics)
        assert 0 < intake["read"] <= expected["intake"]["read"]
        assert intake["read"] == (
            intake["accepted"]
            + sum(intake["invalid"].values())
            + intake["duplicate"]
            + intake["late"]
            + intake["unmatched"]
        )
        assert intake["late"] == expected["intake"]["late"]
    finally:
        if daemon.proc.poll() is None:
            daemon.terminate()


def test_two_confluent_daemons_split_the_work_exactly_and_hand_over_on_sigterm(
    kafka_bootstrap: str, topics: Topics, tmp_path: Path
) -> None:
    """librdkafka's range assignor co-partitions (equal counts), and a revocation commits
    before the partitions move: every record is counted once across the two lives."""
    log = make_log(14, 400)
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
    horizon_s = expected["horizon_ms"] / 1000
    group = f"g-{uuid.uuid4().hex}"
    a = DaemonProcess(_env(kafka_bootstrap, topics, group), tmp_path / "a.log")
    b = DaemonProcess(_env(kafka_bootstrap, topics, group), tmp_path / "b.log")
    try:

        def settled(m: dict[Any, float]) -> bool:
            return (
                _read(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and len(list(samples(m, "streameval_consumer_lag"))) == PARTITIONS
            )

        ma = a.wait_for(settled, what="daemon a to hold 2+2 partitions", ready=True)
        mb = b.wait_for(settled, what="daemon b to hold 2+2 partitions", ready=True)
        ma = a.wait_for(settled, what="daemon a, still", ready=True)
        held = [
            {(lbl["topic"], lbl["partition"]) for lbl, _ in samples(m, "streameval_consumer_lag")}
            for m in (ma, mb)
        ]
        assert not held[0] & held[1]
        for parts in held:  # partition i of both topics in one member
            imps = {p for t, p in parts if t == topics.impressions}
            assert imps == {p for t, p in parts if t == topics.clicks}
            assert len(imps) == PARTITIONS // 2
        both = [ma, mb]
        for row in expected["windows"]:
            labels = window_labels(row)
            assert _summed(both, "streameval_window_lists", labels) == row["lists"], labels
            assert _summed(both, "streameval_ndcg_sum", labels) == pytest.approx(
                row["ndcg_sum"], rel=1e-9, abs=1e-12
            )
        read_a, read_b = _identity(ma), _identity(mb)
        judgments = expected["intake"]["accepted_by_type"]["judgment"]
        assert read_a + read_b == expected["intake"]["read"] + judgments

        assert a.terminate() == 0
        more = make_log(15, 200, start_ms=T0 + 30 * 60_000 + 1, span_ms=10 * 60_000)
        more.records = [r for r in more.records if r[0] != "judgments"]  # as in test_faults
        sentinels(more, T0 + 50 * 60_000)
        produce(kafka_bootstrap, topics, more)
        expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path))
        horizon_s = expected["horizon_ms"] / 1000
        mb = b.wait_for(
            lambda m: (
                _read(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
                and len(list(samples(m, "streameval_consumer_lag"))) == 2 * PARTITIONS
            ),
            what="daemon b to take over and catch up",
            ready=True,
        )
        assert assert_windows_match(mb, expected) > 20
        assert read_a + _identity(mb) == expected["intake"]["read"] + judgments
        assert b.terminate() == 0
    finally:
        for d in (a, b):
            if d.proc.poll() is None:
                d.kill()


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
