"""Dead letters and commits (DESIGN §6: "nothing lost").

A dead letter is acknowledged before the offset of its record is committed past. A commit tells
the group that every record before it is done with: if the dead letter of one of them were still
in the producer's buffer, a crash would lose it for good (the restart reads on from the commit).
The first test runs the daemon in this process against the real broker, with the dead-letter
producer's linger raised to a minute: the commit must flush it. A dead letter the broker
refuses is counted and named instead."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, TopicPartition

from streameval.kafka import dlq as dlq_module
from streameval.runtime.daemon import Daemon
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    T0,
    DaemonProcess,
    Topics,
    free_port,
    in_process_settings,
    make_log,
    produce,
    read_all,
    samples,
    sentinels,
    stopped_at_exit,
    value,
)

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
    last: dict[TopicPartition, int] = {}
    for record in read_all(bootstrap, topic):
        try:
            json.loads(record.value)
        except ValueError:
            last[TopicPartition(record.topic, record.partition)] = record.offset
    return last


def _dead_letters(bootstrap: str, topic: str) -> list[bytes]:
    return [dict(r.headers)["streameval.source"] for r in read_all(bootstrap, topic)]


@pytest.fixture
def running_daemon(
    kafka_bootstrap: str, topics: Topics, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    monkeypatch.setattr(dlq_module, "LINGER_MS", LINGER_MS)
    group = f"g-{uuid.uuid4().hex}"
    daemon = Daemon(in_process_settings(kafka_bootstrap, topics, group, commit_interval="1s"))
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
    assert len(bad) >= 2  # on more than one partition
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


def test_a_dead_letter_the_topic_refuses_is_counted_and_named(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    """A dead letter the broker refuses (here: over the dead-letter topic's
    ``max.message.bytes``) is counted in ``streameval_dead_letters_failed_total`` and named in a
    WARNING; the record is still counted invalid like any other."""
    topics = replace(
        Topics.made_by(topic_factory),
        dlq=topic_factory(1, prefix="dlq", config={"max.message.bytes": "2000"}),
    )
    log = make_log(1, 40, judgments=False)
    log.add("clicks", "big", b'{"type": "click", ' + b"x" * 5_000)  # not JSON, and too big there
    sentinels(log, T0 + 30 * 60_000)
    produce(kafka_bootstrap, topics, log)
    daemon = DaemonProcess(
        topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port()), tmp_path / "d.log"
    )
    with stopped_at_exit(daemon):
        metrics = daemon.wait_for(
            lambda m: value(m, "streameval_dead_letters_failed_total") == 1,
            what="the refused dead letter to be counted",
            ready=True,
        )
        invalid = sum(v for _, v in samples(metrics, "streameval_invalid_events_total"))
        assert invalid >= 2  # the big one and make_log's own bad record(s), all counted
        log_text = (tmp_path / "d.log").read_text()
        assert f"dead letter for {topics.clicks}/" in log_text
        assert daemon.terminate() == 0
