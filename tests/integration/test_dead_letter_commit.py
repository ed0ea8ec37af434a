"""A dead letter is acknowledged before the offset of its record is committed past (DESIGN §6:
"nothing lost"). A commit tells the group that every record before it is done with: if the
dead letter of one of them were still in the producer's buffer, a crash would lose it for good
(the restart reads on from the commit). The daemon runs in this process against the real
broker, with the dead-letter producer's linger raised to a minute: the commit must flush it."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

from streameval.config import Settings
from streameval.daemon import Daemon
from streameval.kafka import dlq as dlq_module
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import T0, Topics, make_log, produce, sentinels

pytestmark = pytest.mark.kafka

LINGER_MS = 60_000


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def _committed(admin: KafkaAdminClient, group: str) -> dict[TopicPartition, int]:
    offsets = admin.list_group_offsets({group: None}).get(group, {})
    return {tp: meta.offset for tp, meta in offsets.items()}


def _bad_records(bootstrap: str, topic: str) -> dict[TopicPartition, int]:
    """Per partition of ``topic``: the offset of its last record that is not JSON."""
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=3_000
    )
    last: dict[TopicPartition, int] = {}
    try:
        for record in consumer:
            try:
                json.loads(record.value)
            except ValueError:
                last[TopicPartition(record.topic, record.partition)] = record.offset
        return last
    finally:
        consumer.close()


def _dead_letters(bootstrap: str, topic: str) -> list[bytes]:
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=3_000
    )
    try:
        return [dict(r.headers)["streameval.source"] for r in consumer]
    finally:
        consumer.close()


@pytest.fixture
def running_daemon(
    kafka_bootstrap: str, topics: Topics, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    monkeypatch.setattr(dlq_module, "LINGER_MS", LINGER_MS)
    group = f"g-{uuid.uuid4().hex}"
    settings = Settings(
        kafka={
            "bootstrap_servers": kafka_bootstrap,
            "group_id": group,
            "topics": [topics.impressions, topics.clicks],
            "judgment_topics": [topics.judgments],
            "dlq_topic": topics.dlq,
            "state_topic": topics.state,
            "commit_interval": "1s",
        },
        metrics={"host": "127.0.0.1", "port": 0},
    )
    daemon = Daemon(settings)
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield group
    finally:
        stop.set()
        thread.join(60)
        assert not thread.is_alive(), "the daemon did not stop"


def test_a_commit_past_a_bad_record_waits_for_its_dead_letter(
    kafka_bootstrap: str, topics: Topics, running_daemon: str
) -> None:
    log = make_log(1, 400)  # 5 bad_json clicks: requests 5, 102, 199, 296, 393
    sentinels(log, T0 + 30 * 60_000)  # every list final: the commits reach the log's end
    produce(kafka_bootstrap, topics, log)
    bad = _bad_records(kafka_bootstrap, topics.clicks)
    assert sum(1 for _ in bad) >= 2  # on more than one partition
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        deadline = time.monotonic() + 40  # well within the linger: only a flush sends them
        while True:
            committed = _committed(admin, running_daemon)
            if all(committed.get(tp, -1) > offset for tp, offset in bad.items()):
                break
            assert time.monotonic() < deadline, f"commits {committed}, bad records at {bad}"
            time.sleep(0.2)
    finally:
        admin.close()
    # committed past every bad record: each dead letter is in the topic already
    dead = _dead_letters(kafka_bootstrap, topics.dlq)
    assert len(dead) == len(set(dead)) == 5
    assert all(d.decode().startswith(f"{topics.clicks}/") for d in dead)
